"""Kafka's compression codecs, with the exact framing Kafka writes and reads.

Sources: ``clients/src/main/java/org/apache/kafka/common/compress/`` (apache/kafka 3.9:
``GzipCompression``, ``SnappyCompression``, ``Lz4BlockInputStream``/``Lz4BlockOutputStream``,
``ZstdCompression``) and ``xerial/snappy-java`` 1.1.10.5 (``SnappyInputStream``).

=====  ======  =========================================================================
 id    name    framing on disk
=====  ======  =========================================================================
 0     none    raw
 1     gzip    RFC 1952 member(s) from ``java.util.zip.GZIPOutputStream`` (OS byte 0xff on JDK 16+)
 2     snappy  xerial stream: ``82 'SNAPPY' 00``, int32 version, int32 compat, then
               (int32 BE length, raw snappy block)*; un-framed raw snappy is accepted too
 3     lz4     LZ4 frame subset: magic 0x184D2204 LE, FLG, BD, HC, (uint32 LE size,
               block)*, end mark 0; HC = (XXH32(FLG BD) >> 8) & 0xff, except that magic 0
               messages carry HC over magic+FLG+BD (KAFKA-3160) and Kafka skips the check
 4     zstd    standard zstd frame(s) (v2 batches only)
=====  ======  =========================================================================

Decompression is bounded relative to the size the batch declares for its compressed bytes
(:func:`inflation_limit`): at most :data:`MAX_INFLATION_RATIO` times that size, never less than
:data:`MIN_INFLATION_ALLOWANCE` and never more than :data:`MAX_INFLATED_BYTES`. A payload that
would inflate (or declares that it inflates: a zstd frame content size, a snappy block length)
past its limit is a decompression bomb: the bytes up to the limit are returned with an error,
which the record readers turn into a ``decompression_error`` finding; nothing larger is ever
allocated. When the data breaks part way, the bytes recovered before the break are returned with
the error, as Kafka's streaming readers would already have handed out the records in them.

Only what the codec libraries raise for bad data becomes an error value (:data:`LIBRARY_ERRORS`,
and :data:`ZSTD_STREAM_ERRORS` for cramjam's streaming zstd decoder); anything else (a
``MemoryError``, a bug in kreplica) propagates, and the command runner reports it as an internal
error (exit 3) instead of calling the evidence damaged.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import cramjam
from xxhash import xxh32_intdigest as xxh32  # XXH32 (LZ4 frame header and block checksums)

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

#: The most bytes one batch may inflate to, whatever its size, before kreplica calls it a bomb.
MAX_INFLATED_BYTES = 256 * 1024 * 1024
#: A batch may always inflate to this much: far above what Kafka's defaults produce (a producer's
#: ``batch.size`` is 16 KiB, ``max.request.size`` 1 MiB of uncompressed records).
MIN_INFLATION_ALLOWANCE = 16 * 1024 * 1024
#: Beyond the allowance, a batch may inflate to this many times its compressed size. Real record
#: data compresses 2-20x; 256x only admits runs of nearly identical bytes (deflate's ceiling is
#: 1032x, lz4's 255x; a zstd frame of RLE blocks reaches 32768x, 1 GiB from 32 KiB).
MAX_INFLATION_RATIO = 256


#: What the codec libraries raise for data they cannot inflate: ``zlib`` (gzip) and cramjam's
#: one-shot decoders (snappy, lz4 blocks, zstd), whatever the damage (tests/formats/test_codecs.py
#: feeds each damaged input and checks).
LIBRARY_ERRORS = (zlib.error, cramjam.DecompressionError)
#: cramjam's streaming zstd decoder reports bad data as an ``OSError`` (Rust's ``io::Error``).
ZSTD_STREAM_ERRORS = (OSError, cramjam.DecompressionError)


class _Refused(Exception):
    """A snappy block kreplica refuses before inflating it (an impossible declared length)."""


class _PastLimit(Exception):
    """Inflating a snappy block would pass the payload's limit."""


