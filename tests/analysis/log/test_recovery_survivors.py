"""``LogSegment.recover`` (storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java,
3.9) rule by rule at its boundaries, each beside its counter-case: ``DefaultRecordBatch.ensureValid``'s
minimum size, the index point ``validBytes - lastIndexEntry > indexIntervalBytes`` (``lastIndexEntry``
starting at 0), ``maxTimestampAndOffsetSoFar`` moving only on a strictly greater ``maxTimestamp``,
``TimeIndex.maybeAppend`` (an entry only for a timestamp above the last entry's, and
``InvalidOffsetException`` for an offset below the last entry's), the leader-epoch cache's assign
only for an epoch above the latest, ``LeaderEpochFileCache.assign``'s ``IllegalArgumentException``
for a negative start offset, and ``LogLoader.recoverLog``'s truncation to the segment's base offset
(``LogSegment.truncateTo`` / ``FileRecords.searchForOffsetWithSize``: the first batch whose last
offset is at or above it). Segments are built with kreplica's writers; the expected values are
worked out from those rules here."""

from __future__ import annotations

import struct

import pytest

from kreplica.analysis.log.recovery import SegmentRecovery
from kreplica.formats.log.batch import NewRecord, RecordBatch
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.log.legacy_records import build_message
from kreplica.formats.log.segment import iter_segment
from tests.analysis.log.test_recovery import TS, recover, records


def _batch(first: int, n: int, *, ts: int | None = None, epoch: int = 0, size: int = 20) -> bytes:
    """``n`` records from offset ``first``; every record stamped ``ts`` when given."""
    recs = records(first, n, size) if ts is None else [NewRecord(first + i, ts, b"k", b"v" * size) for i in range(n)]
    return build_batch(recs, base_offset=first, partition_leader_epoch=epoch)


def test_a_v2_batch_below_the_61_byte_overhead_stops_recovery_where_it_starts() -> None:
    """DefaultRecordBatch.ensureValid: ``Record batch is corrupt (the size 52 is smaller than the
    minimum allowed overhead 61)``, a CorruptRecordException LogSegment.recover catches: the bytes
    before the batch are kept, it and everything after are truncated."""
    good = _batch(0, 2)
    small = bytearray(_batch(2, 1)[:52])
    struct.pack_into(">i", small, 8, 40)           # batchLength 40: a 52-byte batch
    data = good + bytes(small) + _batch(3, 1)
    rec = SegmentRecovery(data, segment_base_offset=0)
    batches = [ev for ev in iter_segment(data, path="t.log") if isinstance(ev, RecordBatch)]
    assert batches[1].size == 52
    for b in batches:
        rec.feed(b)
    v = rec.verdict(len(data))
    assert (v.valid_bytes, v.truncated_bytes) == (len(good), len(data) - len(good))
    assert (v.stop_position, v.stop_reason) == (len(good), "Record batch is corrupt (the size 52 is smaller than "
                                                           "the minimum allowed overhead 61)")
    assert rec.stopped is True and v.refuses_to_load is False


def test_a_recovery_that_read_to_the_end_has_not_stopped() -> None:
    """The counter-case of the one above: a clean segment's walk never stops."""
    data = _batch(0, 2) + _batch(2, 1)
    rec = SegmentRecovery(data, segment_base_offset=0)
    for ev in iter_segment(data, path="t.log"):
        if isinstance(ev, RecordBatch):
            rec.feed(ev)
    assert rec.stopped is False and rec.stop_position is None and rec.stop_reason is None


@pytest.mark.parametrize("interval_below_batch, stops", [
    # validBytes - lastIndexEntry = S > S - 1 at the second batch: an index entry (offset 19) there, so
    # the third batch (last offset 14) at the next point is "no larger than the last offset appended"
    pytest.param(1, True, id="interval-one-below-a-batch-an-entry-at-the-second-batch"),
    # S > S is false: the first entry is at the third batch, nothing to compare with
    pytest.param(0, False, id="interval-equal-to-a-batch-no-entry-at-the-second-batch"),
])
def test_an_index_point_needs_more_than_the_interval_since_the_last_entry(interval_below_batch: int,
                                                                          stops: bool) -> None:
    """LogSegment.recover: ``if (validBytes - lastIndexEntry > indexIntervalBytes)
    offsetIndex().append(batch.lastOffset(), validBytes)``, ``lastIndexEntry`` starting at 0;
    OffsetIndex.append throws InvalidOffsetException for an offset not above the last one, and
    LogLoader.recoverLog truncates the segment to its base offset."""
    b1, b2, b3 = _batch(0, 10), _batch(10, 10), _batch(5, 10)
    assert len(b1) == len(b2) == len(b3)
    data = b1 + b2 + b3
    v = recover(data, interval=len(b1) - interval_below_batch)
    if stops:
        assert (v.valid_bytes, v.stop_position) == (0, len(b1) + len(b2))
        assert v.stop_reason == ("InvalidOffsetException: Attempt to append an offset (14) no larger than the last "
                                 "offset appended (19); the segment is truncated to its base offset")
    else:
        assert (v.valid_bytes, v.stop_position, v.stop_reason) == (len(data), None, None)


