"""``fleet scan``: every segment of every replica of a fleet, walked once, into Parquet tables.

Spark stages, each task running the same readers a single-partition command runs:

1. one task per log directory: its checkpoints, partition directories and small files
   (``leader-epoch-checkpoint``, ``partition.metadata``) → ``replicas`` rows and the list of
   segment files (a few hundred bytes per file reach the driver; nothing per batch does);
2. one task per group of segment files, balanced by size (a segment large enough to keep the
   other cores waiting is split into stretches that meet at batch boundaries,
   :func:`plan_stretches`; a split that does not hold — damage at a boundary — is dropped and
   that segment walked again whole, the one case a file is read twice): each walked once over mmap
   (:func:`~kreplica.formats.log.segment.iter_segment`), batch headers, control markers, the
   walker's findings, the checks across batches (:func:`~kreplica.model.batch_order.check_batch`)
   within the segment and, with ``--records``, one row per record → ``batches``, ``markers``,
   ``findings``, ``records``, and a :class:`SegmentWalk` summary per segment to the driver;
3. the checks across segments: from the summaries alone the driver finds the segments whose
   findings the segments before them would change (offsets or epochs going backwards across a
   segment boundary: damaged evidence, so none in a healthy fleet), and only those are checked
   again, from their ``batches`` rows, under the context before them. The driver then writes
   the ``segments`` table from the summaries.

Tasks write their rows straight to Parquet files under the output directory with Arrow, in
bounded row groups, so memory does not grow with segment size and no row passes through the
driver. The output directory must be on a file system the driver and every executor share.

Evidence on a file system only Spark reads (``hdfs://``, ``s3a://``...) takes the same stages
with the files fetched through Spark (:mod:`.remote`): stage 1 on a skeleton of each log
directory, stage 2 on each segment in memory, whole.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.log.control_marker import has_marker, read_control_marker
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import Buffer, EvidenceError, open_buffer
from kreplica.formats.log.segment import find_next_batch, iter_segment
from kreplica.model.batch_order import PartitionContext, check_batch
from kreplica.model.log_dir import LogDir, SegmentFiles, read_checkpoints, scan_log_dir
from kreplica.model.partition_log import read_partition_files, txn_index_below_base
from kreplica.pipeline import remote, tables
from kreplica.pipeline.layout import FleetLogDir, discover, local_path

ROW_GROUP = 1 << 16
#: The published tables, and the in-segment check findings stage 3 completes into ``findings``.
_SCHEMAS = {**tables.TABLES, "_checks": tables.FINDINGS}


@dataclass(frozen=True, slots=True)
class ScanTotals:
    """What a scan found, summed over tasks (small: one value each)."""

    replicas: int = 0
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    findings: int = 0
    errors: int = 0

    def __add__(self, other: ScanTotals) -> ScanTotals:
        return ScanTotals(*(a + b for a, b in zip(self._values(), other._values())))

    def _values(self) -> tuple[int, ...]:
        return (self.replicas, self.segments, self.bytes, self.batches, self.records, self.findings, self.errors)


class TableWriter:
    """Rows of one table, written as one Parquet file in row groups of :data:`ROW_GROUP` rows."""

    def __init__(self, out: Path, table: str, part: str, relabel=None) -> None:
        self.schema = _SCHEMAS[table]
        self.path = out / table / f"part-{part}.parquet"
        self._rows: list[tuple] = []
        self._writer: pq.ParquetWriter | None = None
        self._relabel = relabel
        self.rows_added = 0

    def add(self, row: tuple | dict) -> None:
        if self._relabel is not None:
            row = self._relabel(row)
        if isinstance(row, dict):
            row = tuple(row[name] for name in self.schema.names)
        self._rows.append(row)
        self.rows_added += 1
        if len(self._rows) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        columns = [pa.array(col, type=field.type) for col, field in zip(zip(*self._rows), self.schema)]
        self._rows.clear()
        self._write(columns)

    def _write(self, columns: list) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(str(self.path), self.schema)
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()


class BatchWriter(TableWriter):
    """The ``batches`` table: headers kept as the walker yields them, a replica key per run of
    them, and turned into columns only when a row group is written (no row tuple per batch)."""

    def __init__(self, out: Path, table: str, part: str, relabel=None) -> None:
        super().__init__(out, table, part, relabel)
        self._runs: list[tuple[tuple, list[RecordBatch]]] = []
        self._pending = 0

    def add_run(self, key: tuple, batches: list[RecordBatch]) -> None:
        self._runs.append((key, batches))
        self._pending += len(batches)
        self.rows_added += len(batches)
        if self._pending >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._runs:
            return
        columns: list[list] = [[] for _ in self.schema]
        n_key = len(tables.KEY_COLUMNS)
        for key, batches in self._runs:
            for i, value in enumerate(key):
                columns[i].extend([value] * len(batches))
            for i, values in enumerate(zip(*batches), n_key):
                columns[i].extend(values)
        self._runs, self._pending = [], 0
        self._write([pa.array(col, type=field.type) for col, field in zip(columns, self.schema)])


class _Writers(dict):
    """A part's table writers, opened on first use; ``relabel`` maps each row's staged paths."""

    def __init__(self, out: Path, part: str, relabel=None) -> None:
        super().__init__()
        self._out, self._part, self._relabel = out, part, relabel

    def __missing__(self, table: str) -> TableWriter:
        writer = self[table] = (BatchWriter if table == "batches" else TableWriter)(self._out, table, self._part,
                                                                                     self._relabel)
        return writer

    def close(self) -> None:
        for w in self.values():
            w.close()


# -- stage 1: log directories ----------------------------------------------------------------------


def _key(log_dir: FleetLogDir, partition) -> tuple:
    parsed = partition.parsed
    return (log_dir.broker, log_dir.path, parsed.topic if parsed else partition.name,
            parsed.partition if parsed else -1)


def scan_log_dirs(out: str, index: int, log_dirs: Iterable[FleetLogDir], relabel=None) -> Iterator[tuple]:
    """Stage 1 task: ``replicas`` rows and log-directory findings written; yields one
    ``("segment", key, SegmentFiles, size, txn_index_below_base)`` per segment for stage 2, then
    the task's totals. ``relabel`` maps staged paths to remote URIs (:mod:`.remote`)."""
    relabel = relabel or (lambda value: value)
    writers = _Writers(Path(out), f"logdirs-{index:05d}", relabel)
    totals = ScanTotals()
    try:
        for fleet_dir in log_dirs:
            log_dir: LogDir = scan_log_dir(fleet_dir.path)
            cps = read_checkpoints(log_dir)
            dir_key = (fleet_dir.broker, fleet_dir.path, None, None)
            for f in cps.findings:
                writers["findings"].add(tables.finding_row(dir_key, f))
                totals += ScanTotals(findings=1, errors=int(f.is_error))
            for partition in log_dir.partitions:
                key = _key(fleet_dir, partition)
                log = read_partition_files(partition, log_dir, cps)
                writers["replicas"].add(tables.replica_row(key, fleet_dir.broker_source, log))
                for f in log.producer_state.findings:
                    writers["findings"].add(tables.finding_row(key, f))
                    totals += ScanTotals(findings=1, errors=int(f.is_error))
                totals += ScanTotals(replicas=1)
                for files in partition.segments:
                    yield relabel(("segment", key, files, os.path.getsize(files.log), txn_index_below_base(files)))
    finally:
        writers.close()
    yield ("totals", totals)