def inflation_limit(compressed_size: int) -> int:
    """How many bytes a payload of ``compressed_size`` compressed bytes may inflate to."""
    return min(MAX_INFLATED_BYTES, max(MIN_INFLATION_ALLOWANCE, MAX_INFLATION_RATIO * compressed_size))

SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_HEADER = struct.Struct(
    ">"
    "8s"  # magic
    "i"   # version
    "i"   # min_compatible_version
)
SNAPPY_CHUNK_LENGTH = struct.Struct(">i")  # before each raw snappy block
SNAPPY_BLOCK_SIZE = 32 * 1024           # SnappyOutputStream default block size (Kafka 0.11+)
SNAPPY_MAX_CHUNK = 512 * 1024 * 1024    # SnappyInputStream refuses larger chunks

LZ4_MAGIC = 0x184D2204
LZ4_FRAME_START = struct.Struct(
    "<"
    "I"  # magic
    "B"  # FLG
    "B"  # BD
)  # then the content size when FLG says so, then HC
LZ4_DESCRIPTOR_OFFSET = struct.calcsize("<I")  # 4: the descriptor HC covers starts after the magic
LZ4_CONTENT_SIZE = struct.Struct("<Q")
LZ4_WORD = struct.Struct("<I")  # a block size (or the end mark 0), a block or content checksum
LZ4_FLG_BLOCK_INDEPENDENCE = 0x20
LZ4_FLG_BLOCK_CHECKSUM = 0x10
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_FLG_CONTENT_CHECKSUM = 0x04
LZ4_FLG_RESERVED = 0x03
LZ4_FLG = 0x60        # version 01, block independence, no checksums, no content size
LZ4_BD = 0x40         # max block size code 4 = 64 KiB
LZ4_BLOCK_SIZE = 64 * 1024
LZ4_UNCOMPRESSED_BIT = 0x80000000

GZIP_MEMBER_HEADER = struct.Struct(
    "<"
    "2s"  # ID1 ID2
    "B"   # CM
    "B"   # FLG
    "I"   # MTIME
    "B"   # XFL
    "B"   # OS
)  # then the optional fields FLG names, in this order: FEXTRA, FNAME, FCOMMENT, FHCRC (RFC 1952 §2.3)
GZIP_ID = b"\x1f\x8b"
GZIP_DEFLATE = 8  # CM
GZIP_FHCRC, GZIP_FEXTRA, GZIP_FNAME, GZIP_FCOMMENT = 0x02, 0x04, 0x08, 0x10
GZIP_XLEN = struct.Struct("<H")   # FEXTRA: the length of the extra field
GZIP_CRC16 = struct.Struct("<H")  # FHCRC
GZIP_TRAILER = struct.Struct(
    "<"
    "I"  # CRC32 of the inflated data
    "I"  # ISIZE: its length modulo 2^32
)
GZIP_HEADER_JDK = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # MTIME 0, XFL 0, OS 0xff (JDK 16+)


@dataclass(frozen=True, slots=True)
class Inflated:
    """What decompressing a payload gave: the bytes, and the error that ended it early if any.

    ``data`` holds every byte recovered before ``error``; ``lz4_broken_checksum`` is set when an
    LZ4 frame carries the magic-0 header checksum (normal for magic 0, damage for magic 1/2).
    """

    data: bytes
    error: str | None = None
    lz4_broken_checksum: bool = False


