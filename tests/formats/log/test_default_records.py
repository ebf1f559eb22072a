"""Record batch v2 (spec §3): the test vectors TV3-TV7 read field by field and written byte for
byte, Kafka's derived values (sequence wrap-around, LogAppendTime, delete horizon), and the
record reader's error rules.

Expected values are the spec's annotated listings, or the inputs given to the writer; never
kreplica's own output. Damaged batches are made here by editing valid bytes and re-sealing the
CRC with the *reference* CRC-32C, so the reader's checks are exercised, not its CRC check.
"""

from __future__ import annotations

import mmap
import os
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats import codecs
from kreplica.formats.log import default_records
from kreplica.formats.log.batch import CREATE_TIME, LOG_APPEND_TIME, Header, NewRecord, Record
from kreplica.formats.checksums import reference_crc32c
from kreplica.formats.log.default_records import (
    RECORDS_OFFSET,
    build_batch,
    build_control_record,
    increment_sequence,
    iter_records,
    parse_header,
)
from kreplica.formats.errors import FormatError, Malformed
from kreplica.formats.varint import read_unsigned_varint, read_varint

TS = 1700000000000
PATH = "00000000000000000000.log"

_COMPILED = default_records.load_compiled()


@pytest.fixture(autouse=True, params=["compiled", "python"])
def decoder(request, monkeypatch):
    """Every test here runs on both record decoders: the compiled path (with the pure reader
    taking over at anything irregular) and the pure-Python reference alone."""
    if request.param == "compiled":
        if _COMPILED is None:
            if os.environ.get("KREPLICA_REQUIRE_COMPILED") == "1":
                pytest.fail("KREPLICA_REQUIRE_COMPILED=1 but the compiled record decoder is not built")
            pytest.skip("the compiled record decoder is not built here")
        monkeypatch.setattr(default_records, "_crecords", _COMPILED)
    else:
        monkeypatch.setattr(default_records, "_crecords", None)
    return request.param

TV3 = bytes.fromhex(
    "0000000000000000000000400000000002db5e9cdd0000000000000000018bcfe568000000018bcfe56800"
    "ffffffffffffffffffffffffffff000000011c000000066b65790a76616c756500"
)
TV4 = bytes.fromhex(
    "00000000000000640000005000000007024f5463650010000000010000018bcfe568000000018bcfe5680500"
    "0000000000109200030000000a000000021800000002610a66697273740022000a02010c7365636f6e640204"
    "68310278"
)
TV5 = bytes.fromhex(
    "0000000000000066000000420000000702917a477c0030000000000000018bcfe5680a0000018bcfe5680a00"
    "000000000010920003ffffffff000000012000000008000000010c00000000000700"
)
TV6 = bytes.fromhex(
    "00000000000000c8000000310000000702b68964f7000000000004ffffffffffffffff0000018bcfe5681400"
    "0000000000109200030000000f00000000"
)
TV7 = bytes.fromhex(
    "0000000000000064000000640000000702e70f50ea0011000000010000018bcfe568000000018bcfe5680500"
    "0000000000109200030000000a000000021f8b08000000000000ff93606060604ae44acb2c2a2e615062e062"
    "62e4294e4dcecf4b6162c93064aa00008a0b3ba31f000000"
)
TV4_RECORDS_SECTION = bytes.fromhex("1800000002610a66697273740022000a02010c7365636f6e64020468310278")


def _header(**fields):
    base = dict(
        magic=2, count=None, partition_leader_epoch=0, crc=None, crc_valid=True, attributes=0,
        compression=codecs.NONE, timestamp_type=CREATE_TIME, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, is_transactional=False, is_control=False, delete_horizon_ms=None,
        after_break=False, position=0,
    )
    base.update(fields)
    return base


# Every header field from the spec's annotated listings (§15).
TV_HEADERS = [
    pytest.param(TV3, _header(
        size=76, base_offset=0, last_offset=0, count=1, crc=0xDB5E9CDD,
        base_timestamp=TS, max_timestamp=TS,
    ), id="TV3"),
    pytest.param(TV4, _header(
        size=92, base_offset=100, last_offset=101, count=2, partition_leader_epoch=7, crc=0x4F546365,
        attributes=0x10, is_transactional=True, base_timestamp=TS, max_timestamp=TS + 5,
        producer_id=4242, producer_epoch=3, base_sequence=10,
    ), id="TV4"),
    pytest.param(TV5, _header(
        size=78, base_offset=102, last_offset=102, count=1, partition_leader_epoch=7, crc=0x917A477C,
        attributes=0x30, is_transactional=True, is_control=True, base_timestamp=TS + 10,
        max_timestamp=TS + 10, producer_id=4242, producer_epoch=3, base_sequence=-1,
    ), id="TV5"),
    pytest.param(TV6, _header(
        size=61, base_offset=200, last_offset=204, count=0, partition_leader_epoch=7, crc=0xB68964F7,
        base_timestamp=-1, max_timestamp=TS + 20, producer_id=4242, producer_epoch=3, base_sequence=15,
    ), id="TV6"),
    pytest.param(TV7, _header(
        size=112, base_offset=100, last_offset=101, count=2, partition_leader_epoch=7, crc=0xE70F50EA,
        attributes=0x11, compression=codecs.GZIP, is_transactional=True, base_timestamp=TS,
        max_timestamp=TS + 5, producer_id=4242, producer_epoch=3, base_sequence=10,
    ), id="TV7"),
]


