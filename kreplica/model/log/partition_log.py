"""A replica's partition log, read once: the value every command and analysis shares.

One walk over a partition directory's segments (:class:`~kreplica.model.log.walk.BatchWalk`)
gathers everything the replication commands, ``inspect-dir`` and log loading need: every batch header (as :class:`RecordBatch`, in file order,
``after_break`` ones included), the transaction markers of control batches, the walker's and the
cross-batch findings, and where Kafka's reader stops in each segment. Beside it, the small files
are parsed once: the log directory's checkpoints, ``leader-epoch-checkpoint``,
``partition.metadata`` and the newest readable producer snapshot. From the headers come the
epoch lineage, the cache Kafka's ``assign`` rule builds, and the log end offset.

Analyses never walk a segment again: log recovery replays the headers (CRC validity and markers
were read in the walk), truncation and divergence compare headers; where two replicas' batches
differ, divergence reads those batches' records at their recorded positions
(:func:`iter_batch_records`). A :class:`PartitionLog` can be
built from rows of batch headers as well (:func:`partition_log_from_rows`), so the fleet pipeline
runs the same analyses on table rows without any file at hand.
"""

from __future__ import annotations

import re

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.formats.log.control_marker import ControlMarker
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.logdir.leader_epoch_checkpoint import EpochEntryLine, parse_leader_epoch_checkpoint
from kreplica.formats.mapped import Buffer, EvidenceError, open_buffer
from kreplica.formats.logdir.partition_metadata import parse_partition_metadata
from kreplica.formats.logdir.naming import classify_partition_file
from kreplica.formats.log.producer_snapshot import ProducerSnapshotEntry, parse_producer_snapshot
from kreplica.formats.log.txn_index import AbortedTxn, iter_txn_index
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.log.epoch_cache import EpochEntry
from kreplica.model.log.lineage import LineageBuilder, LineageEntry
from kreplica.model.log.walk import BatchWalk, WalkedBatch
from kreplica.model.logdir.log_dir import (LogDir, LogDirCheckpoints, PartitionDir, SegmentFiles, broker_id_of, read_bytes,
                                   read_checkpoints)


@dataclass(frozen=True, slots=True)
class SegmentLog:
    """One segment as the walk found it.

    ``batches`` are every batch header in file order (``after_break`` ones last, as found past
    damage); ``valid_bytes`` is where Kafka's reader stops and ``stopped_by`` why;
    ``markers`` maps a control batch's position to its decoded marker.
    """

    files: SegmentFiles
    file_size: int
    valid_bytes: int
    stopped_by: str
    batches: tuple[RecordBatch, ...]
    markers: Mapping[int, ControlMarker]
    findings: tuple[Finding, ...]
    txn_index_below_base: bool = False  # a .txnindex entry ends below the base offset (LogLoader's sanity check)

    @property
    def path(self) -> str:
        return self.files.log

    @property
    def base_offset(self) -> int:
        return self.files.base_offset

    @property
    def kafka_batches(self) -> tuple[RecordBatch, ...]:
        """The batches Kafka's reader yields (none found past a break)."""
        return tuple(b for b in self.batches if not b.after_break)

    @property
    def first_offset(self) -> int | None:
        return self.batches[0].base_offset if self.batches else None

    @property
    def last_offset(self) -> int | None:
        return max((b.last_offset for b in self.batches), default=None)

    @property
    def next_offset(self) -> int:
        """The offset after the last batch Kafka's reader yields (the base offset if none)."""
        return max((b.next_offset for b in self.batches if not b.after_break), default=self.base_offset)


@dataclass(frozen=True, slots=True)
class SmallFile:
    """A small file parsed once: ``value`` when it reads as Kafka reads it, else ``error``
    (one line) at ``position``."""

    path: str
    value: object | None = None
    error: str | None = None
    position: int = 0


@dataclass(frozen=True, slots=True)
class ProducerState:
    """The newest producer snapshot a broker would load (``None`` when none reads), and the
    findings of the ones it would delete on the way."""

    snapshot: tuple[str, int] | None
    entries: tuple[ProducerSnapshotEntry, ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True, slots=True)