# -- stage 2: segments ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stretch:
    """Stage 2 work: one segment, or one of ``chunks`` stretches of a large one. A stretch is
    given by guesses (``begin`` and ``until``, byte positions); the task starts at the first
    batch at or after ``begin`` (:func:`find_next_batch`) and walks to the first one at or after
    ``until``, so the stretches of a segment meet at batch boundaries every task finds alike."""

    key: tuple
    files: SegmentFiles
    size: int
    chunk: int = 0
    chunks: int = 1
    begin: int = 0
    until: int | None = None
    txn_index_below_base: bool = False  # read with the segment's directory in stage 1


@dataclass(frozen=True, slots=True)
class SegmentWalk:
    """What a stage 2 task tells the driver about one segment or stretch: a few hundred bytes,
    nothing per batch.

    ``context`` is what :func:`check_batch` leaves after the stretch's batches checked on their
    own; with ``min_base_offset`` and ``min_epoch`` it lets the driver tell, without the batches,
    whether the batches before would change any of its findings (stage 3). A stretch ``start``
    to ``stop`` (``None``: the end of the file; ``start`` ``None``: no batch to walk) is part
    of the whole walk when the stretch before it ended cleanly: ``scanned_bytes`` and
    ``valid_bytes`` both at its ``stop``.
    """

    stretch: Stretch
    start: int | None
    stop: int | None
    file_size: int
    scanned_bytes: int
    valid_bytes: int
    stopped_by: str
    txn_index_below_base: bool
    findings: int          # the walker's and the records' findings
    checks: int            # findings of the checks across batches, within the stretch
    check_errors: int
    part: str              # part files: its batch rows are batches/part-<part> rows
    first_row: int         # [first_row, first_row + rows)
    rows: int
    min_base_offset: int | None
    min_epoch: int | None
    context: PartitionContext
    totals: ScanTotals

    @property
    def key(self) -> tuple:
        return self.stretch.key

    @property
    def files(self) -> SegmentFiles:
        return self.stretch.files

    @property
    def order(self) -> tuple:
        return (self.files.base_offset, self.files.log, self.start or 0)

    @property
    def ends_cleanly(self) -> bool:
        return self.stop is None or self.scanned_bytes == self.valid_bytes == self.stop


