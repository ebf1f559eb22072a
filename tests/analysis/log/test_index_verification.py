"""Index files checked against their segment. Indexes are written by the fixture helper exactly
as a broker's ``LogSegment.append`` writes them (an entry once more than index.interval.bytes
were appended, relative offsets, a preallocated tail on the active segment), then damaged."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

from kreplica.analysis.log.index_verification import (SanityVerdict, sanity_check, verify_offset_index, verify_time_index,
                                                      verify_txn_index)
from kreplica.formats.log.batch import CONTROL_ABORT, NewRecord
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import OffsetIndexEntry, build_offset_index
from kreplica.formats.log.time_index import build_time_index
from kreplica.formats.log.txn_index import build_txn_index
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.logdir.log_dir import SegmentFiles
from kreplica.model.log.partition_log import read_segment_log
from tests.conftest import FIXTURES

TS = 1_700_000_000_000
BASE = 1000


def _generator():
    spec = importlib.util.spec_from_file_location("fixture_generator", FIXTURES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def segment(tmp_path: Path, n: int = 40, *, active: bool = False) -> tuple[Path, list[tuple[int, int, int]]]:
    """``n`` batches of 3 records (~330 bytes each) from offset 1000; returns (dir, [(pos, base, last)])."""
    part = tmp_path / "t-0"
    part.mkdir()
    data = bytearray()
    layout = []
    for i in range(n):
        first = BASE + 3 * i
        recs = [NewRecord(first + k, TS + 10 * i + k, b"k", b"v" * 80) for k in range(3)]
        layout.append((len(data), first, first + 2))
        data += build_batch(recs, base_offset=first, partition_leader_epoch=0)
    (part / f"{BASE:020d}.log").write_bytes(bytes(data))
    _generator().write_indexes(part, interval=1024, preallocate=4096, active=active)
    return part, layout


def findings_of(items) -> list[Finding]:
    return [i for i in items if isinstance(i, Finding)]


def table(part: Path):
    return read_segment_log(SegmentFiles(BASE, str(part / f"{BASE:020d}.log")), PartitionContext())


def test_broker_written_indexes_verify_clean(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    t = table(part)
    offset_items = list(verify_offset_index((part / f"{BASE:020d}.index").read_bytes(), path="x.index", segment=t))
    entries = [i for i in offset_items if isinstance(i, OffsetIndexEntry)]
    # ~330-byte batches, an entry once > 1024 bytes were appended: every 4th batch from the 5th
    assert len(entries) >= 8
    assert all(e.position in {p for p, _, _ in layout} for e in entries)
    assert findings_of(offset_items) == []
    time_items = list(verify_time_index((part / f"{BASE:020d}.timeindex").read_bytes(), path="x.timeindex", segment=t))
    assert findings_of(time_items) == []


def test_active_segment_preallocated_tail_is_a_warning_only(tmp_path: Path) -> None:
    part, _ = segment(tmp_path, active=True)
    raw = (part / f"{BASE:020d}.index").read_bytes()
    assert len(raw) == 4096
    fs = findings_of(verify_offset_index(raw, path="x.index", segment=table(part)))
    assert [f.kind for f in fs] == ["index_preallocated"] and not fs[0].is_error
    # Kafka's own sanityCheck passes a zero-padded offset index but fails a zero-padded time index
    assert sanity_check("offset", raw, path="x.index", base_offset=BASE).error is None
    time_raw = (part / f"{BASE:020d}.timeindex").read_bytes()
    assert "less than the first timestamp" in sanity_check("time", time_raw, path="x.timeindex", base_offset=BASE).error


def test_follower_chunk_entries_are_not_false_alarms(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    # a follower appends fetch chunks: entry = (last offset of the chunk, position of its first batch)
    chunk_entries = [(layout[i + 3][2], layout[i][0]) for i in (4, 8, 12)]
    raw = build_offset_index(chunk_entries, base_offset=BASE)
    assert findings_of(verify_offset_index(raw, path="f.index", segment=table(part))) == []


def test_pre_3_8_leader_time_index_with_record_offsets_is_not_a_false_alarm(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    # before 3.8 a leader stored the offset of the record carrying the max timestamp (mid-batch)
    entries = [(TS + 10 * i + 1, layout[i][1] + 1) for i in (5, 10, 15)]
    raw = build_time_index(entries, base_offset=BASE)
    assert findings_of(verify_time_index(raw, path="t.timeindex", segment=table(part))) == []


def test_entry_pointing_mid_batch(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    raw = build_offset_index([(layout[5][2], layout[5][0] + 7)], base_offset=BASE)
    (f,) = findings_of(verify_offset_index(raw, path="m.index", segment=table(part)))
    assert f.kind == "index_entry_mismatch" and "mid-batch" in f.message and f.position == 0


def test_entry_naming_an_offset_the_batches_do_not_reach(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    raw = build_offset_index([(layout[5][2] + 31, layout[5][0]), (layout[20][2], layout[20][0])], base_offset=BASE)
    fs = findings_of(verify_offset_index(raw, path="o.index", segment=table(part)))
    assert [(f.kind, f.position) for f in fs] == [("index_entry_mismatch", 0)]


def test_decreasing_entries(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    good = build_offset_index([(layout[4][2], layout[4][0]), (layout[8][2], layout[8][0])], base_offset=BASE)
    bad = good + struct.pack(">ii", layout[2][2] - BASE, layout[2][0])
    kinds = [f.kind for f in findings_of(verify_offset_index(bad, path="d.index", segment=table(part)))]
    assert "index_offset_regression" in kinds


def test_truncated_index_file(tmp_path: Path) -> None:
    part, _ = segment(tmp_path)
    raw = (part / f"{BASE:020d}.index").read_bytes()[:-3]
    kinds = [f.kind for f in findings_of(verify_offset_index(raw, path="c.index", segment=table(part)))]
    assert "index_size_not_multiple" in kinds
    assert sanity_check("offset", raw, path="c.index", base_offset=BASE).error is not None


def test_time_entry_above_the_batches_timestamps(tmp_path: Path) -> None:
    part, layout = segment(tmp_path)
    raw = build_time_index([(TS + 10 ** 9, layout[5][2])], base_offset=BASE)
    (f,) = findings_of(verify_time_index(raw, path="t.timeindex", segment=table(part)))
    assert f.kind == "index_entry_mismatch"


def _txn_segment(tmp_path: Path) -> Path:
    part = tmp_path / "x-0"
    part.mkdir()
    data = build_batch([NewRecord(BASE, TS, b"k", b"v")], base_offset=BASE, producer_id=9, producer_epoch=0,
                       base_sequence=0, is_transactional=True)
    data += build_batch([build_control_record(BASE + 1, TS, CONTROL_ABORT, 1)], base_offset=BASE + 1,
                        producer_id=9, producer_epoch=0, is_transactional=True, is_control=True)
    (part / f"{BASE:020d}.log").write_bytes(data)
    return part


def test_txn_index_agrees_with_abort_markers(tmp_path: Path) -> None:
    part = _txn_segment(tmp_path)
    t = table(part)
    assert findings_of(verify_txn_index(build_txn_index([(9, BASE, BASE + 1, BASE + 2)]), path="i", segment=t)) == []
    missing = findings_of(verify_txn_index(b"", path=None, segment=t))
    assert [f.kind for f in missing] == ["txn_index_mismatch"] and "read_committed" in missing[0].message
    extra = findings_of(verify_txn_index(build_txn_index([(9, BASE, BASE + 1, BASE + 2), (5, BASE, BASE + 5, 0)]),
                                         path="i", segment=t))
    assert [f.kind for f in extra] == ["txn_index_mismatch"]


@pytest.mark.parametrize("command", ["inspect-index"])
def test_inspect_index_cli_on_a_partition(tmp_path: Path, command: str) -> None:
    import json

    from typer.testing import CliRunner

    from kreplica.cli.main import app

    part, layout = segment(tmp_path)
    result = CliRunner().invoke(app, [command, "-f", "ndjson", str(part)])
    assert result.exit_code == 0, result.output
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    summaries = [o for o in objs if o["type"] == "index_summary"]
    assert {s["index"] for s in summaries} == {"offset", "time"}
    assert all(s["verified"] and s["problems"] == 0 for s in summaries)
    assert any(o["type"] == "index_entry" and o["index"] == "offset" for o in objs)
    # damage it: an entry pointing mid-batch makes the run exit 1
    (part / f"{BASE:020d}.index").write_bytes(build_offset_index([(layout[5][2], layout[5][0] + 7)],
                                                                 base_offset=BASE))
    bad = CliRunner().invoke(app, [command, "-f", "ndjson", "--verify-only", str(part)])
    assert bad.exit_code == 1
    assert not any(json.loads(line)["type"] == "index_entry" for line in bad.stdout.splitlines())


# --- mutation survivors (issue 27 §7): exact verdicts, findings and their boundaries ---------------------------

def rows(items) -> list[tuple]:
    """Every finding in full: kind, path, position, message, details (``Finding`` leaves details out of ==)."""
    return [(f.kind, f.path, f.position, f.message, f.details) for f in findings_of(items)]


def _offset_slots(*entries: tuple[int, int]) -> bytes:
    """Raw (relative offset, position) slots, negative ones included (``build_offset_index`` refuses them)."""
    return b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)


def _time_slots(*entries: tuple[int, int]) -> bytes:
    """Raw (timestamp, relative offset) slots."""
    return b"".join(struct.pack(">qi", ts, rel) for ts, rel in entries)


_OFFSET_LOW = ("Corrupt index found, index file (p.index) has non-zero size but the last offset is 999 which is less "
               "than the base offset 1000.")
_TIME_TS_LOW = (f"Corrupt time index found, time index file (p.timeindex) has non-zero size but the last timestamp is "
                f"{TS} which is less than the first timestamp {TS + 10}")
_TIME_OFFSET_LOW = ("Corrupt time index found, time index file (p.timeindex) has non-zero size but the last offset is "
                    "999 which is less than the first offset 1000")


@pytest.mark.parametrize("kind, raw, error", [
    # OffsetIndex.sanityCheck: entries() != 0 && lastOffset < baseOffset, lastOffset = baseOffset +
    # buffer.getInt((entries - 1) * 8) (signed) of the LAST slot; then length % 8
    pytest.param("offset", _offset_slots((5, 331)), None, id="offset-last-above-base"),
    pytest.param("offset", _offset_slots((0, 331)), None, id="offset-last-equal-base"),
    pytest.param("offset", _offset_slots((5, 331), (-1, 662)), _OFFSET_LOW, id="offset-last-below-base"),
    pytest.param("offset", _offset_slots((-1, 331), (5, 662)), None, id="offset-only-last-slot-counts"),
    pytest.param("offset", _offset_slots((5, 331)) + b"\0\0\0",
                 "Index file p.index is corrupt, found 11 bytes which is neither positive nor a multiple of 8.",
                 id="offset-size"),
    pytest.param("offset", b"", None, id="offset-empty"),
    # TimeIndex.sanityCheck: last timestamp (getLong, signed) < first timestamp; last offset < baseOffset
    # ("... less than the first offset"); length % 12 ("Time index file ... is corrupt")
    pytest.param("time", _time_slots((TS, 0)), None, id="time-one-entry-at-base"),
    pytest.param("time", _time_slots((TS, 0), (TS, 1)), None, id="time-last-equal-first"),
    pytest.param("time", _time_slots((TS + 10, 0), (TS + 20, 1), (TS, 2)), _TIME_TS_LOW, id="time-last-below-first"),
    pytest.param("time", _time_slots((TS + 10, 0), (TS, 1), (TS + 20, 2)), None, id="time-only-last-slot-counts"),
    pytest.param("time", _time_slots((-1, 0), (TS, 1)), None, id="time-first-negative-signed"),
    pytest.param("time", _time_slots((TS, 0), (TS + 1, -1)), _TIME_OFFSET_LOW, id="time-last-offset-below-base"),
    pytest.param("time", _time_slots((TS, 0), (TS + 1, 1)) + b"\0" * 5,
                 "Time index file p.timeindex is corrupt, found 29 bytes which is neither positive nor a multiple "
                 "of 12.", id="time-size"),
])
def test_sanity_check_verdicts_are_kafkas(kind: str, raw: bytes, error: str | None) -> None:
    """``OffsetIndex.sanityCheck`` / ``TimeIndex.sanityCheck`` (storage/.../log/OffsetIndex.java,
    TimeIndex.java; messages as kafka/log/OffsetIndex.scala and TimeIndex.scala wrote them): the
    verdict names the file and quotes Kafka's CorruptIndexException text; None when it passes."""
    path = "p.index" if kind == "offset" else "p.timeindex"
    assert sanity_check(kind, raw, path=path, base_offset=BASE) == SanityVerdict(path, error)