def decompress(codec: int, payload, *, magic: int = 2, limit: int | None = None) -> Inflated:
    """Inflate ``payload`` compressed with ``codec`` as Kafka's reader for ``magic`` would.

    Never raises for bad data: the error is returned in :class:`Inflated` together with the bytes
    recovered before it. Output beyond ``limit`` (by default :func:`inflation_limit` of the
    payload's size) is an error, not an allocation.
    """
    payload = bytes(payload)
    if limit is None:
        limit = inflation_limit(len(payload))
    try:
        if codec == NONE:
            return Inflated(payload)
        if codec == GZIP:
            return _gunzip(payload, limit)
        if codec == SNAPPY:
            return _unsnappy(payload, limit)
        if codec == LZ4:
            return _unlz4(payload, magic, limit)
        if codec == ZSTD:
            return _unzstd(payload, limit)
    except LIBRARY_ERRORS as exc:  # a library's own error where no reader above expected one: still bad data
        return Inflated(b"", f"{CODEC_NAMES.get(codec, codec)} data does not decompress: {exc}")
    return Inflated(b"", f"unknown compression codec id {codec}")


#: The words every "past the limit" error starts with (the readers recognise a bomb by them).
BOMB_ERROR = "decompression bomb"


def _too_big(limit: int) -> str:
    return f"{BOMB_ERROR}: inflates past the {limit}-byte limit for this batch"


def is_bomb(error: str | None) -> bool:
    """Whether an :class:`Inflated` error says the payload inflates past its limit."""
    return error is not None and error.startswith(BOMB_ERROR)


GZIP_INPUT_CHUNK = 512  # GZIPInputStream's default input buffer


def _gzip_header_parses(data: bytes) -> bool:
    """Whether ``data`` starts with a gzip member header ``GZIPInputStream.readHeader`` accepts
    (magic, deflate, and the optional fields present); after a member Java ignores anything else."""
    if len(data) < GZIP_MEMBER_HEADER.size:
        return False
    ident, method, flags, _, _, _ = GZIP_MEMBER_HEADER.unpack_from(data, 0)
    if ident != GZIP_ID or method != GZIP_DEFLATE:
        return False
    pos = GZIP_MEMBER_HEADER.size
    if flags & GZIP_FEXTRA:
        if len(data) < pos + GZIP_XLEN.size:
            return False
        pos += GZIP_XLEN.size + GZIP_XLEN.unpack_from(data, pos)[0]
    for bit in (GZIP_FNAME, GZIP_FCOMMENT):  # zero-terminated
        if flags & bit:
            nul = data.find(b"\x00", pos)
            if nul < 0:
                return False
            pos = nul + 1
    if flags & GZIP_FHCRC:
        pos += GZIP_CRC16.size
    return pos <= len(data)


def _gunzip(payload: bytes, limit: int) -> Inflated:
    # GZIPInputStream reads concatenated members; bytes after a member that are not another
    # gzip header are ignored, as Java does.
    whole = _gunzip_whole(payload, limit)
    return whole if whole is not None else _gunzip_replayable(payload, limit)


def _gunzip_whole(payload: bytes, limit: int) -> Inflated | None:
    """The members inflated in one call each, or ``None`` unless every member ends cleanly within
    ``limit`` (then :func:`_gunzip_replayable` says exactly what went wrong and keeps what came
    before). NOTE: the common case; the replayable path snapshots the inflater every 512 bytes
    and took 590 µs for a 16 KiB batch against 60 µs here (bench/README.md)."""
    pieces = []
    total = 0
    data = payload
    while True:
        d = zlib.decompressobj(31)
        try:
            piece = d.decompress(data, limit + 1 - total)
        except zlib.error:
            return None
        total += len(piece)
        pieces.append(piece)
        if total > limit:  # a bomb: what the replayable path would say, without inflating it twice
            whole = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            del pieces, piece
            return Inflated(whole[:limit], _too_big(limit))
        if d.unconsumed_tail or not d.eof:
            return None
        data = d.unused_data
        if not _gzip_header_parses(data):
            return Inflated(pieces[0] if len(pieces) == 1 else b"".join(pieces))


