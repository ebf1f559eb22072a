"""The output contract shared by every command (ARCHITECTURE.md, "Output contract").

``text`` is for people; ``json`` is one document (a single result object, or an array of the
stream's objects, written incrementally so memory stays flat); ``ndjson`` is one object a line;
``msgpack`` is the ndjson stream as a sequence of msgpack objects. With no ``--format``, text
goes to a terminal and ndjson everywhere else, so pipelines get data. Only data goes to stdout.
"""

from __future__ import annotations

import enum
import json
import sys
from typing import IO, Any

import msgpack


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


def dumps(obj: Any) -> str:
    """Compact JSON, as every machine format writes it."""
    return _dumps(obj)


#: How much machine output is gathered before one write.
CHUNK = 256 * 1024


class Emitter:
    """Writes machine output objects in one of the machine formats.

    ``single`` means the command produces one result object, which ``json`` writes as that
    object rather than an array. Call :meth:`close` once at the end.
    """

    def __init__(self, fmt: OutputFormat, stream: IO | None = None, *, single: bool = False) -> None:
        if fmt is OutputFormat.text:
            raise ValueError("text output is rendered by the command's report, not an Emitter")
        self.format = fmt
        self._single = single
        self._count = 0
        self._pending: list = []
        self._pending_size = 0
        if fmt is OutputFormat.msgpack:
            self._out = stream if stream is not None else sys.stdout.buffer
            self._packer = msgpack.Packer()
        else:
            self._out = stream if stream is not None else sys.stdout

    def emit(self, obj: dict) -> None:
        """Write one object."""
        fmt = self.format
        if fmt is OutputFormat.ndjson:
            self.write_line(_dumps(obj) + "\n")
            return
        if fmt is OutputFormat.msgpack:
            self._pending.append(self._packer.pack(obj))
            self._pending_size += 64
            if self._pending_size >= CHUNK:
                self._flush_pending()
        elif self._single:
            if self._count:
                raise ValueError("a single-document command emitted two objects")
            self._out.write(json.dumps(obj, ensure_ascii=False, indent=2))
        else:
            self._out.write("[\n" if self._count == 0 else ",\n")
            self._out.write(_dumps(obj))
        self._count += 1

    def write_line(self, line: str) -> None:
        """ndjson only: write a line already encoded (it must end in a newline).

        NOTE: lines are gathered and written in chunks of :data:`CHUNK` characters: with
        ``PYTHONUNBUFFERED`` set, one write per line is one system call (bench/README.md).
        """
        self._pending.append(line)
        self._pending_size += len(line)
        self._count += 1
        if self._pending_size >= CHUNK:
            self._flush_pending()

    def _flush_pending(self) -> None:
        if self._pending:
            joiner = b"" if self.format is OutputFormat.msgpack else ""
            self._out.write(joiner.join(self._pending))
            self._pending.clear()
        self._pending_size = 0

    def close(self) -> None:
        """Finish the document (``json``) and flush."""
        self._flush_pending()
        if self.format is OutputFormat.json:
            if not self._single:
                self._out.write("[]\n" if self._count == 0 else "\n]\n")
            else:
                self._out.write("\n")
        self._out.flush()


def write_objects(objs, fmt: OutputFormat, render) -> None:
    """Write result objects: ``render(obj, console)`` each for text, the machine format otherwise."""
    if fmt is OutputFormat.text:
        from rich.console import Console

        console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
        for obj in objs:
            render(obj, console)
        return
    emitter = Emitter(fmt)
    for obj in objs:
        emitter.emit(obj)
    emitter.close()

