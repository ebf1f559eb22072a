"""Property tests for the segment readers: any bytes give values or a ``FormatError``, never an
uncaught exception, a hang, or memory out of proportion to the input (ARCHITECTURE.md, Tests).

Inputs are arbitrary bytes and valid segments (built with the writers) damaged by random
mutations: flipped bits, inserted/deleted/overwritten bytes, and length fields set to extreme
values. Up to the first break the walker must agree with a reference walk written here from
the spec's rules (§2), so the properties check agreement, not only survival.

The examples are derandomized so that the suite is deterministic. To search harder, set
``KREPLICA_PROPERTY_EXAMPLES`` (e.g. 20000): the examples are then random and that many.
"""

from __future__ import annotations

import os
import struct
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats import codecs
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import NewRecord, Record, RecordBatch
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.log.segment import SegmentEnd, iter_segment

TS = 1700000000000
PATH = "p.log"
MIB = 1024 * 1024

_HUNT = int(os.environ.get("KREPLICA_PROPERTY_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=_HUNT or 200,
    deadline=None,
    derandomize=not _HUNT,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _memory_bound(size: int) -> int:
    return 64 * size + 8 * MIB


# -- a pool of valid entries of every kind -----------------------------------------------------


def _records(base: int, n: int) -> list[NewRecord]:
    return [NewRecord(base + i, TS + i, None if i % 2 else b"key%d" % i, b"value-%d" % i * (i + 1),
                      (("h", b"x"),) if i == 1 else ()) for i in range(n)]


def _pool() -> dict[str, bytes]:
    v2 = default_records.build_batch
    pool = {"v2-none": v2(_records(0, 3), base_offset=0)}
    for codec in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD):
        pool[f"v2-{codecs.CODEC_NAMES[codec]}-txn"] = v2(
            _records(10, 4), base_offset=10, compression=codec, producer_id=7, producer_epoch=1,
            base_sequence=2147483646, is_transactional=True)
    pool["v2-commit-marker"] = v2([default_records.build_control_record(20, TS, 1, 5)], base_offset=20,
                                  producer_id=7, producer_epoch=1, is_transactional=True, is_control=True)
    pool["v2-empty"] = v2([], base_offset=30, last_offset_delta=4, max_timestamp=TS, producer_id=7,
                          producer_epoch=1, base_sequence=3)
    pool["v2-delete-horizon-log-append-time"] = v2(_records(40, 2), base_offset=40, delete_horizon_ms=TS + 10,
                                                   timestamp_type=1, max_timestamp=TS)
    for magic in (0, 1):
        pool[f"v{magic}-plain"] = legacy_records.build_message(50 + magic, b"k", b"v" * 20, magic=magic, timestamp=TS)
        for codec in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4):
            pool[f"v{magic}-{codecs.CODEC_NAMES[codec]}-wrapper"] = legacy_records.build_wrapper(
                _records(60, 3), magic=magic, compression=codec)
    pool["v1-gzip-wrapper-log-append-time"] = legacy_records.build_wrapper(
        _records(70, 2), magic=1, compression=codecs.GZIP, timestamp_type=1, append_time=TS + 99)
    return pool


POOL_BY_NAME = _pool()
POOL = list(POOL_BY_NAME.values())
EXTREME_INT32 = [2**31 - 1, -1, 0, 13, 14, 48, 49, -(2**31), 2**30, 100_000]


@st.composite
def segments(draw):
    picks = draw(st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=6))
    return b"".join(POOL[i] for i in picks), picks


@st.composite
def mutated_segments(draw):
    data, picks = draw(segments())
    buf = bytearray(data)
    # entry starts, for the length-field mutation
    starts, pos = [], 0
    for i in picks:
        starts.append(pos)
        pos += len(POOL[i])
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "overwrite", "length", "int32", "zero-tail"]))
        if op == "length":
            at = draw(st.sampled_from(starts)) + 8
            if at + 4 <= len(buf):
                struct.pack_into(">i", buf, at, draw(st.sampled_from(EXTREME_INT32)))
            continue
        if not buf:
            buf += draw(st.binary(min_size=1, max_size=16))
            continue
        at = draw(st.integers(0, len(buf) - 1))
        if op == "flip":
            buf[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            buf[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del buf[at:at + draw(st.integers(1, 16))]
        elif op == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=8))
            buf[at:at + len(chunk)] = chunk
        elif op == "int32":  # any length-like field: record/key/value lengths inside entries too
            if at + 4 <= len(buf):
                struct.pack_into(">i", buf, at, draw(st.sampled_from(EXTREME_INT32)))
        elif op == "zero-tail":
            buf[at:] = bytes(draw(st.integers(1, 300)))
    return bytes(buf)