def test_offset_entry_at_or_past_the_segment_end(tmp_path: Path) -> None:
    """An entry's position must lie inside ``.log`` (Kafka's ``OffsetIndex.lookup`` hands it to
    ``FileRecords.searchForOffsetFromPosition``): exactly the file size is already past the end;
    one byte less is inside the last batch (mid-batch). Checked in a middle slot and the last."""
    part, layout = segment(tmp_path)
    size = table(part).file_size
    (p4, _, l4), (p39, _, l39) = layout[4], layout[39]
    raw = build_offset_index([(l4, p4), (l39 - 1, size), (l39, size - 1)], base_offset=BASE)
    assert rows(verify_offset_index(raw, path="e.index", segment=table(part))) == [
        ("index_position_regression", "e.index", 16, f"slot 2: position {size - 1} is not above the previous entry's "
                                                     f"{size}", {"slot": 2, "segment_position": size - 1,
                                                                 "previous_position": size}),
        ("index_entry_mismatch", "e.index", 8, f"entry 1 (offset {l39 - 1}) points at byte {size}, at or past the end "
                                               f"of the segment ({size} bytes)",
         {"slot": 1, "offset": l39 - 1, "log_position": size}),
        ("index_entry_mismatch", "e.index", 16, f"entry 2 (offset {l39}) points at byte {size - 1}, which is not the "
                                                "start of a batch (mid-batch)",
         {"slot": 2, "offset": l39, "log_position": size - 1}),
    ]
    # the same past-the-end entry as the last slot
    last = build_offset_index([(l4, p4), (l39, size)], base_offset=BASE)
    assert rows(verify_offset_index(last, path="e.index", segment=table(part))) == [
        ("index_entry_mismatch", "e.index", 8, f"entry 1 (offset {l39}) points at byte {size}, at or past the end of "
                                               f"the segment ({size} bytes)",
         {"slot": 1, "offset": l39, "log_position": size})]


