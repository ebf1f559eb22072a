"""Kafka's codecs (spec §5): framing byte-exact where Kafka's output is deterministic (TV10),
decoding of the spec's payloads (TV7 gzip, TV9 snappy), round trips for every codec and
magic, and the promises of ``decompress``: bounded output, partial data plus an error on
damage, never an exception.
"""

from __future__ import annotations

import functools
import gzip
import random
import struct
import tracemalloc
import zlib

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xxhash import xxh32_intdigest as xxh32

from kreplica.formats import codecs

# -- spec test vectors -------------------------------------------------------------------------

HELLO = b"hello kafka"
# TV10: correct HC (magic 1/2) and the magic-0 "broken" HC over magic+FLG+BD
TV10_FRAME_V12 = bytes.fromhex("04 22 4d 18 60 40 82 0b 00 00 80 68 65 6c 6c 6f 20 6b 61 66 6b 61 00 00 00 00")
TV10_FRAME_V0 = bytes.fromhex("04 22 4d 18 60 40 1a 0b 00 00 80 68 65 6c 6c 6f 20 6b 61 66 6b 61 00 00 00 00")

# TV4's two records, the uncompressed records section (31 bytes)
TV4_RECORDS = bytes.fromhex("1800000002610a66697273740022000a02010c7365636f6e64020468310278")
# TV7's records section: TV4_RECORDS through JDK 17 GZIPOutputStream
TV7_GZIP = bytes.fromhex(
    "1f8b08000000000000ff93606060604ae44acb2c2a2e615062e06262e4294e4dcecf4b6162c93064aa0000"
    "8a0b3ba31f000000"
)
# TV9: the wrapper value (xerial stream) and the 70 bytes it inflates to
TV9_XERIAL = bytes.fromhex(
    "82534e415050590000000001000000010000004946f045"
    "00000000000000000000001742b4af0201000000018bcfe56800ffffffff0000000161"
    "000000000000000100000017347f958601000000018bcfe56801ffffffff0000000162"
)
TV9_INNER = bytes.fromhex(
    "00000000000000000000001742b4af0201000000018bcfe56800ffffffff0000000161"
    "000000000000000100000017347f958601000000018bcfe56801ffffffff0000000162"
)

MIB = 1024 * 1024


def test_tv_constants_are_what_the_spec_says():
    # guards the hex above against a typo: sizes and framing bytes from the spec's listings
    assert len(TV10_FRAME_V12) == len(TV10_FRAME_V0) == 26
    assert TV10_FRAME_V12[6] == 0x82 and TV10_FRAME_V0[6] == 0x1A
    assert len(TV4_RECORDS) == 31
    assert len(TV7_GZIP) == 112 - 61
    assert len(TV9_XERIAL) == 93 and len(TV9_INNER) == 70
    assert gzip.decompress(TV7_GZIP) == TV4_RECORDS  # the standard library agrees


# -- XXH32 (only for the LZ4 header checksum) --------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", 0x02CC5D05, id="empty"),
        pytest.param(b"abc", 0x32D153FF, id="abc"),
        pytest.param(b"Nobody inspects the spammish repetition", 0xE2293B2F, id="39-bytes"),
        pytest.param(bytes.fromhex("6040"), 0x301A8268, id="TV10-FLG-BD"),
        pytest.param(bytes.fromhex("04224d186040"), 0xC8581A3A, id="TV10-magic0"),
    ],
)
def test_xxh32_known_values(data, expected):
    assert xxh32(data) == expected


# -- TV10: LZ4 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("magic", "frame"),
    [
        pytest.param(0, TV10_FRAME_V0, id="magic0"),
        pytest.param(1, TV10_FRAME_V12, id="magic1"),
        pytest.param(2, TV10_FRAME_V12, id="magic2"),
    ],
)
def test_tv10_lz4_frame_byte_exact(magic, frame):
    assert codecs.compress(codecs.LZ4, HELLO, magic=magic) == frame