class PartitionLog:
    """One replica of one partition, read once. Frozen: a command that relabels a replica or
    overrides its high watermark makes a new value with :meth:`relabelled`/:meth:`with_high_watermark`."""

    label: str
    partition: PartitionDir
    log_dir: LogDir
    checkpoints: LogDirCheckpoints
    broker_id: int | None
    segments: tuple[SegmentLog, ...]
    epoch_checkpoint: SmallFile | None
    partition_metadata: SmallFile | None
    producer_state: ProducerState
    batches: tuple[RecordBatch, ...]          # Kafka-visible batches of every segment, in order
    lineage: tuple[LineageEntry, ...]
    batch_cache: tuple[EpochEntry, ...]       # the cache Kafka's assign rule builds from the headers
    log_end_offset: int
    log_start_offset: int
    high_watermark: int | None
    hw_source: str
    recovery_point: int | None
    findings: tuple[Finding, ...] = field(default=())

    @property
    def path(self) -> str:
        return self.partition.path

    @property
    def name(self) -> str:
        return self.partition.label

    @property
    def key(self) -> tuple[str, int] | None:
        return self.partition.key

    def marker(self, batch: RecordBatch) -> ControlMarker | None:
        """The decoded marker of a control batch of this log (``None`` for other batches)."""
        for seg in self.segments:
            if seg.path == batch.path:
                return seg.markers.get(batch.position)
        return None

    @property
    def epoch_checkpoint_lines(self) -> tuple[EpochEntryLine, ...] | None:
        """The checkpoint's lines when it reads (``None`` when absent or unreadable)."""
        if self.epoch_checkpoint is None or self.epoch_checkpoint.error is not None:
            return None
        return self.epoch_checkpoint.value

    def relabelled(self, label: str) -> PartitionLog:
        return replace(self, label=label)

    def with_high_watermark(self, offset: int, source: str = "override") -> PartitionLog:
        return replace(self, high_watermark=offset, hw_source=source)


# -- the walk ------------------------------------------------------------------------------------


def read_segment_log(files: SegmentFiles, context: PartitionContext | None = None,
                     advance: Callable[[int], None] | None = None) -> SegmentLog:
    """Walk one segment: headers with CRCs checked, the walker's and cross-batch findings in file
    order, control markers; then the ``.txnindex`` sanity check Kafka's loader applies. Without
    ``context`` the segment is read alone (its cross-batch checks start afresh).
    ``advance(n_bytes)`` is told how far the walk got, every few MiB."""
    batches: list[RecordBatch] = []
    markers: dict[int, ControlMarker] = {}
    findings: list[Finding] = []
    with open_buffer(files.log) as buf:
        walk = BatchWalk(buf, files.log, files.base_offset, context, progress=advance)
        for item in walk:
            if type(item) is WalkedBatch:
                batch, found, marker = item
                batches.append(batch)
                if marker is not None:
                    markers[batch.position] = marker
                if found:
                    findings.extend(found)
            else:
                findings.append(item)
    end = walk.end
    return SegmentLog(files, end.file_size, end.valid_bytes, end.stopped_by, tuple(batches), markers,
                      tuple(findings), txn_index_below_base(files))


@contextmanager
def mapped_indexes(files: SegmentFiles) -> Iterator[dict[str, tuple[str, Buffer]]]:
    """The segment's index files that exist, by kind (``index``, ``timeindex``, ``txnindex``),
    each as its path and a read-only buffer over it, unmapped on exit."""
    with ExitStack() as stack:
        yield {kind: (path, stack.enter_context(open_buffer(path)))
               for kind, path in (("index", files.index), ("timeindex", files.timeindex), ("txnindex", files.txnindex))
               if path is not None}


def txn_index_below_base(files: SegmentFiles) -> bool:
    """Whether a ``.txnindex`` entry ends below the segment's base offset (``LogLoader``'s sanity check)."""
    if files.txnindex is None:
        return False
    with open_buffer(files.txnindex) as buf:
        for item in iter_txn_index(buf, path=files.txnindex, base_offset=files.base_offset):
            if isinstance(item, AbortedTxn) and item.last_offset < files.base_offset:
                return True
    return False


