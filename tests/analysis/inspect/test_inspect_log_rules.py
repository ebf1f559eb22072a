"""The rules of the inspect-log pass (kreplica/analysis/inspect/inspect_log.py), each pinned with exact
values and the near-identical input where it does not apply.

- ``InspectOptions``: defaults, ``filtering``, and the batch/record filters (offset bounds inclusive at
  both ends, exact matches on producer id, leader epoch, transactional and control);
- ``inspect_segment``: the ``SegmentStart``/batch/record/finding/``SegmentSummary`` stream, totals
  (batches, records from the header or as decoded, first/last offset, findings and errors), the cross-batch
  checks (offset overlap/regression, epoch regression, offsets outside the file name's base, also across
  segments through a shared ``PartitionContext``), ``--no-verify-crc`` and ``--max-bytes``, and the recovery
  verdict (``SegmentRecovery``) fed only with the batches Kafka's reader yields;
- ``_records_of``: control records without a valid key, legacy messages whose key or value Kafka cannot
  read, and record readers that throw part way;
- ``inspect_groups``: a fresh context per partition, the topic decoding internal records, progress.

Kafka sources (apache/kafka trunk of October 2024, the 3.9 line): ``FileLogInputStream.nextBatch``
(framing), ``DefaultRecordBatch`` (``ensureValid``, ``RecordIterator``), ``ControlRecordType.parseTypeId``,
``LogSegment.recover``, ``AbstractIndex.toRelative``, ``LogLoader.retryOnOffsetOverflow``,
``LocalLog.splitOverflowedSegment`` and ``kafka.tools.DumpLogSegments.dumpLog`` (``--max-bytes`` is
``FileRecords.slice(0, maxBytes)``).
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_log import InspectOptions, SegmentStart, SegmentSummary, inspect_groups, \
    inspect_segment
from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.analysis.log.recovery import RecoveryVerdict
from kreplica.formats import codecs
from kreplica.formats.checksums import crc32, crc32c
from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import NewRecord, Record, RecordBatch
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.formats.log.legacy_records import build_message
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.logdir.segments import SegmentFile, find_segment_groups
from tests.analysis.inspect.test_inspection import TS, batch
from tests.builders.replicas import generator

SEG0 = "00000000000000000000.log"
INT32_MAX = 0x7FFFFFFF


def run(data: bytes, base: int | None = 0, *, path: str = SEG0, context: PartitionContext | None = None,
        topic: str | None = None, progress=None, **opts) -> list:
    return list(inspect_segment(SegmentFile(path, base), data, InspectOptions(**opts), context, progress, topic=topic))


def found(events: list) -> list[tuple]:
    return [(e.kind, e.position, e.message, e.details) for e in events if isinstance(e, Finding)]


def positions(events: list) -> list[tuple[int, int, int, bool | None, bool]]:
    return [(e.position, e.base_offset, e.last_offset, e.crc_valid, e.after_break) for e in events
            if isinstance(e, RecordBatch)]


def offsets(events: list, kind: type = Record) -> list[int]:
    return [e.offset for e in events if isinstance(e, kind)]


def recount(data: bytes, count: int) -> bytes:
    """A v2 batch with its record count changed and its CRC made to match again."""
    out = bytearray(data)
    struct.pack_into(">i", out, 57, count)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def clean_verdict(size: int, epochs: tuple) -> RecoveryVerdict:
    return RecoveryVerdict(size, 0, epochs, None, None, False)


A, B, C = batch(0, 2), batch(2, 2, epoch=1), batch(4, 2, epoch=1)   # 79 bytes each, offsets 0-1, 2-3, 4-5
ABC = A + B + C


# -- InspectOptions --------------------------------------------------------------------------------------------


def test_options_default_to_a_whole_crc_checked_unfiltered_header_read() -> None:
    options = InspectOptions()
    assert dataclasses.astuple(options) == (True, False, True, None, None, None, None, None, None, None)
    assert options.filtering is False


@pytest.mark.parametrize("opts, filtering", [
    ({"first_offset": 0}, True), ({"last_offset": 0}, True), ({"producer_id": -1}, True),
    ({"leader_epoch": 0}, True), ({"transactional": False}, True), ({"control": False}, True),
    ({"verify_crc": False, "records": True, "decode_internal": False, "max_bytes": 10}, False),
])
def test_each_filter_alone_turns_filtering_on_and_no_other_option_does(opts: dict, filtering: bool) -> None:
    assert InspectOptions(**opts).filtering is filtering


HEADER = run(batch(10, 5, epoch=3))[1]   # offsets 10-14, epoch 3, no producer, not transactional, not control


@pytest.mark.parametrize("opts, wanted", [
    ({}, True),
    ({"first_offset": 14}, True), ({"first_offset": 15}, False),     # against the batch's last offset
    ({"last_offset": 10}, True), ({"last_offset": 9}, False),        # against the batch's base offset
    ({"first_offset": 0, "last_offset": 100}, True),
    ({"producer_id": -1}, True), ({"producer_id": 7}, False),
    ({"leader_epoch": 3}, True), ({"leader_epoch": 2}, False),
    ({"transactional": False}, True), ({"transactional": True}, False),
    ({"control": False}, True), ({"control": True}, False),
    ({"leader_epoch": 3, "control": True}, False),
])
def test_batch_filters_are_inclusive_offset_bounds_and_exact_matches(opts: dict, wanted: bool) -> None:
    assert InspectOptions(**opts).wants(HEADER) is wanted


def test_the_other_side_of_each_exact_match_filter() -> None:
    txn_control = HEADER._replace(producer_id=7, is_transactional=True, is_control=True)
    assert [InspectOptions(**o).wants(txn_control) for o in (
        {"producer_id": 7}, {"producer_id": -1}, {"transactional": True}, {"transactional": False},
        {"control": True}, {"control": False})] == [True, False, True, False, True, False]


def test_record_filter_keeps_offsets_from_first_to_last_inclusive() -> None:
    records = [r for r in run(batch(3, 5), records=True) if isinstance(r, Record)]   # offsets 3-7
    assert [r.offset for r in records if InspectOptions(first_offset=4, last_offset=6).wants_record(r)] == [4, 5, 6]
    assert [r.offset for r in records if InspectOptions(first_offset=7).wants_record(r)] == [7]
    assert [r.offset for r in records if InspectOptions(last_offset=3).wants_record(r)] == [3]
    assert [r.offset for r in records if InspectOptions().wants_record(r)] == [3, 4, 5, 6, 7]


# -- the stream and its totals -----------------------------------------------------------------------------------


def test_clean_segment_yields_start_batches_records_and_an_exact_summary() -> None:
    events = run(A + B, records=True)
    assert events[0] == SegmentStart(SEG0, 0, 158)
    assert [type(e).__name__ for e in events] == ["SegmentStart", "RecordBatch", "Record", "Record", "RecordBatch",
                                                  "Record", "Record", "SegmentSummary"]
    assert [(e.batch_position, e.offset, e.key) for e in events if isinstance(e, Record)] == [
        (0, 0, b"k"), (0, 1, b"k"), (79, 2, b"k"), (79, 3, b"k")]
    # LogSegment.recover: every batch valid, the epoch cache gets (epoch, base offset) of each new epoch
    assert events[-1] == SegmentSummary(SEG0, 2, 4, 0, 3, 158, 158, 0, clean_verdict(158, ((0, 0), (1, 2))),
                                        "end_of_file", 0, 0)


def test_empty_segment_has_no_offsets_and_a_clean_verdict() -> None:
    assert run(b"", 5, path="00000000000000000005.log") == [
        SegmentStart("00000000000000000005.log", 5, 0),
        SegmentSummary("00000000000000000005.log", 0, 0, None, None, 0, 0, 0, clean_verdict(0, ()), "end_of_file",
                       0, 0)]


def test_a_segment_without_a_base_offset_is_read_from_0_and_not_range_checked() -> None:
    events = run(batch(50, 2), None, path="-")
    assert events[0] == SegmentStart("-", None, 79)
    assert events[-1] == SegmentSummary("-", 1, 2, 50, 51, 79, 79, 0, clean_verdict(79, ((0, 50),)), "end_of_file",
                                        0, 0)


def test_first_offset_is_the_first_batch_and_last_offset_the_highest_seen() -> None:
    events = run(batch(10, 5) + batch(0, 5) + batch(20, 1) + batch(15, 2))
    summary = events[-1]
    assert (summary.first_offset, summary.last_offset, summary.batches, summary.records) == (10, 20, 4, 13)
    assert [(f[0], f[1]) for f in found(events)] == [("offset_regression", 106), ("offset_regression", 282)]


def test_records_are_counted_from_the_header_unless_they_are_decoded() -> None:
    # DefaultRecordBatch.RecordIterator.next: with the declared count read and bytes left it throws
    # "Incorrect declared batch size, records still remaining in file" instead of returning the record
    data = recount(batch(0, 2), 1)
    header_only = run(data)
    assert found(header_only) == []
    assert (header_only[-1].records, header_only[-1].findings, header_only[-1].errors) == (1, 0, 0)
    decoded = run(data, records=True)
    assert offsets(decoded) == []
    assert found(decoded) == [("invalid_record", 0, "batch at byte 0 (offsets 0-1): Incorrect declared batch size, "
                                                    "records still remaining in file", {"field": "record 0"})]
    assert (decoded[-1].records, decoded[-1].findings, decoded[-1].errors) == (0, 1, 1)
    assert decoded[-1].recovery == clean_verdict(79, ((0, 0),))   # LogSegment.recover reads no records


def test_a_count_above_the_records_present_yields_those_records_then_a_finding() -> None:
    events = run(A + recount(batch(2, 2), 3), records=True)
    assert offsets(events) == [0, 1, 2, 3]
    assert [(f[0], f[1]) for f in found(events)] == [("invalid_record", 79)]
    assert (events[-1].batches, events[-1].records, events[-1].errors) == (2, 4, 1)
    assert run(A + recount(batch(2, 2), 3))[-1].records == 5     # the header's count


# -- damage, CRCs and the recovery verdict ---------------------------------------------------------------------


def _flipped() -> bytes:
    data = bytearray(ABC)
    data[len(A) + len(B) - 1] ^= 0x01          # a value byte of the second batch
    return bytes(data)


def test_a_crc_mismatch_is_listed_and_recovery_truncates_from_that_batch() -> None:
    events = run(_flipped())
    # FileRecords.batches() yields the bad batch too; DefaultRecordBatch.ensureValid throws in LogSegment.recover,
    # which keeps the bytes before it and only the epochs assigned before it
    assert positions(events) == [(0, 0, 1, True, False), (79, 2, 3, False, False), (158, 4, 5, True, False)]
    (finding,) = [e for e in events if isinstance(e, Finding)]
    stored, computed = finding.details["stored_crc"], finding.details["computed_crc"]
    assert (finding.kind, finding.position, finding.severity, finding.details) == (
        "crc_mismatch", 79, "error", {"stored_crc": stored, "computed_crc": computed, "base_offset": 2,
                                      "last_offset": 3})
    assert stored != computed and computed == crc32c(_flipped()[79 + 21:158])
    summary = events[-1]
    assert summary == SegmentSummary(SEG0, 3, 6, 0, 5, 237, 237, 0, RecoveryVerdict(
        79, 158, ((0, 0),), 79, f"Record is corrupt (stored crc = {stored})", False), "end_of_file", 1, 1)


def test_without_crc_checks_nothing_is_judged() -> None:
    events = run(_flipped(), verify_crc=False)
    assert positions(events) == [(0, 0, 1, None, False), (79, 2, 3, None, False), (158, 4, 5, None, False)]
    assert events[-1] == SegmentSummary(SEG0, 3, 6, 0, 5, 237, 237, 0, None, "end_of_file", 0, 0)


def test_batches_past_a_break_are_listed_but_never_fed_to_recovery() -> None:
    data = bytearray(ABC)
    struct.pack_into(">i", data, len(A) + 8, INT32_MAX)       # the second batch's length runs past the end
    events = run(bytes(data))
    assert positions(events) == [(0, 0, 1, True, False), (158, 4, 5, True, True)]
    assert found(events) == [
        ("invalid_length", 79, "batch length 2147483647 at byte 79 runs past the end of the file although a valid "
                               "batch follows at byte 158; Kafka's reader silently stops here and never reads the "
                               "158 bytes after it", {"size": INT32_MAX, "available": 146}),
        ("resynchronised", 79, "skipped 79 unreadable bytes from byte 79; a valid batch (offset 4) starts at byte "
                               "158, and batches from there on are marked after_break",
         {"skipped_bytes": 79, "resumed_at": 158})]
    # FileLogInputStream.nextBatch returns null at the long length; LogSegment.recover truncates the rest
    # (the after-break batch's epoch 1 is not assigned)
    assert events[-1] == SegmentSummary(SEG0, 2, 4, 0, 5, 237, 79, 158, RecoveryVerdict(79, 158, ((0, 0),)),
                                        "incomplete_trailing_data", 2, 1)


@pytest.mark.parametrize("tail, stopped_by, finding, errors", [
    # size 0 < 14: FileLogInputStream.nextBatch throws CorruptRecordException (a warning: preallocated space)
    (bytes(100), "exception", ("trailing_zeros", 79, "100 zero bytes from byte 79 to the end of the file "
                               "(preallocated space); Kafka's reader fails here with 'Found record size 0 smaller "
                               "than minimum record overhead (14)'", {"length": 100}), 0),
    # 17 bytes or fewer left: nextBatch returns null
    (bytes(10), "incomplete_trailing_data", ("trailing_zeros", 79, "10 zero bytes at the end of the file",
                                             {"length": 10}), 0),
    (b"\x01" * 10, "incomplete_trailing_data", ("truncated_tail", 79, "10 bytes at the end of the file are too few "
                                                "for a batch header; Kafka's reader silently ignores them",
                                                {"available": 10}), 1),
], ids=["zeros-past-header", "zeros-within-header", "garbage-within-header"])
def test_a_tail_after_the_last_batch_is_one_finding_counted_as_an_error_only_when_it_is_one(
        tail: bytes, stopped_by: str, finding: tuple, errors: int) -> None:
    events = run(A + tail)
    assert found(events) == [finding]
    size = 79 + len(tail)
    # LogSegment.recover: truncated = log.sizeInBytes() - validBytes
    assert events[-1] == SegmentSummary(SEG0, 1, 2, 0, 1, size, 79, len(tail), RecoveryVerdict(79, len(tail),
                                                                                              ((0, 0),)),
                                        stopped_by, 1, errors)


@pytest.mark.parametrize("max_bytes, listed, valid, stopped_by, judged", [
    (10, [], 0, "max_bytes", False),               # nextBatch: fewer than 17 bytes before the slice's end
    (79, [0], 79, "max_bytes", False),             # a batch ending exactly at the limit is read
    (157, [0], 79, "max_bytes", False),            # one byte short of the second batch: it is not read, no damage
    (158, [0, 2], 158, "max_bytes", False),
    (237, [0, 2, 4], 237, "end_of_file", True),    # the limit at the file size cuts nothing
    (238, [0, 2, 4], 237, "end_of_file", True),
])
def test_max_bytes_reads_the_batches_that_fit_and_withholds_the_verdict_only_when_it_cut(
        max_bytes: int, listed: list[int], valid: int, stopped_by: str, judged: bool) -> None:
    # DumpLogSegments.dumpLog: FileRecords.open(file).slice(0, maxBytes).batches
    events = run(ABC, max_bytes=max_bytes)
    assert [e.base_offset for e in events if isinstance(e, RecordBatch)] == listed
    verdict = clean_verdict(237, ((0, 0), (1, 2))) if judged else None
    assert events[-1] == SegmentSummary(SEG0, len(listed), 2 * len(listed), listed[0] if listed else None,
                                        2 * len(listed) - 1 if listed else None, 237, valid, 237 - valid, verdict,
                                        stopped_by, 0, 0)


# -- the checks across batches -------------------------------------------------------------------------------


@pytest.mark.parametrize("second, expected", [
    (batch(5, 1), []),                                   # base = previous last + 1: in order
    (batch(4, 2), [("offset_overlap", 106, "the batch at byte 106 starts at offset 4, at or below 4, the last "
                                           "offset of the batch at byte 0",
                    {"previous_last_offset": 4, "base_offset": 4})]),
    (batch(4, 1), [("offset_regression", 106, "offsets go backwards: the batch at byte 106 holds 4-4, after 0-4 at "
                                              "byte 0", {"previous_last_offset": 4, "base_offset": 4})]),
    (batch(0, 2), [("offset_regression", 106, "offsets go backwards: the batch at byte 106 holds 0-1, after 0-4 at "
                                              "byte 0", {"previous_last_offset": 4, "base_offset": 0})]),
], ids=["next", "overlap", "same-last", "below"])
def test_offsets_must_increase_from_one_batch_to_the_next(second: bytes, expected: list) -> None:
    events = run(batch(0, 5) + second)
    assert found(events) == expected
    assert (events[-1].findings, events[-1].errors) == (len(expected), len(expected))


def test_a_batch_that_went_backwards_is_not_the_reference_for_the_next() -> None:
    events = run(batch(0, 5) + batch(1, 2) + batch(3, 1) + batch(5, 1))
    assert [(f[0], f[1], f[3]) for f in found(events)] == [
        ("offset_regression", 106, {"previous_last_offset": 4, "base_offset": 1}),
        ("offset_regression", 185, {"previous_last_offset": 4, "base_offset": 3})]


@pytest.mark.parametrize("epochs, expected", [
    ((3, 3), []),
    ((3, 4), []),
    ((3, -1), []),      # RecordBatch.NO_PARTITION_LEADER_EPOCH: LogSegment.recover assigns only epochs >= 0
    ((3, 2), [("epoch_regression", 79, "partition leader epoch 2 of the batch at byte 79 (offset 2) is below "
                                       "epoch 3 seen at offset 0", {"epoch": 2, "max_epoch_before": 3})]),
])
def test_leader_epochs_must_not_decrease(epochs: tuple[int, int], expected: list) -> None:
    assert found(run(batch(0, 2, epochs[0]) + batch(2, 2, epochs[1]))) == expected


def test_a_legacy_message_has_no_leader_epoch_to_regress() -> None:
    legacy = build_message(2, b"k", b"v", magic=1, timestamp=TS)
    assert found(run(batch(0, 2, 3) + legacy)) == []


def test_checks_span_segments_only_through_a_shared_context() -> None:
    second = "00000000000000000002.log"
    context = PartitionContext()
    run(batch(0, 5, 4), context=context)
    events = run(batch(2, 3, 1), 2, path=second, context=context)
    assert found(events) == [
        ("offset_regression", 0, f"offsets go backwards: the batch at byte 0 holds 2-4, after 0-4 at byte 0 of {SEG0}",
         {"previous_last_offset": 4, "base_offset": 2}),
        ("epoch_regression", 0, "partition leader epoch 1 of the batch at byte 0 (offset 2) is below epoch 4 seen at "
                                "offset 0", {"epoch": 1, "max_epoch_before": 4})]
    assert found(run(batch(2, 3, 1), 2, path=second)) == []      # no context: a fresh one


@pytest.mark.parametrize("base, data, expected", [
    (100, batch(100, 2), None),
    (100, batch(99, 2), "offsets 99-100 of the batch at byte 0 do not fit segment base offset 100 (relative offsets "
                        "must lie in 0..2147483647)"),
    # AbstractIndex.toRelative: offset - baseOffset must lie in 0..Integer.MAX_VALUE
    (0, build_batch([NewRecord(0, TS, b"k", b"v")], base_offset=0, last_offset_delta=INT32_MAX), None),
    (0, build_batch([NewRecord(1, TS, b"k", b"v")], base_offset=1, last_offset_delta=INT32_MAX),
     "offsets 1-2147483648 of the batch at byte 0 do not fit segment base offset 0 (relative offsets must lie in "
     "0..2147483647)"),
], ids=["at-base", "below-base", "int32-max", "past-int32-max"])
def test_offsets_must_fit_the_file_names_base_offset(base: int, data: bytes, expected: str | None) -> None:
    events = run(data, base, path=f"{base:020d}.log")
    assert found(events) == ([] if expected is None else [
        ("offset_out_of_segment_range", 0, expected, {"segment_base_offset": base})])
    assert (events[-1].findings, events[-1].errors) == ((0, 0) if expected is None else (1, 1))


def test_a_batch_below_the_base_offset_makes_the_broker_refuse_to_load_the_log() -> None:
    # LogLoader.recoverLog runs under retryOnOffsetOverflow; hasOverflow() is false (next offset 52 <= 100)
    verdict = run(batch(50, 2), 100, path="00000000000000000100.log")[-1].recovery
    assert verdict.refuses_to_load is True


def test_findings_of_batches_the_filters_leave_out_are_still_yielded_and_counted() -> None:
    events = run(batch(0, 5) + batch(3, 5), first_offset=8)
    assert [e.base_offset for e in events if isinstance(e, RecordBatch)] == []
    assert [(f[0], f[1]) for f in found(events)] == [("offset_overlap", 106)]
    assert (events[-1].batches, events[-1].findings, events[-1].errors) == (2, 1, 1)


# -- records ---------------------------------------------------------------------------------------------------


def _producer_batch(first: int, n: int, pid: int) -> bytes:
    return build_batch([NewRecord(first + i, TS, b"k", b"v") for i in range(n)], base_offset=first, producer_id=pid,
                       producer_epoch=0 if pid >= 0 else -1, base_sequence=0 if pid >= 0 else -1)


def test_records_are_listed_only_for_listed_batches_and_within_the_offset_range() -> None:
    data = _producer_batch(0, 5, 7) + _producer_batch(5, 5, -1) + _producer_batch(10, 5, 7)
    events = run(data, records=True, producer_id=7, first_offset=2, last_offset=11)
    assert [e.base_offset for e in events if isinstance(e, RecordBatch)] == [0, 10]
    assert offsets(events) == [2, 3, 4, 10, 11]
    assert (events[-1].batches, events[-1].records) == (3, 15)
    unfiltered = run(data, records=True)
    assert offsets(unfiltered) == list(range(15))


def _control(offset: int, key: bytes, value: bytes) -> bytes:
    return build_batch([NewRecord(offset, TS, key, value)], base_offset=offset, is_control=True, producer_id=9,
                       producer_epoch=0, is_transactional=True)


def test_a_control_record_without_a_valid_key_is_a_finding_and_stops_recovery_after_its_batch() -> None:
    # ControlRecordType.parseTypeId: "Invalid version found for control record: -1"; thrown from
    # ProducerAppendInfo in LogSegment.recover after validBytes counted the batch
    bad = _control(5, struct.pack(">hh", -1, 1), struct.pack(">hi", 0, 5))
    events = run(batch(0, 5) + bad, records=True)
    assert [(e.offset, e.control_type) for e in events if isinstance(e, Record)][-1] == (5, None)
    assert found(events) == [("invalid_record", 106, "control record at offset 5 has no valid control key (Kafka: "
                                                     "'Invalid version found for control record' or too short)", {})]
    assert [type(e).__name__ for e in events][-3:] == ["Record", "Finding", "SegmentSummary"]
    end = 106 + len(bad)
    assert events[-1].recovery == RecoveryVerdict(end, 0, ((0, 0),), end, "Invalid version found for control record")
    assert (events[-1].findings, events[-1].errors, events[-1].records) == (1, 1, 6)


def test_a_valid_transaction_marker_is_decoded_without_a_finding() -> None:
    good = build_control_record(5, TS, 1, coordinator_epoch=6)
    events = run(batch(0, 5) + _control(5, good.key, good.value), records=True)
    assert [(e.offset, e.control_type, e.coordinator_epoch) for e in events if isinstance(e, Record)][-1] == (5, 1, 6)
    assert found(events) == []
    assert events[-1].recovery == clean_verdict(106 + len(_control(5, good.key, good.value)), ((0, 0),))
    # the same key in a data batch is just a record
    data_batch = build_batch([NewRecord(5, TS, struct.pack(">hh", -1, 1), b"")], base_offset=5)
    assert found(run(batch(0, 5) + data_batch, records=True)) == []


@pytest.mark.parametrize("field, at, key", [("value", 12 + 4 + 2 + 8 + 4 + 2, b"k1"), ("key", 12 + 4 + 2 + 8, None)])
def test_a_legacy_message_kafka_cannot_read_is_listed_then_named(field: str, at: int, key: bytes | None) -> None:
    # LegacyRecord.key()/value() slice by the stored length only when called: the iterator yields the record
    good = build_message(0, b"k0", b"v0", magic=1, timestamp=TS)
    bad = bytearray(build_message(1, b"k1", b"v1", magic=1, timestamp=TS))
    struct.pack_into(">i", bad, at, 1 << 20)
    struct.pack_into(">I", bad, 12, crc32(bytes(bad[16:])))
    events = run(good + bytes(bad), records=True)
    listed = [(e.offset, e.key, e.value) for e in events if isinstance(e, Record)]
    assert listed == [(0, b"k0", b"v0"), (1, key, None)]
    assert found(events) == [("invalid_record", 38, f"message at offset 1 (batch at byte 38): {field} of 1048576 "
                                                    f"bytes runs past the end of the message; Kafka's reader yields "
                                                    f"the record and throws when its {field} is read",
                              {"field": field, "offset": 1})]
    assert (events[-1].records, events[-1].findings, events[-1].errors) == (2, 1, 1)
    assert events[-1].recovery == clean_verdict(76, ())          # the CRC holds; recovery reads no records


def test_one_damaged_inner_message_of_a_wrapper_is_named_once() -> None:
    inner = [build_message(0, b"a", b"x", magic=1, timestamp=TS),
             bytearray(build_message(1, b"b", b"y", magic=1, timestamp=TS)),
             build_message(2, b"c", b"z", magic=1, timestamp=TS)]
    struct.pack_into(">i", inner[1], 12 + 4 + 2 + 8 + 4 + 1, 99)   # the middle message's value length
    wrapper = build_message(12, None, codecs.compress(codecs.GZIP, b"".join(map(bytes, inner)), magic=1), magic=1,
                            timestamp=TS, compression=codecs.GZIP)
    events = run(wrapper, 10, path="00000000000000000010.log", records=True)
    assert [(e.offset, e.key, e.value) for e in events if isinstance(e, Record)] == [
        (10, b"a", b"x"), (11, b"b", None), (12, b"c", b"z")]
    assert found(events) == [("invalid_record", 0, "message at offset 11 (batch at byte 0): inner message at offset "
                                                   "11: value of 99 bytes runs past the end of the message; Kafka's "
                                                   "reader yields the record and throws when its value is read",
                              {"field": "value", "offset": 11})]
    assert (events[-1].records, events[-1].findings) == (3, 1)


# -- internal topics, groups and progress ----------------------------------------------------------------------


OFFSETS_TOPIC = "__consumer_offsets"


def _offsets_segment() -> bytes:
    key, value = generator().offset_commit("g", "orders", 0, 5)
    unknown = struct.pack(">h", 99) + b"\x00"                     # a record type no Kafka defines
    return build_batch([NewRecord(0, TS, key, value), NewRecord(1, TS, unknown, b"\x00\x00")], base_offset=0)


def test_internal_topic_records_are_decoded_and_an_unknown_type_is_a_warning() -> None:
    events = run(_offsets_segment(), topic=OFFSETS_TOPIC, records=True)
    decoded = [e for e in events if isinstance(e, DecodedRecord)]
    assert [(d.offset, None if d.decoded is None else d.decoded.name) for d in decoded] == [
        (0, "offset_commit"), (1, None)]
    assert found(events) == [("coordinator_unknown_record", 0, "__consumer_offsets record at offset 1 (batch at byte "
                                                              "0): Unknown record type 99 in __consumer_offsets",
                              {"offset": 1, "field": "record type"})]
    assert (events[-1].records, events[-1].findings, events[-1].errors) == (2, 1, 0)


@pytest.mark.parametrize("topic, opts", [
    (OFFSETS_TOPIC, {"records": True, "decode_internal": False}),
    ("orders", {"records": True}),
    (None, {"records": True}),
])
def test_records_stay_raw_without_decoding_or_outside_internal_topics(topic: str | None, opts: dict) -> None:
    events = run(_offsets_segment(), topic=topic, **opts)
    assert [type(e).__name__ for e in events] == ["SegmentStart", "RecordBatch", "Record", "Record", "SegmentSummary"]
    assert (events[-1].records, events[-1].findings) == (2, 0)


def test_without_records_nothing_is_decoded() -> None:
    events = run(_offsets_segment(), topic=OFFSETS_TOPIC)
    assert [type(e).__name__ for e in events] == ["SegmentStart", "RecordBatch", "SegmentSummary"]
    assert (events[-1].records, events[-1].findings) == (2, 0)


def test_progress_is_told_the_bytes_walked() -> None:
    told: list[int] = []
    run(ABC, progress=told.append)
    assert told == [237]


def _partition(root: Path, name: str, segments: dict[str, bytes]) -> None:
    (root / name).mkdir()
    for file, data in segments.items():
        (root / name / file).write_bytes(data)


def test_groups_are_read_in_order_each_with_its_own_context_and_topic(tmp_path: Path) -> None:
    _partition(tmp_path, "orders-0", {SEG0: batch(0, 10, 5), "00000000000000000010.log": batch(10, 2, 4)})
    _partition(tmp_path, "orders-1", {SEG0: batch(0, 2, 0)})                # lower epoch, same offsets: fine
    _partition(tmp_path, f"{OFFSETS_TOPIC}-0", {SEG0: _offsets_segment()})
    groups = find_segment_groups([str(tmp_path / "orders-0"), str(tmp_path / "orders-1"),
                                  str(tmp_path / f"{OFFSETS_TOPIC}-0")])
    told: list[int] = []
    events = list(inspect_groups(groups, InspectOptions(records=True), progress=told.append))
    starts = [(Path(e.path).parent.name, Path(e.path).name, e.base_offset) for e in events
              if isinstance(e, SegmentStart)]
    assert starts == [("orders-0", SEG0, 0), ("orders-0", "00000000000000000010.log", 10), ("orders-1", SEG0, 0),
                      (f"{OFFSETS_TOPIC}-0", SEG0, 0)]
    assert [(Path(f.path).parent.name, f.kind) for f in events if isinstance(f, Finding)] == [
        ("orders-0", "epoch_regression"), (f"{OFFSETS_TOPIC}-0", "coordinator_unknown_record")]
    assert offsets(events, DecodedRecord) == [0, 1]
    assert len(offsets(events)) == 14
    assert told == [len(batch(0, 10, 5)), len(batch(10, 2, 4)), len(batch(0, 2, 0)), len(_offsets_segment())]