@pytest.mark.parametrize("magic", [pytest.param(m, id=f"magic{m}") for m in (0, 1, 2)])
def test_tv10_correct_hc_decodes_for_every_magic(magic):
    got = codecs.decompress(codecs.LZ4, TV10_FRAME_V12, magic=magic)
    assert got == codecs.Inflated(HELLO, None, False)


def test_tv10_magic0_frame_decodes_with_broken_checksum_flag_under_magic0():
    got = codecs.decompress(codecs.LZ4, TV10_FRAME_V0, magic=0)
    assert got.data == HELLO
    assert got.error is None
    assert got.lz4_broken_checksum is True


@pytest.mark.parametrize("magic", [pytest.param(m, id=f"magic{m}") for m in (1, 2)])
def test_tv10_magic0_frame_rejected_for_magic_1_and_2(magic):
    got = codecs.decompress(codecs.LZ4, TV10_FRAME_V0, magic=magic)
    assert got.data == b""
    assert got.error is not None and "frame descriptor corrupted" in got.error


def _lz4_frame(flg: int, bd: int, blocks: bytes, *, content_size: bytes = b"", hc: int | None = None) -> bytes:
    descriptor = bytes((flg, bd)) + content_size
    if hc is None:
        hc = (xxh32(descriptor) >> 8) & 0xFF
    return struct.pack("<I", 0x184D2204) + descriptor + bytes((hc,)) + blocks


def _raw_block(data: bytes) -> bytes:
    return struct.pack("<I", len(data) | 0x80000000) + data


END_MARK = b"\x00\x00\x00\x00"


@pytest.mark.parametrize(
    ("frame", "fragment"),
    [
        pytest.param(b"\x05\x22\x4d\x18" + TV10_FRAME_V12[4:], "invalid magic", id="bad-magic"),
        pytest.param(b"\x04\x22\x4d", "invalid magic", id="short-magic"),
        pytest.param(TV10_FRAME_V12[:6], "ended prematurely", id="no-hc"),
        pytest.param(_lz4_frame(0xA0, 0x40, _raw_block(HELLO) + END_MARK), "Stream unsupported", id="FLG-version-2"),
        pytest.param(_lz4_frame(0x40, 0x40, _raw_block(HELLO) + END_MARK), "Stream unsupported", id="FLG-dependent-blocks"),
        pytest.param(_lz4_frame(0x61, 0x40, _raw_block(HELLO) + END_MARK), "Stream unsupported", id="FLG-reserved-bit"),
        pytest.param(_lz4_frame(0x60, 0x30, _raw_block(HELLO) + END_MARK), "Stream unsupported", id="BD-size-code-3"),
        pytest.param(_lz4_frame(0x60, 0x41, _raw_block(HELLO) + END_MARK), "Stream unsupported", id="BD-reserved-bit"),
        pytest.param(_lz4_frame(0x60, 0x40, _raw_block(HELLO) + END_MARK, hc=0x00), "frame descriptor corrupted",
                     id="bad-hc"),
        pytest.param(_lz4_frame(0x60, 0x40, struct.pack("<I", 0x80010001)), "exceeded max", id="block-over-64KiB"),
        pytest.param(_lz4_frame(0x70, 0x40, _raw_block(HELLO) + b"\x00\x00\x00\x00" + END_MARK),
                     "Block checksum mismatch", id="block-checksum"),
    ],
)
def test_lz4_reader_rejections(frame, fragment):
    got = codecs.decompress(codecs.LZ4, frame, magic=2)
    assert got.error is not None and fragment in got.error
    assert got.data == b""


def test_lz4_missing_end_mark_gives_the_blocks_read_and_an_error():
    got = codecs.decompress(codecs.LZ4, _lz4_frame(0x60, 0x40, _raw_block(HELLO) + _raw_block(b"!")))
    assert got.data == HELLO + b"!"
    assert got.error is not None and "ended prematurely" in got.error