@pytest.mark.parametrize(("data", "expected"), TV_HEADERS)
def test_tv_header_fields(data, expected):
    assert len(data) == expected["size"]
    batch = parse_header(data, 0, len(data), path=PATH)
    got = {name: getattr(batch, name) for name in expected}
    assert got == expected
    assert batch.path == PATH
    assert batch.end == len(data)
    assert batch.next_offset == expected["last_offset"] + 1


@pytest.mark.parametrize(("data", "expected"), TV_HEADERS)
def test_tv_header_at_a_file_position(data, expected):
    # the same batch behind 40 bytes of other data: positions are absolute
    buf = bytes(40) + data + b"\xee" * 5
    batch = parse_header(buf, 40, len(data), path=PATH)
    assert (batch.position, batch.size, batch.crc, batch.crc_valid) == (40, expected["size"], expected["crc"], True)
    assert batch.end == 40 + len(data)


TV4_RECORDS = [
    Record(0, 100, TS, 10, b"a", b"first", ()),
    Record(0, 101, TS + 5, 11, None, b"second", (Header("h1", b"x"),)),
]

TV_RECORDS = [
    pytest.param(TV3, [Record(0, 0, TS, -1, b"key", b"value", ())], id="TV3"),
    pytest.param(TV4, TV4_RECORDS, id="TV4"),
    pytest.param(TV5, [Record(0, 102, TS + 10, -1, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07", (),
                              control_type=1, coordinator_epoch=7)], id="TV5-commit"),
    pytest.param(TV6, [], id="TV6-empty"),
    pytest.param(TV7, TV4_RECORDS, id="TV7-gzip"),
]


@pytest.mark.parametrize(("data", "expected"), TV_RECORDS)
def test_tv_records(data, expected):
    batch = parse_header(data, 0, len(data), path=PATH)
    assert list(iter_records(data, batch)) == expected


@pytest.mark.parametrize(("data", "expected"), TV_RECORDS)
def test_tv_records_batch_position_is_absolute(data, expected):
    buf = b"\x00" * 17 + data
    batch = parse_header(buf, 17, len(data), path=PATH)
    assert [r._replace(batch_position=0) for r in iter_records(buf, batch)] == expected
    assert all(r.batch_position == 17 for r in iter_records(buf, batch))


# -- writers: byte-exact ----------------------------------------------------------------------

TV4_INPUT = [
    NewRecord(100, TS, b"a", b"first"),
    NewRecord(101, TS + 5, None, b"second", (("h1", b"x"),)),
]
TV4_HEADER_ARGS = dict(base_offset=100, partition_leader_epoch=7, producer_id=4242, producer_epoch=3,
                       base_sequence=10, is_transactional=True)


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        pytest.param(lambda: build_batch([NewRecord(0, TS, b"key", b"value")], base_offset=0), TV3, id="TV3"),
        pytest.param(lambda: build_batch(TV4_INPUT, **TV4_HEADER_ARGS), TV4, id="TV4"),
        pytest.param(lambda: build_batch(
            [build_control_record(102, TS + 10, 1, coordinator_epoch=7)], base_offset=102, partition_leader_epoch=7,
            producer_id=4242, producer_epoch=3, is_transactional=True, is_control=True), TV5, id="TV5"),
        pytest.param(lambda: build_batch(
            [], base_offset=200, partition_leader_epoch=7, producer_id=4242, producer_epoch=3, base_sequence=15,
            last_offset_delta=4, max_timestamp=TS + 20), TV6, id="TV6"),
    ],
)
def test_build_byte_exact(built, expected):
    assert built() == expected


def test_build_tv7_gzip():
    # The spec: "a different JDK/zlib may produce different DEFLATE bytes; parsers must decode,
    # not compare". So: every header byte except length/CRC, the JDK gzip header, the records.
    built = build_batch(TV4_INPUT, compression=codecs.GZIP, **TV4_HEADER_ARGS)
    assert built[:8] == TV7[:8]
    assert built[12:17] == TV7[12:17]
    assert built[21:61] == TV7[21:61]
    assert built[61:71] == TV7[61:71]
    assert codecs.decompress(codecs.GZIP, built[61:]).data == TV4_RECORDS_SECTION
    assert struct.unpack_from(">i", built, 8)[0] == len(built) - 12
    assert struct.unpack_from(">I", built, 17)[0] == reference_crc32c(built[21:])


