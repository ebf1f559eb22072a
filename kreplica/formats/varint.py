"""Kafka's variable-length integers (``ByteUtils``), byte-compatible in what they accept.

Source: ``clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java`` (apache/kafka 3.9).

* unsigned varint: base 128, low group first, high bit = more bytes follow; at most 5 bytes.
* varint: zigzag-mapped int32 (``(n << 1) ^ (n >> 31)``) then unsigned varint.
* varlong: zigzag-mapped int64 then unsigned varint; at most 10 bytes.

Decoding follows Kafka exactly: a 5th varint byte (10th varlong byte) with its high bit set is
"too long"; otherwise its excess bits are silently dropped, and non-minimal encodings are
accepted. Readers take ``(buffer, pos, end)`` and return ``(value, new_pos)``; running past
``end`` raises :class:`Truncated`, a too-long encoding :class:`Malformed`.
"""

from __future__ import annotations

from kreplica.formats.errors import Malformed, Truncated

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


def read_unsigned_varint(buf, pos: int, end: int, field: str = "unsigned_varint") -> tuple[int, int]:
    """An unsigned varint of at most 5 bytes, as ``ByteUtils.readUnsignedVarint``."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise Truncated("varint runs past the end of the data", position=pos, field=field)
        b = buf[pos]
        pos += 1
        if not b & 0x80:
            return (value | (b << shift)) & _MASK32, pos
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            raise Malformed("varint is too long: the high bit of its 5th byte is set", position=pos - 1, field=field)


def read_varint(buf, pos: int, end: int, field: str = "varint") -> tuple[int, int]:
    """A zigzag int32, as ``ByteUtils.readVarint``."""
    u, pos = read_unsigned_varint(buf, pos, end, field)
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf, pos: int, end: int, field: str = "varlong") -> tuple[int, int]:
    """A zigzag int64 of at most 10 bytes, as ``ByteUtils.readVarlong``."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise Truncated("varlong runs past the end of the data", position=pos, field=field)
        b = buf[pos]
        pos += 1
        if not b & 0x80:
            value = (value | (b << shift)) & _MASK64
            return (value >> 1) ^ -(value & 1), pos
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            raise Malformed("varlong is too long: the high bit of its 10th byte is set", position=pos - 1, field=field)


def build_unsigned_varint(value: int) -> bytes:
    """The shortest encoding of a uint32."""
    value &= _MASK32
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def build_varint(value: int) -> bytes:
    """The shortest encoding of an int32 (zigzag)."""
    return build_unsigned_varint(((value << 1) ^ (value >> 31)) & _MASK32)


def build_varlong(value: int) -> bytes:
    """The shortest encoding of an int64 (zigzag)."""
    u = ((value << 1) ^ (value >> 63)) & _MASK64
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)