def test_lz4_optional_fields_kafka_accepts():
    # block checksum verified when flagged; content size skipped; content checksum consumed
    # but not verified; bytes after the end mark ignored (spec §5.3)
    block = _raw_block(HELLO) + struct.pack("<I", xxh32(HELLO))
    frame = _lz4_frame(0x70, 0x40, block + END_MARK)
    assert codecs.decompress(codecs.LZ4, frame) == codecs.Inflated(HELLO)
    frame = _lz4_frame(0x68, 0x40, _raw_block(HELLO) + END_MARK, content_size=struct.pack("<Q", len(HELLO)))
    assert codecs.decompress(codecs.LZ4, frame) == codecs.Inflated(HELLO)
    frame = _lz4_frame(0x64, 0x40, _raw_block(HELLO) + END_MARK + b"\xde\xad\xbe\xef")
    assert codecs.decompress(codecs.LZ4, frame) == codecs.Inflated(HELLO)
    frame = _lz4_frame(0x64, 0x40, _raw_block(HELLO) + END_MARK + b"\xde\xad")
    assert codecs.decompress(codecs.LZ4, frame).error is not None  # checksum cut short
    assert codecs.decompress(codecs.LZ4, TV10_FRAME_V12 + b"trailing junk") == codecs.Inflated(HELLO)
    for code, size in ((5, 256 * 1024), (7, 4 * MIB)):
        ok = _lz4_frame(0x60, code << 4, struct.pack("<I", size | 0x80000000) + bytes(size) + END_MARK)
        assert codecs.decompress(codecs.LZ4, ok).data == bytes(size)


