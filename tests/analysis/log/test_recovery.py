"""Recovery emulation (``LogSegment.recover``) on segments built with kreplica's writers; the
expected values are worked out from Kafka's rules in the test, not read from kreplica."""

from __future__ import annotations

import pytest

from kreplica.analysis.log.recovery import SegmentRecovery
from kreplica.formats.log.batch import CONTROL_COMMIT, NewRecord, RecordBatch
from kreplica.formats.log.default_records import CONTROL_KEY, build_batch, build_control_record
from kreplica.formats.log.legacy_records import build_message
from kreplica.formats.log.segment import iter_segment

TS = 1_700_000_000_000


def records(first: int, n: int, size: int = 20) -> list[NewRecord]:
    return [NewRecord(first + i, TS + first + i, b"k", b"v" * size) for i in range(n)]


def recover(data: bytes, base: int = 0, interval: int = 4096, **options):
    rec = SegmentRecovery(data, segment_base_offset=base, index_interval_bytes=interval, **options)
    for ev in iter_segment(data, path="t.log"):
        if isinstance(ev, RecordBatch) and not ev.after_break:
            rec.feed(ev)
    return rec.verdict(len(data))


def test_clean_segment_keeps_everything_and_assigns_each_new_epoch_once() -> None:
    b1 = build_batch(records(0, 3), base_offset=0, partition_leader_epoch=0)
    b2 = build_batch(records(3, 2), base_offset=3, partition_leader_epoch=0)
    b3 = build_batch(records(5, 2), base_offset=5, partition_leader_epoch=4)
    v = recover(b1 + b2 + b3)
    assert (v.valid_bytes, v.truncated_bytes) == (len(b1 + b2 + b3), 0)
    assert v.epoch_assignments == ((0, 0), (4, 5))
    assert v.stop_reason is None


def test_lower_or_unknown_epoch_later_is_not_assigned() -> None:
    data = (build_batch(records(0, 1), base_offset=0, partition_leader_epoch=3)
            + build_batch(records(1, 1), base_offset=1, partition_leader_epoch=2)
            + build_batch(records(2, 1), base_offset=2, partition_leader_epoch=-1))
    assert recover(data).epoch_assignments == ((3, 0),)


def test_bad_crc_truncates_that_batch_and_everything_after() -> None:
    good = build_batch(records(0, 2), base_offset=0, partition_leader_epoch=1)
    bad = bytearray(build_batch(records(2, 2), base_offset=2, partition_leader_epoch=2))
    bad[-1] ^= 0xFF
    tail = build_batch(records(4, 2), base_offset=4, partition_leader_epoch=3)
    v = recover(good + bytes(bad) + tail)
    assert v.valid_bytes == len(good)
    assert v.truncated_bytes == len(bad) + len(tail)
    assert v.epoch_assignments == ((1, 0),)
    assert v.stop_position == len(good)


def test_magic_3_passes_recovery_because_magic_is_outside_the_crc() -> None:
    data = build_batch(records(0, 2), base_offset=0, partition_leader_epoch=7, magic=3)
    v = recover(data)
    assert v.truncated_bytes == 0 and v.epoch_assignments == ((7, 0),)


def test_legacy_messages_are_kept_without_epochs() -> None:
    data = build_message(0, b"k", b"v", magic=0) + build_message(1, b"k", b"v", magic=1, timestamp=TS)
    data += build_batch(records(2, 1), base_offset=2, partition_leader_epoch=5)
    v = recover(data)
    assert v.truncated_bytes == 0 and v.epoch_assignments == ((5, 2),)


def test_offset_going_backwards_at_an_index_point_truncates_the_whole_segment() -> None:
    # InvalidOffsetException from OffsetIndex.append is caught by LogLoader.recoverLog, which
    # truncates the segment to its base offset.
    big = [build_batch(records(i * 10, 10, size=120), base_offset=i * 10, partition_leader_epoch=0) for i in range(4)]
    backwards = build_batch(records(5, 10, size=120), base_offset=5, partition_leader_epoch=0)
    data = b"".join(big) + backwards
    v = recover(data, interval=500)
    assert v.valid_bytes == 0 and v.truncated_bytes == len(data)
    assert v.epoch_assignments == ()
    assert "InvalidOffsetException" in v.stop_reason


def test_offsets_going_backwards_between_index_points_are_kept() -> None:
    first = build_batch(records(10, 2), base_offset=10, partition_leader_epoch=0)
    backwards = build_batch(records(5, 2), base_offset=5, partition_leader_epoch=0)
    v = recover(first + backwards, base=0)
    assert v.truncated_bytes == 0


