"""Producer-state snapshots (spec §7): TV12 byte-exact both ways, Kafka's rejection rules as
exceptions (CRC as a flag), sizes checked before allocation, and fuzzing."""

from __future__ import annotations

import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.checksums import reference_crc32c
from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.log.producer_snapshot import (
    ENTRY,
    HEADER,
    ProducerSnapshotEntry,
    build_producer_snapshot,
    parse_producer_snapshot,
)

TS = 1700000000000
# TV12 (spec §15), quoted.
TV12 = bytes.fromhex(
    "00011a33679e00000001000000000000109200030000000b0000000000000065"
    "000000010000018bcfe56805ffffffff0000000000000064"
)
TV12_EMPTY = bytes.fromhex("0001 48674bc7 00000000".replace(" ", ""))
TV12_ENTRY = ProducerSnapshotEntry(producer_id=4242, producer_epoch=3, last_sequence=11, last_offset=101,
                                   offset_delta=1, timestamp=TS + 5, coordinator_epoch=-1,
                                   current_txn_first_offset=100)


def test_tv12_parses():
    snap = parse_producer_snapshot(TV12, path="00000000000000000102.snapshot")
    assert snap.version == 1
    assert snap.crc == 0x1A33679E == snap.computed_crc
    assert snap.crc_valid is True
    assert snap.entries == (TV12_ENTRY,)
    assert snap.trailing_bytes == 0
    e = snap.entries[0]
    assert (e.first_sequence, e.first_offset) == (10, 100)   # sequences 10-11 at offsets 100-101


def test_tv12_is_what_the_writer_produces():
    assert build_producer_snapshot([TV12_ENTRY]) == TV12
    assert build_producer_snapshot([]) == TV12_EMPTY
    assert parse_producer_snapshot(TV12_EMPTY, path="s").entries == ()


def test_layout_sizes():
    assert HEADER.size == 10 and ENTRY.size == 46 and len(TV12) == 56


def test_crc_mismatch_is_a_flag_not_an_exception():
    damaged = bytearray(TV12)
    damaged[30] ^= 0x01
    snap = parse_producer_snapshot(bytes(damaged), path="s")
    assert snap.crc_valid is False
    assert snap.crc == 0x1A33679E
    assert snap.computed_crc == reference_crc32c(bytes(damaged[6:]))


def test_trailing_bytes_are_under_the_crc():
    snap = parse_producer_snapshot(TV12 + b"\x00\x00", path="s")
    assert snap.trailing_bytes == 2
    assert snap.crc_valid is False
    assert len(snap.entries) == 1


@pytest.mark.parametrize("version", [0, 2, -1, 256])
def test_unknown_versions(version):
    data = struct.pack(">h", version) + TV12[2:]
    with pytest.raises(UnsupportedVersion) as info:
        parse_producer_snapshot(data, path="s")
    assert info.value.reason == f"Snapshot contained an unknown file version {version}"
    assert info.value.position == 0 and info.value.path == "s"


@pytest.mark.parametrize("data, exc, position, text", [
    pytest.param(b"", Truncated, 0, "Snapshot failed schema validation", id="empty"),
    pytest.param(b"\x00", Truncated, 0, "Snapshot failed schema validation", id="one-byte"),
    pytest.param(TV12[:8], Truncated, 8, "Snapshot failed schema validation", id="cut-in-count"),
    pytest.param(TV12[:30], Truncated, 10, "Snapshot failed schema validation", id="cut-in-entry"),
    pytest.param(TV12[:6] + struct.pack(">i", -1) + TV12[10:], Malformed, 6,
                 "non-nullable field producerEntries was serialized as null", id="negative-count"),
    pytest.param(TV12[:6] + struct.pack(">i", 2**31 - 1) + TV12[10:], Truncated, 6,
                 "Tried to allocate a collection of size 2147483647, but there are only 46 bytes remaining.",
                 id="huge-count"),
    pytest.param(TV12[:6] + struct.pack(">i", 2) + TV12[10:] + bytes(20), Truncated, 56,
                 "Snapshot failed schema validation", id="count-above-entries"),
])
def test_structure_errors(data, exc, position, text):
    with pytest.raises(exc) as info:
        parse_producer_snapshot(data, path="p")
    assert text in info.value.reason
    assert info.value.reason.startswith("Snapshot failed schema validation")
    assert info.value.position == position
    assert info.value.path == "p"


def test_huge_count_is_refused_before_allocating():
    data = TV12[:6] + struct.pack(">i", 2**31 - 1) + TV12[10:]
    tracemalloc.start()
    try:
        with pytest.raises(Truncated):
            parse_producer_snapshot(data, path="p")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000


@pytest.mark.parametrize("last_sequence, offset_delta, first", [
    pytest.param(11, 1, 10, id="plain"),
    pytest.param(1, 3, 2147483646, id="wraps-past-int-max"),   # 2147483646, 2147483647, 0, 1
    pytest.param(0, 0, 0, id="single-record"),
])
def test_first_sequence_wraps_like_decrement_sequence(last_sequence, offset_delta, first):
    e = ProducerSnapshotEntry(1, 0, last_sequence, 500, offset_delta, TS, -1, -1)
    assert e.first_sequence == first
    assert e.first_offset == 500 - offset_delta


def test_entry_without_batch_has_no_first_sequence_or_offset():
    e = ProducerSnapshotEntry(1, 0, -1, -1, 0, -1, 5, -1)
    assert (e.first_sequence, e.first_offset) == (-1, -1)


entries_st = st.builds(
    ProducerSnapshotEntry,
    st.integers(-2**63, 2**63 - 1), st.integers(-2**15, 2**15 - 1), st.integers(-2**31, 2**31 - 1),
    st.integers(-2**63, 2**63 - 1), st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
    st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
)


@given(st.lists(entries_st, max_size=20))
def test_round_trip(entries):
    snap = parse_producer_snapshot(build_producer_snapshot(entries), path="s")
    assert snap.entries == tuple(entries)
    assert snap.crc_valid and snap.trailing_bytes == 0


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_any_bytes(data):
    try:
        snap = parse_producer_snapshot(data, path="s")
    except FormatError as exc:
        assert exc.path == "s" and exc.position is not None
    else:
        assert len(snap.entries) * 46 + 10 + snap.trailing_bytes == len(data)


@settings(max_examples=300)
@given(st.lists(entries_st, max_size=4), st.data())
def test_mutated(entries, data):
    raw = bytearray(build_producer_snapshot(entries))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(0, len(raw)))]
    tracemalloc.start()
    try:
        try:
            parse_producer_snapshot(bytes(raw), path="s")
        except FormatError:
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000 + 20 * len(raw)


def test_reads_a_read_only_mmap_and_lets_it_close(tmp_path):
    import mmap

    f = tmp_path / "00000000000000000102.snapshot"
    f.write_bytes(TV12)
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        snap = parse_producer_snapshot(m, path=str(f))
    assert snap.crc_valid and snap.entries == (TV12_ENTRY,)
    assert parse_producer_snapshot(memoryview(TV12), path="s").entries == (TV12_ENTRY,)