def test_build_control_record_fields():
    for ctype, epoch in ((0, 0), (1, 7), (1, 2**31 - 1)):
        rec = build_control_record(5, TS, ctype, coordinator_epoch=epoch)
        assert rec.offset == 5 and rec.timestamp == TS
        assert rec.key == struct.pack(">hh", 0, ctype)
        assert rec.value == struct.pack(">hi", 0, epoch)


def test_tv5_key_and_value_layout():
    # TV5 bytes 66..69 are the key (version 0, type COMMIT=1), 71..76 the value (version 0, epoch 7)
    assert TV5[66:70] == struct.pack(">hh", 0, 1)
    assert TV5[71:77] == struct.pack(">hi", 0, 7)


# -- derived values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sequence", "increment", "expected"),
    [
        pytest.param(10, 1, 11, id="plain"),
        pytest.param(0, 0, 0, id="zero"),
        pytest.param(2147483645, 2, 2147483647, id="to-max"),
        pytest.param(2147483645, 3, 0, id="wrap-to-0"),
        pytest.param(2147483645, 4, 1, id="wrap-to-1"),
        pytest.param(2147483647, 1, 0, id="max-plus-1"),
        pytest.param(2147483647, 2147483647, 2147483646, id="max-plus-max"),
        pytest.param(15, 4, 19, id="TV6-last-sequence"),
    ],
)
def test_increment_sequence(sequence, increment, expected):
    assert increment_sequence(sequence, increment) == expected


def test_sequence_wraps_past_int32_max():
    records = [NewRecord(1000 + i, TS + i, None, bytes([i])) for i in range(5)]
    data = build_batch(records, base_offset=1000, producer_id=9, producer_epoch=0, base_sequence=2147483645)
    batch = parse_header(data, 0, len(data), path=PATH)
    assert batch.base_sequence == 2147483645
    got = list(iter_records(data, batch))
    assert [r.sequence for r in got] == [2147483645, 2147483646, 2147483647, 0, 1]
    assert [r.offset for r in got] == [1000, 1001, 1002, 1003, 1004]


def test_no_sequence_means_minus_one_for_every_record():
    data = build_batch([NewRecord(i, TS, None, b"v") for i in range(3)], base_offset=0)
    batch = parse_header(data, 0, len(data), path=PATH)
    assert [r.sequence for r in iter_records(data, batch)] == [-1, -1, -1]


def test_log_append_time_records_report_the_batch_max_timestamp():
    append_time = TS + 999_999
    records = [NewRecord(0, TS, None, b"a"), NewRecord(1, TS + 7, None, b"b")]
    data = build_batch(records, base_offset=0, timestamp_type=LOG_APPEND_TIME, max_timestamp=append_time)
    batch = parse_header(data, 0, len(data), path=PATH)
    assert batch.timestamp_type == LOG_APPEND_TIME
    assert batch.attributes & 0x08
    assert batch.max_timestamp == append_time
    assert [r.timestamp for r in iter_records(data, batch)] == [append_time, append_time]


def test_log_append_time_stamped_in_place_by_the_broker():
    # spec §3.4: the broker sets bit 3, overwrites maxTimestamp and recomputes the CRC; base
    # timestamp and deltas keep the producer's values, and Kafka ignores them
    data = bytearray(TV4)
    data[22] |= 0x08
    struct.pack_into(">q", data, 35, TS + 12345)
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    assert batch.crc_valid is True
    assert batch.base_timestamp == TS
    assert [r.timestamp for r in iter_records(bytes(data), batch)] == [TS + 12345, TS + 12345]


def test_delete_horizon_is_the_base_timestamp():
    horizon = TS + 86_400_000
    records = [NewRecord(50, TS, b"k", None), NewRecord(52, TS + 3, b"k2", b"v")]
    data = build_batch(records, base_offset=50, delete_horizon_ms=horizon, last_offset_delta=2)
    batch = parse_header(data, 0, len(data), path=PATH)
    assert batch.attributes & 0x40
    assert batch.base_timestamp == horizon
    assert batch.delete_horizon_ms == horizon
    got = list(iter_records(data, batch))
    # deltas are relative to the horizon (negative here); record timestamps are unchanged
    assert [(r.offset, r.timestamp, r.key, r.value) for r in got] == [(50, TS, b"k", None), (52, TS + 3, b"k2", b"v")]
    assert batch.last_offset == 52 and batch.count == 2


def test_no_delete_horizon_without_bit_6():
    batch = parse_header(TV4, 0, len(TV4), path=PATH)
    assert batch.delete_horizon_ms is None
    data = bytearray(TV4)
    data[22] |= 0x40
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    assert parse_header(bytes(data), 0, len(data), path=PATH).delete_horizon_ms == TS