def _marker(offset: int, control_type: int, key: bytes | None = None) -> bytes:
    rec = build_control_record(offset, TS, control_type, 3)
    if key is not None:
        rec = rec._replace(key=key)
    return build_batch([rec], base_offset=offset, producer_id=9, producer_epoch=0, is_transactional=True,
                       is_control=True, partition_leader_epoch=0)


def test_commit_marker_is_fine() -> None:
    data = build_batch(records(0, 1), base_offset=0, producer_id=9, producer_epoch=0, base_sequence=0,
                       is_transactional=True) + _marker(1, CONTROL_COMMIT)
    assert recover(data).truncated_bytes == 0


@pytest.mark.parametrize("key,refuses", [
    pytest.param(CONTROL_KEY.pack(-1, 1), False, id="negative-version-InvalidRecordException"),
    pytest.param(b"\x00\x00", False, id="short-key-InvalidRecordException"),
    pytest.param(CONTROL_KEY.pack(0, 2), True, id="leader-change-in-data-log-IllegalArgumentException"),
])
def test_bad_marker_stops_recovery_after_the_marker_batch(key: bytes, refuses: bool) -> None:
    head = build_batch(records(0, 1), base_offset=0, producer_id=9, producer_epoch=0, base_sequence=0,
                       is_transactional=True)
    marker = _marker(1, CONTROL_COMMIT, key=key)
    tail = build_batch(records(2, 1), base_offset=2)
    v = recover(head + marker + tail)
    # validBytes is counted before producer state is updated, so the marker batch itself is kept
    assert v.valid_bytes == len(head) + len(marker)
    assert v.refuses_to_load is refuses


@pytest.mark.parametrize("back_to, stops", [
    # OffsetIndex.append: "Attempt to append an offset ... no larger than the last offset appended"
    pytest.param(5, True, id="below-the-last-index-offset"),
    pytest.param(39, True, id="equal-to-the-last-index-offset"),
    pytest.param(40, False, id="counter-case-above-it"),
])
def test_invalid_offset_names_the_batch_where_recovery_stopped(back_to: int, stops: bool) -> None:
    """LogLoader.recoverLog catches the InvalidOffsetException OffsetIndex.append throws in
    LogSegment.recover and truncates the segment to its base offset; the walk stopped at the
    batch whose last offset did not increase at an index point (the fifth, 1 record)."""
    big = [build_batch(records(i * 10, 10, size=120), base_offset=i * 10, partition_leader_epoch=0) for i in range(4)]
    last = build_batch(records(back_to, 1, size=120), base_offset=back_to, partition_leader_epoch=0)
    data = b"".join(big) + last
    v = recover(data, interval=500)
    if stops:
        assert (v.valid_bytes, v.stop_position) == (0, len(b"".join(big)))
        assert v.stop_reason == (f"InvalidOffsetException: Attempt to append an offset ({back_to}) no larger than the "
                                 "last offset appended (39); the segment is truncated to its base offset")
    else:
        assert (v.valid_bytes, v.stop_position, v.stop_reason) == (len(data), None, None)


# A control batch whose marker Kafka cannot use. LogSegment.recover counts validBytes before
# updateProducerState, so the marker batch is kept and the walk stops at its end; the reason is
# printed by `kreplica log load` (log_loading.py: "<segment>: <stop_reason>").
#  - record does not decode / ControlRecordType key version < 0 / EndTransactionMarker value size
#    wrong: InvalidRecordException, caught by LogSegment.recover (truncate after validBytes);
#  - null key: ControlRecordType.parse(null) throws NullPointerException, not caught: refuses;
#  - not ABORT/COMMIT in a data log: ProducerAppendInfo.appendEndTxnMarker's
#    EndTransactionMarker.deserialize throws IllegalArgumentException: refuses.
_MARKER_CASES = [
    pytest.param(dict(control_type=None, coordinator_epoch=None, error="truncated record"),
                 "control batch at {pos} does not decode: truncated record", False, id="does-not-decode"),
    pytest.param(dict(control_type=None, coordinator_epoch=None, key_is_null=True),
                 "control record has a null key: the broker fails to load the log", True, id="null-key"),
    pytest.param(dict(control_type=None, coordinator_epoch=None),
                 "Invalid version found for control record", False, id="bad-key-version"),
    pytest.param(dict(control_type=2, coordinator_epoch=None),
                 "control batch at {pos} is not a transaction marker (type 2): IllegalArgumentException", True,
                 id="leader-change-type"),
    pytest.param(dict(control_type=CONTROL_COMMIT, coordinator_epoch=None),
                 "Invalid value size found for end transaction marker", False, id="bad-value-size"),
    pytest.param(dict(control_type=CONTROL_COMMIT, coordinator_epoch=3), None, False, id="counter-case-good-commit"),
]