def test_offset_entry_mid_batch_in_a_middle_slot(tmp_path: Path) -> None:
    """``LogSegment.append`` indexes ``physicalPosition = log.sizeInBytes()`` before the append: a
    batch start, never a byte inside one."""
    part, layout = segment(tmp_path)
    (p4, _, l4), (p8, _, l8), (p12, _, l12) = layout[4], layout[8], layout[12]
    raw = build_offset_index([(l4, p4), (l8, p8 + 7), (l12, p12)], base_offset=BASE)
    assert rows(verify_offset_index(raw, path="m.index", segment=table(part))) == [
        ("index_entry_mismatch", "m.index", 8, f"entry 1 (offset {l8}) points at byte {p8 + 7}, which is not the start "
                                               "of a batch (mid-batch)",
         {"slot": 1, "offset": l8, "log_position": p8 + 7})]


@pytest.mark.parametrize("chunk_end, listed, more", [
    pytest.param(10, [1017, 1020, 1023, 1026, 1029], "", id="5-batches-all-listed"),
    pytest.param(11, [1017, 1020, 1023, 1026, 1029], "…", id="6-batches-first-5-and-ellipsis"),
])
def test_offset_entry_not_reached_from_its_chunk(tmp_path: Path, chunk_end: int, listed: list[int], more: str) -> None:
    """Entry (O, P): ``offsetIndex().append(largestOffset, physicalPosition)`` in ``LogSegment.append``
    — O is the last offset of one of the batches appended from P up to the next entry's position.
    O = 1018 is a base offset inside the chunk, never an append's largest offset. The message
    lists the first five of those batch ends, with … when there are more."""
    part, layout = segment(tmp_path)
    (p2, _, l2), (p5, b5, l5), (pn, _, ln) = layout[2], layout[5], layout[chunk_end]
    raw = build_offset_index([(l2, p2), (1018, p5), (ln, pn)], base_offset=BASE)
    assert rows(verify_offset_index(raw, path="o.index", segment=table(part))) == [
        ("index_entry_mismatch", "o.index", 8, f"entry 1 says offset 1018 is reached from byte {p5}, but the batches "
                                               f"appended there end at offsets {listed}{more} (the batch at that byte "
                                               f"holds {b5}-{l5})",
         {"slot": 1, "offset": 1018, "log_position": p5})]