def _small_file(path: str | None, parse) -> SmallFile | None:
    if path is None:
        return None
    try:
        value = parse(read_bytes(path), path=path)
        return SmallFile(path, tuple(value) if isinstance(value, list) else value)
    except (FormatError, ValueError) as exc:
        position = exc.position if isinstance(exc, FormatError) and exc.position is not None else 0
        return SmallFile(path, None, str(exc), position)


def _producer_state(partition: PartitionDir) -> ProducerState:
    """The newest readable producer snapshot (Kafka deletes a corrupt one and tries the next older)."""
    findings = []
    for offset, path in sorted(partition.snapshots, reverse=True):
        try:
            snap = parse_producer_snapshot(read_bytes(path), path=path)
        except (FormatError, ValueError) as exc:
            findings.append(Finding("snapshot_corrupt", path, getattr(exc, "position", None) or 0,
                                    f"producer snapshot cannot be read ({exc}); the broker deletes it and tries the "
                                    "next older one"))
            continue
        if not snap.crc_valid:
            findings.append(Finding("snapshot_corrupt", path, 2,
                                    f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snap.crc}. Computed crc: "
                                    f"{snap.computed_crc}; the broker deletes it and tries the next older one"))
            continue
        return ProducerState((path, offset), tuple(snap.entries), tuple(findings))
    return ProducerState(None, (), tuple(findings))


def read_partition_log(partition: PartitionDir, log_dir: LogDir, *, label: str | None = None,
                       checkpoints: LogDirCheckpoints | None = None,
                       advance: Callable[[int], None] | None = None) -> PartitionLog:
    """Read one replica's partition directory: every segment walked once, every small file once.

    ``checkpoints`` may be passed when the log directory's files were already read (a whole log
    directory's partitions share them); ``advance`` receives bytes walked (a progress bar)."""
    cps = checkpoints if checkpoints is not None else read_checkpoints(log_dir)
    context = PartitionContext()
    segments = tuple(read_segment_log(files, context, advance) for files in partition.segments)
    return read_partition_files(partition, log_dir, cps, segments, label=label)


def read_partition_files(partition: PartitionDir, log_dir: LogDir, cps: LogDirCheckpoints,
                         segments: tuple[SegmentLog, ...] = (), *, label: str | None = None) -> PartitionLog:
    """The partition's small files (``leader-epoch-checkpoint``, ``partition.metadata``, producer
    snapshots) read once, around ``segments`` walked elsewhere (none: the fleet scan walks them
    in other tasks)."""
    return assemble_partition_log(
        partition, log_dir, cps, segments, label=label,
        epoch_checkpoint=_small_file(partition.leader_epoch_checkpoint, parse_leader_epoch_checkpoint),
        partition_metadata=_small_file(partition.partition_metadata, parse_partition_metadata),
        producer_state=_producer_state(partition))


def loaded_log_start(partition: PartitionDir, cps: LogDirCheckpoints) -> tuple[int, int]:
    """``(log start offset, base offset of the first segment)`` as a broker loads the partition
    (``LogLoader.load``): the log start is the later of ``log-start-offset-checkpoint`` and the
    first segment's base; a directory without segments gets an empty one at the checkpointed log
    start, so its log end is there too."""
    checkpointed = (cps.log_start_offsets or {}).get(partition.key, 0)
    first_base = partition.segments[0].base_offset if partition.segments else checkpointed
    return max(checkpointed, first_base), first_base


