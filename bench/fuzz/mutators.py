"""Mutations the fuzzer applies: generic byte damage plus what a hostile or mistaken file holds.

Every mutator takes ``(data, rng)`` and returns new bytes. The families the issue names:

* bit flips, random bytes, truncation, spliced spans (generic);
* length-field extremes: an int32/int64/int16 (or, for segments, a batch's length, record
  count, last offset delta, key/value length) set to 0, -1, ``INT_MAX``, ``INT_MIN``, "just
  past the end" and "one short", and varints set to their longest or largest forms;
* compression bombs: a tiny gzip/zstd/lz4/snappy payload that inflates to (or declares)
  gigabytes, as a v2 batch or a legacy wrapper;
* nested legacy wrappers (a wrapper whose value is another compressed wrapper, many deep);
* wrong magics: a batch's magic byte, a file header's magic.

For segments a mutation is followed, half the time, by recomputing each batch's CRC, so the
damage reaches the record decoder instead of stopping at the checksum.
"""

from __future__ import annotations

import random
import struct
import zlib

from targets import frames  # noqa: E402  (bench/fuzz is on sys.path)

INT_EXTREMES = (0, -1, 1, 0x7FFFFFFF, -0x80000000, 0x7FFFFFFE, 0x10000, 20_000_000)
LONG_EXTREMES = (0, -1, 0x7FFFFFFFFFFFFFFF, -0x8000000000000000, 1 << 32)
SHORT_EXTREMES = (0, -1, 0x7FFF, -0x8000)
VARINTS = (b"\xff\xff\xff\xff\x0f", b"\xfe\xff\xff\xff\x0f", b"\xff" * 10 + b"\x01",
           b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", b"\x01", b"\x00", b"\xff\xff\xff\x7f")
MAGICS = (0, 1, 2, 3, 0x7F, 0xFF, 0x80)


# -- generic -------------------------------------------------------------------------------------


def bit_flip(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\x00"
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    b = bytearray(data)
    i = rng.randrange(len(b))
    n = min(len(b) - i, rng.choice((1, 2, 4, 8, 16)))
    b[i:i + n] = bytes(rng.randrange(256) for _ in range(n))
    return bytes(b)


def truncate(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    return data[:rng.randrange(len(data))]


def splice(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 2:
        return data + data
    i, j = sorted(rng.sample(range(len(data)), 2))
    span = data[i:j]
    op = rng.randrange(3)
    if op == 0:  # duplicate a span
        k = rng.randrange(len(data))
        return data[:k] + span + data[k:]
    if op == 1:  # delete a span
        return data[:i] + data[j:]
    return data + span  # append


def _put(data: bytes, fmt: str, pos: int, value: int) -> bytes:
    b = bytearray(data)
    size = struct.calcsize(fmt)
    if pos + size > len(b):
        return data
    struct.pack_into(fmt, b, pos, value)
    return bytes(b)


def int_extreme(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 4:
        return data + struct.pack(">i", rng.choice(INT_EXTREMES))
    pos = rng.randrange(len(data) - 3)
    if rng.random() < 0.5:
        pos &= ~3
    choice = rng.randrange(4)
    if choice == 0:
        value = rng.choice(INT_EXTREMES)
    elif choice == 1:
        value = len(data) - pos - 4 + rng.choice((-1, 0, 1, 2))  # just past the end, or one short
    elif choice == 2:
        value = rng.randrange(-0x80000000, 0x80000000)
    else:
        return _put(data, ">q", pos, rng.choice(LONG_EXTREMES)) if len(data) - pos >= 8 else data
    value = max(-0x80000000, min(0x7FFFFFFF, value))
    return _put(data, ">i", pos, value)


def varint_extreme(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return rng.choice(VARINTS)
    i = rng.randrange(len(data))
    n = rng.choice((0, 1, 1, 2, 5))
    return data[:i] + rng.choice(VARINTS) + data[i + n:]


GENERIC = (bit_flip, bit_flip, random_bytes, truncate, splice, int_extreme, int_extreme, varint_extreme)


# -- text ---------------------------------------------------------------------------------------

TEXT_PIECES = (b"-1", b"0", b"2147483647", b"2147483648", b"-2147483649", b"9223372036854775807",
               b"9223372036854775808", b"1" * 5000, b"\r\n", b"\r", b"\n\n", b"\x00", b"\xef\xbb\xbf",
               b"\xff\xfe", b" ", b"\t", b"\\", b"\\u00", b"\\uZZZZ", b"#", b"!", b"=", b":",
               b"\xe2\x80\xae", b"\xc3", b"1e400", b"-0", b"+5", b"0x10", b"\xd8\x00", b"null", b"[]", b"{}",
               b'"', b"\\\n", b"version=1", b"data_version", b"1" * 20)
JSON_PIECES = (b"[" * 5000, b"{\"a\":" * 3000, b"1e99999", b"-1e-99999", b"\"\\ud800\"", b"NaN", b"Infinity",
               b"9" * 5000, b"true", b"null", b"\"\"", b"[]", b"{}", b"-9223372036854775809",
               b"18446744073709551616", b"1.5", b"\"1\"")


def text_piece(data: bytes, rng: random.Random) -> bytes:
    piece = rng.choice(TEXT_PIECES)
    if not data:
        return piece
    i = rng.randrange(len(data) + 1)
    n = rng.choice((0, 0, 1, 2, 5))
    return data[:i] + piece + data[i + n:]


def number_swap(data: bytes, rng: random.Random) -> bytes:
    import re
    spans = [m.span() for m in re.finditer(rb"-?\d+", data)]
    if not spans:
        return text_piece(data, rng)
    i, j = rng.choice(spans)
    return data[:i] + rng.choice(TEXT_PIECES[:8] + JSON_PIECES[7:8] + JSON_PIECES[12:14]) + data[j:]


def json_piece(data: bytes, rng: random.Random) -> bytes:
    piece = rng.choice(JSON_PIECES)
    if not data:
        return piece
    i = rng.randrange(len(data) + 1)
    return data[:i] + piece + data[i + rng.choice((0, 1, 3)):]


# -- segments -----------------------------------------------------------------------------------


def _crc_fix(data: bytes) -> bytes:
    from kreplica.formats.checksums import crc32, crc32c
    b = bytearray(data)
    for pos, size in frames(data):
        end = pos + size
        magic = b[pos + 16]
        if magic == 2 and size >= 61:
            struct.pack_into(">I", b, pos + 17, crc32c(bytes(b[pos + 21:end])))
        elif magic in (0, 1):
            struct.pack_into(">I", b, pos + 12, crc32(bytes(b[pos + 16:end])))
    return bytes(b)


# fields of a v2 batch header: (offset from the batch start, struct format)
V2_FIELDS = ((0, ">q"), (8, ">i"), (12, ">i"), (21, ">h"), (23, ">i"), (27, ">q"), (35, ">q"), (43, ">q"),
             (51, ">h"), (53, ">i"), (57, ">i"))
LEGACY_FIELDS = ((0, ">q"), (8, ">i"), (18, ">i"))


def batch_field(data: bytes, rng: random.Random) -> bytes:
    """A header field of one batch set to an extreme: length, counts, deltas, epochs, sequences."""
    fr = frames(data)
    if not fr:
        return int_extreme(data, rng)
    pos, size = rng.choice(fr)
    magic = data[pos + 16]
    off, fmt = rng.choice(V2_FIELDS if magic == 2 else LEGACY_FIELDS)
    extremes = {">q": LONG_EXTREMES, ">i": INT_EXTREMES, ">h": SHORT_EXTREMES}[fmt]
    if fmt == ">i" and off == 8 and rng.random() < 0.4:
        value = size - 12 + rng.choice((-1, 1, len(data)))  # one short, one past, far past
        value = max(-0x80000000, min(0x7FFFFFFF, value))
    elif fmt == ">h" and off == 21 and rng.random() < 0.7:
        value = rng.randrange(0x80)  # attributes: any codec 0-7, flags
    else:
        value = rng.choice(extremes)
    return _put(data, fmt, pos + off, value)


def wrong_magic(data: bytes, rng: random.Random) -> bytes:
    fr = frames(data)
    if not fr:
        return _put(data, ">B", 16, rng.choice(MAGICS)) if len(data) > 16 else data
    pos, _ = rng.choice(fr)
    return _put(data, ">B", pos + 16, rng.choice(MAGICS))


def legacy_codec(data: bytes, rng: random.Random) -> bytes:
    fr = [f for f in frames(data) if data[f[0] + 16] in (0, 1)]
    if not fr:
        return wrong_magic(data, rng)
    pos, _ = rng.choice(fr)
    return _put(data, ">B", pos + 17, rng.randrange(16))


def drop_batch(data: bytes, rng: random.Random) -> bytes:
    fr = frames(data)
    if len(fr) < 2:
        return truncate(data, rng)
    pos, size = rng.choice(fr)
    if rng.random() < 0.5:
        return data[:pos] + data[pos + size:]
    return data[:pos] + data[pos:pos + size] * 2 + data[pos + size:]  # a duplicated batch


# bombs are built once per process (the gzip one takes ~0.1 s)
_BOMBS: dict[str, bytes] = {}


def _zstd_rle(blocks: int, declared: int | None) -> bytes:
    """A zstd frame of ``blocks`` RLE blocks of 128 KiB zeros each (4 bytes a block), optionally
    declaring ``declared`` bytes of content: 32 KiB of frame for every GiB it inflates to."""
    fhd = 0xC0 if declared is not None else 0x00        # FCS 8 bytes, not single-segment
    out = bytearray(b"\x28\xb5\x2f\xfd" + bytes((fhd, 0x38)))  # window 2^17
    if declared is not None:
        out += struct.pack("<Q", declared)
    for i in range(blocks):
        last = 1 if i == blocks - 1 else 0
        header = last | (1 << 1) | ((128 * 1024) << 3)   # RLE block, 128 KiB
        out += header.to_bytes(3, "little") + b"\x00"
    return bytes(out)


def _gzip_zeros(n: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    parts = [c.compress(chunk) for _ in range(n >> 20)]
    parts.append(c.flush())
    return b"".join(parts)


def bombs() -> dict[str, bytes]:
    if _BOMBS:
        return _BOMBS
    import cramjam
    from kreplica.formats import codecs
    _BOMBS["zstd-1GiB"] = _zstd_rle(8192, None)
    _BOMBS["zstd-declares-1TiB"] = _zstd_rle(2, 1 << 40)
    _BOMBS["zstd-declares-4GiB-rle"] = _zstd_rle(64, 1 << 32)
    _BOMBS["gzip-48MiB"] = _gzip_zeros(48 << 20)
    g = bytearray(_gzip_zeros(1 << 20))
    g[-4:] = b"\xff\xff\xff\xff"  # ISIZE declares 4 GiB
    _BOMBS["gzip-isize-4GiB"] = bytes(g)
    raw = bytes(cramjam.snappy.compress_raw(bytes(64 * 1024)))
    _BOMBS["snappy-raw"] = raw
    _BOMBS["snappy-declares-4GiB"] = b"\xff\xff\xff\xff\x0f" + raw[3:]
    framed = bytearray(codecs.SNAPPY_HEADER.pack(codecs.SNAPPY_MAGIC, 1, 1))
    for _ in range(256):
        framed += struct.pack(">i", len(raw)) + raw
    _BOMBS["snappy-16MiB"] = bytes(framed)
    block = bytes(cramjam.lz4.compress_block(bytes(4 << 20), store_size=False))
    hdr = struct.pack("<I", codecs.LZ4_MAGIC) + bytes((0x60, 0x70))
    hdr += bytes((codecs.lz4_header_checksum(hdr[4:]),))
    _BOMBS["lz4-16MiB"] = hdr + (struct.pack("<I", len(block)) + block) * 4 + b"\x00" * 4
    hdr2 = struct.pack("<I", codecs.LZ4_MAGIC) + bytes((0x68, 0x70)) + struct.pack("<Q", 1 << 60)
    hdr2 += bytes((codecs.lz4_header_checksum(hdr2[4:]),))
    _BOMBS["lz4-declares-2^60"] = hdr2 + struct.pack("<I", len(block)) + block + b"\x00" * 4
    return _BOMBS


CODEC_OF = {"zstd": 4, "gzip": 1, "snappy": 2, "lz4": 3}


def bomb_batch(data: bytes, rng: random.Random) -> bytes:
    """Insert (or append) a batch whose compressed payload is a bomb, v2 or legacy."""
    from kreplica.formats.log import default_records, legacy_records
    name, payload = rng.choice(sorted(bombs().items()))
    codec = CODEC_OF[name.split("-")[0]]
    magic = rng.choice((2, 2, 1, 0)) if codec != 4 else 2
    if magic == 2:
        count = rng.choice((1, 15, 20_000_000, 0x7FFFFFFF, 150_000_000))
        body = struct.pack(">hiqqqhii", codec, max(count - 1, 0), 0, 0, -1, -1, -1, count) + payload
        from kreplica.formats.checksums import crc32c
        batch = struct.pack(">qiib", 0, 4 + 1 + 4 + len(body), 0, 2) + struct.pack(">I", crc32c(body)) + body
    else:
        batch = legacy_records.build_message(0, None, payload, magic=magic, compression=codec)
    fr = frames(data)
    if fr and rng.random() < 0.5:
        pos, _ = rng.choice(fr)
        return data[:pos] + batch + data[pos:]
    return data + batch


def nested_wrapper(data: bytes, rng: random.Random) -> bytes:
    """A legacy wrapper whose value holds another compressed wrapper, ``depth`` levels deep."""
    from kreplica.formats import codecs
    from kreplica.formats.log import legacy_records
    magic = rng.choice((0, 1))
    codec = rng.choice((1, 2, 3))
    depth = rng.choice((2, 3, 50, 500))
    entry = legacy_records.build_message(0, b"k", b"v" * rng.randrange(64), magic=magic)
    for level in range(depth):
        entry = legacy_records.build_message(level, None, codecs.compress(codec, entry, magic=magic),
                                             magic=magic, compression=codec)
        if len(entry) > 200_000:
            break
    return data + entry


def crc_fixed(mutator):
    def mutate(data: bytes, rng: random.Random) -> bytes:
        out = mutator(data, rng)
        return _crc_fix(out) if rng.random() < 0.5 else out
    mutate.__name__ = mutator.__name__
    return mutate


SEGMENT = tuple(crc_fixed(m) for m in GENERIC + (batch_field, batch_field, batch_field, wrong_magic, legacy_codec,
                                                 drop_batch)) + (bomb_batch, nested_wrapper)


# -- ZooKeeper ------------------------------------------------------------------------------------


def zk_header(data: bytes, rng: random.Random) -> bytes:
    """The file magic, version or dbid wrong; or a jute length (vector count, buffer length) at an
    int boundary set to an extreme."""
    if rng.random() < 0.3 and len(data) >= 16:
        off, fmt = rng.choice(((0, ">i"), (4, ">i"), (8, ">q")))
        return _put(data, fmt, off, rng.choice(INT_EXTREMES if fmt == ">i" else LONG_EXTREMES))
    return int_extreme(data, rng)


def zk_recompress(data: bytes, rng: random.Random) -> bytes:
    """Wrap the (already mutated) stream as a gzip or snappy-java snapshot, or a bomb of either."""
    from kreplica.formats.zookeeper import snapshot as zs
    if rng.random() < 0.2:
        return rng.choice((bombs()["gzip-48MiB"], bombs()["gzip-isize-4GiB"], bombs()["snappy-16MiB"]))
    return zs.build_gzip_stream(data) if rng.random() < 0.5 else zs.build_snappy_stream(data)


ZK = GENERIC + (zk_header, zk_header, zk_recompress)
INDEX = GENERIC + (drop_batch,)
TEXT = GENERIC + (text_piece, text_piece, number_swap, number_swap)
JSON = TEXT + (json_piece, json_piece)
BYTES = GENERIC

FAMILIES = {"segment": SEGMENT, "index": INDEX, "text": TEXT, "json": JSON, "zk": ZK, "bytes": BYTES}


def mutate(family: str, data: bytes, rng: random.Random, max_size: int) -> bytes:
    """One to three mutations of ``family``; the result is cut to ``max_size`` unless it is a bomb."""
    table = FAMILIES[family]
    out = data
    for _ in range(rng.choice((1, 1, 2, 3))):
        out = rng.choice(table)(out, rng)
    if len(out) > max_size:
        out = out[:max_size]
    return out