def _gunzip_replayable(payload: bytes, limit: int) -> Inflated:
    # Input is fed in small chunks, and a chunk that fails is replayed byte by byte, so the
    # bytes inflated before the damage are kept (zlib discards the output of a call that fails).
    out = bytearray()
    data = payload
    pos = 0
    d = zlib.decompressobj(31)
    while True:
        if d.eof:
            rest = d.unused_data + data[pos:]
            if _gzip_header_parses(rest):
                data, pos, d = rest, 0, zlib.decompressobj(31)
                continue
            return Inflated(bytes(out))
        if pos >= len(data):
            return Inflated(bytes(out), "gzip stream ends before its end marker (Unexpected end of ZLIB input stream)")
        chunk = data[pos:pos + GZIP_INPUT_CHUNK]
        pos += len(chunk)
        snapshot = d.copy()
        try:
            piece = d.decompress(chunk, limit + 1 - len(out))
        except zlib.error as exc:
            for i in range(len(chunk)):
                try:
                    out += snapshot.decompress(chunk[i:i + 1], limit + 1 - len(out))
                except zlib.error:
                    break
                if len(out) > limit:
                    break
            del out[limit:]
            return Inflated(bytes(out), f"gzip data does not decompress: {exc}")
        out += piece
        if len(out) > limit or d.unconsumed_tail:
            del out[limit:]
            return Inflated(bytes(out), _too_big(limit))


#: The most a snappy block can expand: a 3-byte copy element yields at most 64 bytes.
SNAPPY_MAX_RATIO = 32


def _snappy_block(block: bytes, room: int) -> bytes:
    n = cramjam.snappy.decompress_raw_len(block)
    if n > room:
        raise _PastLimit
    if n > SNAPPY_MAX_RATIO * len(block) + 64:
        raise _Refused(f"the block declares {n} bytes, more than {len(block)} snappy bytes can hold")
    buf = bytearray(n)
    cramjam.snappy.decompress_raw_into(block, buf)
    return bytes(buf)


def _unsnappy(payload: bytes, limit: int) -> Inflated:
    if not payload:
        return Inflated(b"", "snappy: Cannot decompress empty stream")
    if len(payload) < SNAPPY_HEADER.size or payload[:len(SNAPPY_MAGIC)] != SNAPPY_MAGIC:
        # SnappyInputStream decodes un-framed input as one raw block
        try:
            return Inflated(_snappy_block(payload, limit))
        except _PastLimit:
            return Inflated(b"", _too_big(limit))
        except (_Refused, cramjam.DecompressionError) as exc:
            return Inflated(b"", f"raw snappy block does not decompress: {exc}")
    out = bytearray()
    pos = SNAPPY_HEADER.size
    end = len(payload)
    while end - pos >= SNAPPY_CHUNK_LENGTH.size:
        # a concatenated stream's header, where the next chunk length would be
        if payload[pos:pos + SNAPPY_CHUNK_LENGTH.size] == SNAPPY_MAGIC[:SNAPPY_CHUNK_LENGTH.size]:
            if end - pos < SNAPPY_HEADER.size:
                return Inflated(bytes(out), "snappy: concatenated stream header is cut short")
            _, version, _ = SNAPPY_HEADER.unpack_from(payload, pos)
            if version < 1:
                return Inflated(bytes(out), f"snappy: incompatible stream version {version}")
            pos += SNAPPY_HEADER.size
            continue
        (length,) = SNAPPY_CHUNK_LENGTH.unpack_from(payload, pos)
        pos += SNAPPY_CHUNK_LENGTH.size
        if length < 0 or length > SNAPPY_MAX_CHUNK:
            return Inflated(bytes(out), f"snappy: invalid chunk length {length}")
        if end - pos < length:
            return Inflated(bytes(out), f"snappy: chunk of {length} bytes is cut short ({end - pos} remain)")
        try:
            out += _snappy_block(payload[pos:pos + length], limit - len(out))
        except _PastLimit:
            return Inflated(bytes(out), _too_big(limit))
        except (_Refused, cramjam.DecompressionError) as exc:
            return Inflated(bytes(out), f"snappy chunk at byte {pos} does not decompress: {exc}")
        pos += length
    return Inflated(bytes(out))