def scan_segments(out: str, records: bool, payloads: bool, index: int,
                  stretches: Iterable[Stretch | tuple[Stretch, Buffer]]) -> Iterator[SegmentWalk]:
    """Stage 2 task: walk each segment or stretch once, write its rows, yield its summary. A
    stretch of a split segment writes part files of its own, dropped if the split fails. A
    ``(stretch, buffer)`` pair is a whole segment already in memory (fetched through Spark)."""
    part = f"segments-{index:05d}-{uuid.uuid4().hex[:8]}"
    writers = _Writers(Path(out), part)
    try:
        for n, item in enumerate(stretches):
            stretch, buf = item if isinstance(item, tuple) else (item, None)
            if stretch.chunks == 1:
                yield _scan_segment(writers, part, stretch, records, payloads, buf)
                continue
            own_part = f"{part}-s{n:05d}"
            own = _Writers(Path(out), own_part)
            try:
                yield _scan_segment(own, own_part, stretch, records, payloads)
            finally:
                own.close()
    finally:
        writers.close()


def scan_fetched_segments(out: str, records: bool, payloads: bool, index: int, by_uri: dict[str, Stretch],
                          rows: Iterable[tuple[str, bytes]]) -> Iterator[SegmentWalk]:
    """Stage 2 task on remote evidence: each ``(uri, content)`` Spark fetched is a whole
    segment, walked from memory as :func:`scan_segments` walks a mapped one."""
    def pairs():
        for uri, content in rows:
            stretch = by_uri.get(uri)
            if stretch is None:
                raise EvidenceError("Spark returned a segment under a name kreplica did not list", path=uri)
            yield stretch, memoryview(content)
    return scan_segments(out, records, payloads, index, pairs())


