"""Index files checked against their segment, as ``kafka-dump-log.sh --verify-index-only`` and
``--index-sanity-check`` do, without their false alarms.

* Offset index entry (O, P): P must be the start of a batch, and O the last offset of a batch
  that starts at or after P and before the next entry's position. A follower indexes a whole
  fetch chunk — O is the chunk's last offset while P is its first batch — so O need not be the
  last offset of the batch *at* P (dump-log's false alarm).
* Time index entry (T, O): O must fall inside a batch of the segment, and T must lie between
  the largest batch timestamp before that batch and the largest up to its end. Before 3.8 a
  leader stored the offset of the record carrying the max timestamp, inside a batch
  (dump-log's other false alarm), so O need not be a batch's last offset.
* Transaction index: one entry per ABORT marker in the segment, for the same producer, at the
  marker's offset; no entry without a marker.
* :func:`sanity_check` reproduces Kafka's own ``sanityCheck`` for comparison.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.formats.log.batch import CONTROL_ABORT
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import IndexEnd, OffsetIndexEntry, iter_offset_index
from kreplica.formats.log.time_index import TimeIndexEntry, iter_time_index
from kreplica.formats.log.txn_index import AbortedTxn, iter_txn_index
from kreplica.model.log.partition_log import SegmentLog

OFFSET_ENTRY_SIZE = 8
TIME_ENTRY_SIZE = 12


@dataclass(frozen=True, slots=True)
class SanityVerdict:
    """What Kafka's ``OffsetIndex/TimeIndex.sanityCheck`` would say: ``None`` = passes."""

    path: str
    error: str | None


def sanity_check(kind: str, buf, *, path: str, base_offset: int) -> SanityVerdict:
    """Kafka's ``OffsetIndex``/``TimeIndex`` ``sanityCheck`` on the file as it is: the entry
    count is size // entry size, with no scan for zero slots.

    Offset index: the last entry's offset must not be below the base offset, and the size must
    be a multiple of 8 — so a zero-padded index passes. Time index: the last timestamp must not
    be below the first, the last offset not below the base, and the size a multiple of 12 — so
    zero padding after real entries fails it.
    """
    size = len(buf)
    entry = OFFSET_ENTRY_SIZE if kind == "offset" else TIME_ENTRY_SIZE
    slots = size // entry
    if slots:
        if kind == "offset":
            (last_rel,) = struct.unpack_from(">i", buf, (slots - 1) * entry)
            if base_offset + last_rel < base_offset:
                return SanityVerdict(path, f"Corrupt index found, index file ({path}) has non-zero size but the last "
                                           f"offset is {base_offset + last_rel} which is less than the base offset "
                                           f"{base_offset}.")
        else:
            first_ts, _ = struct.unpack_from(">qi", buf, 0)
            last_ts, last_rel = struct.unpack_from(">qi", buf, (slots - 1) * entry)
            if last_ts < first_ts:
                return SanityVerdict(path, f"Corrupt time index found, time index file ({path}) has non-zero size but "
                                           f"the last timestamp is {last_ts} which is less than the first timestamp "
                                           f"{first_ts}")
            if base_offset + last_rel < base_offset:
                return SanityVerdict(path, f"Corrupt time index found, time index file ({path}) has non-zero size but "
                                           f"the last offset is {base_offset + last_rel} which is less than the first "
                                           f"offset {base_offset}")
    if size % entry:
        return SanityVerdict(path, f"{'Index' if kind == 'offset' else 'Time index'} file {path} is corrupt, found "
                                   f"{size} bytes which is neither positive nor a multiple of {entry}.")
    return SanityVerdict(path, None)


_REGRESSIONS = frozenset({"index_offset_regression", "index_timestamp_regression"})