@pytest.mark.parametrize("first, second, mismatched", [
    # a follower's chunk [5, 8): its last offset is that of batch 7; batch 8 starts the next chunk
    pytest.param((7, 5), (12, 8), [], id="chunk-last-batch"),
    pytest.param((8, 5), (12, 8), [0], id="batch-at-next-entry-is-not-in-the-chunk"),
    # a second entry at the same position (index_position_regression): the batch at P still counts
    pytest.param((5, 5), (8, 5), [], id="next-entry-at-same-position"),
    pytest.param((6, 5), (8, 5), [0], id="next-entry-at-same-position-wrong-offset"),
])
def test_offset_entry_chunk_bounds(tmp_path: Path, first: tuple[int, int], second: tuple[int, int],
                                   mismatched: list[int]) -> None:
    """``LogSegment.append(largestOffset, ...)`` at ``physicalPosition``: the entry's offset ends a
    batch from P up to, not including, the next entry's position — and at least the batch at P."""
    part, layout = segment(tmp_path)
    raw = build_offset_index([(layout[first[0]][2], layout[first[1]][0]), (layout[second[0]][2], layout[second[1]][0])],
                             base_offset=BASE)
    fs = findings_of(verify_offset_index(raw, path="c.index", segment=table(part)))
    assert [f.details["slot"] for f in fs if f.kind == "index_entry_mismatch"] == mismatched