def lz4_header_checksum(descriptor: bytes) -> int:
    """The LZ4 frame HC byte: second byte of XXH32 over the frame descriptor."""
    return (xxh32(descriptor) >> 8) & 0xFF


def _unlz4(payload: bytes, magic: int, limit: int) -> Inflated:
    end = len(payload)
    if end < LZ4_WORD.size or LZ4_WORD.unpack_from(payload, 0)[0] != LZ4_MAGIC:
        return Inflated(b"", "lz4: Stream unsupported (invalid magic bytes)")
    if end < LZ4_FRAME_START.size + 1:  # + HC
        return Inflated(b"", "lz4: Stream ended prematurely")
    _, flg, bd = LZ4_FRAME_START.unpack_from(payload, 0)
    if (flg >> 6) != 1 or not flg & LZ4_FLG_BLOCK_INDEPENDENCE or flg & LZ4_FLG_RESERVED:
        return Inflated(b"", "lz4: Stream unsupported (FLG version, block independence or reserved bits)")
    if bd & 0x8F or not 4 <= (bd >> 4) & 0x07 <= 7:
        return Inflated(b"", "lz4: Stream unsupported (BD reserved bits or block size code)")
    max_block = 1 << (2 * ((bd >> 4) & 0x07) + 8)
    block_checksum = bool(flg & LZ4_FLG_BLOCK_CHECKSUM)
    content_size = bool(flg & LZ4_FLG_CONTENT_SIZE)
    content_checksum = bool(flg & LZ4_FLG_CONTENT_CHECKSUM)
    pos = LZ4_FRAME_START.size
    if content_size:
        pos += LZ4_CONTENT_SIZE.size
    if end < pos + 1:
        return Inflated(b"", "lz4: Stream ended prematurely")
    hc = payload[pos]
    expected = lz4_header_checksum(payload[LZ4_DESCRIPTOR_OFFSET:pos])
    broken = False
    if hc != expected:
        if magic == 0 and hc == lz4_header_checksum(payload[0:pos]):
            broken = True  # KAFKA-3160: magic-0 frames checksum magic+FLG+BD; Kafka skips the check
        elif magic != 0:
            return Inflated(b"", "lz4: Stream frame descriptor corrupted")
    pos += 1
    out = bytearray()
    scratch = bytearray(max_block)
    word = LZ4_WORD.size
    while True:
        if end - pos < word:
            return Inflated(bytes(out), "lz4: Stream ended prematurely", broken)
        (size,) = LZ4_WORD.unpack_from(payload, pos)
        pos += word
        raw = bool(size & LZ4_UNCOMPRESSED_BIT)
        size &= ~LZ4_UNCOMPRESSED_BIT  # Lz4BlockInputStream masks the incompressible bit before testing for the end mark
        if size == 0:
            if content_checksum:
                if end - pos < word:
                    return Inflated(bytes(out), "lz4: Stream ended prematurely", broken)
                pos += word  # Kafka consumes the content checksum without verifying it
            return Inflated(bytes(out), None, broken)
        if size > max_block:
            return Inflated(bytes(out), f"lz4: Block size {size} exceeded max: {max_block}", broken)
        if end - pos < size + (word if block_checksum else 0):
            return Inflated(bytes(out), "lz4: Stream ended prematurely", broken)
        block = payload[pos:pos + size]
        pos += size
        if block_checksum:
            (stored,) = LZ4_WORD.unpack_from(payload, pos)
            pos += word
            if stored != xxh32(block):
                return Inflated(bytes(out), "lz4: Block checksum mismatch", broken)
        if raw:
            data = block
        else:
            try:
                n = cramjam.lz4.decompress_block_into(block, scratch)
            except cramjam.DecompressionError as exc:
                return Inflated(bytes(out), f"lz4: block at byte {pos - size} does not decompress: {exc}", broken)
            data = scratch[:n]
        if len(out) + len(data) > limit:
            return Inflated(bytes(out), _too_big(limit), broken)
        out += data


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # 0xFD2FB528, little-endian