def test_attribute_high_byte_is_ignored():
    # spec §3.2: only the low byte (offset 22) carries flags
    data = bytearray(TV4)
    data[21] = 0xFF
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    assert (batch.compression, batch.timestamp_type, batch.is_transactional, batch.is_control,
            batch.delete_horizon_ms) == (codecs.NONE, CREATE_TIME, True, False, None)
    assert list(iter_records(bytes(data), batch)) == TV4_RECORDS


# -- CRC coverage -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "valid"),
    [
        pytest.param(0, True, id="baseOffset"),
        pytest.param(11, True, id="batchLength-low-byte-kept-size"),
        pytest.param(15, True, id="partitionLeaderEpoch"),
        pytest.param(16, True, id="magic"),
        pytest.param(17, False, id="crc"),
        pytest.param(22, False, id="attributes"),
        pytest.param(60, False, id="recordCount"),
        pytest.param(75, False, id="last-record-byte"),
    ],
)
def test_crc_covers_attributes_to_end_only(index, valid):
    data = bytearray(TV3)
    data[index] ^= 0x01
    batch = parse_header(bytes(data), 0, len(TV3), path=PATH)
    assert batch.crc_valid is valid


def test_crc_not_checked_when_switched_off():
    data = bytearray(TV3)
    data[70] ^= 0xFF
    assert parse_header(bytes(data), 0, len(data), path=PATH, verify_crc=False).crc_valid is None


@pytest.mark.parametrize("index", [
    pytest.param(7, id="baseOffset"),
    pytest.param(15, id="partitionLeaderEpoch"),
    pytest.param(75, id="last-record-byte"),
])
def test_identity_tells_batches_apart_where_the_crc_cannot(index):
    # offsets and epoch lie outside the CRC, the records inside it: the identity takes all four
    batch = parse_header(TV3, 0, len(TV3), path=PATH)
    assert batch.identity == (batch.base_offset, batch.last_offset, batch.partition_leader_epoch, batch.crc)
    data = bytearray(TV3)
    data[index] ^= 0x01
    if index == 75:
        struct.pack_into(">I", data, default_records.CRC_OFFSET, reference_crc32c(bytes(data[21:])))
    other = parse_header(bytes(data), 0, len(data), path=PATH)
    assert other.crc_valid is True and other.identity != batch.identity
    assert batch._replace(path="elsewhere", position=99, after_break=True).identity == batch.identity


def test_header_shorter_than_61_bytes_is_not_valid():
    short = bytearray(TV6[:50])
    struct.pack_into(">i", short, 8, 38)
    batch = parse_header(bytes(short), 0, 50, path=PATH)
    assert batch.crc_valid is False
    assert batch.size == 50
    with pytest.raises(Malformed):
        list(iter_records(bytes(short), batch))


# -- the record reader's error rules ---------------------------------------------------------


def _zz(n: int) -> bytes:
    """Zigzag varint written here, independently of kreplica."""
    u = 2 * n if n >= 0 else -2 * n - 1
    out = bytearray()
    while u >= 0x80:
        out.append(0x80 | (u & 0x7F))
        u >>= 7
    out.append(u)
    return bytes(out)


def _record(body: bytes) -> bytes:
    return _zz(len(body)) + body


def _batch_with_section(section: bytes, count: int, *, base_offset: int = 0) -> bytes:
    """A TV3-like batch header around an arbitrary records section, CRC sealed."""
    header = bytearray(TV3[:61])
    struct.pack_into(">q", header, 0, base_offset)
    struct.pack_into(">i", header, 8, 49 + len(section))
    struct.pack_into(">i", header, 57, count)
    data = header + section
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    return bytes(data)


def _parse(data: bytes):
    batch = parse_header(data, 0, len(data), path=PATH)
    assert batch.crc_valid is True
    return batch


GOOD_RECORD = _record(b"\x00" + _zz(0) + _zz(0) + _zz(1) + b"k" + _zz(1) + b"v" + _zz(0))


def test_hand_built_record_reads():
    data = _batch_with_section(GOOD_RECORD, 1)
    assert list(iter_records(data, _parse(data))) == [Record(0, 0, TS, -1, b"k", b"v", ())]


def test_records_still_remaining_last_record_not_yielded():
    records = [NewRecord(0, TS, None, b"one"), NewRecord(1, TS, None, b"two")]
    good = build_batch(records, base_offset=0)
    data = _batch_with_section(good[61:] + b"\x00", 2)
    batch = _parse(data)
    got = []
    with pytest.raises(Malformed) as info:
        for rec in iter_records(data, batch):
            got.append(rec)
    assert [r.value for r in got] == [b"one"]
    assert info.value.path == PATH
    assert "remaining" in str(info.value)


def test_records_still_remaining_single_record_yields_nothing():
    data = _batch_with_section(GOOD_RECORD + b"\x00\x00", 1)
    gen = iter_records(data, _parse(data))
    with pytest.raises(Malformed):
        next(gen)