# batch i of segment(): offsets 1000+3i .. 1002+3i, timestamps TS+10i .. TS+10i+2
@pytest.mark.parametrize("entries, expected", [
    # first batch (no batch before it: the floor is RecordBatch.NO_TIMESTAMP, -1)
    pytest.param([(TS + 2, 1002)], [], id="first-batch"),
    pytest.param([(0, 1001)], [], id="first-batch-timestamp-0"),
    pytest.param([(-2, 1001)], [(0, -2, 1001, TS + 2, -1)], id="first-batch-below-no-timestamp"),
    # batch 5: the batches before reach TS+42, batch 5 itself TS+52
    pytest.param([(TS + 2, 1002), (TS + 42, 1015)], [], id="equal-to-max-before-the-batch"),
    pytest.param([(TS + 2, 1002), (TS + 41, 1015)], [(1, TS + 41, 1015, TS + 52, TS + 42)], id="below-max-before"),
    pytest.param([(TS + 2, 1002), (TS + 52, 1017)], [], id="equal-to-max-through-the-batch"),
    pytest.param([(TS + 2, 1002), (TS + 53, 1017)], [(1, TS + 53, 1017, TS + 52, TS + 42)], id="above-max-through"),
])
def test_time_entry_timestamp_bounds(tmp_path: Path, entries, expected) -> None:
    """``TimeIndex`` (class comment): an entry (T, O) means "the biggest timestamp seen before O is T",
    so T lies between the largest timestamp of the batches before O's batch and the largest through
    it (O may be mid-batch before 3.8), both inclusive; an empty index's last entry is
    ``TimestampOffset(RecordBatch.NO_TIMESTAMP, baseOffset)``, so nothing before the first batch
    is below -1."""
    part, _ = segment(tmp_path)
    raw = build_time_index(entries, base_offset=BASE)
    assert rows(verify_time_index(raw, path="t.timeindex", segment=table(part))) == [
        ("index_entry_mismatch", "t.timeindex", 12 * slot,
         f"time index entry {slot} says {ts} is the largest timestamp up to offset {offset}, but the batches there "
         f"reach {through} (and {before} before that batch)",
         {"slot": slot, "offset": offset, "timestamp": ts, "batch_max_timestamp": through})
        for slot, ts, offset, through, before in expected]


