"""Legacy message sets, magic 0 and 1 (spec §4): TV8 and TV9 read, writers checked byte for
byte where the spec gives bytes and by round trip elsewhere, and Kafka's deep-iterator rules
for compressed wrappers (absolute v0 / relative v1 inner offsets, the librdkafka wrapper
offset 0, LogAppendTime, inner compression).

Damaged entries are made here from valid ones and re-sealed with the reference CRC-32.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats import codecs
from kreplica.formats.log import legacy_records
from kreplica.formats.log.batch import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE, NewRecord, Record
from kreplica.formats.checksums import reference_crc32
from kreplica.formats.errors import FormatError, Malformed
from kreplica.formats.log.legacy_records import build_message, build_wrapper, iter_records, parse_entry

TS = 1700000000000
PATH = "00000000000000000000.log"

TV8_V0 = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")
TV8_V1 = bytes.fromhex("00000000000000010000001e6ad05db801000000018bcfe56800000000036b65790000000576616c7565")
TV9 = bytes.fromhex(
    "000000000000000b00000073def1a5f401020000018bcfe56801ffffffff0000005d82534e41505059000000"
    "0001000000010000004946f04500000000000000000000001742b4af0201000000018bcfe56800ffffffff00"
    "00000161000000000000000100000017347f958601000000018bcfe56801ffffffff0000000162"
)


def _entry(data: bytes, position: int = 0):
    (size,) = struct.unpack_from(">i", data, position + 8)
    return parse_entry(data, position, 12 + size, path=PATH)


def _reseal(entry: bytearray) -> bytes:
    struct.pack_into(">I", entry, 12, reference_crc32(entry[16:]))
    return bytes(entry)


def test_tv_sizes():
    assert (len(TV8_V0), len(TV8_V1), len(TV9)) == (34, 42, 127)


# -- TV8 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "position", "expected", "record"),
    [
        pytest.param(TV8_V0, 0, dict(size=34, magic=0, base_offset=0, last_offset=0, crc=0x2356C137,
                                     timestamp_type=NO_TIMESTAMP_TYPE, max_timestamp=-1),
                     Record(0, 0, -1, -1, b"key", b"value", ()), id="TV8-v0"),
        pytest.param(TV8_V1, 0, dict(size=42, magic=1, base_offset=1, last_offset=1, crc=0x6AD05DB8,
                                     timestamp_type=CREATE_TIME, max_timestamp=TS),
                     Record(0, 1, TS, -1, b"key", b"value", ()), id="TV8-v1"),
        pytest.param(TV8_V0 + TV8_V1, 34, dict(size=42, magic=1, base_offset=1, last_offset=1, crc=0x6AD05DB8,
                                               timestamp_type=CREATE_TIME, max_timestamp=TS),
                     Record(34, 1, TS, -1, b"key", b"value", ()), id="TV8-v1-after-v0"),
    ],
)
def test_tv8(data, position, expected, record):
    batch, error = _entry(data, position)
    assert error is None
    assert {k: getattr(batch, k) for k in expected} == expected
    assert batch.position == position
    assert batch.crc_valid is True
    assert batch.count is None
    assert batch.compression == codecs.NONE
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.partition_leader_epoch) == (-1,) * 4
    assert (batch.is_transactional, batch.is_control, batch.delete_horizon_ms) == (False, False, None)
    assert list(iter_records(data, batch)) == [record]


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        pytest.param(lambda: build_message(0, b"key", b"value", magic=0), TV8_V0, id="v0"),
        pytest.param(lambda: build_message(1, b"key", b"value", magic=1, timestamp=TS), TV8_V1, id="v1"),
    ],
)
def test_tv8_build_byte_exact(built, expected):
    assert built() == expected


# -- TV9 ---------------------------------------------------------------------------------------


def test_tv9_header():
    batch, error = _entry(TV9)
    assert error is None
    assert (batch.size, batch.magic, batch.crc, batch.crc_valid) == (127, 1, 0xDEF1A5F4, True)
    assert (batch.attributes, batch.compression, batch.timestamp_type) == (0x02, codecs.SNAPPY, CREATE_TIME)
    assert batch.max_timestamp == TS + 1
    assert batch.last_offset == 11  # the wrapper offset: the last inner message
    assert batch.base_offset == 10  # Kafka's baseOffset(): the first inner message, absolute


def test_tv9_records_have_absolute_offsets():
    batch, _ = _entry(TV9)
    assert list(iter_records(TV9, batch)) == [
        Record(0, 10, TS, -1, None, b"a", ()),
        Record(0, 11, TS + 1, -1, None, b"b", ()),
    ]


def test_tv9_wrapper_offset_zero_means_base_zero():
    # librdkafka: wrapper offset 0 -> absolute base 0 (the offset is outside the CRC)
    data = bytearray(TV9)
    struct.pack_into(">q", data, 0, 0)
    batch, error = _entry(bytes(data))
    assert error is None and batch.crc_valid is True
    assert [r.offset for r in iter_records(bytes(data), batch)] == [0, 1]
    assert batch.base_offset == 0


def test_tv9_wrapper_offset_below_last_inner_is_an_error():
    # inner (relative) offsets 0..2 under a non-zero wrapper offset of 1
    records = [NewRecord(o, TS, None, b"x") for o in (0, 1, 2)]
    data = bytearray(build_wrapper(records, magic=1, compression=codecs.GZIP))
    assert struct.unpack_from(">q", data, 0)[0] == 2
    struct.pack_into(">q", data, 0, 1)
    batch, error = _entry(bytes(data))
    assert isinstance(error, Malformed)
    assert "wrapper offset" in error.reason
    with pytest.raises(Malformed):
        list(iter_records(bytes(data), batch))


def test_wrapper_offset_above_last_inner_shifts_the_base():
    records = [NewRecord(o, TS, None, b"x") for o in (0, 1, 2)]
    data = bytearray(build_wrapper(records, magic=1, compression=codecs.GZIP))
    struct.pack_into(">q", data, 0, 1000)
    batch, _ = _entry(bytes(data))
    assert [r.offset for r in iter_records(bytes(data), batch)] == [998, 999, 1000]


# -- wrappers: layout of what the writer produces ----------------------------------------------


def _inner_entries(wrapper: bytes) -> list[tuple[int, bytes]]:
    """Split the decompressed wrapper value into (offset, message) pairs, independently."""
    magic, attributes = wrapper[16], wrapper[17]
    key_at = 18 if magic == 0 else 26
    (key_len,) = struct.unpack_from(">i", wrapper, key_at)
    (value_len,) = struct.unpack_from(">i", wrapper, key_at + 4 + max(key_len, 0))
    value_at = key_at + 8 + max(key_len, 0)
    value = wrapper[value_at:value_at + value_len]
    raw = codecs.decompress(attributes & 7, value, magic=magic).data
    out, pos = [], 0
    while pos < len(raw):
        offset, size = struct.unpack_from(">qi", raw, pos)
        out.append((offset, raw[pos + 12:pos + 12 + size]))
        pos += 12 + size
    return out


@pytest.mark.parametrize("codec", [pytest.param(c, id=codecs.CODEC_NAMES[c]) for c in (1, 2, 3)])
def test_v0_inner_offsets_absolute_v1_relative(codec):
    records = [NewRecord(o, TS + o, None, b"v%d" % o) for o in (500, 501, 503)]
    v0 = build_wrapper(records, magic=0, compression=codec)
    v1 = build_wrapper(records, magic=1, compression=codec)
    assert [o for o, _ in _inner_entries(v0)] == [500, 501, 503]
    assert [o for o, _ in _inner_entries(v1)] == [0, 1, 3]
    for data in (v0, v1):
        assert struct.unpack_from(">q", data, 0)[0] == 503  # wrapper carries the last offset
        assert data[17] & 7 == codec
        (key_len,) = struct.unpack_from(">i", data, 18 if data[16] == 0 else 26)
        assert key_len == -1  # wrapper key is null
        batch, error = _entry(data)
        assert error is None and batch.crc_valid is True
        assert batch.base_offset == 500 and batch.last_offset == 503
        assert [r.offset for r in iter_records(data, batch)] == [500, 501, 503]
        assert [r.value for r in iter_records(data, batch)] == [b"v500", b"v501", b"v503"]


# -- round trips -------------------------------------------------------------------------------

BLOBS = st.one_of(st.none(), st.binary(max_size=60))


@settings(max_examples=100, deadline=None)
@given(offset=st.integers(0, 2**63 - 1), key=BLOBS, value=BLOBS, magic=st.sampled_from([0, 1]),
       timestamp=st.integers(-1, 2**63 - 1))
def test_plain_message_round_trip(offset, key, value, magic, timestamp):
    data = build_message(offset, key, value, magic=magic, timestamp=timestamp)
    expected_size = (14 if magic == 0 else 22) + len(key or b"") + len(value or b"")
    assert struct.unpack_from(">qi", data, 0) == (offset, expected_size)
    assert struct.unpack_from(">I", data, 12)[0] == reference_crc32(data[16:])
    batch, error = _entry(data)
    assert error is None and batch.crc_valid is True
    ts = timestamp if magic == 1 else -1
    assert (batch.base_offset, batch.last_offset, batch.max_timestamp) == (offset, offset, ts)
    assert list(iter_records(data, batch)) == [Record(0, offset, ts, -1, key, value, ())]


@st.composite
def wrapper_cases(draw):
    magic = draw(st.sampled_from([0, 1]))
    codec = draw(st.sampled_from([codecs.GZIP, codecs.SNAPPY, codecs.LZ4]))
    start = draw(st.integers(0, 2**40))
    gaps = draw(st.lists(st.integers(1, 50), max_size=6))
    offsets = [start]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    records = [NewRecord(o, draw(st.integers(0, 2**45)), draw(BLOBS), draw(BLOBS)) for o in offsets]
    return magic, codec, records


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wrapper_cases())
def test_wrapper_round_trip(case):
    magic, codec, records = case
    data = build_wrapper(records, magic=magic, compression=codec)
    batch, error = _entry(data)
    assert error is None and batch.crc_valid is True
    assert (batch.magic, batch.compression) == (magic, codec)
    assert (batch.base_offset, batch.last_offset) == (records[0].offset, records[-1].offset)
    if magic == 1:
        assert batch.max_timestamp == max(r.timestamp for r in records)
    expected = [Record(0, r.offset, r.timestamp if magic == 1 else -1, -1, r.key, r.value, ()) for r in records]
    assert list(iter_records(data, batch)) == expected


# -- timestamps --------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [pytest.param(c, id=codecs.CODEC_NAMES[c]) for c in (1, 2, 3)])
def test_v1_log_append_time_wrapper_stamps_inner_records(codec):
    append = TS + 777
    records = [NewRecord(5, TS, None, b"a"), NewRecord(6, TS + 1, None, b"b")]
    data = build_wrapper(records, magic=1, compression=codec, timestamp_type=LOG_APPEND_TIME, append_time=append)
    assert data[17] & 0x08
    batch, error = _entry(data)
    assert error is None
    assert batch.timestamp_type == LOG_APPEND_TIME and batch.max_timestamp == append
    assert [r.timestamp for r in iter_records(data, batch)] == [append, append]


def test_v1_create_time_wrapper_keeps_inner_timestamps():
    records = [NewRecord(5, TS + 9, None, b"a"), NewRecord(6, TS + 1, None, b"b")]
    data = build_wrapper(records, magic=1, compression=codecs.GZIP)
    batch, _ = _entry(data)
    assert batch.max_timestamp == TS + 9
    assert [r.timestamp for r in iter_records(data, batch)] == [TS + 9, TS + 1]


def test_v0_timestamp_type_bit_is_ignored():
    data = bytearray(TV8_V0)
    data[17] = 0x08
    data = _reseal(data)
    batch, _ = _entry(data)
    assert batch.timestamp_type == NO_TIMESTAMP_TYPE
    assert [r.timestamp for r in iter_records(data, batch)] == [-1]


# -- deep-iterator errors ----------------------------------------------------------------------


def _wrap(inner: bytes, *, magic: int = 1, codec: int = codecs.GZIP, offset: int = 1) -> bytes:
    return build_message(offset, None, codecs.compress(codec, inner, magic=magic), magic=magic,
                         timestamp=TS, compression=codec)


def test_inner_compressed_message_raises_when_reached():
    first = build_message(0, None, b"plain", magic=1, timestamp=TS)
    second = build_message(1, None, b"anything", magic=1, timestamp=TS, compression=codecs.GZIP)
    data = _wrap(first + second)
    batch, error = _entry(data)
    assert error is None  # the first inner record is fine: baseOffset can be read
    got = []
    with pytest.raises(Malformed) as info:
        for rec in iter_records(data, batch):
            got.append(rec)
    assert [r.value for r in got] == [b"plain"]
    assert "must not be compressed" in str(info.value)


def test_zstd_wrapper_is_rejected():
    inner = build_message(0, None, b"x", magic=1, timestamp=TS)
    data = build_message(0, None, codecs.compress(codecs.ZSTD, inner), magic=1, timestamp=TS,
                         compression=codecs.ZSTD)
    batch, error = _entry(data)
    assert isinstance(error, Malformed)
    with pytest.raises(Malformed):
        list(iter_records(data, batch))


def test_null_wrapper_value_is_rejected():
    data = build_message(0, None, None, magic=1, timestamp=TS, compression=codecs.GZIP)
    batch, error = _entry(data)
    assert isinstance(error, Malformed) and "null value" in error.reason
    with pytest.raises(Malformed):
        list(iter_records(data, batch))


def test_wrapper_with_no_inner_messages_is_rejected():
    data = _wrap(b"")
    batch, error = _entry(data)
    assert isinstance(error, Malformed) and "no inner records" in error.reason


def test_inner_size_below_14_is_rejected():
    data = _wrap(struct.pack(">qi", 0, 13) + bytes(13))
    batch, error = _entry(data)
    assert isinstance(error, Malformed)


def test_short_final_inner_entry_ends_the_set_silently():
    one = build_message(0, None, b"a", magic=1, timestamp=TS)
    two = build_message(1, None, b"b", magic=1, timestamp=TS)
    data = _wrap(one + two[:-3], offset=0)
    batch, error = _entry(data)
    assert error is None
    assert [r.value for r in iter_records(data, batch)] == [b"a"]


def test_wrapper_that_does_not_decompress():
    data = build_message(3, None, b"\x1f\x8b\x08\x00 not deflate at all", magic=1, timestamp=TS,
                         compression=codecs.GZIP)
    batch, error = _entry(data)
    assert batch.crc_valid is True
    assert isinstance(error, FormatError) and "decompress" in error.reason
    assert batch.base_offset == 3  # falls back to the wrapper offset
    with pytest.raises(FormatError):
        list(iter_records(data, batch))


@pytest.mark.parametrize("magic", [pytest.param(0, id="v0"), pytest.param(1, id="v1")])
def test_lz4_wrapper_uses_the_header_checksum_of_its_magic(magic):
    records = [NewRecord(0, TS, None, b"hello kafka")]
    data = build_wrapper(records, magic=magic, compression=codecs.LZ4)
    key_at = 18 if magic == 0 else 26
    value_at = key_at + 8
    frame = data[value_at:]
    assert frame[:6] == bytes.fromhex("04224d186040")
    assert frame[6] == (0x1A if magic == 0 else 0x82)  # TV10's two header checksums
    batch, error = _entry(data)
    assert error is None
    assert [r.value for r in iter_records(data, batch)] == [b"hello kafka"]


# -- CRC ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "valid"),
    [
        pytest.param(0, True, id="offset"),
        pytest.param(11, True, id="size"),
        pytest.param(12, False, id="crc"),
        pytest.param(16, False, id="magic"),
        pytest.param(17, False, id="attributes"),
        pytest.param(41, False, id="value"),
    ],
)
def test_crc_covers_magic_to_end(index, valid):
    data = bytearray(TV8_V1)
    data[index] ^= 0x01
    batch, _ = legacy_records.parse_entry(bytes(data), 0, len(TV8_V1), path=PATH)
    assert batch.crc_valid is valid


def test_message_shorter_than_14_is_not_valid():
    data = TV8_V0[:12 + 13]
    batch, _ = legacy_records.parse_entry(data, 0, len(data), path=PATH)
    assert batch.crc_valid is False


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda d: struct.pack_into(">i", d, 18, 1000), id="key-past-end"),
        pytest.param(lambda d: struct.pack_into(">i", d, 25, 1000), id="value-past-end"),
    ],
)
def test_key_or_value_past_the_end_is_malformed(edit):
    data = bytearray(TV8_V0)
    edit(data)
    data = _reseal(data)
    batch, _ = _entry(data)
    with pytest.raises(Malformed):
        list(iter_records(data, batch))


def test_any_negative_length_means_null():
    data = bytearray(TV8_V0[:18]) + struct.pack(">i", -5) + struct.pack(">i", -2)
    struct.pack_into(">i", data, 8, len(data) - 12)
    data = _reseal(data)
    batch, _ = _entry(data)
    assert [(r.key, r.value) for r in iter_records(data, batch)] == [(None, None)]


@settings(max_examples=200, deadline=None)
@given(body=st.binary(min_size=2, max_size=120), magic=st.sampled_from([0, 1, 0xFF]),
       attributes=st.integers(0, 255))
def test_any_message_gives_records_or_a_format_error(body, magic, attributes):
    message = bytes([magic, attributes]) + body
    data = struct.pack(">qiI", 7, 4 + len(message), reference_crc32(message)) + message
    batch, error = legacy_records.parse_entry(data, 0, len(data), path=PATH)
    assert error is None or isinstance(error, FormatError)
    got = []
    try:
        for rec in iter_records(data, batch):
            assert isinstance(rec, Record)
            got.append(rec)
    except FormatError as exc:
        assert exc.path == PATH
    if attributes & 0x07 == 0:  # an uncompressed message is its own single record
        assert len(got) <= 1
        assert all(r.offset == 7 for r in got)


# -- hardening (issue 14): damaged messages are yielded, wrappers never nest, bombs are bounded --


@pytest.mark.parametrize(
    ("edit", "key", "field"),
    [
        pytest.param(lambda d: struct.pack_into(">i", d, 25, 1000), b"key", "value", id="value-past-end"),
        pytest.param(lambda d: struct.pack_into(">i", d, 18, 1000), None, "key", id="key-past-end"),
        pytest.param(lambda d: d.__delitem__(slice(25, None)), b"key", "value", id="value-length-missing"),
    ],
)
def test_damaged_message_is_yielded_with_its_key_when_asked(edit, key, field):
    # Kafka's iterator yields the LegacyRecord; key() and value() throw only when called
    data = bytearray(TV8_V0)
    edit(data)
    struct.pack_into(">i", data, 8, len(data) - 12)
    data = _reseal(data)
    batch, error = _entry(data)
    assert error is None
    damage = []
    records = list(iter_records(data, batch, on_damage=lambda r, e: damage.append((r, e))))
    assert [(r.offset, r.key, r.value) for r in records] == [(0, key, None)]
    assert len(damage) == 1 and damage[0][0] == records[0]
    assert isinstance(damage[0][1], Malformed) and damage[0][1].field == field


def test_damaged_inner_message_is_yielded_and_the_set_goes_on():
    good = build_message(0, b"k0", b"v0", magic=1, timestamp=TS)
    bad = bytearray(build_message(1, b"k1", b"v1", magic=1, timestamp=TS))
    struct.pack_into(">i", bad, 12 + 4 + 2 + 8 + 4 + 2, 1 << 20)  # the value length
    last = build_message(2, b"k2", b"v2", magic=1, timestamp=TS)
    data = _wrap(good + bytes(bad) + last, offset=2)
    batch, error = _entry(data)
    assert error is None and batch.base_offset == 0
    damage = []
    records = list(iter_records(data, batch, on_damage=lambda r, e: damage.append((r.offset, e.field))))
    assert [(r.offset, r.key, r.value) for r in records] == [(0, b"k0", b"v0"), (1, b"k1", None), (2, b"k2", b"v2")]
    assert damage == [(1, "value")]
    with pytest.raises(Malformed):  # without on_damage the reader still stops there
        list(iter_records(data, batch))


@pytest.mark.parametrize("codec", [pytest.param(c, id=codecs.CODEC_NAMES[c])
                                   for c in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4)])
@pytest.mark.parametrize("depth", [2, 40])
def test_nested_wrappers_never_recurse(codec, depth):
    entry = build_message(0, b"k", b"v", magic=1, timestamp=TS)
    for level in range(depth):
        entry = build_message(level, None, codecs.compress(codec, entry, magic=1), magic=1, timestamp=TS,
                              compression=codec)
    batch, error = _entry(entry)
    assert isinstance(error, Malformed) and "must not be compressed" in error.reason
    inflations = []
    real = codecs.decompress

    def counting(*args, **kwargs):
        inflations.append(1)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(codecs, "decompress", counting)
        with pytest.raises(Malformed, match="must not be compressed"):
            list(iter_records(entry, batch))
    assert len(inflations) == 1  # the outer wrapper only, whatever the depth


def test_wrapper_bomb_is_a_decompression_error_within_the_limit():
    # one inner message whose value is 48 MiB of zeros, gzipped (1000:1): the wrapper is ~48 KiB
    # (snappy and lz4 cannot pass 256:1, so the limit relative to the size never trips for them)
    inner = build_message(0, None, bytes(48 << 20), magic=1, timestamp=TS)
    data = build_message(0, None, codecs.compress(codecs.GZIP, inner, magic=1), magic=1, timestamp=TS,
                         compression=codecs.GZIP)
    assert len(data) < (48 << 20) // 100
    batch, error = _entry(data)
    assert isinstance(error, Malformed) and "decompression bomb" in error.reason
    assert codecs.inflation_limit(len(data)) < 48 << 20


# -- errors leave no reference cycles behind (issue 14, bench/fuzz) -----------------------------


def _damaged_inner_value() -> bytes:
    inner = bytearray(build_message(0, b"k", b"value", magic=1, timestamp=TS))
    struct.pack_into(">i", inner, len(inner) - 9, 1 << 20)  # the value length runs past the message
    return _wrap(bytes(inner))


def _damaged_plain_value() -> bytes:
    msg = bytearray(build_message(0, b"k", b"v", magic=0))
    struct.pack_into(">i", msg, len(msg) - 5, 1 << 20)
    return bytes(msg)


@pytest.mark.parametrize("data", [
    pytest.param(_damaged_inner_value(), id="damaged-inner-value"),
    pytest.param(_wrap(struct.pack(">qi", 0, 13) + bytes(13)), id="inner-size-below-14"),
    pytest.param(_damaged_plain_value(), id="plain-value-length"),
])
def test_a_damaged_message_leaves_no_cycle_holding_its_bytes(data):
    # an error kept in a local of the frame it was raised from, or handed back with a traceback
    # into the caller, made a reference cycle: the message copy and the inflated bytes lived until
    # the cyclic collector ran (the fuzzer's live memory), not until the error was dropped
    import gc

    from kreplica.formats.log.segment import iter_segment

    gc.collect()
    gc.disable()
    try:
        items = list(iter_segment(data, path=PATH))
        try:
            list(iter_records(data, _entry(data)[0]))
        except FormatError:
            pass
        del items
        assert gc.collect() == 0
    finally:
        gc.enable()