def _scan_segment(writers: _Writers, part: str, stretch: Stretch, records: bool, payloads: bool,
                  fetched: Buffer | None = None) -> SegmentWalk:
    key, files = stretch.key, stretch.files
    batches, checks = writers["batches"], writers["_checks"]
    first_row = batches.rows_added
    n_batches = n_records = n_findings = n_errors = n_checks = n_check_errors = 0
    first_valid = first_epoch = None  # the first batch check_batch reads, and the first with an epoch
    min_base = min_epoch = None       # below those only where check_batch found a regression
    context = PartitionContext()
    base = files.base_offset
    run: list[RecordBatch] = []
    end = None
    with open_buffer(files.log) if fetched is None else nullcontext(fetched) as buf:
        start = stop = None
        if stretch.chunk == 0:
            start = 0
        elif stretch.begin < len(buf):
            start = find_next_batch(buf, stretch.begin, len(buf))
        if stretch.until is not None and stretch.until < len(buf):
            stop = find_next_batch(buf, stretch.until, len(buf))
        # NOTE: the per-batch path of a fleet scan; bench/bench_fleet.py has the figures
        for ev in iter_segment(buf, path=files.log, start=len(buf) if start is None else start, stop=stop):
            if type(ev) is RecordBatch:
                run.append(ev)
                if len(run) >= ROW_GROUP:
                    batches.add_run(key, run)
                    n_batches += len(run)
                    run = []
                if ev.crc_valid is not False:
                    if first_valid is None:
                        first_valid = ev
                    if first_epoch is None and ev.magic >= 2 and ev.partition_leader_epoch >= 0:
                        first_epoch = ev
                    found = check_batch(ev, base, context)
                    if found:  # offsets or epochs going backwards: the only way below the first
                        min_base = ev.base_offset if min_base is None else min(min_base, ev.base_offset)
                        if ev.magic >= 2 and ev.partition_leader_epoch >= 0:
                            epoch = ev.partition_leader_epoch
                            min_epoch = epoch if min_epoch is None else min(min_epoch, epoch)
                        for f in found:
                            checks.add(tables.finding_row(key, f))
                            n_checks += 1
                            n_check_errors += f.is_error
                if ev.is_control and has_marker(ev):
                    writers["markers"].add(tables.marker_row(key, files.log, read_control_marker(buf, ev)))
                if records:
                    for item in _records(key, buf, ev, payloads):
                        if isinstance(item, Finding):
                            writers["findings"].add(tables.finding_row(key, item))
                            n_findings += 1
                            n_errors += item.is_error
                        else:
                            writers["records"].add(item)
                            n_records += 1
                else:
                    count = ev.count
                    n_records += count if count is not None and count > 0 else (
                        max(ev.last_offset - ev.base_offset + 1, 1) if count is None else 0)
            elif isinstance(ev, Finding):
                writers["findings"].add(tables.finding_row(key, ev))
                n_findings += 1
                n_errors += ev.is_error
            else:
                end = ev
    if run:
        batches.add_run(key, run)
        n_batches += len(run)
    if first_valid is not None:
        min_base = first_valid.base_offset if min_base is None else min(min_base, first_valid.base_offset)
    if first_epoch is not None:
        epoch = first_epoch.partition_leader_epoch
        min_epoch = epoch if min_epoch is None else min(min_epoch, epoch)
    first = stretch.chunk == 0
    totals = ScanTotals(segments=int(first), bytes=end.file_size if first else 0, batches=n_batches,
                        records=n_records, findings=n_findings + n_checks, errors=n_errors + n_check_errors)
    return SegmentWalk(stretch, start, stop, end.file_size, end.scanned_bytes, end.valid_bytes, end.stopped_by,
                       stretch.txn_index_below_base if first else False, n_findings, n_checks, n_check_errors,
                       part, first_row, batches.rows_added - first_row, min_base, min_epoch, context, totals)


def _records(key: tuple, buf, batch: RecordBatch, payloads: bool) -> Iterator[tuple | Finding]:
    """Record rows of one batch (offset, timestamp, sizes and XXH64 of key and value), then a
    finding where Kafka's reader would throw — as ``inspect-log --records`` reports it."""
    reader = legacy_records.iter_records if batch.magic < 2 else default_records.iter_records
    digest = xxhash.xxh64_intdigest
    try:
        for r in reader(buf, batch):
            k, v = r.key, r.value
            yield (*key, batch.path, r.batch_position, r.offset, r.timestamp,
                   -1 if k is None else len(k), -1 if v is None else len(v),
                   None if k is None else digest(k), None if v is None else digest(v),
                   bytes(k) if payloads and k is not None else None, bytes(v) if payloads and v is not None else None)
    except FormatError as exc:
        kind = "decompression_error" if "decompress" in exc.reason else "invalid_record"
        yield Finding(kind, batch.path, batch.position,
                      f"batch at byte {batch.position} (offsets {batch.base_offset}-{batch.last_offset}): {exc.reason}",
                      details={"field": exc.field} if exc.field else {})


# -- stage 3: checks across segments -------------------------------------------------------------


def _unchanged_by(before: PartitionContext, walk: SegmentWalk) -> bool:
    """Whether checking the segment after ``before`` gives exactly the findings it gave alone:
    true when every batch starts above the offsets before it and no epoch is below theirs (then
    the first batch checked takes over the context either way, and every later one sees the same)."""
    return ((before.last_batch is None or walk.min_base_offset is None
             or walk.min_base_offset > before.last_batch.last_offset)
            and (walk.min_epoch is None or walk.min_epoch >= before.max_epoch))