def test_lz4_writer_splits_into_64KiB_blocks_and_stores_incompressible_blocks_raw():
    data = random.Random(1).randbytes(64 * 1024 + 10)
    frame = codecs.compress(codecs.LZ4, data)
    assert frame[:7] == TV10_FRAME_V12[:7]
    pos = 7
    sizes = []
    while True:
        (size,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if size == 0:
            break
        sizes.append(size)
        pos += size & 0x7FFFFFFF
    assert pos == len(frame)
    assert sizes == [0x80000000 | 65536, 0x80000000 | 10]


# -- TV7 gzip, TV9 snappy ----------------------------------------------------------------------


@pytest.mark.parametrize("magic", [pytest.param(m, id=f"magic{m}") for m in (0, 1, 2)])
def test_tv7_gzip_payload_decodes(magic):
    assert codecs.decompress(codecs.GZIP, TV7_GZIP, magic=magic) == codecs.Inflated(TV4_RECORDS)


def test_gzip_writer_header_is_the_jdk_one():
    out = codecs.compress(codecs.GZIP, TV4_RECORDS)
    assert out[:10] == TV7_GZIP[:10]  # 1f 8b 08 00, MTIME 0, XFL 0, OS ff
    assert out[-8:] == TV7_GZIP[-8:]  # CRC-32 LE and ISIZE LE of the same input
    assert gzip.decompress(out) == TV4_RECORDS


def test_gzip_concatenated_members_and_trailing_garbage():
    two = TV7_GZIP + codecs.compress(codecs.GZIP, b"more")
    assert codecs.decompress(codecs.GZIP, two) == codecs.Inflated(TV4_RECORDS + b"more")
    # bytes after a member that are not another gzip header are ignored, as Java does
    assert codecs.decompress(codecs.GZIP, TV7_GZIP + b"\x00junk") == codecs.Inflated(TV4_RECORDS)


def test_gzip_os_byte_is_ignored():
    other_os = TV7_GZIP[:9] + b"\x00" + TV7_GZIP[10:]
    assert codecs.decompress(codecs.GZIP, other_os) == codecs.Inflated(TV4_RECORDS)


def test_gzip_bad_trailer_crc_is_an_error():
    bad = TV7_GZIP[:-8] + bytes(4) + TV7_GZIP[-4:]
    got = codecs.decompress(codecs.GZIP, bad)
    assert got.error is not None


def test_tv9_xerial_snappy_payload_decodes():
    assert codecs.decompress(codecs.SNAPPY, TV9_XERIAL, magic=1) == codecs.Inflated(TV9_INNER)


def test_tv9_raw_unframed_snappy_block_accepted():
    raw_block = TV9_XERIAL[20:]  # after the 16-byte header and the 4-byte chunk length
    assert raw_block[:3] == bytes.fromhex("46f045")
    assert codecs.decompress(codecs.SNAPPY, raw_block, magic=1) == codecs.Inflated(TV9_INNER)


def test_snappy_short_input_is_read_as_a_raw_block():
    # fewer than 16 bytes: the whole input is decoded as one raw block
    raw = bytes.fromhex("05") + b"\x10hello"  # length 5, literal of 5
    assert codecs.decompress(codecs.SNAPPY, raw) == codecs.Inflated(b"hello")


def test_snappy_empty_stream_is_an_error():
    got = codecs.decompress(codecs.SNAPPY, b"")
    assert got.data == b"" and "empty" in got.error


def test_snappy_concatenated_xerial_streams():
    a, b = codecs.compress(codecs.SNAPPY, b"first"), codecs.compress(codecs.SNAPPY, b"second")
    assert codecs.decompress(codecs.SNAPPY, a + b) == codecs.Inflated(b"firstsecond")
    # a second header with version 0 is refused (SnappyInputStream: version must be >= 1)
    bad = a + b[:8] + struct.pack(">ii", 0, 1) + b[16:]
    got = codecs.decompress(codecs.SNAPPY, bad)
    assert got.data == b"first" and got.error is not None


@pytest.mark.parametrize(
    "length",
    [pytest.param(-1, id="negative"), pytest.param(512 * MIB + 1, id="over-512MiB")],
)
def test_snappy_impossible_chunk_length_is_an_error(length):
    stream = TV9_XERIAL[:16] + struct.pack(">i", length) + TV9_XERIAL[20:]
    got = codecs.decompress(codecs.SNAPPY, stream)
    assert got.data == b"" and got.error is not None


def test_snappy_writer_uses_32KiB_blocks():
    data = bytes(range(256)) * 200  # 51200 bytes: two chunks
    stream = codecs.compress(codecs.SNAPPY, data)
    assert stream[:16] == TV9_XERIAL[:16]
    (first,) = struct.unpack_from(">i", stream, 16)
    import cramjam

    assert bytes(cramjam.snappy.decompress_raw(stream[20:20 + first])) == data[:32768]


def test_unknown_codec_is_an_error_not_an_exception():
    for codec in (5, 6, 7):
        got = codecs.decompress(codec, b"abc")
        assert got.data == b"" and got.error is not None
    with pytest.raises(ValueError):
        codecs.compress(5, b"abc")


def test_none_codec_passes_bytes_through():
    assert codecs.decompress(codecs.NONE, b"abc") == codecs.Inflated(b"abc")
    assert codecs.compress(codecs.NONE, b"abc") == b"abc"


# -- round trips -------------------------------------------------------------------------------

CODEC_MAGICS = [
    pytest.param(codec, magic, id=f"{codecs.CODEC_NAMES[codec]}-v{magic}")
    for codec in (codecs.NONE, codecs.GZIP, codecs.SNAPPY, codecs.LZ4)
    for magic in (0, 1, 2)
] + [pytest.param(codecs.ZSTD, 2, id="zstd-v2")]

# compressible and incompressible data, crossing the 32 KiB snappy and 64 KiB lz4 block sizes
PAYLOADS = st.one_of(
    st.binary(max_size=2048),
    st.lists(st.tuples(st.integers(0, 255), st.integers(1, 40000)), max_size=6).map(
        lambda runs: b"".join(bytes([b]) * n for b, n in runs)
    ),
    st.tuples(st.randoms(use_true_random=False), st.integers(0, 140000)).map(
        lambda t: t[0].randbytes(t[1])
    ),
)


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGICS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=PAYLOADS)
def test_compress_decompress_round_trip(codec, magic, data):
    packed = codecs.compress(codec, data, magic=magic)
    # Kafka's magic-0 LZ4 frames carry the KAFKA-3160 header checksum, which the reader flags
    broken = codec == codecs.LZ4 and magic == 0
    assert codecs.decompress(codec, packed, magic=magic) == codecs.Inflated(data, None, broken)