@pytest.mark.parametrize("fields,reason,refuses", _MARKER_CASES)
def test_marker_verdict_names_where_and_why_recovery_stopped(fields: dict, reason: str | None,
                                                            refuses: bool) -> None:
    """Exact verdict per marker failure (LogSegment.recover / ProducerStateManager rules above),
    fed from decoded markers (the SegmentLog path)."""
    from kreplica.formats.log.control_marker import ControlMarker

    head = build_batch(records(0, 1), base_offset=0, producer_id=9, producer_epoch=0, base_sequence=0,
                       is_transactional=True)
    marker = _marker(1, CONTROL_COMMIT)
    tail = build_batch(records(2, 1), base_offset=2)
    data = head + marker + tail
    pos = len(head)
    markers = {pos: ControlMarker(pos, 1, 9, 0, **fields)}
    rec = SegmentRecovery(data, segment_base_offset=0, markers=markers)
    for ev in iter_segment(data, path="t.log"):
        if isinstance(ev, RecordBatch):
            rec.feed(ev)
    v = rec.verdict(len(data))
    if reason is None:
        assert (v.valid_bytes, v.stop_position, v.stop_reason, v.refuses_to_load) == (len(data), None, None, False)
    else:
        assert (v.valid_bytes, v.truncated_bytes) == (len(head) + len(marker), len(tail))
        assert (v.stop_position, v.stop_reason) == (len(head) + len(marker), reason.format(pos=pos))
        assert v.refuses_to_load is refuses


def test_invalid_offset_truncates_to_the_first_batch_reaching_the_segment_base() -> None:
    """LogLoader.recoverLog: on InvalidOffsetException, segment.truncateTo(segment.baseOffset());
    LogSegment.truncateTo keeps the bytes before translateOffset(baseOffset), the first batch whose
    last offset is >= the base. Here a first batch (offsets 0-9) lies below base 10, so it stays:
    before 2.0, which had no range check in recover (KAFKA-6264); from 2.0 that batch fails the
    load first (the test below)."""
    below = build_batch(records(0, 10, size=120), base_offset=0, partition_leader_epoch=0)
    big = [build_batch(records(i * 10, 10, size=120), base_offset=i * 10, partition_leader_epoch=0)
           for i in range(1, 5)]
    last = build_batch(records(5, 1, size=120), base_offset=5, partition_leader_epoch=0)
    data = below + b"".join(big) + last
    v = recover(data, base=10, interval=500, check_offset_range=False)
    assert (v.valid_bytes, v.truncated_bytes) == (len(below), len(data) - len(below))
    assert v.stop_position == len(below) + len(b"".join(big))
    assert v.stop_reason.startswith("InvalidOffsetException: Attempt to append an offset (5)")


@pytest.mark.parametrize("first, refuses", [pytest.param(10, False, id="at-the-base"),
                                            pytest.param(0, True, id="below-the-base")])
def test_from_2_0_a_batch_below_the_segment_base_fails_the_load(first: int, refuses: bool) -> None:
    """LogSegment.recover's ensureOffsetInRange(batch.lastOffset()) throws
    LogSegmentOffsetOverflowException for offsets 0-9 in a segment based at 10; the split that
    LogLoader.retryOnOffsetOverflow tries requires hasOverflow() (an offset past base + 2^31 - 1),
    which fails: IllegalArgumentException, the broker does not load the log. The counter-case
    starts at the base."""
    data = build_batch(records(first, 10), base_offset=first, partition_leader_epoch=0) + \
        build_batch(records(first + 10, 2), base_offset=first + 10, partition_leader_epoch=0)
    v = recover(data, base=10)
    assert v.refuses_to_load is refuses
    if refuses:
        assert (v.valid_bytes, v.stop_position) == (0, 0)
        assert v.stop_reason == ("LogSegmentOffsetOverflowException: offset 9 is below the segment's base offset 10; "
                                 "splitting the segment then fails (IllegalArgumentException: it does not have "
                                 "overflow): the broker fails to load the log")
    else:
        assert (v.valid_bytes, v.stop_reason, v.epoch_assignments) == (len(data), None, ((0, 10),))