@pytest.mark.parametrize("last_ts, stops", [
    # maxTimestamp 200 is not above 200: the offset of the max timestamp stays 29, below the entry's 50
    pytest.param(200, True, id="the-same-max-timestamp-keeps-the-earlier-offset"),
    # counter-case: 201 moves it to 60, the batch's last offset
    pytest.param(201, False, id="a-greater-max-timestamp-moves-it"),
])
def test_the_time_index_refuses_an_offset_below_its_last_entry(last_ts: int, stops: bool) -> None:
    """``maxTimestampAndOffsetSoFar`` changes only when ``batch.maxTimestamp() > maxTimestampSoFar()``;
    at each index point ``timeIndex().maybeAppend(maxTimestampSoFar(), offsetOfMaxTimestampSoFar())``
    throws InvalidOffsetException when the offset is below the last entry's (TimeIndex.maybeAppend);
    LogLoader.recoverLog then truncates the segment to its base offset. Interval 100: a large first
    batch (offsets 0-9, stamped 100), so the next (offset 50, stamped 150) is an index point with
    the time entry (150, 50); a small one there, so the batch after it (offsets 20-29, stamped 200,
    going back between points) is none; the last (offset 60, above 50 for the offset index) is."""
    a, b = _batch(0, 10, ts=100, size=120), _batch(50, 1, ts=150)
    c, d = _batch(20, 10, ts=200), _batch(60, 1, ts=last_ts)
    assert len(a) > 100 >= len(b) and len(b) + len(c) > 100
    data = a + b + c + d
    v = recover(data, interval=100)
    if stops:
        assert (v.valid_bytes, v.truncated_bytes) == (0, len(data))
        assert (v.stop_position, v.stop_reason) == (len(a + b + c), "InvalidOffsetException: time index offset goes "
                                                                   "backwards; the segment is truncated to its base "
                                                                   "offset")
    else:
        assert (v.valid_bytes, v.stop_position, v.stop_reason) == (len(data), None, None)


def test_the_time_index_compares_with_its_last_entrys_timestamp_not_its_offset() -> None:
    """TimeIndex.maybeAppend appends only ``if (timestamp > lastEntry.timestamp)``: small
    timestamps under large offsets. Interval 100; entries (100, 1009) at the second batch and
    (200, 1060) at the third (200 is above the timestamp 100, not above the offset 1009); a batch
    of offsets 1052-1055 stamped 300 between points, then the point at 1070: the offset of the max
    timestamp, 1055, is below the last entry's 1060: InvalidOffsetException. Had (200, 1060) not
    been appended, 1055 would be above (100, 1009) and nothing would stop."""
    batches = [_batch(1000, 10, ts=100, size=120), _batch(1040, 10, ts=100, size=120), _batch(1060, 1, ts=200),
               _batch(1052, 4, ts=300), _batch(1070, 1, ts=300)]
    assert len(batches[2]) <= 100 < len(batches[2]) + len(batches[3])
    data = b"".join(batches)
    v = recover(data, interval=100)
    assert v.valid_bytes == 0
    assert (v.stop_position, v.stop_reason) == (len(b"".join(batches[:4])), "InvalidOffsetException: time index "
                                                                           "offset goes backwards; the segment is "
                                                                           "truncated to its base offset")