@pytest.mark.parametrize(("codec", "magic"), [p for p in CODEC_MAGICS if p.values[0] != codecs.NONE])
@settings(max_examples=30, deadline=None)
@given(data=PAYLOADS, limit=st.integers(0, 150000))
def test_output_never_exceeds_the_limit(codec, magic, data, limit):
    got = codecs.decompress(codec, codecs.compress(codec, data, magic=magic), magic=magic, limit=limit)
    assert len(got.data) <= limit
    assert data.startswith(got.data)
    if len(data) <= limit:
        assert got.data == data and got.error is None
    else:
        assert got.error is not None


# -- bombs: bounded inflation ------------------------------------------------------------------

BOMB_SIZE = 50 * MIB


@pytest.fixture(scope="module")
def bombs():
    zeros = bytes(BOMB_SIZE)
    return {codec: codecs.compress(codec, zeros) for codec in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD)}


@pytest.mark.parametrize(
    "codec",
    [pytest.param(c, id=codecs.CODEC_NAMES[c]) for c in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD)],
)
def test_bomb_with_limit_is_an_error_and_stays_under_the_limit(bombs, codec):
    packed = bombs[codec]
    assert len(packed) < BOMB_SIZE // 10  # it is a bomb
    tracemalloc.start()
    try:
        got = codecs.decompress(codec, packed, limit=MIB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.error is not None
    assert len(got.data) <= MIB
    assert set(got.data) <= {0}
    # never more than a small multiple of the limit plus the input: not the 50 MiB
    assert peak < 8 * MIB + 4 * len(packed)


@pytest.mark.parametrize(
    ("codec", "payload"),
    [
        # zstd frame header: single segment, 8-byte Frame_Content_Size = 2**40, then a few bytes
        pytest.param(codecs.ZSTD, b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00",
                     id="zstd-declared-content-size"),
        # raw snappy block whose length varint says 2**28 - 1, with one literal byte
        pytest.param(codecs.SNAPPY, bytes.fromhex("ffffff7f") + b"\x00a", id="snappy-declared-length"),
    ],
)
def test_declared_sizes_do_not_drive_allocation(codec, payload):
    tracemalloc.start()
    try:
        got = codecs.decompress(codec, payload)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.error is not None
    assert peak < 8 * MIB


# -- damage: partial data and an error, never an exception ------------------------------------

TRUNCATION_INPUT = bytes(range(256)) * 16 + bytes(70000) + b"tail" * 2000  # > one block of each codec


@functools.lru_cache(maxsize=None)
def packed_stream(codec: int, magic: int) -> bytes:
    # cached, not a fixture: hypothesis would print a fixture's 100 kB value on failure
    return codecs.compress(codec, TRUNCATION_INPUT, magic=magic)


@pytest.mark.parametrize(("codec", "magic"), [p for p in CODEC_MAGICS if p.values[0] != codecs.NONE])
@settings(max_examples=40, deadline=None)
@given(cut=st.floats(0, 1, exclude_max=True))
def test_truncated_stream_gives_a_prefix_and_an_error(codec, magic, cut):
    packed = packed_stream(codec, magic)
    short = packed[: int(cut * len(packed))]
    got = codecs.decompress(codec, short, magic=magic)
    assert TRUNCATION_INPUT.startswith(got.data)  # never invented bytes
    if codec != codecs.SNAPPY:  # a xerial stream cut at a chunk boundary is itself valid
        assert got.error is not None


# 300 kB of seeded random bytes: several blocks for every codec (zstd blocks are <= 128 KiB)
MULTI_BLOCK_INPUT = random.Random(20).randbytes(300_000)


@pytest.mark.parametrize(
    ("codec", "recovered_at_least"),
    [
        pytest.param(codecs.GZIP, 64 * 1024, id="gzip"),
        pytest.param(codecs.SNAPPY, 32 * 1024, id="snappy-first-chunk"),
        pytest.param(codecs.LZ4, 64 * 1024, id="lz4-first-block"),
        pytest.param(codecs.ZSTD, 128 * 1024, id="zstd-first-block"),
    ],
)
def test_truncated_stream_recovers_the_bytes_before_the_break(codec, recovered_at_least):
    packed = codecs.compress(codec, MULTI_BLOCK_INPUT)
    got = codecs.decompress(codec, packed[: len(packed) * 3 // 4])
    assert got.error is not None
    assert len(got.data) >= recovered_at_least
    assert MULTI_BLOCK_INPUT.startswith(got.data)


@pytest.mark.parametrize(
    ("codec", "magic"),
    [p for p in CODEC_MAGICS if p.values[0] != codecs.NONE],
)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=300))
def test_any_bytes_give_data_or_an_error(codec, magic, data):
    got = codecs.decompress(codec, data, magic=magic, limit=64 * 1024)
    assert isinstance(got, codecs.Inflated)
    assert isinstance(got.data, bytes)
    assert len(got.data) <= 64 * 1024


@pytest.mark.parametrize(
    ("codec", "magic"),
    [p for p in CODEC_MAGICS if p.values[0] != codecs.NONE],
)
@settings(max_examples=40, deadline=None)
@given(where=st.floats(0, 1, exclude_max=True), byte=st.integers(0, 255))
def test_corrupted_stream_never_raises(codec, magic, where, byte):
    packed = bytearray(packed_stream(codec, magic))
    packed[int(where * len(packed))] = byte
    got = codecs.decompress(codec, bytes(packed), magic=magic)
    assert isinstance(got.data, bytes)
    assert got.error is None or isinstance(got.error, str)
    assert len(got.data) <= codecs.MAX_INFLATED_BYTES


def test_zlib_level_does_not_matter_to_the_reader():
    # "parsers must decode, not compare": a level-1 deflate of the same records reads the same
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    other = c.compress(TV4_RECORDS) + c.flush()
    assert other != TV7_GZIP
    assert codecs.decompress(codecs.GZIP, other) == codecs.Inflated(TV4_RECORDS)


def test_lz4_end_mark_with_the_uncompressed_bit_set():
    frame = TV10_FRAME_V12[:-4] + b"\x00\x00\x00\x80"
    assert codecs.decompress(codecs.LZ4, frame) == codecs.Inflated(HELLO)


@pytest.mark.parametrize(
    "trailer",
    [
        pytest.param(b"\x1f\x8b", id="bare-magic"),
        pytest.param(b"\x1f\x8b\x07" + bytes(30), id="bad-compression-method"),
    ],
)
def test_gzip_malformed_second_header_is_ignored_as_java_does(trailer):
    assert codecs.decompress(codecs.GZIP, TV7_GZIP + trailer) == codecs.Inflated(TV4_RECORDS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=4000), extra=st.binary(max_size=8), flips=st.lists(st.integers(0, 10**6), max_size=3),
       cut=st.one_of(st.none(), st.integers(0, 10**6)), limit=st.sampled_from([1 << 28, 100, 2000]))