def test_premature_eof_after_the_records_present():
    data = _batch_with_section(GOOD_RECORD * 2, 3)
    got = []
    with pytest.raises(FormatError):
        for rec in iter_records(data, _parse(data)):
            got.append(rec)
    assert len(got) == 2


@pytest.mark.parametrize("count", [pytest.param(-1, id="-1"), pytest.param(-(2**31), id="INT32_MIN")])
def test_negative_record_count(count):
    data = _batch_with_section(GOOD_RECORD, count)
    batch = _parse(data)
    assert batch.count == count
    gen = iter_records(data, batch)
    with pytest.raises(Malformed) as info:
        next(gen)
    assert info.value.position == 0
    assert str(count) in str(info.value)


def test_huge_record_count_with_few_bytes_is_an_error_not_a_hang():
    data = _batch_with_section(GOOD_RECORD, 2**31 - 1)
    got = []
    with pytest.raises(FormatError):
        for rec in iter_records(data, _parse(data)):
            got.append(rec)
    assert len(got) == 1


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(-1), "headers", id="negative-header-count"),
        pytest.param(b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(-(2**31)), "headers",
                     id="header-count-INT32_MIN"),
        pytest.param(b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(100) + _zz(0) + _zz(-1), "headers",
                     id="header-count-too-large"),
        pytest.param(b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(2**31 - 1) + _zz(0), "headers",
                     id="header-count-INT32_MAX"),
        pytest.param(b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(1) + _zz(-2) + _zz(-1), "header key",
                     id="negative-header-key-size"),
    ],
)
def test_header_count_rules(body, fragment):
    data = _batch_with_section(_record(body), 1)
    with pytest.raises(Malformed) as info:
        list(iter_records(data, _parse(data)))
    assert fragment in str(info.value)


def test_record_length_larger_than_the_remaining_bytes():
    body = b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(0)
    data = _batch_with_section(_zz(len(body) + 10) + body, 1)
    with pytest.raises(FormatError) as info:
        list(iter_records(data, _parse(data)))
    assert "record size" in str(info.value)


def test_record_length_not_matching_its_fields():
    body = b"\x00" + _zz(0) + _zz(0) + _zz(-1) + _zz(-1) + _zz(0)
    # declares one byte fewer than the fields take, then one spare byte so the buffer holds it
    data = _batch_with_section(_zz(len(body) - 1) + body, 1)
    with pytest.raises(Malformed) as info:
        list(iter_records(data, _parse(data)))
    assert "record size" in str(info.value)


@pytest.mark.parametrize(
    "cut", [pytest.param(n, id=f"keep-{n}") for n in (1, 2, 3, 4, 5, 6, 7, len(GOOD_RECORD) - 1)]
)
def test_record_cut_anywhere_is_an_error(cut):
    data = _batch_with_section(GOOD_RECORD[:cut], 1)
    with pytest.raises(FormatError):
        list(iter_records(data, _parse(data)))


def test_any_negative_key_or_value_length_means_null():
    body = b"\x00" + _zz(0) + _zz(0) + _zz(-7) + _zz(-2) + _zz(0)
    data = _batch_with_section(_record(body), 1)
    assert list(iter_records(data, _parse(data))) == [Record(0, 0, TS, -1, None, None, ())]


def test_null_header_value_and_empty_key():
    body = (b"\x00" + _zz(0) + _zz(0) + _zz(0) + _zz(0) + _zz(2)
            + _zz(0) + _zz(-1) + _zz(3) + "hé".encode() + _zz(0))
    data = _batch_with_section(_record(body), 1)
    assert list(iter_records(data, _parse(data))) == [
        Record(0, 0, TS, -1, b"", b"", (Header("", None), Header("hé", b"")))]


def test_varint_with_fifth_byte_high_bit_in_a_record_is_malformed():
    body = b"\x00" + _zz(0) + bytes.fromhex("8080808080") + b"\x00" + _zz(-1) + _zz(-1) + _zz(0)
    data = _batch_with_section(_record(body), 1)
    with pytest.raises(FormatError):
        list(iter_records(data, _parse(data)))


def test_unknown_codec_raises_when_records_are_read():
    data = bytearray(TV3)
    data[22] = 0x05
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    assert batch.compression == 5
    with pytest.raises(Malformed):
        list(iter_records(bytes(data), batch))


def test_compressed_records_that_do_not_decompress():
    data = _batch_with_section(b"\x1f\x8b\x08\x00garbage-not-deflate", 1)
    data = bytearray(data)
    data[22] = 0x01
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    with pytest.raises(Malformed) as info:
        list(iter_records(bytes(data), batch))
    assert "decompress" in str(info.value)