def test_a_time_index_without_entries_checks_no_offset() -> None:
    """TimeIndex.maybeAppend with no entry yet: no offset check, and no entry for the timestamp -1
    of message format v0 (``timestamp > lastEntry.timestamp``, -1 when empty). v0 messages at
    offsets -30..-28 (offsets are outside their CRC; before 2.0 recover checked no range, KAFKA-6264)
    pass index points with no entry; the v2 batch ending at -11 then gets the first entry, with no
    offset below -1 refused."""
    msgs = [build_message(o, b"k", b"v" * 20, magic=0) for o in (-30, -29, -28)]
    tail = build_batch([NewRecord(-20 + i, TS, b"k", b"v") for i in range(10)], base_offset=-20,
                       partition_leader_epoch=-1)
    data = b"".join(msgs) + tail
    v = recover(data, interval=30, check_offset_range=False)
    assert (v.valid_bytes, v.stop_position, v.stop_reason, v.refuses_to_load) == (len(data), None, None, False)


def test_truncation_to_the_base_keeps_nothing_when_the_first_batch_ends_at_the_base() -> None:
    """LogLoader.recoverLog: on InvalidOffsetException ``segment.truncateTo(segment.baseOffset())``,
    which cuts at the first batch whose last offset is >= the base (FileRecords.searchForOffsetWithSize).
    The first batch (offsets 1-10) ends exactly at base 10, so the cut is at byte 0 (the
    batch at 12, not above the index's 50, throws)."""
    first = _batch(1, 10, size=120)
    big = [_batch(i * 10 + 1, 10, size=120) for i in range(1, 5)]
    backwards = _batch(12, 1, size=120)
    data = first + b"".join(big) + backwards
    v = recover(data, base=10, interval=500)
    assert (v.valid_bytes, v.truncated_bytes) == (0, len(data))
    assert v.stop_position == len(first) + len(b"".join(big))


@pytest.mark.parametrize("assign_epoch_zero, assigned", [
    # 2.7+ (KAFKA-10432): partitionLeaderEpoch >= 0
    pytest.param(True, ((0, 0), (1, 2), (2, 4)), id="from-2.7-epoch-0-too"),
    # 2.1.1-2.6: partitionLeaderEpoch > 0, so epoch 1 is the first assigned
    pytest.param(False, ((1, 2), (2, 4)), id="2.1.1-to-2.6-from-epoch-1"),
])
def test_the_epochs_recovery_assigns(assign_epoch_zero: bool, assigned: tuple) -> None:
    """LogSegment.recover assigns ``batch.partitionLeaderEpoch()`` at the batch's base offset when
    it is above the latest epoch; before KAFKA-10432's fix only epochs above 0."""
    data = _batch(0, 2, epoch=0) + _batch(2, 2, epoch=1) + _batch(4, 2, epoch=2)
    assert recover(data, assign_epoch_zero=assign_epoch_zero).epoch_assignments == assigned


def test_the_latest_epoch_again_is_not_assigned_again() -> None:
    """``batch.partitionLeaderEpoch() > cache.latestEpoch()``: a later batch of the latest epoch
    is not assigned, even at a lower base offset (offsets going back between index points are
    kept), so epoch 3 keeps its start 10 (LeaderEpochFileCache.assign would move it to 5)."""
    data = _batch(10, 2, epoch=3) + _batch(5, 10, epoch=3)
    v = recover(data)
    assert (v.valid_bytes, v.epoch_assignments) == (len(data), ((3, 10),))


def test_a_negative_base_offset_with_a_new_epoch_fails_the_load() -> None:
    """A v2 batch's base offset is outside its CRC: base -5, last offset 9 passes ensureValid and
    ensureOffsetInRange, then ``cache.assign(3, -5)`` throws IllegalArgumentException ("Received
    invalid partition leader epoch entry", LeaderEpochFileCache.assign), which nothing in LogLoader
    catches: the broker does not load the log. The counter-case: the same batch at epoch -1 is not
    assigned (``partitionLeaderEpoch() >= 0``) and is kept."""
    head = _batch(0, 2, epoch=1)
    bad = build_batch([NewRecord(i, TS, b"k", b"v") for i in range(10)], base_offset=-5, partition_leader_epoch=3)
    v = recover(head + bad)
    assert v.refuses_to_load is True
    assert (v.valid_bytes, v.stop_position) == (len(head) + len(bad), len(head))
    assert v.stop_reason == ("IllegalArgumentException: Received invalid partition leader epoch entry (3, -5): the "
                             "broker fails to load the log")
    kept = build_batch([NewRecord(i, TS, b"k", b"v") for i in range(10)], base_offset=-5, partition_leader_epoch=-1)
    v = recover(head + kept)
    assert (v.refuses_to_load, v.stop_reason, v.epoch_assignments) == (False, None, ((1, 0),))
