"""The formats of the output contract (ARCHITECTURE.md, "Output contract") and the choice
between them: ``text`` for people; ``json`` (one document), ``ndjson`` (one object a line) and
``msgpack`` (the ndjson stream as a sequence of msgpack objects) for programs. With no
``--format``, text goes to a terminal and ndjson everywhere else, so pipelines get data; and how
byte payloads appear in machine output (``--payload``)."""

from __future__ import annotations

import enum
import sys
from typing import IO


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