def test_gzip_fast_path_is_the_replayable_path(data, extra, flips, cut, limit):
    # the one-call inflate is only a shortcut: whatever the damage, the result is the exact path's
    frame = bytearray(codecs.compress(codecs.GZIP, data) + codecs.compress(codecs.GZIP, data[:50]) + extra)
    for f in flips:
        frame[f % len(frame)] ^= 1 << (f % 8)
    if cut is not None:
        frame = frame[:cut % (len(frame) + 1)]
    assert codecs._gunzip(bytes(frame), limit) == codecs._gunzip_replayable(bytes(frame), limit)


# -- the limit is relative to the compressed size (issue 14) -----------------------------------


def test_inflation_limit_is_relative_to_the_compressed_size():
    assert codecs.inflation_limit(0) == codecs.MIN_INFLATION_ALLOWANCE
    assert codecs.inflation_limit(1 << 20) == codecs.MAX_INFLATION_RATIO << 20
    assert codecs.inflation_limit(1 << 30) == codecs.MAX_INFLATED_BYTES


@pytest.mark.parametrize(
    "codec",
    # snappy (~21:1) and lz4 (~255:1) cannot pass 256:1, so only gzip and zstd make bombs here
    [pytest.param(c, id=codecs.CODEC_NAMES[c]) for c in (codecs.GZIP, codecs.ZSTD)],
)
def test_bomb_without_a_limit_stops_at_the_relative_limit(bombs, codec):
    packed = bombs[codec]
    limit = codecs.inflation_limit(len(packed))
    assert limit < BOMB_SIZE
    tracemalloc.start()
    try:
        got = codecs.decompress(codec, packed)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert codecs.is_bomb(got.error)
    assert len(got.data) <= limit
    assert peak < 3 * limit + 4 * len(packed)