def _after(before: PartitionContext, alone: PartitionContext) -> PartitionContext:
    """The context after a segment, from the one before it and the one it leaves alone: the first
    batch to reach the highest last offset, and the last to carry the highest epoch."""
    last = before.last_batch
    if alone.last_batch is not None and (last is None or alone.last_batch.last_offset > last.last_offset):
        last = alone.last_batch
    if alone.max_epoch_batch is not None and alone.max_epoch >= before.max_epoch:
        return PartitionContext(last, alone.max_epoch, alone.max_epoch_batch)
    return PartitionContext(last, before.max_epoch, before.max_epoch_batch)


def segments_to_recheck(walks: Iterable[SegmentWalk]) -> list[tuple[SegmentWalk, PartitionContext]]:
    """Each replica's segments in log order, with the context the segments before them leave:
    those whose findings the earlier segments would change (none in a healthy log), each with
    the context to check it under."""
    by_replica: dict[tuple, list[SegmentWalk]] = {}
    for w in walks:
        by_replica.setdefault(w.key, []).append(w)
    out = []
    for seq in by_replica.values():
        context = PartitionContext()
        for w in sorted(seq, key=lambda w: w.order):
            if not _unchanged_by(context, w):
                out.append((w, context))
            context = _after(context, w.context)
    return out


def recheck_segments(out: str, part: str, work: list[tuple[SegmentWalk, PartitionContext]]) -> Iterator[tuple]:
    """Stage 3 task, for one stage 2 part: its in-segment check findings kept except those of the
    segments to recheck, which are checked again from their batch rows under the context before
    them; yields ``((file, start), findings, errors)`` per rechecked segment or stretch."""
    root = Path(out)
    redo = {w.files.log for w, _ in work}
    writers = _Writers(root, f"checks-{part}")
    try:
        checks = root / "_checks" / f"part-{part}.parquet"
        if checks.is_file():
            for rows in pq.ParquetFile(str(checks)).iter_batches(batch_size=ROW_GROUP):
                for row in rows.to_pylist():
                    if row["path"] not in redo:
                        writers["findings"].add(row)
        batches = pq.ParquetFile(str(root / "batches" / f"part-{part}.parquet"))
        fields = tables.BATCH_FIELDS
        for walk, before in work:
            context = PartitionContext(before.last_batch, before.max_epoch, before.max_epoch_batch)
            n = errors = 0
            for row in _row_range(batches, walk.first_row, walk.rows):
                batch = RecordBatch(*(row["file" if f == "path" else f] for f in fields))
                for f in check_batch(batch, walk.files.base_offset, context):
                    writers["findings"].add(tables.finding_row(walk.key, f))
                    n += 1
                    errors += f.is_error
            yield ((walk.files.log, walk.start), n, errors)
    finally:
        writers.close()


def _row_range(parquet: pq.ParquetFile, first: int, count: int) -> Iterator[dict]:
    """Rows ``[first, first + count)`` of a Parquet file, one row group in memory at a time."""
    start = 0
    for i in range(parquet.num_row_groups):
        n = parquet.metadata.row_group(i).num_rows
        if start + n > first and start < first + count:
            group = parquet.read_row_group(i)
            lo = max(first - start, 0)
            yield from group.slice(lo, min(first + count - start, n) - lo).to_pylist()
        start += n


# -- the job -------------------------------------------------------------------------------------


def prepare_output(out: str) -> Path:
    """The output directory: created, or an existing empty one; never written over."""
    path = local_path(out)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise EvidenceError("exists and is not an empty directory: fleet scan never writes over earlier output",
                            path=out)
    if not path.parent.is_dir():
        raise EvidenceError("the parent directory does not exist", path=out)
    path.mkdir(exist_ok=True)
    return path


def _balanced(stretches: list[Stretch], slices: int) -> list[list[Stretch]]:
    """Work dealt largest first to the least loaded slice (longest-processing-time first)."""
    bins: list[list[Stretch]] = [[] for _ in range(slices)]
    loads = [0] * slices
    for item in sorted(stretches, key=lambda s: -s.size):
        i = loads.index(min(loads))
        bins[i].append(item)
        loads[i] += item.size
    return [b for b in bins if b]


