"""Time index (spec §6.2, §6.3): TV11 byte-exact both ways, the real-entry walk on a default
preallocated file (10485756 bytes), monotonicity rules as findings, and fuzzing."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.log.time_index import (
    ENTRY,
    IndexEnd,
    TimeIndexEntry,
    build_time_index,
    iter_time_index,
)

TS = 1700000000000
BASE = 1000
# TV11 (spec §15), quoted: (TS+50, 1037) and (TS+99, 1090).
TV11_TIME_INDEX = bytes.fromhex(
    "00 00 01 8b cf e5 68 32 00 00 00 25 00 00 01 8b cf e5 68 63 00 00 00 5a".replace(" ", "")
)


def walk(buf, base=BASE):
    items = list(iter_time_index(buf, path="t", base_offset=base))
    end = items[-1]
    assert isinstance(end, IndexEnd)
    entries = [i for i in items if isinstance(i, TimeIndexEntry)]
    findings = [i for i in items if isinstance(i, Finding)]
    return entries, findings, end


def test_tv11_reads():
    entries, findings, end = walk(TV11_TIME_INDEX)
    assert entries == [TimeIndexEntry(0, TS + 50, 1037), TimeIndexEntry(1, TS + 99, 1090)]
    assert findings == []
    assert end == IndexEnd("t", 2, 2, 0, 0, None)


def test_tv11_is_what_the_writer_produces():
    assert build_time_index([(TS + 50, 1037), (TS + 99, 1090)], base_offset=BASE) == TV11_TIME_INDEX


def test_default_preallocated_size_and_walk():
    data = build_time_index([(TS + 50, 1037), (TS + 99, 1090)], base_offset=BASE, preallocate=10485760)
    assert len(data) == 10485756                         # 873813 slots (§6.3)
    tracemalloc.start()
    try:
        items = list(iter_time_index(data, path="t", base_offset=BASE))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(items) == 4
    assert items[2].kind == "index_preallocated" and items[2].position == 24
    assert items[3] == IndexEnd("t", entries=2, slots=873813, padding_slots=873811, trailing_bytes=0,
                                stopped_at=None)
    assert peak < 1_000_000


@pytest.mark.parametrize("second, kind", [
    pytest.param((TS + 50, 0x30), "index_timestamp_regression", id="equal-timestamp"),
    pytest.param((TS + 10, 0x30), "index_timestamp_regression", id="lower-timestamp"),
    pytest.param((TS + 60, 0x20), "index_offset_regression", id="lower-offset"),
])
def test_monotonicity_breaks_stop_the_walk(second, kind):
    data = ENTRY.pack(TS + 50, 0x25) + ENTRY.pack(*second) + ENTRY.pack(TS + 200, 0x90)
    entries, findings, end = walk(data)
    assert [e.offset for e in entries] == [1037]
    assert [f.kind for f in findings] == [kind]
    assert findings[0].position == 12 and findings[0].severity == "error"
    assert end.stopped_at == 1 and end.entries == 1


def test_equal_offsets_with_rising_timestamps_are_fine():
    # Offsets never decrease; equal is allowed (§6.2).
    data = ENTRY.pack(TS + 50, 0x25) + ENTRY.pack(TS + 60, 0x25)
    entries, findings, end = walk(data)
    assert len(entries) == 2 and findings == []


def test_length_not_a_multiple_of_twelve():
    entries, findings, end = walk(TV11_TIME_INDEX + b"\x01" * 5)
    assert len(entries) == 2
    assert [f.kind for f in findings] == ["index_size_not_multiple"]
    assert findings[0].position == 24 and end.trailing_bytes == 5


def test_garbage_after_zero_slot():
    data = TV11_TIME_INDEX + bytes(12) + ENTRY.pack(TS + 500, 0x99)
    entries, findings, end = walk(data)
    assert len(entries) == 2
    assert [f.kind for f in findings] == ["index_nonzero_after_end"]
    assert findings[0].position == 36
    assert end.padding_slots == 0 and end.entries == 2 and end.slots == 4


def test_negative_relative_offset_is_reported():
    entries, findings, end = walk(ENTRY.pack(TS, -3))
    assert [f.kind for f in findings] == ["index_negative_entry"]
    assert entries == [TimeIndexEntry(0, TS, 997)]


def test_all_zero_slot_zero_means_empty():
    entries, findings, end = walk(bytes(36))
    assert entries == [] and [f.kind for f in findings] == ["index_preallocated"]
    assert end.padding_slots == 3


@st.composite
def kafka_entries(draw):
    n = draw(st.integers(0, 30))
    stamps = sorted(draw(st.sets(st.integers(1, 2**62), min_size=n, max_size=n)))
    rels = sorted(draw(st.lists(st.integers(1, 2**31 - 1), min_size=n, max_size=n)))
    return [(t, BASE + r) for t, r in zip(stamps, rels)]


@given(kafka_entries(), st.integers(0, 40))
def test_round_trip(entries, extra):
    data = build_time_index(entries, base_offset=BASE, preallocate=12 * (len(entries) + extra))
    got, findings, end = walk(data)
    assert [(e.timestamp, e.offset) for e in got] == entries
    assert not any(f.is_error for f in findings)
    assert (end.entries, end.padding_slots) == (len(entries), extra)


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_any_bytes(data):
    entries, findings, end = walk(data)
    assert end.slots == len(data) // 12 and end.trailing_bytes == len(data) % 12
    assert end.entries == len(entries)
    assert all(f.kind in KINDS for f in findings)


@settings(max_examples=200)
@given(kafka_entries(), st.data())
def test_mutated(entries, data):
    raw = bytearray(build_time_index(entries, base_offset=BASE, preallocate=12 * (len(entries) + 2)))
    for _ in range(data.draw(st.integers(1, 6))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(0, len(raw)))]
    walk(bytes(raw))


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=2048))
def test_memory_bound(data):
    tracemalloc.start()
    try:
        list(iter_time_index(data, path="t", base_offset=BASE))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000 + 400 * len(data)