def assemble_partition_log(partition: PartitionDir, log_dir: LogDir, cps: LogDirCheckpoints,
                           segments: tuple[SegmentLog, ...], *, label: str | None = None,
                           epoch_checkpoint: SmallFile | None = None, partition_metadata: SmallFile | None = None,
                           producer_state: ProducerState | None = None, broker_id: int | None = None) -> PartitionLog:
    """The partition log from walked (or table-row) segments and the parsed small files; the
    broker id comes from ``meta.properties`` unless given."""
    if broker_id is None:
        broker_id = broker_id_of(cps)
    lineage = LineageBuilder()
    batches: list[RecordBatch] = []
    lso, end = loaded_log_start(partition, cps)
    findings = list(cps.findings)
    for seg in segments:
        findings.extend(seg.findings)
        for b in seg.batches:
            if b.after_break:
                continue
            batches.append(b)
            lineage.feed(b)
            nxt = b.next_offset
            if nxt > end:
                end = nxt
    key = partition.key
    hw, hw_source = None, "none"
    if key and cps.high_watermarks is not None and key in cps.high_watermarks:
        hw, hw_source = cps.high_watermarks[key], "replication-offset-checkpoint"
    rp = cps.recovery_points.get(key) if key and cps.recovery_points is not None else None
    if label is None:
        label = f"broker-{broker_id}" if broker_id is not None else partition.path
    return PartitionLog(
        label=label, partition=partition, log_dir=log_dir, checkpoints=cps, broker_id=broker_id, segments=segments,
        epoch_checkpoint=epoch_checkpoint, partition_metadata=partition_metadata,
        producer_state=producer_state or ProducerState(None, (), ()), batches=tuple(batches), lineage=lineage.runs,
        batch_cache=lineage.cache_entries, log_end_offset=end, log_start_offset=lso, high_watermark=hw,
        hw_source=hw_source, recovery_point=rp, findings=tuple(findings))


# -- from table rows -----------------------------------------------------------------------------

#: The columns of a batch-header row, in :class:`RecordBatch` order (``path`` is the segment file).
BATCH_COLUMNS = RecordBatch._fields


def partition_log_from_rows(partition: PartitionDir, log_dir: LogDir, cps: LogDirCheckpoints,
                            segment_rows: Iterable[Mapping], batch_rows: Iterable[Mapping], *,
                            marker_rows: Iterable[Mapping] = (), label: str | None = None,
                            epoch_checkpoint: SmallFile | None = None, partition_metadata: SmallFile | None = None,
                            broker_id: int | None = None, findings: Iterable[Finding] = ()) -> PartitionLog:
    """The same value from table rows: ``segment_rows`` carry ``path``, ``file_size``,
    ``valid_bytes``, ``stopped_by`` and optionally ``txn_index_below_base``; ``batch_rows`` carry
    :data:`BATCH_COLUMNS`; optional ``marker_rows`` carry :class:`ControlMarker` fields plus
    ``path``. ``findings`` (from the table of findings, their home) join the segment they name,
    in position order; others are left out, as the walk gives only its segments' findings."""
    by_path: dict[str, list[RecordBatch]] = {}
    for row in batch_rows:
        b = RecordBatch(*(row[c] for c in BATCH_COLUMNS))
        by_path.setdefault(b.path, []).append(b)
    markers: dict[str, dict[int, ControlMarker]] = {}
    for row in marker_rows:
        m = ControlMarker(*(row[c] for c in ControlMarker.__dataclass_fields__))
        markers.setdefault(row["path"], {})[m.position] = m
    files = {f.log: f for f in partition.segments}
    by_segment: dict[str, list[Finding]] = {}
    for f in findings:
        by_segment.setdefault(f.path, []).append(f)
    segments = []
    for row in segment_rows:
        path = row["path"]
        seg_files = files.get(path) or SegmentFiles(_base_offset_of(path), path)
        segments.append(SegmentLog(seg_files, row["file_size"], row["valid_bytes"], row["stopped_by"],
                                   tuple(sorted(by_path.get(path, ()), key=lambda b: b.position)),
                                   markers.get(path, {}),
                                   tuple(sorted(by_segment.get(path, ()), key=lambda f: f.position)),
                                   bool(row.get("txn_index_below_base"))))
    segments.sort(key=lambda s: s.base_offset)
    return assemble_partition_log(partition, log_dir, cps, tuple(segments), label=label,
                                  epoch_checkpoint=epoch_checkpoint, partition_metadata=partition_metadata,
                                  broker_id=broker_id)


def _base_offset_of(path: str) -> int:
    """The base offset a segment's file name declares (as Kafka reads it), else 0."""
    base = classify_partition_file(Path(path).name).base_offset
    return 0 if base is None else base