def _no_batch(slot: int, ts: int, offset: int) -> tuple:
    return ("index_entry_mismatch", "t.timeindex", 12 * slot,
            f"time index entry {slot} names offset {offset}, which no batch of the segment holds",
            {"slot": slot, "offset": offset, "timestamp": ts})


def test_time_entries_naming_offsets_no_batch_holds(tmp_path: Path) -> None:
    """A time index entry's offset is that of a record appended to this segment
    (``LogSegment.append``: ``shallowOffsetOfMaxTimestamp``): above the last batch, or below the
    first, no batch holds it; each such entry is reported and the ones after it still checked."""
    part, _ = segment(tmp_path)
    t = table(part)
    above = build_time_index([(TS + 2, 1002), (TS + 10 ** 9, 1500), (TS + 10 ** 9 + 1, 1501)], base_offset=BASE)
    assert rows(verify_time_index(above, path="t.timeindex", segment=t)) == [
        _no_batch(1, TS + 10 ** 9, 1500), _no_batch(2, TS + 10 ** 9 + 1, 1501)]
    # relative offset -1: offset 999, below the first batch (1000); the reader reports the negative
    # slot first and the entry is still checked
    below = _time_slots((TS, -1), (TS + 2, 2))
    assert rows(verify_time_index(below, path="t.timeindex", segment=t)) == [
        ("index_negative_entry", "t.timeindex", 0, "slot 0: negative relative offset -1",
         {"slot": 0, "relative_offset": -1}),
        _no_batch(0, TS, 999)]


def test_time_entries_after_a_size_finding_are_still_checked(tmp_path: Path) -> None:
    part, _ = segment(tmp_path)
    raw = build_time_index([(TS + 2, 1002), (TS + 10 ** 9, 1500)], base_offset=BASE) + b"\0\0\0"
    assert [(f.kind, f.position) for f in findings_of(verify_time_index(raw, path="t.timeindex",
                                                                        segment=table(part)))] == [
        ("index_size_not_multiple", 24), ("index_entry_mismatch", 12)]


def test_time_entries_judged_in_offset_order_not_file_order(tmp_path: Path) -> None:
    """``TimeIndex``: "the biggest timestamp seen before OFFSET" — before in offsets. Here the batch
    at byte 0 holds offsets 1010-1012 (timestamps TS+500) and the next one 1000-1002 (TS+100, an
    offset_regression): an entry (TS+100, 1002) is right, as no offset below 1002 has a larger
    timestamp."""
    part = tmp_path / "r-0"
    part.mkdir()
    data = build_batch([NewRecord(1010 + k, TS + 500, b"k", b"v") for k in range(3)], base_offset=1010)
    data += build_batch([NewRecord(1000 + k, TS + 100, b"k", b"v") for k in range(3)], base_offset=1000)
    (part / f"{BASE:020d}.log").write_bytes(data)
    t = table(part)
    assert [b.base_offset for b in t.batches] == [1010, 1000]
    assert findings_of(verify_time_index(build_time_index([(TS + 100, 1002)], base_offset=BASE), path="r.timeindex",
                                         segment=t)) == []
    # (TS+100, 1011) too: in offsets 1010-1012 follows 1000-1002, whose TS+100 is the largest before it
    assert rows(verify_time_index(build_time_index([(TS + 100, 1011)], base_offset=BASE), path="r.timeindex",
                                  segment=t)) == []