# -- the reference: Kafka's FileLogInputStream walk, from the spec's rules ---------------------


def kafka_walk(buf: bytes) -> tuple[list[tuple[int, int, int]], int, str]:
    """(position, size incl. prefix, magic) of each entry Kafka yields; where and why it stops."""
    pos = 0
    out = []
    while True:
        remaining = len(buf) - pos
        if remaining <= 17:
            return out, pos, ("end_of_file" if remaining == 0 else "incomplete_trailing_data")
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        if size < 14:
            return out, pos, "exception"
        if 12 + size > remaining:
            return out, pos, "incomplete_trailing_data"
        magic = struct.unpack_from(">b", buf, pos + 16)[0]
        out.append((pos, 12 + size, magic))
        pos += 12 + size


def _check_walk(buf: bytes):
    """Walk ``buf``, check every structural promise, return the batches."""
    items = list(iter_segment(buf, path=PATH))
    assert items and isinstance(items[-1], SegmentEnd)
    assert sum(isinstance(i, SegmentEnd) for i in items) == 1
    batches = []
    for item in items[:-1]:
        assert isinstance(item, (RecordBatch, Finding)), type(item)
        if isinstance(item, Finding):
            assert item.kind in KINDS
            assert item.path == PATH and 0 <= item.position <= len(buf)
        else:
            batches.append(item)
    end = items[-1]
    assert (end.path, end.file_size, end.scanned_bytes) == (PATH, len(buf), len(buf))

    # batches lie inside the file, in order, never overlapping
    last_end = 0
    for b in batches:
        assert b.position >= last_end and b.end <= len(buf)
        last_end = b.end
    # once after_break, always after_break
    flags = [b.after_break for b in batches]
    assert flags == sorted(flags)

    # up to the first break: exactly Kafka's walk
    expected, stop_at, why = kafka_walk(buf)
    kafka_batches = [b for b in batches if not b.after_break]
    assert [(b.position, b.size, b.magic) for b in kafka_batches] == expected
    assert end.valid_bytes == stop_at
    assert end.stopped_by == why
    if why != "end_of_file":  # something is left: a finding must say so
        assert any(isinstance(i, Finding) for i in items)
    return batches


def _iterate_records(buf: bytes, batch: RecordBatch) -> int:
    module = default_records if batch.magic >= 2 else legacy_records
    n = 0
    try:
        for rec in module.iter_records(buf, batch):
            assert isinstance(rec, Record)
            n += 1
    except FormatError:
        pass
    return n


# -- properties --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(POOL_BY_NAME))
def test_resync_finds_every_entry_kind_after_garbage(name):
    import random

    garbage = random.Random(11).randbytes(3000)
    bad_prefix = POOL_BY_NAME["v2-none"][:8] + struct.pack(">i", 5) + bytes(20)  # size 5: a break at byte 0
    data = bad_prefix + garbage + POOL_BY_NAME[name]
    items, batches = list(iter_segment(data, path=PATH)), _check_walk(data)
    assert [(b.position, b.after_break, b.crc_valid) for b in batches] == [
        (len(bad_prefix) + len(garbage), True, True)]
    assert [i.kind for i in items if isinstance(i, Finding)] == ["invalid_length", "resynchronised"]


def test_pool_is_valid():
    # premise: the unmutated pool walks cleanly and every record reads
    for entry in POOL:
        batches = _check_walk(entry)
        assert len(batches) == 1 and batches[0].crc_valid is True
        module = default_records if batches[0].magic >= 2 else legacy_records
        list(module.iter_records(entry, batches[0]))  # no exception


@SETTINGS
@given(st.binary(max_size=3000))
def test_arbitrary_bytes(data):
    for batch in _check_walk(data):
        _iterate_records(data, batch)