# -- batches' bytes and records, by position -----------------------------------------------------


class RecordsUnavailable(EvidenceError):
    """The records of a partition log cannot be read here: a segment file it was read from is
    gone, is not a local file (the fleet tables name remote evidence by its URI), or no longer
    has the size it had when its batch headers were read.

    Run the command where the evidence is, on the same copy that was scanned.
    """


#: a URI's scheme (``viewfs://``, ``hdfs://``, ``s3a://``...): evidence named by the fleet tables
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _segment_buffers(batches: Iterable[RecordBatch], opener) -> Iterator[tuple[RecordBatch, Buffer]]:
    """Each batch with a buffer over its segment file, one segment mapped at a time (``opener``
    maps a path), in the order given."""
    current: str | None = None
    stack = ExitStack()
    with stack:
        buf = None
        for b in batches:
            if b.path != current:
                stack.close()
                buf = stack.enter_context(opener(b.path))
                current = b.path
            yield b, buf


def _decode(buf: Buffer, b: RecordBatch) -> tuple[tuple[Record, ...], FormatError | None]:
    """The records of ``b`` Kafka's reader yields, and the error it raises after them (``None``:
    it reads them all)."""
    reader = legacy_records.iter_records if b.magic < 2 else default_records.iter_records
    records: list[Record] = []
    try:
        for record in reader(buf, b):
            records.append(record)
    except FormatError as exc:
        return tuple(records), exc
    return tuple(records), None


def iter_batch_contents(batches: Iterable[RecordBatch]) -> Iterator[tuple[RecordBatch, bytes, tuple[Record, ...]]]:
    """Each batch's exact bytes and its records, read at the position the walk recorded (no walk
    again), in the order given; records that do not decode are left out (the walk's findings say why)."""
    for b, buf in _segment_buffers(batches, open_buffer):
        yield b, bytes(buf[b.position:b.end]), _decode(buf, b)[0]


def _recorded_opener(log: PartitionLog):
    """Opens a segment of ``log`` for its records: :class:`RecordsUnavailable` when it is remote,
    gone, or no longer the size recorded for it."""
    sizes = {seg.path: seg.file_size for seg in log.segments}

    @contextmanager
    def recorded(path: str) -> Iterator[Buffer]:
        if _URI.match(path) and not path.startswith("file:"):
            raise RecordsUnavailable("is on a file system only Spark reads (the fleet scan fetched it): its records "
                                     "are not read again from here", path=path)
        with ExitStack() as stack:
            try:
                buf = stack.enter_context(open_buffer(path))
            except EvidenceError as exc:
                raise RecordsUnavailable(exc.reason, path=path) from exc
            if path in sizes and len(buf) != sizes[path]:
                raise RecordsUnavailable(f"is {len(buf)} bytes, not the {sizes[path]} it had when its batches were "
                                         "read", path=path)
            yield buf

    return recorded


def iter_batch_records(log: PartitionLog, batches: Iterable[RecordBatch]
                       ) -> Iterator[tuple[RecordBatch, tuple[Record, ...], bool]]:
    """Each of ``log``'s ``batches`` (in the order given) with its records, read at the position
    its walk or table row recorded, and whether Kafka's reader reads them all (``False``: it
    raises after the ones given). Only the segments of these batches are opened.

    Raises :class:`RecordsUnavailable` before yielding anything of a segment that cannot be
    opened or whose size is not the one recorded for it (another copy, or changed since)."""
    for b, records, error in iter_batch_records_with_errors(log, batches):
        yield b, records, error is None


def iter_batch_records_with_errors(log: PartitionLog, batches: Iterable[RecordBatch]
                                   ) -> Iterator[tuple[RecordBatch, tuple[Record, ...], FormatError | None]]:
    """:func:`iter_batch_records`, with the error Kafka's reader raises after a batch's records
    instead of a flag (``None``: it reads them all), for a caller that reports it
    (:func:`~kreplica.formats.log.segment.records_finding`)."""
    for b, buf in _segment_buffers(batches, _recorded_opener(log)):
        yield (b, *_decode(buf, b))
