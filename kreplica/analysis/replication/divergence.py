"""Where replicas of one partition differ over their whole logs: batch by batch, then record by
record where the batches differ.

Two replicas agree on a batch when it has the same base and last offsets, leader epoch and CRC
there. Walking both logs in offset order gives the identical prefix, the first offset where
they hold different data, every divergent range (including a divergent middle followed by an
identical tail, the KAFKA-6880 "zombie" case), and the ranges only one of them holds — each
annotated with the replicas' high watermarks.

Different batches are not always different data: a replica may hold the same records cut into
other batches, or compressed otherwise. Where the batches differ, the records decide, read
through the model for those batches only
(:func:`~kreplica.model.log.partition_log.iter_batch_records`): the same record at every offset —
offset, timestamp and its type, key, value, headers, and what Kafka keeps of its batch for each
record (leader epoch, producer id, epoch and sequence, transactional and control flags) — makes
the range ``same_records``, which is not divergence; when one side's records stop early and are
otherwise the same, the rest is that side's ``only`` range, as for a shorter log. The headers
settle it without reading when two batches with a record at every offset share one whose
per-record attributes differ. Where the records cannot be read (``fleet analyze`` away from the
evidence), the range is ``batches_differ`` and ``records_unread`` says why.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from itertools import combinations, zip_longest

from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log.partition_log import PartitionLog, RecordsUnavailable, iter_batch_records
from kreplica.analysis.replication.ranges import Range, extend
from kreplica.model.log.replica import require_one_partition

#: The replicas hold different records at these offsets.
DIVERGENT = "divergent"
#: The batches differ, every record is the same: not divergence of data.
SAME_RECORDS = "same_records"
#: The batches differ and the records could not be read to tell whether the data does.
BATCHES_DIFFER = "batches_differ"


@dataclass(frozen=True, slots=True)
class DivergentRange:
    first: int
    last: int
    kind: str                      # DIVERGENT, SAME_RECORDS, BATCHES_DIFFER or "only_<label>"
    below_high_watermark: dict     # label -> bool: does the range start below that replica's HW


@dataclass(frozen=True, slots=True)
class Divergence:
    partition: str
    replicas: tuple[str, str]
    first_divergent_offset: int | None
    common_prefix_end: int
    ranges: tuple[DivergentRange, ...]
    high_watermarks: dict
    records_unread: str | None = None   # why the records of BATCHES_DIFFER ranges could not be read

    @property
    def differs(self) -> bool:
        """Whether the replicas hold different data, or may: any range but ``same_records``."""
        return any(r.kind != SAME_RECORDS for r in self.ranges)


def _per_record(b: RecordBatch) -> tuple:
    """What a batch gives each of its records besides the record's own fields."""
    return (b.timestamp_type, b.partition_leader_epoch, b.producer_id, b.producer_epoch, b.is_transactional,
            b.is_control)


def _dense(b: RecordBatch) -> bool:
    """A v2 batch with a record at every offset it spans (``count == lastOffsetDelta + 1``)."""
    return b.magic >= 2 and b.count == b.offset_span


def _headers_differ(xs: Sequence[RecordBatch], ys: Sequence[RecordBatch], start: int) -> bool:
    """Whether the headers alone show other records from ``start`` on: two batches with a record
    at every offset share one whose per-record attributes differ."""
    i = j = 0
    while i < len(xs) and j < len(ys):
        x, y = xs[i], ys[j]
        if (max(x.base_offset, y.base_offset, start) <= min(x.last_offset, y.last_offset)
                and _dense(x) and _dense(y) and _per_record(x) != _per_record(y)):
            return True
        if x.last_offset < y.last_offset:
            i += 1
        else:
            j += 1
    return False


def _record_identities(log: PartitionLog, batches: Sequence[RecordBatch], start: int) -> Iterator[object]:
    """Each record of ``batches`` from ``start`` on as what Kafka keeps of it, in offset order; a
    batch Kafka's reader cannot read whole ends the stream with a value equal to nothing."""
    with closing(iter_batch_records(log, batches)) as contents:
        for b, records, whole in contents:
            kept = _per_record(b)
            for r in records:
                if r.offset >= start:
                    yield (r.offset, r.timestamp, r.key, r.value, r.headers, r.sequence, r.control_type,
                           r.coordinator_epoch, *kept)
            if not whole:
                yield object()
                return


@dataclass(frozen=True, slots=True)
class _Prefix:
    """One side's records are the other's up to ``last_common``, then ``longer`` holds more."""

    longer: str
    last_common: int