def test_an_empty_batch_whose_records_do_not_decompress_is_still_an_error():
    data = bytearray(_batch_with_section(b"\x1f\x8b\x08\x00garbage-not-deflate", 0))
    data[22] = 0x01
    struct.pack_into(">I", data, 17, reference_crc32c(data[21:]))
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    with pytest.raises(Malformed) as info:
        list(iter_records(bytes(data), batch))
    assert "decompress" in str(info.value)


# -- control records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        pytest.param(struct.pack(">hh", 0, 0), struct.pack(">hi", 0, 3), (0, 3), id="abort"),
        pytest.param(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 7), (1, 7), id="commit"),
        pytest.param(struct.pack(">hh", 5, 1), struct.pack(">hi", 0, 7), (1, 7), id="key-version-5-read-as-0"),
        pytest.param(struct.pack(">hh", 0, 1), struct.pack(">hi", 3, 7) + b"extra", (1, 7),
                     id="value-version-3-extra-ignored"),
        pytest.param(struct.pack(">hh", 0, 3), b"", (3, None), id="snapshot-header-no-epoch"),
        pytest.param(struct.pack(">hh", 0, 99), b"", (99, None), id="unknown-type-kept-raw"),
        pytest.param(b"\x00\x00\x00", struct.pack(">hi", 0, 7), (None, None), id="short-key"),
        pytest.param(struct.pack(">hh", -1, 1), struct.pack(">hi", 0, 7), (None, None), id="negative-key-version"),
        pytest.param(struct.pack(">hh", 0, 1), b"\x00\x00\x00\x00\x07", (1, None), id="short-value"),
        pytest.param(struct.pack(">hh", 0, 1), struct.pack(">hi", -1, 7), (1, None), id="negative-value-version"),
    ],
)
def test_control_record_decoding(key, value, expected):
    data = build_batch([NewRecord(40, TS, key, value)], base_offset=40, producer_id=1, producer_epoch=0,
                       is_transactional=True, is_control=True)
    batch = parse_header(data, 0, len(data), path=PATH)
    (rec,) = iter_records(data, batch)
    assert (rec.control_type, rec.coordinator_epoch) == expected
    assert (rec.key, rec.value) == (key, value)


def test_non_control_batch_records_have_no_control_fields():
    (rec,) = iter_records(TV3, parse_header(TV3, 0, len(TV3), path=PATH))
    assert rec.control_type is None and rec.coordinator_epoch is None


# -- build -> parse round trips ---------------------------------------------------------------

BLOBS = st.one_of(st.none(), st.binary(max_size=40))
HEADERS = st.lists(st.tuples(st.text(max_size=8), BLOBS), max_size=3).map(tuple)


@st.composite
def batches(draw):
    base_offset = draw(st.integers(0, 2**62))
    n = draw(st.integers(1, 8))
    gaps = draw(st.lists(st.integers(1, 1000), min_size=n - 1, max_size=n - 1))  # compaction gaps
    offsets = [base_offset]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    base_ts = draw(st.integers(0, 2**60))
    records = [
        NewRecord(o, base_ts + draw(st.integers(-(2**40), 2**40)), draw(BLOBS), draw(BLOBS), draw(HEADERS))
        for o in offsets
    ]
    args = dict(
        base_offset=base_offset,
        partition_leader_epoch=draw(st.integers(-1, 2**31 - 1)),
        compression=draw(st.sampled_from([codecs.NONE, codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD])),
        producer_id=draw(st.integers(-1, 2**63 - 1)),
        producer_epoch=draw(st.integers(-1, 2**15 - 1)),
        base_sequence=draw(st.integers(-1, 2**31 - 1)),
        is_transactional=draw(st.booleans()),
    )
    return records, args


def _expected_sequence(base: int, delta: int) -> int:
    if base < 0:
        return -1
    return (base + delta) % 2**31  # wrap past INT32_MAX to 0, as incrementSequence does


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_build_parse_round_trip(case):
    records, args = case
    data = build_batch(records, **args)
    batch = parse_header(data, 0, len(data), path=PATH)
    assert batch.crc_valid is True
    assert batch.crc == reference_crc32c(data[21:])
    assert (batch.base_offset, batch.last_offset, batch.count) == (
        records[0].offset, records[-1].offset, len(records))
    assert batch.partition_leader_epoch == args["partition_leader_epoch"]
    assert batch.compression == args["compression"]
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        args["producer_id"], args["producer_epoch"], args["base_sequence"])
    assert batch.is_transactional == args["is_transactional"]
    assert batch.base_timestamp == records[0].timestamp
    assert batch.max_timestamp == max(r.timestamp for r in records)
    expected = [
        Record(0, r.offset, r.timestamp, _expected_sequence(args["base_sequence"], r.offset - records[0].offset),
               r.key, r.value, tuple(Header(k, v) for k, v in r.headers))
        for r in records
    ]
    assert list(iter_records(data, batch)) == expected


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=0, max_size=200), st.integers(-2, 40), st.sampled_from(range(8)))
def test_any_records_section_gives_records_or_a_format_error(section, count, codec):
    data = bytearray(_batch_with_section(section, count))
    data[22] = codec
    batch = parse_header(bytes(data), 0, len(data), path=PATH)
    got = []
    try:
        for rec in iter_records(bytes(data), batch):
            assert isinstance(rec, Record)
            got.append(rec)
    except FormatError as exc:
        assert exc.path == PATH
    assert len(got) <= max(count, 0)
    assert all(r.batch_position == 0 for r in got)


