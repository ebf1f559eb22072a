"""``inspect-log`` as an analysis: walk segments, decode what was asked, check what Kafka would
not, and emulate recovery — in one streaming pass per segment.

The segment walker (formats) reports damage it meets at a position. This module adds the
checks that need more than one batch (offsets and leader epochs must increase, also across the
segments of one partition; offsets must fit the segment's base offset), the record-level checks
of ``--records``, the decoding of internal topics' records (:mod:`.internal_records`), the
filters, the per-segment totals, and the recovery verdict. It yields events in file order so the
report layer can stream them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kreplica.analysis.inspect.internal_records import DecodedRecord, decode_records, record_decoder
from kreplica.analysis.log.recovery import RecoveryVerdict, SegmentRecovery
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.log.segment import records_finding
from kreplica.formats.mapped import Buffer
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.log.walk import BatchWalk, WalkedBatch
from kreplica.model.logdir.segments import SegmentFile, SegmentGroup, mapped_segments

@dataclass(frozen=True, slots=True)
class InspectOptions:
    """What to read and list. Filters select which batches (and records) are listed; findings,
    totals and the recovery verdict always cover the whole segment. ``decode_internal``: with
    ``records``, decode the records of Kafka's internal topics (every record, listed or not, so
    their findings too cover the whole segment)."""

    verify_crc: bool = True
    records: bool = False
    decode_internal: bool = True
    max_bytes: int | None = None
    first_offset: int | None = None
    last_offset: int | None = None
    producer_id: int | None = None
    leader_epoch: int | None = None
    transactional: bool | None = None
    control: bool | None = None

    @property
    def filtering(self) -> bool:
        """Whether any filter is set (scans skip the per-batch checks when none is)."""
        return (self.first_offset, self.last_offset, self.producer_id, self.leader_epoch, self.transactional,
                self.control) != (None,) * 6

    def wants(self, batch: RecordBatch) -> bool:
        """True when ``batch`` passes every filter."""
        if self.first_offset is not None and batch.last_offset < self.first_offset:
            return False
        if self.last_offset is not None and batch.base_offset > self.last_offset:
            return False
        if self.producer_id is not None and batch.producer_id != self.producer_id:
            return False
        if self.leader_epoch is not None and batch.partition_leader_epoch != self.leader_epoch:
            return False
        if self.transactional is not None and batch.is_transactional != self.transactional:
            return False
        if self.control is not None and batch.is_control != self.control:
            return False
        return True

    def wants_record(self, record: Record | DecodedRecord) -> bool:
        if self.first_offset is not None and record.offset < self.first_offset:
            return False
        if self.last_offset is not None and record.offset > self.last_offset:
            return False
        return True


@dataclass(frozen=True, slots=True)
class SegmentStart:
    """A segment is about to be read."""

    path: str
    base_offset: int | None
    size: int


@dataclass(frozen=True, slots=True)
class SegmentSummary:
    """Totals of one segment. ``valid_bytes`` is where Kafka's reader stops; ``recovery`` is
    ``None`` when it cannot be judged (``--no-verify-crc`` or ``--max-bytes`` cut the read)."""

    path: str
    batches: int
    records: int
    first_offset: int | None
    last_offset: int | None
    file_size: int
    valid_bytes: int
    trailing_bytes: int
    recovery: RecoveryVerdict | None
    stopped_by: str
    findings: int
    errors: int


Event = SegmentStart | RecordBatch | Record | DecodedRecord | Finding | SegmentSummary


def inspect_groups(groups: list[SegmentGroup], options: InspectOptions,
                   progress: Callable[[int], None] | None = None) -> Iterator[Event]:
    """Inspect every segment of every group, in order; see :func:`inspect_segment` (the
    group's topic says whether its records are an internal topic's)."""
    for group in groups:
        context = PartitionContext()
        for segment, buf in mapped_segments(group):
            yield from inspect_segment(segment, buf, options, context, progress, topic=group.topic)


def inspect_segment(segment: SegmentFile, buf: Buffer, options: InspectOptions,
                    context: PartitionContext | None = None,
                    progress: Callable[[int], None] | None = None, *, topic: str | None = None) -> Iterator[Event]:
    """Events for one segment, whose bytes are ``buf``: :class:`SegmentStart`, then batches
    (each followed by its records when asked) and findings in file order, then
    :class:`SegmentSummary`. The records of an internal ``topic`` are :class:`DecodedRecord`
    (with ``options.decode_internal``), any other's :class:`Record`."""
    context = context if context is not None else PartitionContext()
    label = segment.path
    yield SegmentStart(label, segment.base_offset, len(buf))
    base = segment.base_offset if segment.base_offset is not None else 0
    judge_recovery = options.verify_crc
    recovery = SegmentRecovery(buf, segment_base_offset=base)
    records = findings = errors = 0
    first = last = None
    filtering = options.filtering
    decode = options.records
    decoder = record_decoder(topic) if decode and options.decode_internal else None
    feed = recovery.feed
    walk = BatchWalk(buf, label, segment.base_offset, context, progress=progress, markers=False,
                     verify_crc=options.verify_crc, max_bytes=options.max_bytes)
    # NOTE: the per-batch path of every scan; bench/README.md has the figures
    for event in walk:
        if type(event) is WalkedBatch:
            batch, pending, _ = event
            if first is None:
                first = batch.base_offset
            if last is None or batch.last_offset > last:
                last = batch.last_offset
            if judge_recovery and not batch.after_break:  # no verdict without CRCs
                feed(batch)
            listed = not filtering or options.wants(batch)
            if listed:
                yield batch
            if decode:
                items = _records_of(buf, batch)
                if decoder is not None:
                    items = decode_records(items, batch, decoder)
                for item in items:
                    if isinstance(item, Finding):
                        pending.append(item)
                    else:
                        records += 1
                        if listed and (not filtering or options.wants_record(item)):
                            yield item
            if pending:
                for f in pending:
                    findings += 1
                    errors += f.is_error
                    yield f
        else:
            findings += 1
            errors += event.is_error
            yield event
    end = walk.end
    if not decode:
        records = walk.records
    if end.stopped_by == "max_bytes":
        judge_recovery = False
    verdict = recovery.verdict(len(buf)) if judge_recovery else None
    yield SegmentSummary(label, walk.batches, records, first, last, end.file_size, end.valid_bytes,
                         end.file_size - end.valid_bytes, verdict, end.stopped_by, findings, errors)