def _compare_records(a: PartitionLog, xs: Sequence[RecordBatch], b: PartitionLog, ys: Sequence[RecordBatch],
                     start: int) -> bool | _Prefix:
    """Both sides' records from ``start`` on, side by side up to the first difference: ``True``
    the same, ``False`` different, or a :class:`_Prefix`. Raises :class:`RecordsUnavailable`
    when either side's cannot be read."""
    last_common = None
    with closing(_record_identities(a, xs, start)) as left, closing(_record_identities(b, ys, start)) as right:
        for x, y in zip_longest(left, right):
            if x == y:
                last_common = x[0]
                continue
            extra = x if y is None else y if x is None else None
            if last_common is None or type(extra) is not tuple:
                return False
            return _Prefix(a.label if y is None else b.label, last_common)
    return True


def _classify(a: PartitionLog, xs: Sequence[RecordBatch], b: PartitionLog, ys: Sequence[RecordBatch], lo: int,
              hi: int, start: int) -> tuple[list[tuple[int, int, str]], str | None]:
    """The ranges of overlapping batches ``lo``-``hi`` that differ, judged from ``start`` on:
    divergent, the same records, the same records then more on one side (as a shorter log is a
    prefix), or not compared (with why the records could not be read)."""
    if _headers_differ(xs, ys, start):
        return [(lo, hi, DIVERGENT)], None
    try:
        outcome = _compare_records(a, xs, b, ys, start)
    except RecordsUnavailable as exc:
        return [(lo, hi, BATCHES_DIFFER)], str(exc)
    if isinstance(outcome, _Prefix):
        return [(lo, outcome.last_common, SAME_RECORDS), (outcome.last_common + 1, hi, f"only_{outcome.longer}")], None
    return [(lo, hi, SAME_RECORDS if outcome else DIVERGENT)], None

def compare(a: PartitionLog, b: PartitionLog, partition: str) -> Divergence:
    """Compare two replicas over the whole of both logs: batches (sorted by offset), then, where
    they differ, the records of those batches."""
    xs = sorted(a.batches, key=lambda x: (x.base_offset, x.position))
    ys = sorted(b.batches, key=lambda x: (x.base_offset, x.position))
    hws = {a.label: a.high_watermark, b.label: b.high_watermark}
    raw: list[Range] = []
    unread: str | None = None

    def add(first: int, last: int, kind: str) -> None:
        extend(raw, first, last, kind)

    i = j = 0
    first_divergent = None
    prefix_end = None
    start = max(xs[0].base_offset if xs else 0, ys[0].base_offset if ys else 0)
    while i < len(xs) or j < len(ys):
        if j >= len(ys):
            add(xs[i].base_offset, xs[i].last_offset, f"only_{a.label}")
            i += 1
            continue
        if i >= len(xs):
            add(ys[j].base_offset, ys[j].last_offset, f"only_{b.label}")
            j += 1
            continue
        x, y = xs[i], ys[j]
        if x.last_offset < y.base_offset:
            add(x.base_offset, x.last_offset, f"only_{a.label}")
            i += 1
            continue
        if y.last_offset < x.base_offset:
            add(y.base_offset, y.last_offset, f"only_{b.label}")
            j += 1
            continue
        if x.identity == y.identity:
            i += 1
            j += 1
            continue
        # overlapping but different: extend over every batch of either side that overlaps
        lo = min(x.base_offset, y.base_offset)
        hi = max(x.last_offset, y.last_offset)
        i0, j0 = i, j
        i += 1
        j += 1
        while True:
            grew = False
            while i < len(xs) and xs[i].base_offset <= hi:
                hi = max(hi, xs[i].last_offset)
                i += 1
                grew = True
            while j < len(ys) and ys[j].base_offset <= hi:
                hi = max(hi, ys[j].last_offset)
                j += 1
                grew = True
            if not grew:
                break
        # offsets below the later first batch are one replica's only: compared from there
        since = max(lo, start)
        parts, why = _classify(a, xs[i0:i], b, ys[j0:j], lo, hi, since)
        unread = unread or why
        for first, last, kind in parts:
            if first_divergent is None and kind == DIVERGENT:
                first_divergent = since
            add(first, last, kind)
    for r in raw:
        if prefix_end is None and r.kind != SAME_RECORDS and r.last >= start:
            prefix_end = max(r.first, start)   # a range straddling the later start differs from there
    if prefix_end is None:
        prefix_end = min(a.log_end_offset, b.log_end_offset)
    ranges = tuple(
        DivergentRange(r.first, r.last, r.kind, {label: (hw is not None and r.first < hw) for label, hw in hws.items()})
        for r in raw
    )
    return Divergence(partition, (a.label, b.label), first_divergent, prefix_end, ranges, hws, unread)


def compare_all(replicas: list[PartitionLog]) -> list[Divergence]:
    """``diverge``: every pair of replicas, in the order given."""
    require_one_partition(replicas)
    return [compare(a, b, a.name) for a, b in combinations(replicas, 2)]