def test_txn_entries_against_abort_markers_in_full(tmp_path: Path) -> None:
    """``TransactionIndex`` entries come from ``ProducerAppendInfo.appendEndTxnMarker``'s
    ``CompletedTxn(producerId, currentTxnFirstOffset, offset of the marker, isAborted)``: last offset =
    the ABORT marker's offset, of the same producer, first offset at or before it."""
    part = _txn_segment(tmp_path)
    t = table(part)
    marker_pos = next(iter(t.markers))
    # a second entry (byte 34) whose offset holds no marker
    assert rows(verify_txn_index(build_txn_index([(9, BASE, BASE + 1, BASE + 2), (5, BASE, BASE + 5, 0)]), path="i",
                                 segment=t)) == [
        ("txn_index_mismatch", "i", 34, "aborted transaction of producer 5 ending at offset 1005 has no ABORT marker of "
                                        "that producer at that offset in the segment",
         {"producer_id": 5, "last_offset": 1005})]
    # first offset above the marker: the reader's txn_index_inverted_range, then this module's finding
    assert rows(verify_txn_index(build_txn_index([(9, BASE + 2, BASE + 1, BASE + 2)]), path="i", segment=t)) == [
        ("txn_index_inverted_range", "i", 0, "first offset 1002 is above last offset 1001",
         {"first_offset": 1002, "last_offset": 1001}),
        ("txn_index_mismatch", "i", 0, "aborted transaction of producer 9 starts at 1002, after its ABORT marker at 1001",
         {"producer_id": 9})]
    # first offset = the marker's own offset is not after it
    assert rows(verify_txn_index(build_txn_index([(9, BASE + 1, BASE + 1, BASE + 2)]), path="i", segment=t)) == []
    missing = (f"the ABORT marker of producer 9 at offset 1001 (byte {marker_pos} of the segment) has no entry in the "
               "transaction index: read_committed consumers would be served the aborted records as committed")
    details = {"producer_id": 9, "marker_offset": 1001}
    assert rows(verify_txn_index(b"", path=None, segment=t)) == [
        ("txn_index_mismatch", f"{t.path} (no .txnindex)", 0, missing, details)]
    assert rows(verify_txn_index(b"", path="i", segment=t)) == [("txn_index_mismatch", "i", 0, missing, details)]


def _abort(offset: int, producer: int = 9) -> bytes:
    return build_batch([build_control_record(offset, TS, CONTROL_ABORT, 1)], base_offset=offset,
                       producer_id=producer, producer_epoch=0, is_transactional=True, is_control=True)


def _txn_data(offset: int, producer: int = 9) -> bytes:
    return build_batch([NewRecord(offset, TS, b"k", b"v")], base_offset=offset, producer_id=producer,
                       producer_epoch=0, base_sequence=0, is_transactional=True)


def _segment_of(tmp_path: Path, data: bytes) -> object:
    part = tmp_path / "x-0"
    part.mkdir()
    (part / f"{BASE:020d}.log").write_bytes(data)
    return table(part)


@pytest.mark.parametrize(("data", "open_at_start", "flagged"), [
    # data, then its abort, no entry: read_committed consumers would be served the data
    pytest.param(lambda: _txn_data(BASE) + _abort(BASE + 1), None, [BASE + 1], id="with-data"),
    # an abort right after the producer's previous marker: an empty transaction, which Kafka
    # 2.8+ does not index (ProducerAppendInfo.appendEndTxnMarker, KAFKA-10702)
    pytest.param(lambda: _txn_data(BASE) + _abort(BASE + 1) + _abort(BASE + 2), None, [BASE + 1], id="empty-after"),
    # another producer's data does not make this producer's transaction non-empty
    pytest.param(lambda: _txn_data(BASE, producer=5) + _abort(BASE + 1), frozenset(), [], id="other-producer"),
    # the first item is the abort: its data may be in the segment before (not at hand: not flagged)
    pytest.param(lambda: _abort(BASE), None, [], id="unknown-before"),
    # ... and with the segments before known: open there, so the entry is missing
    pytest.param(lambda: _abort(BASE), frozenset({9}), [BASE], id="open-before"),
    # ... or not open there: an empty transaction
    pytest.param(lambda: _abort(BASE), frozenset({5}), [], id="closed-before"),
])
def test_only_an_aborted_transaction_with_data_needs_an_entry(tmp_path: Path, data, open_at_start, flagged) -> None:
    t = _segment_of(tmp_path, data())
    found = findings_of(verify_txn_index(b"", path="i", segment=t, open_at_start=open_at_start))
    assert [f.details["marker_offset"] for f in found] == flagged
    assert all(f.kind == "txn_index_mismatch" and "read_committed" in f.message for f in found)


