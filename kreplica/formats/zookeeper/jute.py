"""Jute, ZooKeeper's binary record encoding: the primitives every snapshot and txn log is made of.

Sources (apache/zookeeper, tag ``release-3.8.0-1``): ``zookeeper-jute/src/main/java/org/apache/
jute/BinaryInputArchive.java`` and ``BinaryOutputArchive.java``; the records themselves are
declared in ``zookeeper-jute/src/main/resources/zookeeper.jute``.

Jute is ``java.io.DataOutput`` with no tags, names or framing: a record is its fields in
declaration order, nested records inline, everything big-endian::

    byte     => 1 byte
    boolean  => 1 byte (written 0/1; any non-zero reads as true)
    int      => 4 bytes, signed
    long     => 8 bytes, signed
    ustring  => int length, then UTF-8 bytes; length -1 = null
    buffer   => int length, then raw bytes; length -1 = null, 0 = empty
    vector<T> => int count (-1 = null), then count x T

The writer encodes each UTF-16 code unit separately (CESU-8 for characters outside the BMP),
so strings are decoded with replacement rather than refused. ZooKeeper rejects lengths above
``jute.maxbuffer`` + extrasize (about 2 MiB by default); an offline reader must be at least as
lenient, so here the only bound is the bytes actually present: a declared length is checked
against what remains *before* anything is sliced or allocated, so a length of 2^31-1 in a
64-byte file is a :class:`Truncated` error, never a 2 GiB allocation.
"""

from __future__ import annotations

import struct

from kreplica.formats.errors import Malformed, Truncated

INT = struct.Struct(">i")
LONG = struct.Struct(">q")
BYTE = struct.Struct(">b")


class JuteReader:
    """A cursor over a buffer that knows where it is in the file.

    ``base`` is the absolute file (or stream) offset of ``buf[0]``, so every error carries the
    absolute position of the field that failed and the label the caller gave it. Reads never
    go past ``end``.
    """

    __slots__ = ("buf", "pos", "end", "base", "path")

    def __init__(self, buf, *, path: str | None = None, base: int = 0, start: int = 0,
                 end: int | None = None) -> None:
        self.buf = buf
        self.pos = start
        self.end = len(buf) if end is None else end
        self.base = base
        self.path = path

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    @property
    def position(self) -> int:
        """Absolute position of the next byte to read."""
        return self.base + self.pos

    def need(self, n: int, field: str) -> None:
        """Raise :class:`Truncated` (naming ``field``) unless ``n`` more bytes are present."""
        if n > self.end - self.pos:
            raise Truncated(f"needs {n} bytes but only {self.end - self.pos} remain",
                            path=self.path, position=self.base + self.pos, field=field,
                            expected=n, actual=self.end - self.pos)

    def unpack(self, st: struct.Struct, field: str) -> tuple:
        """A fixed-size group of fields in one ``unpack_from`` (headers, stats)."""
        self.need(st.size, field)
        values = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return values

    def byte(self, field: str) -> int:
        self.need(1, field)
        (v,) = BYTE.unpack_from(self.buf, self.pos)
        self.pos += 1
        return v

    def boolean(self, field: str) -> bool:
        return self.byte(field) != 0

    def int(self, field: str) -> int:
        self.need(4, field)
        (v,) = INT.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def long(self, field: str) -> int:
        self.need(8, field)
        (v,) = LONG.unpack_from(self.buf, self.pos)
        self.pos += 8
        return v

    def _length(self, field: str) -> int:
        at = self.base + self.pos
        n = self.int(field)
        if n < -1:
            raise Malformed("negative length", path=self.path, position=at, field=field,
                            expected=">= -1", actual=n)
        if n > self.end - self.pos:
            raise Truncated(f"declared length {n} runs past the end ({self.end - self.pos} bytes remain)",
                            path=self.path, position=at, field=field, expected=n,
                            actual=self.end - self.pos)
        return n

    def buffer(self, field: str) -> bytes | None:
        """A jute ``buffer``: ``None`` for length -1 (null), ``b""`` for 0."""
        n = self._length(field)
        if n < 0:
            return None
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def ustring(self, field: str) -> str | None:
        """A jute ``ustring``: ``None`` for length -1; bad UTF-8 is replaced, not refused."""
        n = self._length(field)
        if n < 0:
            return None
        out = bytes(self.buf[self.pos:self.pos + n]).decode("utf-8", "replace")
        self.pos += n
        return out

    def vector_count(self, field: str, min_element_size: int = 1) -> int:
        """A vector's element count (-1 = null), refused when the elements cannot fit.

        Every element takes at least ``min_element_size`` bytes, so a count larger than the
        remaining bytes allow is impossible and is reported before any loop runs.
        """
        at = self.base + self.pos
        n = self.int(field)
        if n < -1:
            raise Malformed("negative vector count", path=self.path, position=at, field=field,
                            expected=">= -1", actual=n)
        if n > 0 and n * min_element_size > self.end - self.pos:
            raise Truncated(f"vector of {n} elements cannot fit in the {self.end - self.pos} bytes left",
                            path=self.path, position=at, field=field)
        return n


# -- writer (fixtures and tests) ------------------------------------------------------------


def build_int(v: int) -> bytes:
    return INT.pack(v)


def build_long(v: int) -> bytes:
    return LONG.pack(v)


def build_boolean(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def build_buffer(data: bytes | None) -> bytes:
    """``BinaryOutputArchive.writeBuffer``: -1 for null."""
    if data is None:
        return INT.pack(-1)
    return INT.pack(len(data)) + bytes(data)


def build_ustring(s: str | None) -> bytes:
    """``BinaryOutputArchive.writeString`` for BMP text (UTF-8 of each code unit)."""
    if s is None:
        return INT.pack(-1)
    b = s.encode("utf-8", "surrogatepass")
    return INT.pack(len(b)) + b