@pytest.mark.parametrize(
    "codec",
    [pytest.param(c, id=codecs.CODEC_NAMES[c]) for c in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD)],
)
def test_cut_compressed_records_yield_the_records_before_the_break(codec):
    # Kafka decompresses as it goes, so the records before the break are handed out first
    import random

    rnd = random.Random(3)
    records = [NewRecord(i, TS + i, None, rnd.randbytes(3000)) for i in range(60)]
    full = build_batch(records, base_offset=0, compression=codec)
    cut = bytearray(full[:61 + (len(full) - 61) * 7 // 10])
    struct.pack_into(">i", cut, 8, len(cut) - 12)
    struct.pack_into(">I", cut, 17, reference_crc32c(cut[21:]))
    data = bytes(cut)
    got = []
    with pytest.raises(Malformed) as info:
        for rec in iter_records(data, _parse(data)):
            got.append(rec)
    assert "decompress" in str(info.value)
    assert 0 < len(got) < len(records)
    assert [(r.offset, r.value) for r in got] == [(r.offset, r.value) for r in records[:len(got)]]


@pytest.mark.parametrize(
    ("encoded_delta", "expected_offset"),
    [
        pytest.param(bytes.fromhex("02"), 1, id="minimal"),
        pytest.param(bytes.fromhex("8200"), 1, id="non-minimal-2B"),
        pytest.param(bytes.fromhex("8280808000"), 1, id="non-minimal-5B"),
        pytest.param(bytes.fromhex("8280808070"), 1, id="5th-byte-bits-4-6-dropped"),
    ],
)
def test_record_varints_follow_kafkas_decoder(encoded_delta, expected_offset):
    body = b"\x00" + bytes.fromhex("80808080808080808000") + encoded_delta + _zz(-1) + _zz(1) + b"v" + _zz(0)
    data = _batch_with_section(_record(body), 1, base_offset=1000)
    (rec,) = iter_records(data, _parse(data))
    assert rec.offset == 1000 + expected_offset
    assert rec.timestamp == TS  # the 10-byte non-minimal timestampDelta is 0


# -- streaming --------------------------------------------------------------------------------

# the smallest record: length 6, attributes, timestamp delta 0, offset delta 0, null key and
# value, no headers
TINY_RECORD = bytes.fromhex("0c000000010100")


def test_a_batch_declaring_20_million_records_is_streamed():
    # Kafka's iterator reads a record at a time; so does kreplica: the first records come out
    # before the (missing) rest is looked at, and the memory held does not grow with the count
    n = 200_000
    data = _batch_with_section(TINY_RECORD * n, 20_000_000)
    batch = _parse(data)
    assert batch.count == 20_000_000
    records = iter_records(data, batch)
    assert [r.offset for r in (next(records), next(records))] == [0, 0]
    tracemalloc.start()
    try:
        seen = 2
        with pytest.raises(FormatError):
            for _ in records:
                seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == n
    # a list of the 200,000 records would take more than 20 MB; the section copy is 1.4 MB
    assert peak < 4 * len(data) + (1 << 20)


def test_every_one_and_two_byte_varint_decodes_as_the_varint_module_says():
    # the record reader's inline fast path for short varints is varint.py's decoding unrolled
    encodings = [bytes([b]) for b in range(0x80)]
    encodings += [bytes([lo, hi]) for lo in range(0x80, 0x100) for hi in range(0x80)]
    body = b"".join(_record(b"\x00" + enc + enc + _zz(-1) + _zz(-1) + _zz(0)) for enc in encodings)
    data = _batch_with_section(body, len(encodings), base_offset=10**6)
    got = [(r.timestamp - TS, r.offset - 10**6) for r in iter_records(data, _parse(data))]
    expected = []
    for enc in encodings:
        delta, _ = read_varint(enc, 0, len(enc))
        expected.append((delta, delta))
    assert got == expected
    assert all(read_unsigned_varint(enc, 0, len(enc))[1] == len(enc) for enc in encodings)


def test_zstd_bomb_batch_raises_within_the_relative_limit():
    # issue 14: a 32 KiB zstd frame of RLE blocks that inflates to 1 GiB is refused at
    # codecs.inflation_limit(32 KiB) = 16 MiB, as a FormatError the walkers turn into a finding
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for i in range(8192):
        frame += (int(i == 8191) | 2 | (128 * 1024) << 3).to_bytes(3, "little") + b"\x00"
    count = 20_000_000
    body = struct.pack(">hiqqqhii", codecs.ZSTD, count - 1, 0, 0, -1, -1, -1, count) + bytes(frame)
    crc = reference_crc32c(body)
    data = struct.pack(">qiib", 0, 9 + len(body), 0, 2) + struct.pack(">I", crc) + body
    batch = default_records.parse_header(data, 0, len(data), path="bomb.log")
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="decompression bomb"):
            for _ in default_records.iter_records(data, batch):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * codecs.inflation_limit(len(frame))


# -- a huge uncompressed batch is decoded a window at a time (issue 14) -----------------------


def _outcome(data: bytes):
    """Records, then the error as (type, reason, position) or None, of iter_records on ``data``."""
    out = []
    try:
        for r in iter_records(data, _parse(data)):
            out.append(r)
    except FormatError as exc:
        return out, (type(exc), exc.reason, exc.position, exc.field)
    return out, None


_windowed_records = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=40)), st.one_of(st.none(), st.binary(max_size=300)),
              st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=20))), max_size=2)),
    max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=_windowed_records, window=st.integers(1, 200), data=st.data())