@SETTINGS
@given(segments())
def test_valid_segments_walk_cleanly(case):
    data, picks = case
    items = list(iter_segment(data, path=PATH))
    assert not any(isinstance(i, Finding) for i in items)
    batches = _check_walk(data)
    assert [b.size for b in batches] == [len(POOL[i]) for i in picks]
    assert all(b.crc_valid is True and not b.after_break for b in batches)
    for b in batches:
        module = default_records if b.magic >= 2 else legacy_records
        list(module.iter_records(data, b))


@SETTINGS
@given(mutated_segments())
def test_mutated_segments(data):
    for batch in _check_walk(data):
        _iterate_records(data, batch)


@settings(max_examples=_HUNT or 100, deadline=None, derandomize=not _HUNT,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_segments())
def test_memory_stays_proportional_to_the_input(data):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for item in iter_segment(data, path=PATH):
            if isinstance(item, RecordBatch):
                _iterate_records(data, item)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < _memory_bound(len(data))


def _walk_and_read_peak(data: bytes) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for item in iter_segment(data, path=PATH):
            if isinstance(item, RecordBatch):
                _iterate_records(data, item)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("value", [pytest.param(v, id=str(v)) for v in EXTREME_INT32])
@pytest.mark.parametrize("entry", [pytest.param(i, id=name) for i, name in enumerate(POOL_BY_NAME)])
def test_extreme_length_field_in_every_entry_kind(entry, value):
    # the batch/message length of the middle entry of three
    first, middle, last = POOL[0], bytearray(POOL[entry]), POOL[0]
    struct.pack_into(">i", middle, 8, value)
    data = first + bytes(middle) + last
    assert _walk_and_read_peak(data) < _memory_bound(len(data))
    _check_walk(data)


@pytest.mark.parametrize("value", [pytest.param(v, id=str(v)) for v in EXTREME_INT32])
def test_extreme_legacy_key_and_value_lengths(value):
    for magic, key_at in ((0, 18), (1, 26)):
        msg = bytearray(legacy_records.build_message(1, b"k", b"v" * 20, magic=magic, timestamp=TS))
        for at in (key_at, key_at + 4 + 1):
            bad = bytearray(msg)
            struct.pack_into(">i", bad, at, value)
            struct.pack_into(">I", bad, 12, zlib.crc32(bytes(bad[16:])))
            data = bytes(bad)
            assert _walk_and_read_peak(data) < _memory_bound(len(data))
            _check_walk(data)


def _v2_with_payload(codec: int, payload: bytes) -> bytes:
    """A v2 batch (1 record declared) whose records section is ``payload``, CRC sealed."""
    from kreplica.formats.checksums import reference_crc32c

    header = bytearray(POOL[0][:61])
    struct.pack_into(">i", header, 8, 49 + len(payload))
    header[22] = codec
    struct.pack_into(">i", header, 57, 1)
    data = header + payload
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    return bytes(data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(_v2_with_payload(codecs.ZSTD, b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 2**62) + b"\x01\x00\x00"),
                     id="v2-zstd-frame-declaring-2**62-bytes"),
        pytest.param(legacy_records.build_message(
            3, None, bytes.fromhex("82534e415050590000000001000000010000000a") + bytes.fromhex("ffffff7f00") + b"a" * 5,
            magic=1, timestamp=TS, compression=codecs.SNAPPY),
            id="v1-snappy-chunk-declaring-2**28-bytes"),
    ],
)
def test_declared_inflated_size_does_not_drive_allocation(data):
    assert _walk_and_read_peak(data) < _memory_bound(len(data))


@SETTINGS
@given(st.binary(max_size=400), st.integers(0, 2**31 - 1))
def test_max_bytes_never_reports_damage_beyond_the_limit(data, limit):
    items = list(iter_segment(data, path=PATH, max_bytes=limit))
    end = items[-1]
    assert isinstance(end, SegmentEnd)
    assert end.scanned_bytes == min(limit, len(data))
    for item in items[:-1]:
        if isinstance(item, RecordBatch):
            assert item.end <= end.scanned_bytes
        else:
            assert item.position <= end.scanned_bytes