#: Tasks per core in each stage: enough to even out segments of unequal size, few enough that
#: PySpark's cost per task stays small beside the walking.
TASKS_PER_CORE = 2

#: A segment is split only into stretches of at least this many bytes.
MIN_STRETCH = 64 << 20


def plan_stretches(segments: list[tuple], parallelism: int) -> list[Stretch]:
    """One unit of work per segment, and large segments split when that helps: when a segment
    is over twice the share of bytes each task would get (a straggler the other cores would
    wait for), into stretches of about half that share, so the tasks can be balanced."""
    total = sum(segment[2] for segment in segments)
    share = max(MIN_STRETCH, -(-total // max(2 * TASKS_PER_CORE * parallelism, 1)))
    out = []
    for key, files, size, txn_below in segments:
        if size <= 2 * share:
            out.append(Stretch(key, files, size, txn_index_below_base=txn_below))
            continue
        n = -(-size // share)
        for k in range(n):
            out.append(Stretch(key, files, size // n, k, n, k * size // n, (k + 1) * size // n if k < n - 1 else None,
                               txn_below))
    return out


def join_stretches(walks: list[SegmentWalk]) -> tuple[list[SegmentWalk], list[SegmentWalk]]:
    """The walks that stand, and the stretches of segments whose split failed: a stretch did not
    end cleanly at the batch the next one began at (damage, or a batch-like payload there). Those
    segments are walked again whole; nothing else is read twice."""
    by_file: dict[str, list[SegmentWalk]] = {}
    kept, failed = [], []
    for w in walks:
        if w.stretch.chunks == 1:
            kept.append(w)
        else:
            by_file.setdefault(w.files.log, []).append(w)
    for seq in by_file.values():
        seq.sort(key=lambda w: w.stretch.chunk)
        ok = len(seq) == seq[0].stretch.chunks and all(w.ends_cleanly for w in seq[:-1])
        (kept if ok else failed).extend(seq)
    return kept, failed


def _drop_parts(out: Path, walks: list[SegmentWalk]) -> None:
    for w in walks:
        for file in out.glob(f"*/part-{w.part}.parquet"):
            file.unlink()


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """A checked scan: the fleet's log directories and an output directory ready for the tables.
    Remote evidence (:mod:`.remote`) is found once Spark, whose connectors read it, has started."""

    log_dirs: tuple[FleetLogDir, ...]
    out: Path
    root: str = ""
    remote: bool = False

    @property
    def session_options(self) -> dict:
        """How :func:`~kreplica.pipeline.session.spark_session` should start Spark for this scan:
        for local evidence the JVM only schedules (a light driver); for remote evidence it reads
        every file whole for the tasks, so it keeps the optimising compiler and the default
        collector, and gets room for the files in flight (:data:`remote.TASK_HEAP` a task)."""
        return {"light_driver": False, "task_heap": remote.TASK_HEAP} if self.remote else {"light_driver": True}


def plan_scan(root: str, out: str) -> ScanPlan:
    """Find the fleet and prepare the output before any Spark start-up (bad input fails fast)."""
    if remote.is_remote(out):
        raise EvidenceError("the tables are written by the tasks with Arrow, so --out must be a path the driver "
                            "and every executor share (a local directory in local mode)", path=out)
    if remote.is_remote(root):
        return ScanPlan((), prepare_output(out), root, True)
    log_dirs = tuple(discover(root))
    return ScanPlan(log_dirs, prepare_output(out), root)


def run_scan(spark, plan: ScanPlan, *, records: bool = False, payloads: bool = False) -> ScanTotals:
    """Scan the fleet into Parquet tables under ``plan.out``."""
    log_dirs, out_path = list(plan.log_dirs), plan.out
    out_s = str(out_path)
    sc = spark.sparkContext
    sc.setJobDescription("kreplica fleet scan: log directories")
    # NOTE: a PySpark task costs ~0.1-0.2 s however small; bench/bench_fleet.py has the figures
    tasks = max(sc.defaultParallelism * TASKS_PER_CORE, 1)
    if plan.remote:
        stage1 = _scan_remote_log_dirs(spark, plan.root, out_s, tasks)
    else:
        stage1 = sc.parallelize(log_dirs, min(len(log_dirs), tasks)).mapPartitionsWithIndex(
            lambda i, it: scan_log_dirs(out_s, i, it)).collect()
    segments = [item[1:] for item in stage1 if item[0] == "segment"]
    totals = sum((item[1] for item in stage1 if item[0] == "totals"), ScanTotals())

    def walk(stretches: list[Stretch], what: str) -> list[SegmentWalk]:
        if not stretches:
            return []
        slices = _balanced(stretches, min(len(stretches), tasks))
        sc.setJobDescription(f"kreplica fleet scan: {what}")
        return sc.parallelize(slices, len(slices)).mapPartitionsWithIndex(
            lambda i, it: scan_segments(out_s, records, payloads, i, (s for group in it for s in group))).collect()

    if plan.remote:
        walks = _walk_fetched(spark, segments, out_s, records, payloads, tasks)
    else:
        walks, failed = join_stretches(walk(plan_stretches(segments, sc.defaultParallelism), "segments"))
        if failed:
            _drop_parts(out_path, failed)
            whole = {w.files.log: replace(w.stretch, size=w.file_size, chunk=0, chunks=1, begin=0, until=None)
                     for w in failed}
            walks += walk(list(whole.values()), "segments whose split failed, whole")
    totals = sum((w.totals for w in walks), totals)
    checks = {(w.files.log, w.start): (w.checks, w.check_errors) for w in walks}
    by_part: dict[str, list] = {}
    for w, before in segments_to_recheck(walks):
        by_part.setdefault(w.part, []).append((w, before))
    if by_part:
        sc.setJobDescription("kreplica fleet scan: checks across segments")
        parts = sorted(by_part.items())
        for at, n, errors in sc.parallelize(parts, len(parts)).flatMap(
                lambda item: recheck_segments(out_s, item[0], item[1])).collect():
            old_n, old_errors = checks[at]
            totals += ScanTotals(findings=n - old_n, errors=errors - old_errors)
            checks[at] = (n, errors)
    _publish_checks(out_path, set(by_part))
    _write_segments(out_path, walks, checks)
    _write_empty_tables(out_path, records)
    return totals


# -- remote evidence (hdfs://, s3a://, ...: read through Spark's connectors) ----------------------


def scan_fetched_log_dirs(out: str, index: int, tree: remote.RemoteTree, log_dirs: list[FleetLogDir],
                          rows: Iterable[tuple[str, bytes]]) -> Iterator[tuple]:
    """Stage 1 task on remote evidence: ``log_dirs`` (URIs) staged as skeletons in a local
    temporary directory, the files the readers read written there from the fetched ``(uri,
    content)`` rows, then scanned as :func:`scan_log_dirs` scans a local one, every path in
    rows and results given as its URI."""
    with tempfile.TemporaryDirectory(prefix="kreplica-stage-") as tmp:
        staging = remote.Staging(tmp, tree)
        entries = [e for d in log_dirs for e in tree.under(d.path)]
        staging.build(entries)
        for uri, content in rows:
            staging.put(uri, content)
        staging.check_complete(entries)
        staged = [replace(d, path=staging.local(d.path)) for d in log_dirs]
        yield from scan_log_dirs(out, index, staged, staging.relabel)


def _scan_remote_log_dirs(spark, root: str, out: str, tasks: int) -> list[tuple]:
    """Stage 1 on remote evidence: the tree listed and its log directories found on the driver,
    then each log directory scanned in a task from the small files Spark fetches for it."""
    sc = spark.sparkContext
    tree = remote.list_tree(spark, root)
    log_dirs = _discover_remote(tree)
    slot = {d.path: i for i, d in enumerate(log_dirs)}
    uris = tree.fetched(e for d in log_dirs for e in tree.under(d.path))
    remote.refuse_globs(uris)
    n = min(len(log_dirs), tasks)

    def owner(uri: str) -> int:  # a log directory's own file, or a file of one of its partitions
        parent = uri.rpartition("/")[0]
        return slot[parent] if parent in slot else slot[parent.rpartition("/")[0]]

    if uris:
        fetched = remote.fetch(sc, uris, n).map(lambda pair: (owner(pair[0]), pair))
    else:
        fetched = sc.parallelize([], n).map(lambda row: row)
    shipped = sc.broadcast(tree)
    sc.setJobDescription("kreplica fleet scan: log directories")
    return fetched.partitionBy(n, lambda k: k).mapPartitionsWithIndex(
        lambda i, it: scan_fetched_log_dirs(out, i, shipped.value, log_dirs[i::n], (v for _, v in it))).collect()


def _discover_remote(tree: remote.RemoteTree) -> list[FleetLogDir]:
    """The fleet's log directories, found by :func:`discover` on a skeleton of the tree."""
    with tempfile.TemporaryDirectory(prefix="kreplica-skeleton-") as tmp:
        staging = remote.Staging(tmp, tree)
        staging.build(tree.entries, placeholders_for_content=True)
        try:
            return [staging.relabel(d) for d in discover(tmp)]
        except EvidenceError as exc:
            raise EvidenceError(staging.relabel(exc.reason), path=staging.relabel(exc.path)) from None


#: A fetched segment is one binary value: Spark's limit for one.
MAX_FETCHED_SEGMENT = (1 << 31) - 1


def _walk_fetched(spark, segments: list[tuple], out: str, records: bool, payloads: bool,
                  tasks: int) -> list[SegmentWalk]:
    """Stage 2 on remote evidence: each segment fetched as one value and walked whole in memory;
    Spark packs segments into about ``tasks`` tasks of even size."""
    stretches = {files.log: Stretch(key, files, size, txn_index_below_base=txn) for key, files, size, txn in segments}
    if not stretches:
        return []
    remote.refuse_globs(stretches)
    for uri, s in stretches.items():
        if s.size > MAX_FETCHED_SEGMENT:
            raise EvidenceError(f"is {s.size} bytes: Spark fetches a file as one value of at most 2 GiB; mount the "
                                "store and give the mount path to walk it mapped", path=uri)
    sc = spark.sparkContext
    shipped = sc.broadcast(stretches)
    sc.setJobDescription("kreplica fleet scan: segments")
    return remote.fetch(sc, list(stretches), tasks).mapPartitionsWithIndex(
        lambda i, pairs: scan_fetched_segments(out, records, payloads, i, shipped.value, pairs)).collect()


def _publish_checks(out: Path, rewritten: set[str]) -> None:
    """The in-segment check findings of every part stage 3 did not rewrite join ``findings``."""
    checks = out / "_checks"
    if checks.is_dir():
        (out / "findings").mkdir(exist_ok=True)
        for file in checks.glob("part-*.parquet"):
            part = file.name[len("part-"):-len(".parquet")]
            if part not in rewritten:
                file.rename(out / "findings" / f"part-checks-{part}.parquet")
        shutil.rmtree(checks)


def _write_segments(out: Path, walks: list[SegmentWalk], checks: dict[tuple, tuple[int, int]]) -> None:
    """The ``segments`` table, one row per segment (its stretches joined), with its finding count."""
    by_file: dict[str, list[SegmentWalk]] = {}
    for w in walks:
        by_file.setdefault(w.files.log, []).append(w)
    writer = TableWriter(out, "segments", "00000")
    for seq in by_file.values():
        seq.sort(key=lambda w: w.stretch.chunk)
        first = seq[0]
        last = next(w for w in seq if w.stop is None)  # the stretch that walked to the end of the file
        findings = sum(w.findings + checks[(w.files.log, w.start)][0] for w in seq)
        writer.add(tables.segment_row(first.key, first.files, first.file_size, last.valid_bytes, last.stopped_by,
                                      findings, first.txn_index_below_base))
    writer.close()


def _write_empty_tables(out: Path, records: bool) -> None:
    """Every table readable even when no task wrote a row to it."""
    for name in ("replicas", "segments", "batches", "markers", "findings", *(("records",) if records else ())):
        directory = out / name
        if not directory.is_dir() or not any(directory.glob("*.parquet")):
            directory.mkdir(parents=True, exist_ok=True)
            pq.write_table(_SCHEMAS[name].empty_table(), str(directory / "part-empty.parquet"))