class _StaleTail:
    """The entries of an active segment's index past the segment's last batch: what a truncation
    leaves. Kafka's ``truncateTo`` moves the index's position back without clearing the bytes
    after it (``AbstractIndex.truncateToEntries``); the broker trims them when the segment is
    closed or rolled (``trimToValidSize``) and rebuilds the index when it recovers the segment,
    so in a copy of a running or killed broker they are normal state, told once as information.
    In a closed segment an entry past its end is damage and is checked as any other."""

    def __init__(self, segment: SegmentLog, active: bool, path: str, entry_size: int) -> None:
        valid = [b for b in segment.kafka_batches if b.crc_valid is not False]
        self.last_offset = valid[-1].last_offset if valid else segment.base_offset - 1
        self.active, self.path, self.entry_size = active, path, entry_size
        self.first: int | None = None
        self.count = 0

    def swallows(self, finding: Finding, buf, base_offset: int) -> bool:
        """Whether a walk-ending regression the reader found is at an entry of the stale tail
        (its offset, read from the slot, past the last batch): part of the tail, not damage."""
        if not (self.active and finding.kind in _REGRESSIONS):
            return False
        slot = finding.details["slot"]
        (relative,) = struct.unpack_from(">i", buf, slot * self.entry_size + (8 if self.entry_size == TIME_ENTRY_SIZE
                                                                               else 0))
        return self.holds(slot, base_offset + relative)

    def holds(self, slot: int, offset: int) -> bool:
        """Whether the entry at ``slot`` naming ``offset`` is part of the stale tail."""
        if self.first is None and not (self.active and offset > self.last_offset):
            return False
        if self.first is None:
            self.first = slot
        self.count += 1
        return True

    def finding(self) -> Iterator[Finding]:
        if self.first is not None:
            yield Finding("index_entry_mismatch", self.path, self.first * self.entry_size,
                          f"{self.count} entr{'y' if self.count == 1 else 'ies'} from slot {self.first} "
                          f"name{'s' if self.count == 1 else ''} offsets "
                          f"past the active segment's last batch (offset {self.last_offset}): left by a truncation, "
                          "trimmed when the segment is closed and rebuilt when the broker recovers it",
                          severity="info", details={"slot": self.first, "entries": self.count,
                                                    "last_offset": self.last_offset, "stale_tail": True})


def verify_offset_index(buf, *, path: str, segment: SegmentLog,
                        active: bool = False) -> Iterator[OffsetIndexEntry | Finding | IndexEnd]:
    """The index's entries and the reader's findings, plus a finding per entry that does not
    agree with the segment (``active``: the partition's last segment, whose index may hold a
    truncation's stale tail, :class:`_StaleTail`)."""
    base = segment.base_offset
    starts = {b.position: i for i, b in enumerate(segment.batches)}
    batches = segment.batches
    size = segment.file_size
    tail = _StaleTail(segment, active, path, OFFSET_ENTRY_SIZE)
    pending: OffsetIndexEntry | None = None
    for item in iter_offset_index(buf, path=path, base_offset=base):
        if isinstance(item, Finding) and tail.swallows(item, buf, base):
            continue
        if isinstance(item, OffsetIndexEntry):
            if tail.holds(item.slot, item.offset):
                yield item
                continue
            if pending is not None:
                yield pending
                yield from _check_offset_entry(pending, item.position, starts, batches, size, path)
            pending = item
            continue
        if isinstance(item, IndexEnd):
            if pending is not None:
                yield pending
                yield from _check_offset_entry(pending, size, starts, batches, size, path)
                pending = None
            yield from tail.finding()
        yield item


def _check_offset_entry(entry: OffsetIndexEntry, next_position: int, starts: dict[int, int], batches, size: int,
                        path: str) -> Iterator[Finding]:
    if entry.position >= size:
        yield Finding("index_entry_mismatch", path, entry.slot * OFFSET_ENTRY_SIZE,
                      f"entry {entry.slot} (offset {entry.offset}) points at byte {entry.position}, at or past the "
                      f"end of the segment ({size} bytes)",
                      details={"slot": entry.slot, "offset": entry.offset, "log_position": entry.position})
        return
    i = starts.get(entry.position)
    if i is None:
        yield Finding("index_entry_mismatch", path, entry.slot * OFFSET_ENTRY_SIZE,
                      f"entry {entry.slot} (offset {entry.offset}) points at byte {entry.position}, which is not "
                      "the start of a batch (mid-batch)",
                      details={"slot": entry.slot, "offset": entry.offset, "log_position": entry.position})
        return
    ends = []
    while i < len(batches) and batches[i].position < max(next_position, entry.position + 1):
        ends.append(batches[i].last_offset)
        i += 1
    if entry.offset not in ends:
        first = batches[starts[entry.position]]
        yield Finding("index_entry_mismatch", path, entry.slot * OFFSET_ENTRY_SIZE,
                      f"entry {entry.slot} says offset {entry.offset} is reached from byte {entry.position}, but the "
                      f"batches appended there end at offsets {ends[:5]}{'…' if len(ends) > 5 else ''} (the batch "
                      f"at that byte holds {first.base_offset}-{first.last_offset})",
                      details={"slot": entry.slot, "offset": entry.offset, "log_position": entry.position})