def test_inspect_dir_carries_an_open_transaction_into_the_next_segment(tmp_path: Path) -> None:
    """Data in segment 1, its abort in segment 2, no .txnindex entry: inspect-dir knows the
    transaction was open where segment 2 starts, so the missing entry is found (counter-case:
    an empty aborted transaction in segment 2 is not flagged)."""
    import json

    from tests.builders.usage import run

    def partition(name: str, second: bytes) -> Path:
        part = tmp_path / name / "x-0"
        part.mkdir(parents=True)
        (part / f"{BASE:020d}.log").write_bytes(_txn_data(BASE))
        (part / f"{BASE + 1:020d}.log").write_bytes(second)
        (part / f"{BASE + 1:020d}.txnindex").write_bytes(b"")
        return part

    def mismatches(part: Path) -> list:
        out = run("inspect-dir", str(part), "-f", "ndjson").stdout
        return [o["marker_offset"] for o in map(json.loads, out.splitlines())
                if o.get("kind") == "txn_index_mismatch"]

    assert mismatches(partition("spanning", _abort(BASE + 1))) == [BASE + 1]
    ended = _abort(BASE + 1) + _abort(BASE + 2)
    assert mismatches(partition("empty", ended)) == [BASE + 1]


def test_an_active_segments_entries_past_its_last_batch_are_a_truncations_stale_tail(tmp_path: Path) -> None:
    """Kafka's ``LogSegment.truncateTo`` moves the indexes' position back
    (``AbstractIndex.truncateToEntries``) without clearing the bytes after it; the active segment
    keeps them until it is closed (``trimToValidSize``) or recovered (rebuilt). A copy of a
    running broker after a truncation holds them: a real 4.4 old leader back from an unclean
    election had a time index entry for offset 499 in a segment ending at 399. In the active
    segment they are one information finding, whatever follows them; nothing else is checked."""
    part, layout = segment(tmp_path)
    t = table(part)
    (p4, _, l4), last = layout[4], layout[-1][2]
    stale_time = build_time_index([(TS + 2, 1002), (TS + 10 ** 9, last + 100), (TS + 5, last + 1)], base_offset=BASE)
    found = rows(verify_time_index(stale_time, path="t.timeindex", segment=t, active=True))
    assert found == [("index_entry_mismatch", "t.timeindex", 12,
                      f"2 entries from slot 1 name offsets past the active segment's last batch (offset {last}): left "
                      "by a truncation, trimmed when the segment is closed and rebuilt when the broker recovers it",
                      {"slot": 1, "entries": 2, "last_offset": last, "stale_tail": True})]
    assert [f.severity for f in findings_of(verify_time_index(stale_time, path="t.timeindex", segment=t,
                                                              active=True))] == ["info"]
    stale_offset = build_offset_index([(l4, p4), (last + 50, t.file_size + 10)], base_offset=BASE)
    assert [(f.kind, f.severity, f.details["entries"]) for f in
            findings_of(verify_offset_index(stale_offset, path="o.index", segment=t, active=True))] == [
        ("index_entry_mismatch", "info", 1)]


def test_a_closed_segments_entries_past_its_last_batch_are_damage(tmp_path: Path) -> None:
    """The counter-case: a segment that is not the active one was trimmed when it rolled, so an
    entry past its end is an error, each entry reported (the default, ``active=False``)."""
    part, layout = segment(tmp_path)
    t = table(part)
    last = layout[-1][2]
    stale_time = build_time_index([(TS + 2, 1002), (TS + 10 ** 9, last + 100)], base_offset=BASE)
    assert [(f.kind, f.severity) for f in findings_of(verify_time_index(stale_time, path="t.timeindex", segment=t))] \
        == [("index_entry_mismatch", "error")]