def test_windowed_decoding_gives_what_one_whole_copy_gives(recs, window, data):
    # the pure reader copies a long section from the mapping a window at a time: records cut by
    # a window are read again from the next, and only a window reaching the end may raise
    section = b"".join(default_records.build_record(i, i, k, v, h) for i, (k, v, h) in enumerate(recs))
    mutated = bytearray(section)
    for _ in range(data.draw(st.integers(0, 3))):
        if mutated and data.draw(st.booleans()):
            mutated[data.draw(st.integers(0, len(mutated) - 1))] = data.draw(st.integers(0, 255))
        else:
            mutated = mutated[:data.draw(st.integers(0, len(mutated)))]
    count = max(0, len(recs) + data.draw(st.integers(-1, 1)))
    batch = _batch_with_section(bytes(mutated), count)
    whole = _outcome(batch)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(default_records, "DECODE_WINDOW", window)
        assert _outcome(batch) == whole


def test_a_record_longer_than_the_window_is_read_whole(monkeypatch):
    monkeypatch.setattr(default_records, "DECODE_WINDOW", 16)
    recs = [NewRecord(i, TS, b"k" * 100 * i, b"v" * 1000, (("h", b"x" * 50),)) for i in range(5)]
    data = build_batch(recs, base_offset=0)
    assert list(iter_records(data, _parse(data))) == [
        Record(0, r.offset, r.timestamp, -1, r.key, r.value, (Header("h", b"x" * 50),)) for r in recs]


class _RecordingMap(mmap.mmap):
    """A real read-only mapping that records what readers hand back to the kernel."""

    def madvise(self, option, start=0, length=None):
        self.released = getattr(self, "released", []) + [(option, start, length)]
        return super().madvise(option, start, length)


@pytest.mark.skipif(not hasattr(mmap, "MADV_DONTNEED"), reason="no madvise(MADV_DONTNEED) here")
def test_a_huge_mapped_batch_is_checksummed_and_decoded_with_its_pages_released(monkeypatch, tmp_path):
    from kreplica.formats.log import legacy_records, segment
    from kreplica.formats import mapped

    window = 4 * mmap.PAGESIZE
    for module in (mapped, default_records, legacy_records):
        monkeypatch.setattr(module, "RELEASE_WINDOW", window)
    monkeypatch.setattr(default_records, "DECODE_WINDOW", window // 2)
    recs = [NewRecord(i, TS + i, None, bytes([i % 251]) * 300, ()) for i in range(2000)]
    data = build_batch(recs, base_offset=0)
    assert len(data) > 20 * window
    path = tmp_path / PATH
    path.write_bytes(data)
    with open(path, "rb") as f:
        mm = _RecordingMap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        (batch, end) = list(segment.iter_segment(mm, path=PATH))
        assert batch.crc_valid is True and end.valid_bytes == len(data)
        after_crc = list(mm.released)
        assert sum(length for _, _, length in after_crc) >= len(data) - 3 * window  # all but the last window
        decoded = list(iter_records(mm, batch))
        assert [(r.offset, r.value) for r in decoded] == [(r.offset, r.value) for r in recs]
        during = mm.released[len(after_crc):]
        assert len(during) >= 5 and all(option == mmap.MADV_DONTNEED for option, _, _ in during)
        assert sum(length for _, _, length in during) >= len(data) - 2 * mmap.PAGESIZE - RECORDS_OFFSET
        assert all(s >= RECORDS_OFFSET - mmap.PAGESIZE and s + n <= len(data) + mmap.PAGESIZE
                   for _, s, n in during)
    finally:
        mm.close()