def _zstd_rle_frame(blocks: int) -> bytes:
    """A zstd frame of ``blocks`` RLE blocks of 128 KiB each: 4 bytes a block, 1 GiB from 32 KiB."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # no content size, window 2^17
    for i in range(blocks):
        out += (int(i == blocks - 1) | 2 | (128 * 1024) << 3).to_bytes(3, "little") + b"\x00"
    return bytes(out)


def test_zstd_rle_gigabyte_is_a_bomb_not_an_allocation():
    frame = _zstd_rle_frame(8192)  # inflates to 1 GiB
    tracemalloc.start()
    try:
        got = codecs.decompress(codecs.ZSTD, frame)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert codecs.is_bomb(got.error)
    assert peak < 3 * codecs.inflation_limit(len(frame))


# -- bad data versus a bug: only the libraries' own errors become an error value ---------------

DATA = bytes(range(256)) * 64


def _spy(monkeypatch, module, name: str) -> list[type]:
    """Wrap ``module.name`` so the exception types it raises are recorded (and still raised)."""
    real = getattr(module, name)
    raised: list[type] = []

    def spy(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except BaseException as exc:
            raised.append(type(exc))
            raise

    monkeypatch.setattr(module, name, spy)
    return raised


def _spy_zstd_stream(monkeypatch) -> list[type]:
    """Record what cramjam's streaming zstd decoder raises (its methods live on a builtin type)."""
    real = cramjam.zstd.Decompressor
    raised: list[type] = []

    class Spy:
        def __init__(self) -> None:
            self._inner = real()

        def decompress(self, data):
            try:
                return self._inner.decompress(data)
            except BaseException as exc:
                raised.append(type(exc))
                raise

        def flush(self):
            return self._inner.flush()

    monkeypatch.setattr(cramjam.zstd, "Decompressor", Spy)
    return raised


def _lz4_with_bad_block() -> bytes:
    frame = bytearray(codecs.compress(codecs.LZ4, DATA * 4))
    frame[11:15] = b"\xff\xff\xff\xff"  # the first block's first bytes: an impossible literal run
    return bytes(frame)