def verify_time_index(buf, *, path: str, segment: SegmentLog,
                      active: bool = False) -> Iterator[TimeIndexEntry | Finding | IndexEnd]:
    """The time index's entries and findings, each entry checked against batch timestamps
    (``active``: as for :func:`verify_offset_index`)."""
    tail = _StaleTail(segment, active, path, TIME_ENTRY_SIZE)
    base = segment.base_offset
    batches = sorted((b for b in segment.batches if b.crc_valid is not False), key=lambda b: b.base_offset)
    bases = [b.base_offset for b in batches]
    running = []
    high = -1
    for b in batches:
        before = high
        high = max(high, b.max_timestamp)
        running.append((before, high))
    for item in iter_time_index(buf, path=path, base_offset=base):
        if isinstance(item, Finding) and tail.swallows(item, buf, base):
            continue
        if isinstance(item, IndexEnd):
            yield from tail.finding()
        yield item
        if not isinstance(item, TimeIndexEntry) or tail.holds(item.slot, item.offset):
            continue
        i = bisect.bisect_right(bases, item.offset) - 1
        if i < 0 or batches[i].last_offset < item.offset:
            yield Finding("index_entry_mismatch", path, item.slot * TIME_ENTRY_SIZE,
                          f"time index entry {item.slot} names offset {item.offset}, which no batch of the segment "
                          "holds", details={"slot": item.slot, "offset": item.offset, "timestamp": item.timestamp})
            continue
        before, through = running[i]
        if not before <= item.timestamp <= through:
            yield Finding("index_entry_mismatch", path, item.slot * TIME_ENTRY_SIZE,
                          f"time index entry {item.slot} says {item.timestamp} is the largest timestamp up to offset "
                          f"{item.offset}, but the batches there reach {through} (and {before} before that batch)",
                          details={"slot": item.slot, "offset": item.offset, "timestamp": item.timestamp,
                                   "batch_max_timestamp": through})


def _aborts_with_data(segment: SegmentLog, open_at_start: frozenset[int] | None) -> set[int]:
    """The offsets of the segment's ABORT markers whose transaction holds data: a transactional
    batch of the producer after its previous marker (in this segment, or before it when the
    producer is in ``open_at_start``). Kafka indexes only those (``ProducerAppendInfo
    .appendEndTxnMarker`` emits no ``CompletedTxn`` for an empty transaction since 2.8,
    KAFKA-10702; before, an empty one was indexed with nothing to skip). With
    ``open_at_start`` ``None`` (the segments before are not at hand), a producer whose first
    item here is its marker may have data in them: not counted, so that nothing is flagged that
    may not be missing."""
    open_ = set(open_at_start or ())
    with_data: set[int] = set()
    for b in segment.kafka_batches:
        if b.producer_id < 0 or not b.is_transactional:
            continue
        if b.is_control:
            marker = segment.markers.get(b.position)
            if marker is not None and marker.control_type == CONTROL_ABORT and b.producer_id in open_:
                with_data.add(marker.offset)
            open_.discard(b.producer_id)
        else:
            open_.add(b.producer_id)
    return with_data


def verify_txn_index(buf, *, path: str | None, segment: SegmentLog,
                     open_at_start: frozenset[int] | None = None) -> Iterator[AbortedTxn | Finding]:
    """Aborted-transaction entries against the segment's ABORT markers (``path`` None: no file).
    An ABORT marker of a transaction with data and no entry is damage (read_committed consumers
    would be served the aborted records); one of an empty transaction is what Kafka writes
    (:func:`_aborts_with_data`). ``open_at_start``: the producers with transactional data not
    yet ended where the segment starts, when the segments before it are known."""
    aborts = {m.offset: m for m in segment.markers.values() if m.control_type == CONTROL_ABORT}
    seen: set[int] = set()
    base = segment.base_offset
    if path is not None:
        for item in iter_txn_index(buf, path=path, base_offset=base):
            yield item
            if not isinstance(item, AbortedTxn):
                continue
            marker = aborts.get(item.last_offset)
            if marker is None or marker.producer_id != item.producer_id:
                yield Finding("txn_index_mismatch", path, item.position,
                              f"aborted transaction of producer {item.producer_id} ending at offset {item.last_offset} "
                              "has no ABORT marker of that producer at that offset in the segment",
                              details={"producer_id": item.producer_id, "last_offset": item.last_offset})
            elif item.first_offset > item.last_offset:
                yield Finding("txn_index_mismatch", path, item.position,
                              f"aborted transaction of producer {item.producer_id} starts at {item.first_offset}, after "
                              f"its ABORT marker at {item.last_offset}", details={"producer_id": item.producer_id})
            seen.add(item.last_offset)
    with_data = _aborts_with_data(segment, open_at_start) if len(seen) < len(aborts) else set()
    label = path or f"{segment.path} (no .txnindex)"
    for offset, marker in sorted(aborts.items()):
        if offset not in seen and offset in with_data:
            yield Finding("txn_index_mismatch", label, 0,
                          f"the ABORT marker of producer {marker.producer_id} at offset {offset} (byte "
                          f"{marker.position} of the segment) has no entry in the transaction index: read_committed "
                          "consumers would be served the aborted records as committed",
                          details={"producer_id": marker.producer_id, "marker_offset": offset})
