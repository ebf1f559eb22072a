"""The output contract shared by every command (ARCHITECTURE.md, "Output contract").

``text`` is for people; ``json`` is one document (a single result object, or an array of the
stream's objects, written incrementally so memory stays flat); ``ndjson`` is one object a line;
``msgpack`` is the ndjson stream as a sequence of msgpack objects. With no ``--format``, text
goes to a terminal and ndjson everywhere else, so pipelines get data. Only data goes to stdout.

A file name that is not valid UTF-8 reaches kreplica as a string with lone surrogates (Python's
``surrogateescape``: byte 0xff becomes U+DCFF). Machine formats write such a name as the exact
bytes it has on disk, whatever the locale: json and ndjson encode with ``surrogateescape`` (a
stream whose handler is ``strict`` included), and msgpack packs it as a str holding those bytes.
Decode with ``surrogateescape`` to get the name back (``line.decode("utf-8",
"surrogateescape")``; ``msgpack.Unpacker(unicode_errors="surrogateescape")``). Text output
shows the bytes as ``\\xNN`` escapes (:mod:`kreplica.report.safe_text`).

One rule for the values of every machine format: never write what JSON cannot carry. A NaN or an
infinity has no JSON form, and none comes from evidence (decoders yield ints, strings and finite
floats), so one in output is kreplica's bug: json, ndjson and msgpack alike refuse the object
with the JSON encoder's ``ValueError`` ("Out of range float values are not JSON compliant"),
which the command runner reports as an internal error (exit 3).
"""

from __future__ import annotations

import enum
import io
import json
import math
import sys
from typing import IO, Any


class OutputFormat(str, enum.Enum):
    text = "text"
    json = "json"
    ndjson = "ndjson"
    msgpack = "msgpack"


class Payload(str, enum.Enum):
    """How byte payloads (keys, values, header values) appear in output."""

    base64 = "base64"
    hex = "hex"
    utf8 = "utf8"
    none = "none"


def resolve_format(requested: OutputFormat | None, stream: IO | None = None) -> OutputFormat:
    """The format to use: the requested one, else text on a terminal and ndjson otherwise."""
    if requested is not None:
        return requested
    stream = stream if stream is not None else sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return OutputFormat.text if tty else OutputFormat.ndjson


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_dumps_indented = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False).encode
#: The msgpack type byte of a float64, the only float msgpack.Packer writes by default.
_MSGPACK_FLOAT64 = b"\xcb"


def refuse_non_finite(obj: Any) -> None:
    """Raise the JSON encoder's ``ValueError`` if a NaN or an infinity lies anywhere in ``obj``
    (keys included), as json and ndjson output would (module docstring)."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                _dumps(value)  # raises, in the JSON encoder's words
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def dumps(obj: Any) -> str:
    """Compact JSON, as every machine format writes it.

    The standard library's encoder, not orjson: result objects may carry floats (znode
    ``data_json``, KRaft quotas) and orjson writes them differently (``1e16`` for ``1e+16``).
    Hot paths whose values can hold no float use :func:`dumps_str` instead.
    """
    return _dumps(obj)


def _orjson():
    try:
        import orjson
    except ImportError:  # a source checkout without it: same bytes, slower
        return None
    return orjson


_ORJSON = _orjson()
_APPEND_NEWLINE = _ORJSON.OPT_APPEND_NEWLINE if _ORJSON is not None else 0


def dumps_str(text: str, errors: str = "strict") -> bytes:
    """A JSON string literal as UTF-8 bytes, exactly what :func:`dumps` writes for it encoded
    with ``errors`` (a stream's error handler)."""
    if _ORJSON is not None:
        try:
            return _ORJSON.dumps(text)
        except TypeError:  # lone surrogates (undecodable file names): as the stream would write them
            pass
    return _dumps(text).encode("utf-8", errors)


#: How much machine output is gathered before one write.
CHUNK = 256 * 1024


class _TextConsole:
    """Builds the rich console for text output on first use (rich is imported only then)."""

    cls = None

    @classmethod
    def make(cls, stream: IO | None, soft_wrap: bool):
        if cls.cls is None:
            from rich.console import Console

            class _Console(Console):
                def on_broken_pipe(self) -> None:
                    # rich's own handler exits 1; a closed stdout is a normal end (exit 0,
                    # silent), which the command runner does for a BrokenPipeError
                    self.quiet = True
                    raise BrokenPipeError(32, "Broken pipe")

            cls.cls = _Console
        return cls.cls(file=stream if stream is not None else sys.stdout, highlight=False, soft_wrap=soft_wrap)


def text_console(stream: IO | None = None, *, soft_wrap: bool = False):
    """The console every text report prints to: stdout (or ``stream``), no highlighting, as wide
    as the terminal (``COLUMNS``, else 80 when there is none), a line longer than that wrapped
    at spaces (reports lay out their own lines with :mod:`kreplica.report.text_layout`; with
    ``soft_wrap=True`` rich leaves long lines as they are); a closed pipe raises
    :class:`BrokenPipeError` for the runner instead of rich's exit 1."""
    return _TextConsole.make(stream, soft_wrap)


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
            raise ValueError("text output is rendered by the command's report (text_console), not an Emitter")
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
            self.write_block(self._encode(_dumps(obj) + "\n"))
            return
        if fmt is OutputFormat.msgpack:
            data = self._packer.pack(obj)
            if _MSGPACK_FLOAT64 in data:  # NOTE: one byte search per object; the walk only where a float may be
                refuse_non_finite(obj)
            self.write_block(data)
        elif self._single:
            if self._count:
                raise ValueError("a single-document command emitted two objects")
            refuse_non_finite(obj)  # in the compact encoder's words (the indenting one adds the value)
            self.write_block(self._encode(_dumps_indented(obj)), count=0)
        else:
            self.write_block(self._encode(("[\n" if self._count == 0 else ",\n") + _dumps(obj)), count=0)
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
        if _ORJSON is None or not self.utf8 or fmt is OutputFormat.msgpack or self._single:
            self.emit(obj)
            return
        try:
            data = _ORJSON.dumps(obj, option=_APPEND_NEWLINE) if fmt is OutputFormat.ndjson else _ORJSON.dumps(obj)
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


def write_objects(objs, fmt: OutputFormat, render) -> None:
    """Write result objects: ``render(obj, console)`` each for text, the machine format otherwise."""
    if fmt is OutputFormat.text:
        console = text_console()
        for obj in objs:
            render(obj, console)
        return
    emitter = Emitter(fmt)
    for obj in objs:
        emitter.emit(obj)
    emitter.close()
