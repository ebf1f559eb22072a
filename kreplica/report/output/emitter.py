"""The one path machine output takes: json, ndjson and msgpack (ARCHITECTURE.md, "Output contract").

``json`` is one document (a single result object, or an array of the stream's objects, written
incrementally so memory stays flat); ``ndjson`` is one object a line; ``msgpack`` is the ndjson
stream as a sequence of msgpack objects. Only data goes to stdout; the values follow
:mod:`kreplica.report.output.encoding`.
"""

from __future__ import annotations

import io
import sys
from typing import IO

from kreplica.report.output.encoding import (
    MSGPACK_FLOAT64,
    ORJSON,
    ORJSON_APPEND_NEWLINE,
    encode_compact,
    encode_indented,
    refuse_non_finite,
)
from kreplica.report.output.formats import OutputFormat

#: How much machine output is gathered before one write.
CHUNK = 256 * 1024


class Emitter:
    """The one path machine output takes: json, ndjson and msgpack.

    ``single`` means the command produces one result object, which ``json`` writes as that
    object rather than an array. Call :meth:`close` once at the end.

    Output is gathered into blocks of :data:`CHUNK` bytes and written to stdout's binary
    buffer (``stream`` may be a binary or a text stream instead). Hot paths that build their own
    ndjson lines hand them over with :meth:`write_line` (str) or :meth:`write_block` (UTF-8
    bytes, any number of whole lines); :attr:`utf8` says whether bytes may be written as built.
    """

    def __init__(self, fmt: OutputFormat, stream: IO | None = None, *, single: bool = False) -> None:
        if fmt is OutputFormat.text:
            raise ValueError("text output is rendered by the command's text report (report.output.seam), not an Emitter")
        self.format = fmt
        self._single = single
        self._count = 0
        # output gathered for one write: a buffer allocated once and reused (see write_block)
        self._buffer = memoryview(bytearray(2 * CHUNK))
        self._pending_size = 0
        self._packer = None
        text = stream if stream is not None else sys.stdout
        self._encoding = getattr(text, "encoding", None) or "utf-8"
        # undecodable file names are written as their bytes, not refused (module docstring)
        errors = getattr(text, "errors", None) or "strict"
        self._errors = "surrogateescape" if errors == "strict" else errors
        #: the error handler to encode hot-path text with (the stream's)
        self.errors = self._errors
        if stream is None:
            try:
                sys.stdout.flush()   # anything written through the text layer goes first
            except (OSError, ValueError):
                pass
            stream = getattr(sys.stdout, "buffer", sys.stdout)
        self._binary = not isinstance(stream, io.TextIOBase) and not hasattr(stream, "encoding")
        self._out = stream
        #: True when ndjson bytes built as UTF-8 are what this stream would write
        self.utf8 = self._encoding.replace("-", "").replace("_", "").lower() in ("utf8", "utf8sig") \
            and self._errors in ("strict", "surrogateescape")
        if fmt is OutputFormat.msgpack:
            import msgpack

            self._packer = msgpack.Packer(unicode_errors="surrogateescape")
            self._binary_required()

    def _binary_required(self) -> None:
        if not self._binary:
            raise ValueError("msgpack output needs a binary stream")

    def _encode(self, text: str) -> bytes:
        return text.encode(self._encoding, self._errors)

    def emit(self, obj: dict) -> None:
        """Write one object."""
        fmt = self.format
        if fmt is OutputFormat.ndjson:
            self.write_block(self._encode(encode_compact(obj) + "\n"))
            return
        if fmt is OutputFormat.msgpack:
            data = self._packer.pack(obj)
            if MSGPACK_FLOAT64 in data:  # NOTE: one byte search per object; the walk only where a float may be
                refuse_non_finite(obj)
            self.write_block(data)
        elif self._single:
            if self._count:
                raise ValueError("a single-document command emitted two objects")
            refuse_non_finite(obj)  # in the compact encoder's words (the indenting one adds the value)
            self.write_block(self._encode(encode_indented(obj)), count=0)
        else:
            self.write_block(self._encode(("[\n" if self._count == 0 else ",\n") + encode_compact(obj)), count=0)
        self._count += 1

    def emit_plain(self, obj: dict) -> None:
        """:meth:`emit` for an object known to hold no float: only str-keyed dicts, lists,
        tuples, strings, ints, bools and None. ndjson and json arrays then go through orjson,
        which writes such an object byte for byte as :func:`dumps` does (every non-surrogate
        code point and 64-bit int checked) several times faster; what orjson refuses (an int
        beyond 64 bits, a lone surrogate) and a stream that is not UTF-8 take :meth:`emit`.

        NOTE: for commands writing hundreds of thousands of small objects (``timeline``:
        bench/bench_timeline.py). A float would be written orjson's way (``1e16``, and a NaN
        as ``null`` instead of refused), hence not the default; checking every object for one
        would cost about three times orjson's own encoding.
        """
        fmt = self.format
        if ORJSON is None or not self.utf8 or fmt is OutputFormat.msgpack or self._single:
            self.emit(obj)
            return
        try:
            data = ORJSON.dumps(obj, option=ORJSON_APPEND_NEWLINE) if fmt is OutputFormat.ndjson else ORJSON.dumps(obj)
        except TypeError:
            self.emit(obj)
            return
        if fmt is OutputFormat.ndjson:
            self.write_block(data)
            return
        self.write_block(b"[\n" if self._count == 0 else b",\n", count=0)
        self.write_block(data, count=0)
        self._count += 1

    def write_line(self, line: str) -> None:
        """ndjson only: write a line already encoded as JSON text (it must end in a newline)."""
        self.write_block(self._encode(line))

    def write_block(self, data: bytes, count: int = 1) -> None:
        """Write encoded output (ndjson: whole lines; msgpack: whole objects).

        NOTE: blocks are gathered and written once :data:`CHUNK` bytes or more are pending: with
        ``PYTHONUNBUFFERED`` set, one write per line is one system call. They are gathered in
        one buffer allocated once (two chunks), and a block that does not fit (the records of a
        large batch) is written as it is, right after what was gathered: joining blocks into a
        new buffer for every write made the C allocator map fresh memory and fault it in each
        time, 18% of ``--records --payload base64`` (bench/README.md).
        """
        self._count += count
        size = len(data)
        used = self._pending_size
        end = used + size
        if end > 2 * CHUNK:   # what is gathered, then the block as it is: written at the same point
            self._flush_pending()
            self._write(data)
            return
        self._buffer[used:end] = data
        self._pending_size = end
        if end >= CHUNK:
            self._flush_pending()

    def _write(self, data) -> None:
        self._out.write(data if self._binary else bytes(data).decode(self._encoding, self._errors))

    def _flush_pending(self) -> None:
        if self._pending_size:
            self._write(self._buffer[:self._pending_size])
        self._pending_size = 0

    def close(self) -> None:
        """Finish the document (``json``) and flush."""
        if self.format is OutputFormat.json:
            if not self._single:
                self.write_block(b"[]\n" if self._count == 0 else b"\n]\n", count=0)
            else:
                self.write_block(b"\n", count=0)
        self._flush_pending()
        self._out.flush()