def _zstd_good_then_cut() -> bytes:
    frame = codecs.compress(codecs.ZSTD, DATA)
    return frame + frame[:len(frame) // 2]


@pytest.mark.parametrize(("codec", "payload", "library", "raised", "words", "recovered"), [
    pytest.param(codecs.GZIP, lambda: codecs.GZIP_HEADER_JDK + b"\xff" * 40, None, zlib.error,
                 "gzip data does not decompress: Error -3 while decompressing data: invalid block type", 0,
                 id="gzip-zlib.error"),
    pytest.param(codecs.SNAPPY, lambda: bytes(cramjam.snappy.compress_raw(DATA))[:-5],
                 (cramjam.snappy, "decompress_raw_into"), cramjam.DecompressionError,
                 "raw snappy block does not decompress: snappy: corrupt input", 0,
                 id="snappy-raw-cramjam.DecompressionError"),
    pytest.param(codecs.SNAPPY, lambda: b"\xff" * 12,
                 (cramjam.snappy, "decompress_raw_len"), cramjam.DecompressionError,
                 "raw snappy block does not decompress: snappy: corrupt input (invalid header)", 0,
                 id="snappy-length-cramjam.DecompressionError"),
    pytest.param(codecs.SNAPPY, lambda: codecs.compress(codecs.SNAPPY, DATA)[:-5] + b"\xff" * 5,
                 (cramjam.snappy, "decompress_raw_into"), cramjam.DecompressionError,
                 "snappy chunk at byte 20 does not decompress: snappy: corrupt input", 0,
                 id="snappy-chunk-cramjam.DecompressionError"),
    pytest.param(codecs.LZ4, _lz4_with_bad_block, (cramjam.lz4, "decompress_block_into"), cramjam.DecompressionError,
                 "lz4: block at byte 11 does not decompress: ", 0, id="lz4-cramjam.DecompressionError"),
    pytest.param(codecs.ZSTD, lambda: codecs.compress(codecs.ZSTD, DATA)[:100], (cramjam.zstd, "decompress_into"),
                 cramjam.DecompressionError, "zstd data does not decompress: incomplete frame", None,
                 id="zstd-cramjam.DecompressionError"),
])
def test_each_library_error_on_damaged_input_is_an_error_value(monkeypatch, codec, payload, library, raised, words,
                                                               recovered):
    seen = _spy(monkeypatch, *library) if library is not None else None
    got = codecs.decompress(codec, payload())
    assert got.error is not None and got.error.startswith(words), got.error
    if seen is not None:
        assert raised in seen  # the library itself refused the data, not a check of kreplica's
    if recovered is not None:
        assert len(got.data) == recovered


def test_zstd_stream_decoder_error_keeps_the_frames_before_the_damage(monkeypatch):
    # the one-shot decoder refuses the whole payload; the streaming one (OSError) yields the good frame
    one_shot = _spy(monkeypatch, cramjam.zstd, "decompress_into")
    stream = _spy_zstd_stream(monkeypatch)
    got = codecs.decompress(codecs.ZSTD, _zstd_good_then_cut())
    assert got.error == "zstd data does not decompress: incomplete frame"
    assert got.data == DATA
    assert one_shot == [cramjam.DecompressionError] and stream == [OSError]


def _raise(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc
    return fail


#: The call each codec's reader makes first for a well-formed payload.
_CODEC_CALL = [
    pytest.param(codecs.GZIP, (zlib, "decompressobj"), id="gzip"),
    pytest.param(codecs.SNAPPY, (cramjam.snappy, "decompress_raw_into"), id="snappy"),
    pytest.param(codecs.LZ4, (cramjam.lz4, "decompress_block_into"), id="lz4"),
    pytest.param(codecs.ZSTD, (cramjam.zstd, "decompress_into"), id="zstd"),
]


@pytest.mark.parametrize(("codec", "call"), _CODEC_CALL)
@pytest.mark.parametrize("exc", [pytest.param(MemoryError(), id="MemoryError"),
                                 pytest.param(TypeError("a bug"), id="TypeError")])
def test_memory_error_or_bug_in_a_codec_is_raised_not_an_error_value(monkeypatch, codec, call, exc):
    # out of memory, or a programming error, says nothing about the evidence: it must reach the
    # command runner (exit 3), not become a "does not decompress" finding
    payload = codecs.compress(codec, DATA * 4)
    monkeypatch.setattr(*call, _raise(exc))
    with pytest.raises(type(exc)):
        codecs.decompress(codec, payload)


def test_zstd_stream_decoder_memory_error_is_raised(monkeypatch):
    class OutOfMemory:
        def decompress(self, data):
            raise MemoryError

    monkeypatch.setattr(cramjam.zstd, "Decompressor", OutOfMemory)
    with pytest.raises(MemoryError):
        codecs.decompress(codecs.ZSTD, _zstd_good_then_cut())