def _records_of(buf, batch: RecordBatch) -> Iterator[Record | Finding]:
    """The batch's records, then a finding if Kafka's reader would throw part way.

    A legacy message whose key or value cannot be read is yielded as Kafka's iterator yields
    it (with its key when that is readable, ``None`` for what is not), followed by an
    ``invalid_record`` finding saying which field Kafka would throw on.
    """
    damaged: list[tuple[Record, FormatError]] = []
    if batch.magic < 2:
        records = legacy_records.iter_records(buf, batch, on_damage=lambda r, e: damaged.append((r, e)))
    else:
        records = default_records.iter_records(buf, batch)
    try:
        for record in records:
            if batch.is_control and batch.magic >= 2 and record.control_type is None:
                yield Finding("invalid_record", batch.path, batch.position,
                              f"control record at offset {record.offset} has no valid control key "
                              "(Kafka: 'Invalid version found for control record' or too short)")
            yield record
            if damaged:
                for rec, exc in damaged:
                    field = exc.field or "value"
                    yield Finding("invalid_record", batch.path, batch.position,
                                  f"message at offset {rec.offset} (batch at byte {batch.position}): {exc.reason}; "
                                  f"Kafka's reader yields the record and throws when its {field} is read",
                                  details={"field": field, "offset": rec.offset})
                damaged.clear()
    except FormatError as exc:
        yield records_finding(batch, exc)
