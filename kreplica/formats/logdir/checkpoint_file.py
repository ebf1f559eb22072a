"""The generic ``*-checkpoint`` text file (kafka-formats spec §8.1): version, count, entry lines.

Every ``*-checkpoint`` file of a log directory shares this envelope; the file kinds differ only
in their version and in how an entry line splits (:mod:`~kreplica.formats.logdir.offset_checkpoint`,
:mod:`~kreplica.formats.logdir.leader_epoch_checkpoint`). Kafka's reader is ``CheckpointFile.
CheckpointReadBuffer`` in ``server-common/src/main/java/org/apache/kafka/server/common/
CheckpointFile.java`` (apache/kafka trunk 2024-10 baseline).

Layout (UTF-8, lines ended by ``\\n``, ``\\r`` or ``\\r\\n`` as ``BufferedReader.readLine``
splits them)::

    CheckpointFile => Version EOL Count EOL (EntryLine EOL)*
    Version, Count => Integer.parseInt text: optional sign, decimal digits, no spaces
    EntryLine      => Field (WS+ Field)*              (split on \\s+, a fixed number of parts)

None of these files carries a checksum; a torn write shows up as a leftover ``<name>.tmp``
(the writer renames it over the real file, §8.1).

Every parser raises :class:`~kreplica.formats.errors.Malformed` exactly where Kafka's reader
throws, with ``reason`` set to Kafka's own message text (so it can be matched against a broker
log) and ``position`` the byte offset of the offending line. Where Kafka's exception is not an
``IOException`` (a ``NumberFormatException`` escaping the formatter), the reason names the Java
class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kreplica.formats._java import JavaLine, check_utf8, java_lines, java_parse_int, java_split_whitespace
from kreplica.formats.errors import Malformed, UnsupportedVersion

T = TypeVar("T")


class CheckpointVersionMismatch(Malformed, UnsupportedVersion):
    """The checkpoint's version line is not the version this file kind uses.

    Likely cause: a file written by another Kafka version, or a file of another kind copied
    into place. Kafka refuses the whole file (and takes the log directory offline).
    """


def _malformed_line(path: str, line: JavaLine, field_name: str) -> Malformed:
    return Malformed(f"Malformed line in checkpoint file [{path}]: {line.text}",
                     path=path, position=line.position, field=field_name)


def number_format_error(path: str, line: JavaLine, exc: ValueError, field_name: str) -> Malformed:
    """A ``NumberFormatException`` thrown by an entry formatter, which escapes Kafka's reader unwrapped."""
    return Malformed(f"java.lang.NumberFormatException: {exc}", path=path, position=line.position,
                     field=field_name)


def parse_entries(content: bytes, path: str, expected_version: int, fields: int,
                  entry: Callable[[JavaLine, list[str]], T]) -> list[T]:
    """:func:`parse_checkpoint` with each entry line handed to ``entry(line, parts)``, which
    builds the typed value (and raises where the file kind's formatter would)."""
    check_utf8(content, path)
    lines = java_lines(content)
    first = next(lines, None)
    if first is None:
        return []                                     # empty file: empty list, no error
    try:
        version = java_parse_int(first.text)
    except ValueError:
        raise _malformed_line(path, first, "version") from None
    if version != expected_version:
        raise CheckpointVersionMismatch(
            f"Unrecognised version:{version}, expected version: {expected_version} "
            f"in checkpoint file at: {path}",
            path=path, position=first.position, field="version",
        )
    second = next(lines, None)
    if second is None:
        return []                                     # only the version line
    try:
        expected = java_parse_int(second.text)
    except ValueError:
        raise _malformed_line(path, second, "entry count") from None
    if expected < 0:
        # new ArrayList<>(expectedSize) throws before any entry line is read.
        raise Malformed(f"Illegal Capacity: {expected} (java.lang.IllegalArgumentException)",
                        path=path, position=second.position, field="entry count")
    result: list[T] = []
    for line in lines:
        parts = java_split_whitespace(line.text)
        if len(parts) != fields:
            raise _malformed_line(path, line, f"entry line {line.number}")
        result.append(entry(line, parts))
    if len(result) != expected:
        raise Malformed(f"Expected [{expected}] entries in checkpoint file [{path}], "
                        f"but found only [{len(result)}]",
                        path=path, position=second.position, field="entry count",
                        expected=expected, actual=len(result))
    return result


def parse_checkpoint(content: bytes, *, path: str, expected_version: int, fields: int) -> list[list[str]]:
    """The entry lines of a ``*-checkpoint`` file, each split as Kafka splits it.

    Follows ``CheckpointFile.CheckpointReadBuffer.read``: an empty file or a file holding only
    the version line gives ``[]``; the version and count lines must satisfy
    ``Integer.parseInt`` with no trimming (``"0 "`` is malformed); every following line up to
    the end is an entry that must split on ``\\s+`` into exactly ``fields`` parts (so a trailing
    blank line, or a leading space, is malformed); the number of entries must equal the count
    line ("Expected [N] entries …, but found only [M]", also when there are more). Raises
    :class:`Malformed` (a :class:`CheckpointVersionMismatch` for the version rule) with Kafka's
    message as ``reason``. Numbers inside entries are not parsed here: see the typed readers.
    """
    return parse_entries(content, path, expected_version, fields, lambda _line, parts: parts)


def build_checkpoint(lines: Sequence[Sequence[object]], version: int = 0) -> bytes:
    """A checkpoint file exactly as ``CheckpointWriteBuffer`` writes it on Linux: version line,
    count line, then each entry's fields joined by single spaces, every line ending in ``\\n``."""
    out = [str(version), str(len(lines))]
    out.extend(" ".join(str(part) for part in line) for line in lines)
    return ("\n".join(out) + "\n").encode("utf-8")
