"""Offset index (spec §6.1, §6.3): TV11 byte-exact both ways, the real-entry-count walk on
preallocated files, every damage rule as a finding, and "any bytes give entries, findings and an
IndexEnd, never an exception"."""

from __future__ import annotations

import mmap
import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.log.offset_index import (
    ENTRY,
    IndexEnd,
    OffsetIndexEntry,
    build_offset_index,
    iter_offset_index,
)

# TV11 (spec §15), quoted: base 1000, (1037 -> 4133), (1090 -> 8230), two zero slots.
TV11_INDEX = bytes.fromhex(
    "00 00 00 25 00 00 10 25 00 00 00 5a 00 00 20 26 "
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00".replace(" ", "")
)
BASE = 1000


def walk(buf, base=BASE, path="00000000000000001000.index"):
    items = list(iter_offset_index(buf, path=path, base_offset=base))
    entries = [i for i in items if isinstance(i, OffsetIndexEntry)]
    findings = [i for i in items if isinstance(i, Finding)]
    end = items[-1]
    assert isinstance(end, IndexEnd)
    assert sum(isinstance(i, IndexEnd) for i in items) == 1
    return entries, findings, end


def kinds(findings):
    return [f.kind for f in findings]


def test_tv11_reads_two_real_entries_and_two_padding_slots():
    entries, findings, end = walk(TV11_INDEX)
    assert entries == [OffsetIndexEntry(0, 1037, 4133), OffsetIndexEntry(1, 1090, 8230)]
    assert kinds(findings) == ["index_preallocated"]
    assert findings[0].severity == "info"  # normal, not counted as a warning (issue 20)
    assert findings[0].position == 16
    assert end == IndexEnd("00000000000000001000.index", entries=2, slots=4, padding_slots=2,
                           trailing_bytes=0, stopped_at=None)


def test_tv11_is_what_the_writer_produces():
    assert build_offset_index([(1037, 4133), (1090, 8230)], base_offset=BASE, preallocate=32) == TV11_INDEX
    assert build_offset_index([(1037, 4133), (1090, 8230)], base_offset=BASE) == TV11_INDEX[:16]


def test_preallocate_rounds_down_to_whole_entries():
    assert len(build_offset_index([], base_offset=0, preallocate=10485763)) == 10485760
    assert len(build_offset_index([], base_offset=0, preallocate=13)) == 8


def test_trimmed_index_has_no_padding_finding():
    entries, findings, end = walk(TV11_INDEX[:16])
    assert len(entries) == 2
    assert findings == []
    assert end.entries == end.slots == 2 and end.padding_slots == 0


def test_realistic_preallocated_active_index_walk_stops_at_the_real_entries():
    # Kafka's default segment.index.bytes: 10485760 bytes = 1310720 slots (§6.3).
    real = [(BASE + 100 * i, 4100 * i) for i in range(1, 51)]
    data = build_offset_index(real, base_offset=BASE, preallocate=10485760)
    assert len(data) == 10485760
    tracemalloc.start()
    try:
        items = list(iter_offset_index(data, path="p", base_offset=BASE))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 50 entries + 1 warning + IndexEnd: the zero tail is never turned into objects.
    assert len(items) == 52
    end = items[-1]
    assert end == IndexEnd("p", entries=50, slots=1310720, padding_slots=1310670, trailing_bytes=0,
                           stopped_at=None)
    assert items[-2].kind == "index_preallocated"
    assert items[-2].position == 50 * 8
    assert peak < 1_000_000


def test_reads_from_a_read_only_mmap_and_lets_it_close(tmp_path):
    f = tmp_path / "00000000000000001000.index"
    f.write_bytes(build_offset_index([(1037, 4133), (1090, 8230)], base_offset=BASE, preallocate=4096))
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        entries, findings, end = walk(m)
    assert [e.offset for e in entries] == [1037, 1090]
    assert end.padding_slots == 510
    assert f.read_bytes()[:16] == TV11_INDEX[:16]     # input untouched


def test_memoryview_input():
    entries, _findings, end = walk(memoryview(TV11_INDEX))
    assert len(entries) == 2 and end.padding_slots == 2


def test_empty_file():
    entries, findings, end = walk(b"")
    assert entries == [] and findings == []
    assert end == IndexEnd("00000000000000001000.index", 0, 0, 0, 0, None)


def test_all_zero_file_is_empty_and_preallocated():
    entries, findings, end = walk(bytes(64))
    assert entries == []
    assert kinds(findings) == ["index_preallocated"]
    assert findings[0].position == 0
    assert (end.entries, end.slots, end.padding_slots) == (0, 8, 8)


def test_zero_slot_zero_then_entries_means_empty_with_garbage_after():
    data = bytes(8) + ENTRY.pack(37, 4133) + bytes(16)
    entries, findings, end = walk(data)
    assert entries == []
    assert kinds(findings) == ["index_nonzero_after_end"]
    assert findings[0].severity == "error"
    assert findings[0].position == 8
    assert end.entries == 0 and end.padding_slots == 2 and end.stopped_at is None


