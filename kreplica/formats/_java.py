"""The JDK's (and Jackson's) text rules, reproduced for the readers of Kafka's small text files.

Kafka reads its checkpoint and metadata files with plain Java string handling, and a forensic
reader must refuse exactly what Kafka refuses, so these helpers reproduce the JDK's rules rather
than Python's: ``Integer.parseInt`` accepts a leading ``+`` and any Unicode decimal digit, never
whitespace or ``_``; ``\\s`` is ``[ \\t\\n\\x0B\\f\\r]`` only; ``String.split`` drops trailing
empty strings but keeps a leading one; ``String.trim`` strips every char up to U+0020;
``BufferedReader.readLine`` ends lines at ``\\n``, ``\\r`` or ``\\r\\n``; Jackson reads the first
JSON value and ignores what follows it.

Private to ``kreplica.formats``: :mod:`~kreplica.formats.logdir.checkpoint_file`,
:mod:`~kreplica.formats.logdir.partition_metadata`, :mod:`~kreplica.formats.logdir.meta_properties`,
:mod:`~kreplica.formats.logdir.clean_shutdown`, :mod:`~kreplica.formats.kraft.quorum_state`,
:mod:`~kreplica.formats.logdir.naming` and :mod:`~kreplica.formats.coordinator.records` (which
partition a group's records go to: ``String.hashCode``) use them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

from kreplica.formats.errors import Malformed

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1

JAVA_WS = "[ \t\n\x0b\f\r]"   # java.util.regex \s without UNICODE_CHARACTER_CLASS
_JAVA_WS_RUN = re.compile(JAVA_WS + "+")
_EOL = re.compile(rb"\r\n|\r|\n")


def java_parse(text: str, lo: int, hi: int) -> int:
    """``Integer.parseInt``/``Long.parseLong`` with radix 10; ``ValueError`` carries the JDK's
    ``NumberFormatException`` message."""
    if not text:
        raise ValueError('For input string: ""')
    i = 0
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        i = 1
        if len(text) == 1:
            raise ValueError(f'For input string: "{text}"')
    value = 0
    for c in text[i:]:
        # Character.digit(c, 10): any Unicode decimal digit, but Java chars are UTF-16 units, so
        # a supplementary-plane digit arrives as two surrogates and is refused.
        d = unicodedata.decimal(c, -1) if ord(c) <= 0xFFFF else -1
        if d < 0:
            raise ValueError(f'For input string: "{text}"')
        value = value * 10 + d
    if negative:
        value = -value
    if not lo <= value <= hi:
        raise ValueError(f'For input string: "{text}"')
    return value


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``: raises ``ValueError('For input string: "…"')`` as Java does."""
    return java_parse(text, INT32_MIN, INT32_MAX)


def java_parse_long(text: str) -> int:
    """``Long.parseLong(text)``: raises ``ValueError('For input string: "…"')`` as Java does."""
    return java_parse(text, INT64_MIN, INT64_MAX)


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char up to U+0020 from both ends (not Unicode spaces)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """``pattern.split(text)`` with ``Pattern.split(input, 0)``'s rules: no match gives
    ``[text]``; a positive-width match at 0 gives a leading ``""``; trailing empty strings are
    removed."""
    parts = pattern.split(text)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_split_whitespace(text: str) -> list[str]:
    """``Pattern.compile("\\\\s+").split(text)``, the split Kafka's checkpoint formatters use."""
    return java_split(_JAVA_WS_RUN, text)


class JavaLine(NamedTuple):
    """One line as ``BufferedReader.readLine`` returns it, with where it starts."""

    number: int     # 1-based line number in the file
    position: int   # byte offset of the line's first byte
    text: str


def check_utf8(content: bytes, path: str) -> None:
    """Raise :class:`Malformed` (Java's ``MalformedInputException``) unless ``content`` is UTF-8.

    ``Files.newBufferedReader(UTF_8)`` decodes 8192 chars ahead, so for files of that size a bad
    byte fails the read before any line is parsed, which is the order kept by calling this first.
    """
    try:
        bytes(content).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"Input length = {exc.end - exc.start} (java.nio.charset.MalformedInputException: "
                        "the file is not valid UTF-8)", path=path, position=exc.start,
                        field="encoding") from None


def java_lines(content: bytes) -> Iterator[JavaLine]:
    """``BufferedReader.readLine`` over UTF-8 bytes: a final terminator does not start an empty
    line, but ``a\\n\\n`` is two lines, the second empty."""
    pos = 0
    n = len(content)
    number = 0
    while pos < n:
        number += 1
        m = _EOL.search(content, pos)
        end = n if m is None else m.start()
        yield JavaLine(number, pos, bytes(content[pos:end]).decode("utf-8"))
        if m is None:
            return
        pos = m.end()



def _reject_constant(name: str) -> object:
    raise ValueError(f"non-standard JSON token {name}")


def jackson_read_value(text: str) -> object:
    """Jackson's ``readTree``/``readValue`` of the first JSON value: leading whitespace skipped,
    trailing content ignored (``FAIL_ON_TRAILING_TOKENS`` is off), NaN/Infinity refused.
    Raises ``ValueError`` when there is no JSON value."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    stripped = text.lstrip(" \t\r\n")
    try:
        value, _end = decoder.raw_decode(stripped)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return value


def java_string_hash(text: str) -> int:
    """``String.hashCode``: over UTF-16 code units, as Java's signed 32-bit ``int``."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h > INT32_MAX else h