def _zstd_content_size(payload: bytes) -> int | None:
    """The frame content size a zstd frame header declares, if any (RFC 8878 §3.1.1.1)."""
    descriptor_at = len(ZSTD_MAGIC)
    if len(payload) < descriptor_at + 2 or payload[:descriptor_at] != ZSTD_MAGIC:
        return None
    fhd = payload[descriptor_at]  # Frame_Header_Descriptor
    fcs_flag = fhd >> 6
    single = (fhd >> 5) & 1
    did = fhd & 3
    # then Window_Descriptor (absent for a single segment), Dictionary_ID, Frame_Content_Size
    pos = descriptor_at + 1 + (0 if single else 1) + (0, 1, 2, 4)[did]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0 or len(payload) < pos + size:
        return None
    value = int.from_bytes(payload[pos:pos + size], "little")
    return value + 256 if size == 2 else value


def _unzstd(payload: bytes, limit: int) -> Inflated:
    # a frame's declared content size is not trusted for allocation (a 16-byte frame may claim 2^62
    # bytes): start from the compressed size and grow geometrically up to the limit
    declared = _zstd_content_size(payload)
    room = min(limit, max(64 * 1024, 8 * len(payload)))
    if declared is not None and declared <= 64 * len(payload):
        room = min(limit, max(room, declared))
    while True:
        buf = bytearray(room)
        try:
            n = cramjam.zstd.decompress_into(payload, buf)
            return Inflated(bytes(memoryview(buf)[:n]))
        except cramjam.DecompressionError as exc:
            # the one signal cramjam gives that the output buffer, not the data, ran out
            if "whole buffer" not in str(exc):
                return Inflated(_zstd_partial(payload, room), f"zstd data does not decompress: {exc}")
        if room >= limit:
            return Inflated(b"", _too_big(limit))
        room = min(limit, room * 4)


def _zstd_partial(payload: bytes, room: int) -> bytes:
    """The bytes a streaming zstd decoder yields before the damage (the bounded decode above
    failed on corruption, not on size, so they fit in ``room``)."""
    d = cramjam.zstd.Decompressor()
    try:
        d.decompress(payload)
    except ZSTD_STREAM_ERRORS:
        pass  # what was decoded before the damage is still flushed below
    try:
        return bytes(d.flush())[:room]
    except ZSTD_STREAM_ERRORS:
        return b""


# -- writers (fixtures and salvage export) -------------------------------------------------


def compress(codec: int, data: bytes, *, magic: int = 2) -> bytes:
    """Compress ``data`` with the framing Kafka's Java writers produce for ``magic``."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(data) + c.flush()
        return GZIP_HEADER_JDK + body + GZIP_TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)
    if codec == SNAPPY:
        out = bytearray(SNAPPY_HEADER.pack(SNAPPY_MAGIC, 1, 1))
        for i in range(0, len(data), SNAPPY_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[i:i + SNAPPY_BLOCK_SIZE]))
            out += SNAPPY_CHUNK_LENGTH.pack(len(block)) + block
        return bytes(out)
    if codec == LZ4:
        magic_bytes = LZ4_WORD.pack(LZ4_MAGIC)
        descriptor = bytes((LZ4_FLG, LZ4_BD))
        hc = lz4_header_checksum(magic_bytes + descriptor if magic == 0 else descriptor)
        out = bytearray(magic_bytes + descriptor + bytes((hc,)))
        for i in range(0, len(data), LZ4_BLOCK_SIZE):
            block = data[i:i + LZ4_BLOCK_SIZE]
            packed = bytes(cramjam.lz4.compress_block(block, store_size=False))
            if len(packed) >= len(block):
                out += LZ4_WORD.pack(len(block) | LZ4_UNCOMPRESSED_BIT) + block
            else:
                out += LZ4_WORD.pack(len(packed)) + packed
        out += LZ4_WORD.pack(0)  # end mark
        return bytes(out)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data, 3))
    raise ValueError(f"unknown compression codec id {codec}")