def test_nonzero_slots_after_the_first_empty_slot_are_an_error():
    data = ENTRY.pack(37, 4133) + bytes(8) + ENTRY.pack(90, 8230) + bytes(8)
    entries, findings, end = walk(data)
    assert [e.offset for e in entries] == [1037]
    assert kinds(findings) == ["index_nonzero_after_end"]
    assert findings[0].position == 16
    assert end.entries == 1 and end.slots == 4 and end.padding_slots == 1


@pytest.mark.parametrize("second", [
    pytest.param((0x20, 8230), id="lower-offset"),
    pytest.param((0x25, 8230), id="equal-offset"),
    pytest.param((0, 8230), id="zero-offset-non-zero-position"),
])
def test_offset_regression_stops_the_walk(second):
    data = ENTRY.pack(0x25, 4133) + ENTRY.pack(*second) + ENTRY.pack(0x90, 9000)
    entries, findings, end = walk(data)
    assert [e.offset for e in entries] == [1037]
    assert kinds(findings) == ["index_offset_regression"]
    assert findings[0].position == 8 and findings[0].severity == "error"
    assert end.entries == 1 and end.stopped_at == 1 and end.padding_slots == 0


def test_length_not_a_multiple_of_eight():
    data = TV11_INDEX[:16] + b"\x00\x00\x01"
    entries, findings, end = walk(data)
    assert len(entries) == 2
    assert kinds(findings) == ["index_size_not_multiple"]
    assert findings[0].position == 16
    assert end.trailing_bytes == 3 and end.slots == 2


@pytest.mark.parametrize("entry, expected_offset", [
    pytest.param((-5, 4133), 995, id="negative-relative-offset"),
    pytest.param((37, -1), 1037, id="negative-position"),
])
def test_negative_fields_are_reported_and_the_entry_kept(entry, expected_offset):
    entries, findings, end = walk(ENTRY.pack(*entry))
    assert kinds(findings) == ["index_negative_entry"]
    # the entry's segment position is its own detail: the finding's position is the slot's byte
    assert findings[0].position == 0 and findings[0].details["segment_position"] == entry[1]
    assert [e.offset for e in entries] == [expected_offset]
    assert end.entries == 1


def test_position_not_increasing_is_reported_without_stopping():
    data = ENTRY.pack(37, 8230) + ENTRY.pack(90, 4133) + ENTRY.pack(120, 9000)
    entries, findings, end = walk(data)
    assert [e.offset for e in entries] == [1037, 1090, 1120]
    assert kinds(findings) == ["index_position_regression"]
    assert findings[0].position == 8
    assert (findings[0].details["segment_position"], findings[0].details["previous_position"]) == (4133, 8230)
    assert end.entries == 3


def test_every_finding_kind_is_catalogued():
    for k in ("index_size_not_multiple", "index_offset_regression", "index_position_regression",
              "index_negative_entry", "index_preallocated", "index_nonzero_after_end"):
        assert k in KINDS


def test_writer_refuses_offsets_outside_the_relative_range():
    with pytest.raises(ValueError):
        build_offset_index([(999, 10)], base_offset=BASE)
    with pytest.raises(ValueError):
        build_offset_index([(BASE + 2**31, 10)], base_offset=BASE)
    with pytest.raises(ValueError):
        build_offset_index([(1037, 1)] * 3, base_offset=BASE, preallocate=16)


@st.composite
def kafka_entries(draw):
    n = draw(st.integers(0, 40))
    rels = sorted(draw(st.sets(st.integers(1, 2**31 - 1), min_size=n, max_size=n)))
    positions = sorted(draw(st.sets(st.integers(1, 2**31 - 1), min_size=n, max_size=n)))
    return [(BASE + r, p) for r, p in zip(rels, positions)]


@given(kafka_entries(), st.integers(0, 64))
def test_round_trip(entries, extra_slots):
    data = build_offset_index(entries, base_offset=BASE, preallocate=8 * (len(entries) + extra_slots))
    got, findings, end = walk(data)
    assert [(e.offset, e.position) for e in got] == entries
    assert [e.slot for e in got] == list(range(len(entries)))
    assert all(not f.is_error for f in findings)
    assert end.entries == len(entries)
    assert end.padding_slots == extra_slots
    assert end.slots == len(entries) + extra_slots


def _check_any(data: bytes) -> None:
    entries, findings, end = walk(data)
    assert end.slots == len(data) // 8
    assert end.trailing_bytes == len(data) % 8
    assert end.entries == len(entries) <= end.slots
    assert 0 <= end.padding_slots <= end.slots - end.entries
    for f in findings:
        assert f.kind in KINDS and 0 <= f.position <= len(data)


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_any_bytes_give_entries_findings_and_an_end(data):
    _check_any(data)


@settings(max_examples=200)
@given(kafka_entries(), st.integers(0, 8), st.data())
def test_mutated_indexes_never_raise(entries, extra, data):
    raw = bytearray(build_offset_index(entries, base_offset=BASE, preallocate=8 * (len(entries) + extra)))
    for _ in range(data.draw(st.integers(1, 6))):
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    _check_any(bytes(raw))


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=2048))
def test_memory_stays_in_proportion_to_the_input(data):
    tracemalloc.start()
    try:
        list(iter_offset_index(data, path="p", base_offset=BASE))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000 + 400 * len(data)


def test_struct_is_kafkas_layout():
    assert ENTRY.size == struct.calcsize(">ii") == 8
