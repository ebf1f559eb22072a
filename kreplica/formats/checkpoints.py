"""The small text files of a Kafka log directory (kafka-formats spec §8), read by Kafka's rules.

Sources (apache/kafka trunk 2024-10 baseline, paths as in the spec):

* ``server-common/src/main/java/org/apache/kafka/server/common/CheckpointFile.java``
  (``CheckpointReadBuffer``): every ``*-checkpoint`` file;
* ``storage/.../checkpoint/OffsetCheckpointFile.java``: ``replication-offset-checkpoint``,
  ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``cleaner-offset-checkpoint``;
* ``storage/.../checkpoint/LeaderEpochCheckpointFile.java``: ``leader-epoch-checkpoint``;
* ``storage/.../checkpoint/PartitionMetadataReadBuffer.java``: ``partition.metadata``;
* ``metadata/.../properties/MetaProperties.java``, ``MetaPropertiesVersion.java``,
  ``PropertiesUtils.java`` and the JDK's ``java.util.Properties.load``: ``meta.properties``;
* ``storage/.../checkpoint/CleanShutdownFileHandler.java``: ``.kafka_cleanshutdown``;
* ``raft/src/main/java/org/apache/kafka/raft/FileQuorumStateStore.java`` and
  ``QuorumStateData.json``: ``quorum-state``.

Checkpoint grammar (UTF-8, lines ended by ``\\n``, ``\\r`` or ``\\r\\n`` as
``BufferedReader.readLine`` splits them)::

    CheckpointFile => Version EOL Count EOL (EntryLine EOL)*
    Version, Count => Integer.parseInt text: optional sign, decimal digits, no spaces
    OffsetEntry    => Topic WS+ Partition WS+ Offset   (split on \\s+, exactly 3 parts)
    EpochEntry     => LeaderEpoch WS+ StartOffset       (exactly 2 parts)

None of these files carries a checksum; a torn write shows up as a leftover ``<name>.tmp``
(the writer renames it over the real file, §8.1).

Every parser here raises :class:`~kreplica.formats.errors.Malformed` exactly where Kafka's
reader throws, with ``reason`` set to Kafka's own message text (so it can be matched against a
broker log) and ``position`` the byte offset of the offending line. Where Kafka's exception is
not an ``IOException`` (a ``NumberFormatException`` escaping the formatter, an
``IllegalArgumentException`` from ``Uuid.fromString``), the reason names the Java class. The
Java-string helpers (``java_parse_int``, ``java_split_whitespace``, ``java_trim``) reproduce the
JDK's rules: ``Integer.parseInt`` accepts a leading ``+`` and any Unicode decimal digit, never
whitespace or ``_``; ``\\s`` is ``[ \\t\\n\\x0B\\f\\r]`` only; ``String.split`` drops trailing
empty strings but keeps a leading one.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from kreplica.formats.errors import Malformed, UnsupportedVersion
from kreplica.formats.uuid import ZERO_UUID, format_uuid, parse_uuid

T = TypeVar("T")

OFFSET_CHECKPOINT_VERSION = 0        # OffsetCheckpointFile.CURRENT_VERSION
LEADER_EPOCH_CHECKPOINT_VERSION = 0  # LeaderEpochCheckpointFile.CURRENT_VERSION
PARTITION_METADATA_VERSION = 0       # PartitionMetadataFile.CURRENT_VERSION
META_PROPERTIES_VERSIONS = (0, 1)    # MetaPropertiesVersion at the baseline (V0, V1)
QUORUM_STATE_VERSIONS = (0, 1)       # FileQuorumStateStore LOWEST/HIGHEST_SUPPORTED_VERSION

OFFSET_CHECKPOINT_FILES = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
QUORUM_STATE_FILE = "quorum-state"

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


# --- Java string primitives -------------------------------------------------------------

_JAVA_WS = "[ \t\n\x0b\f\r]"   # java.util.regex \s without UNICODE_CHARACTER_CLASS
_JAVA_WS_RUN = re.compile(_JAVA_WS + "+")
_COLON_WS_RUN = re.compile(":" + _JAVA_WS + "+")   # PartitionMetadataReadBuffer's pattern
_EOL = re.compile(rb"\r\n|\r|\n")


def _java_parse(text: str, lo: int, hi: int) -> int:
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
    return _java_parse(text, INT32_MIN, INT32_MAX)


def java_parse_long(text: str) -> int:
    """``Long.parseLong(text)``: raises ``ValueError('For input string: "…"')`` as Java does."""
    return _java_parse(text, INT64_MIN, INT64_MAX)


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char up to U+0020 from both ends (not Unicode spaces)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _java_split(pattern: re.Pattern[str], text: str) -> list[str]:
    # Pattern.split(input, 0): no match → [input]; else a positive-width match at 0 gives a
    # leading "", and trailing empty strings are removed.
    parts = pattern.split(text)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_split_whitespace(text: str) -> list[str]:
    """``Pattern.compile("\\\\s+").split(text)``, the split Kafka's checkpoint formatters use."""
    return _java_split(_JAVA_WS_RUN, text)


class _Line(NamedTuple):
    number: int     # 1-based line number in the file
    position: int   # byte offset of the line's first byte
    text: str


def _decode_utf8(content: bytes, path: str) -> None:
    # Files.newBufferedReader(UTF_8) reports malformed input (MalformedInputException); it
    # decodes 8192 chars ahead, so for files of that size a bad byte fails the read before any
    # line is parsed, which is the order kept here.
    try:
        bytes(content).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"Input length = {exc.end - exc.start} (java.nio.charset.MalformedInputException: "
                        "the file is not valid UTF-8)", path=path, position=exc.start,
                        field="encoding") from None


def _java_lines(content: bytes) -> Iterator[_Line]:
    """``BufferedReader.readLine`` over UTF-8 bytes: a final terminator does not start an empty
    line, but ``a\\n\\n`` is two lines, the second empty."""
    pos = 0
    n = len(content)
    number = 0
    while pos < n:
        number += 1
        m = _EOL.search(content, pos)
        end = n if m is None else m.start()
        yield _Line(number, pos, bytes(content[pos:end]).decode("utf-8"))
        if m is None:
            return
        pos = m.end()


# --- Generic checkpoint file ------------------------------------------------------------

class CheckpointVersionMismatch(Malformed, UnsupportedVersion):
    """The checkpoint's version line is not the version this file kind uses.

    Likely cause: a file written by another Kafka version, or a file of another kind copied
    into place. Kafka refuses the whole file (and takes the log directory offline).
    """


def _malformed_line(path: str, line: _Line, field_name: str) -> Malformed:
    return Malformed(f"Malformed line in checkpoint file [{path}]: {line.text}",
                     path=path, position=line.position, field=field_name)


def _number_format(path: str, line: _Line, exc: ValueError, field_name: str) -> Malformed:
    return Malformed(f"java.lang.NumberFormatException: {exc}", path=path, position=line.position,
                     field=field_name)


def _read_checkpoint(content: bytes, path: str, expected_version: int, fields: int,
                     entry: Callable[[_Line, list[str]], T]) -> list[T]:
    _decode_utf8(content, path)
    lines = _java_lines(content)
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
    return _read_checkpoint(content, path, expected_version, fields, lambda _line, parts: parts)


def parse_offset_checkpoint(content: bytes, *, path: str) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}`` of an offset checkpoint file (§8.2).

    ``OffsetCheckpointFile.Formatter``: ``topic partition offset``, partition by
    ``Integer.parseInt`` and offset by ``Long.parseLong``; a non-number raises
    :class:`Malformed` naming ``NumberFormatException`` (which escapes Kafka's reader unwrapped)
    at that line, before the entry count is compared. If a partition appears twice the later
    line wins, as in Kafka's ``HashMap``. Negative values are returned as written.
    """
    def entry(line: _Line, parts: list[str]) -> tuple[tuple[str, int], int]:
        try:
            partition = java_parse_int(parts[1])
            offset = java_parse_long(parts[2])
        except ValueError as exc:
            raise _number_format(path, line, exc, f"entry line {line.number}") from None
        return (parts[0], partition), offset

    return dict(_read_checkpoint(content, path, OFFSET_CHECKPOINT_VERSION, 3, entry))


@dataclass(frozen=True, slots=True)
class EpochEntryLine:
    """One ``leaderEpoch startOffset`` line as written, where it was written.

    ``line`` is the 1-based line number in the file (the first entry is line 3) and
    ``position`` the byte offset where that line starts.
    """

    epoch: int
    start_offset: int
    line: int
    position: int


def parse_leader_epoch_checkpoint(content: bytes, *, path: str) -> list[EpochEntryLine]:
    """The entry lines of a ``leader-epoch-checkpoint`` (§8.3), raw, in file order.

    Parsing follows ``LeaderEpochCheckpointFile.Formatter`` (two parts, ``Integer.parseInt``
    then ``Long.parseLong``) and the generic rules of :func:`parse_checkpoint`. Nothing is
    repaired: negative values, duplicates and out-of-order lines are returned as they are,
    because what Kafka's ``LeaderEpochFileCache`` makes of them on load is a model decision.
    """
    def entry(line: _Line, parts: list[str]) -> EpochEntryLine:
        try:
            epoch = java_parse_int(parts[0])
            start_offset = java_parse_long(parts[1])
        except ValueError as exc:
            raise _number_format(path, line, exc, f"entry line {line.number}") from None
        return EpochEntryLine(epoch, start_offset, line.number, line.position)

    return _read_checkpoint(content, path, LEADER_EPOCH_CHECKPOINT_VERSION, 2, entry)


def build_checkpoint(lines: Sequence[Sequence[object]], version: int = 0) -> bytes:
    """A checkpoint file exactly as ``CheckpointWriteBuffer`` writes it on Linux: version line,
    count line, then each entry's fields joined by single spaces, every line ending in ``\\n``."""
    out = [str(version), str(len(lines))]
    out.extend(" ".join(str(part) for part in line) for line in lines)
    return ("\n".join(out) + "\n").encode("utf-8")


def build_offset_checkpoint(offsets: Mapping[tuple[str, int], int]) -> bytes:
    """An offset checkpoint (``topic partition offset`` lines, version 0) in the mapping's order
    (Kafka writes its ``HashMap`` order, which readers must not rely on)."""
    return build_checkpoint([(topic, partition, offset) for (topic, partition), offset in offsets.items()],
                            OFFSET_CHECKPOINT_VERSION)


def build_leader_epoch_checkpoint(entries: Sequence[tuple[int, int]]) -> bytes:
    """A ``leader-epoch-checkpoint`` holding ``(epoch, start_offset)`` lines, version 0."""
    return build_checkpoint([(epoch, start) for epoch, start in entries], LEADER_EPOCH_CHECKPOINT_VERSION)


# --- partition.metadata -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """``partition.metadata``: the file version and the topic id in Kafka's canonical
    22-character text form (``Uuid.toString``, whatever padding the file used)."""

    version: int
    topic_id: str


def _partition_metadata_malformed(path: str, line: _Line) -> Malformed:
    return Malformed(f"Malformed line in checkpoint file [{path}]: {line.text}",
                     path=path, position=line.position, field=f"line {line.number}")


def parse_partition_metadata(content: bytes, *, path: str) -> PartitionMetadata:
    """Read ``partition.metadata`` as the baseline ``PartitionMetadataReadBuffer.read`` does (§8.4).

    Each of the first two lines is split on ``:\\s+`` (``String.split``, so trailing empty parts
    vanish and a leading ``": "`` leaves an empty key) and must give exactly two parts; the key
    names themselves are not checked by the baseline reader. The version must satisfy
    ``Integer.parseInt`` and be ≥ 0 (higher versions are accepted for downgrades); the topic id
    must pass ``Uuid.fromString`` (§1.3) and must not be the zero UUID. Lines after the second
    are ignored. Errors raise :class:`Malformed` with Kafka's message; where Kafka throws an
    unchecked exception (a missing line: ``NullPointerException``; a bad id:
    ``IllegalArgumentException``) the reason names it.
    """
    _decode_utf8(content, path)
    lines = _java_lines(content)
    first = next(lines, None)
    if first is None:
        raise Malformed(f"java.lang.NullPointerException: partition metadata file [{path}] has no "
                        "version line", path=path, position=0, field="version")
    version_parts = _java_split(_COLON_WS_RUN, first.text)
    if len(version_parts) != 2:
        raise _partition_metadata_malformed(path, first)
    try:
        version = java_parse_int(version_parts[1])
    except ValueError:
        raise _partition_metadata_malformed(path, first) from None
    if version < PARTITION_METADATA_VERSION:
        # Verbatim, including the stray " + " of the baseline's message.
        raise Malformed(f"Unrecognized version of partition metadata file + ({path}): {version}",
                        path=path, position=first.position, field="version")
    second = next(lines, None)
    if second is None:
        raise Malformed(f"java.lang.NullPointerException: partition metadata file [{path}] has no "
                        "topic_id line", path=path, position=len(content), field="topic_id")
    id_parts = _java_split(_COLON_WS_RUN, second.text)
    if len(id_parts) != 2:
        raise _partition_metadata_malformed(path, second)
    separator = _COLON_WS_RUN.search(second.text)
    value_position = second.position + len(second.text[:separator.end()].encode("utf-8"))
    try:
        raw = parse_uuid(id_parts[1], path=path, position=value_position, field="topic_id")
    except Malformed as exc:
        raise Malformed(f"java.lang.IllegalArgumentException: {exc.reason}", path=path,
                        position=value_position, field="topic_id") from exc
    if raw == ZERO_UUID:
        raise Malformed(f"Invalid topic ID in partition metadata file ({path})", path=path,
                        position=value_position, field="topic_id")
    return PartitionMetadata(version, format_uuid(raw))


def build_partition_metadata(topic_id: str) -> bytes:
    """The exact bytes ``PartitionMetadataFile`` writes: two lines, ``\\n`` between them, no
    trailing newline. ``topic_id`` is written as given (Kafka writes ``Uuid.toString``)."""
    return f"version: {PARTITION_METADATA_VERSION}\ntopic_id: {topic_id}".encode("utf-8")


# --- meta.properties (java.util.Properties) ---------------------------------------------

def _properties_logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """``Properties.LineReader.readLine`` (JDK 9+): logical lines with comments and blank lines
    dropped, leading whitespace skipped, and ``\\``-newline continuations joined (the
    continuation's leading whitespace skipped). Yields ``(start offset, raw line)``."""
    n = len(text)
    off = 0
    while True:
        buf: list[str] = []
        start = off
        skip_ws = True
        appended_line_begin = False
        preceding_backslash = False
        while True:
            if off >= n:
                if not buf:
                    return
                yield start, "".join(buf[:-1] if preceding_backslash else buf)
                return
            c = text[off]
            off += 1
            if skip_ws:
                if c in " \t\f":
                    continue
                if not appended_line_begin and c in "\r\n":
                    continue
                skip_ws = False
                appended_line_begin = False
            if not buf:
                start = off - 1
                if c in "#!":
                    # A comment runs to the end of its natural line; no continuation.
                    while off < n and text[off] not in "\r\n":
                        off += 1
                    if off >= n:
                        return
                    off += 1
                    skip_ws = True
                    continue
            if c not in "\r\n":
                buf.append(c)
                preceding_backslash = (not preceding_backslash) if c == "\\" else False
                continue
            if not buf:
                skip_ws = True
                continue
            if off >= n:
                yield start, "".join(buf[:-1] if preceding_backslash else buf)
                return
            if preceding_backslash:
                buf.pop()                      # the backslash is not part of the line
                skip_ws = True
                appended_line_begin = True
                preceding_backslash = False
                if c == "\r" and text[off] == "\n":
                    off += 1
                continue
            yield start, "".join(buf)
            break


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_HEX = set("0123456789abcdefABCDEF")


def _properties_unescape(raw: str) -> str:
    """``Properties.loadConvert``: ``\\uXXXX`` (exactly four hex digits, else
    ``IllegalArgumentException``), ``\\t \\r \\n \\f``, and ``\\x`` → ``x`` for anything else."""
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:                          # cannot happen after LineReader; be safe
            break
        c = raw[i]
        i += 1
        if c == "u":
            digits = raw[i:i + 4]
            if len(digits) < 4 or not set(digits) <= _HEX:
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    text = "".join(out)
    # Java strings are UTF-16: escaped surrogate pairs form one character.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _properties_key_value(line: str) -> tuple[str, str]:
    # Properties.load0: the key ends at the first unescaped '=', ':' or whitespace; whitespace
    # and at most one '='/':' separator are skipped before the value.
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in " \t\f" and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in " \t\f":
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _properties_unescape(line[:key_len]), _properties_unescape(line[value_start:])


def parse_java_properties(content: bytes, *, path: str = "") -> tuple[dict[str, str], dict[str, int]]:
    """``java.util.Properties.load(InputStream)``: ISO-8859-1 bytes, ``\\uXXXX`` escapes, ``#``/``!``
    comments, ``key=value``/``key:value``/``key value``, line continuations; a later key wins.

    Returns the properties and, for each key, the byte offset of the line that set it. A bad
    ``\\u`` escape raises :class:`Malformed` ("Malformed \\\\uxxxx encoding.").
    """
    text = bytes(content).decode("latin-1")
    props: dict[str, str] = {}
    where: dict[str, int] = {}
    for start, line in _properties_logical_lines(text):
        try:
            key, value = _properties_key_value(line)
        except ValueError as exc:
            raise Malformed(f"{exc} (java.lang.IllegalArgumentException)", path=path,
                            position=start, field="properties line") from None
        props[key] = value
        where[key] = start
    return props, where


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties`` as Kafka's ``MetaProperties.Builder(Properties)`` reads it.

    v0 (ZooKeeper era, or migrated): ``broker_id`` from ``broker.id`` if present, ``node_id``
    ``None``. v1 (KRaft): ``node_id`` from ``node.id``, ``broker_id`` ``None``. ``cluster_id``
    and ``directory_id`` (canonical text) are ``None`` when absent; ``properties`` holds every
    key as loaded. :attr:`effective_id` is the id to label the broker with.
    """

    version: int
    broker_id: int | None
    node_id: int | None
    cluster_id: str | None
    directory_id: str | None
    properties: dict[str, str] = field(hash=False, compare=False)

    @property
    def effective_id(self) -> int | None:
        """``broker_id`` for v0, ``node_id`` for v1 (Kafka's ``nodeId()`` in both cases)."""
        return self.broker_id if self.version == 0 else self.node_id


def _required_int(props: dict[str, str], where: dict[str, int], key: str, path: str) -> int:
    # PropertiesUtils.loadRequiredIntProp: no trimming (load keeps trailing spaces of a value).
    value = props.get(key)
    if value is None:
        raise Malformed(f"Failed to find {key}", path=path, position=0, field=key)
    try:
        return java_parse_int(value)
    except ValueError:
        raise Malformed(f"Unable to read {key} as a base-10 number.", path=path,
                        position=where.get(key, 0), field=key) from None


def parse_meta_properties(content: bytes, *, path: str) -> MetaProperties:
    """Read ``meta.properties`` (§8.5) with Kafka's rules and messages.

    Order of checks as in ``MetaProperties.Builder``: ``version`` (default ``0``; trimmed, then
    ``Integer.parseInt``: "Invalid meta.properties version string '…'"; only 0 and 1 exist at
    the baseline: "Unknown meta.properties version number N"); v0 ``broker.id`` if present, v1
    ``node.id`` required ("Failed to find node.id", "Unable to read node.id as a base-10
    number."); ``directory.id`` must pass ``Uuid.fromString`` ("Unable to read directory.id as
    a Uuid: …"); v1 requires ``cluster.id`` ("cluster.id was not found."). Cross-directory
    checks (same cluster, same node, unique directory ids) belong to the model.
    """
    props, where = parse_java_properties(content, path=path)
    version_text = props.get("version", "0")
    try:
        version = java_parse_int(java_trim(version_text))
    except ValueError:
        raise Malformed(f"Invalid meta.properties version string '{version_text}'", path=path,
                        position=where.get("version", 0), field="version") from None
    if version not in META_PROPERTIES_VERSIONS:
        raise UnsupportedVersion(f"Unknown meta.properties version number {version}", path=path,
                                 position=where.get("version", 0), field="version")
    broker_id = node_id = None
    if version == 0:
        if "broker.id" in props:
            broker_id = _required_int(props, where, "broker.id", path)
    else:
        node_id = _required_int(props, where, "node.id", path)
    cluster_id = props.get("cluster.id")
    directory_id = None
    if "directory.id" in props:
        try:
            directory_id = format_uuid(parse_uuid(props["directory.id"]))
        except Malformed as exc:
            raise Malformed(f"Unable to read directory.id as a Uuid: {exc.reason}", path=path,
                            position=where.get("directory.id", 0), field="directory.id") from exc
    if version != 0 and cluster_id is None:
        raise Malformed("cluster.id was not found.", path=path, position=0, field="cluster.id")
    return MetaProperties(version, broker_id, node_id, cluster_id, directory_id, dict(props))


def _properties_escape(text: str, *, is_key: bool) -> str:
    # Properties.saveConvert(text, escapeSpace=is_key, escapeUnicode=False): store(Writer) does
    # not escape non-ASCII; the writer encodes it as UTF-8.
    out: list[str] = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            out.append("\\ " if (i == 0 or is_key) else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def _java_string_hash(text: str) -> int:
    # String.hashCode over UTF-16 code units, as an unsigned 32-bit value.
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _concurrent_hash_map_order(keys: Sequence[str]) -> list[str]:
    # java.util.Properties (JDK 9-17) keeps a ConcurrentHashMap(8): 16 bins, iterated bin by
    # bin, insertion order within a bin. The table doubles when it reaches 3/4 full; a resize
    # may reorder a bin, so the order is exact up to 11 keys (meta.properties has at most 5).
    size = 16
    while len(keys) >= size * 3 // 4:
        size *= 2

    def bin_of(key: str) -> int:
        h = _java_string_hash(key)
        return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (size - 1)

    return sorted(keys, key=bin_of)   # sorted() is stable: insertion order within a bin


def build_meta_properties(props: Mapping[str, str], *, date: str = "Thu Jan 01 00:00:00 UTC 1970",
                          key_order: str = "hash") -> bytes:
    """``meta.properties`` as ``PropertiesUtils.writePropertiesFile`` writes it.

    ``Properties.store(writer, "")``: an empty ``#`` comment line, ``#`` + ``Date.toString()``
    (``date``; fixed by default so fixtures are reproducible), then ``key=value`` lines with
    ``saveConvert`` escaping, UTF-8. ``key_order`` is ``"hash"`` (the spec's "hash order": JDK
    9–17 ``ConcurrentHashMap`` order, ``props`` insertion order within a bin; Kafka inserts
    ``version``, ``cluster.id``, ``node.id``/``broker.id``, ``directory.id``) or ``"sorted"``
    (JDK 18 and later write the keys sorted).
    """
    keys = list(props)
    if key_order == "sorted":
        keys.sort()
    elif key_order == "hash":
        keys = _concurrent_hash_map_order(keys)
    else:
        raise ValueError(f"key_order must be 'sorted' or 'hash', not {key_order!r}")
    lines = ["#", f"#{date}"]
    lines.extend(f"{_properties_escape(k, is_key=True)}={_properties_escape(props[k], is_key=False)}"
                 for k in keys)
    return ("\n".join(lines) + "\n").encode("utf-8")


# --- .kafka_cleanshutdown ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: its presence means a clean shutdown (the caller knows that);
    its content, from 3.7, records the broker epoch. ``broker_epoch`` is ``None`` when the file
    is empty (written by 3.6 or earlier) or unreadable — Kafka then just has no epoch.
    ``version`` is the ``version`` field when readable; ``problem`` says why no epoch was read
    (``None`` when it was, or when the file is empty)."""

    broker_epoch: int | None
    version: int | None = None
    problem: str | None = None

    @property
    def is_empty(self) -> bool:
        return self.broker_epoch is None and self.problem is None


class _NotCoercible(Exception):
    pass


def _jackson_coerce_integral(value: object, lo: int, hi: int) -> int | None:
    # Jackson's default coercions into an int/Long field: integers in range, floats truncated
    # (ACCEPT_FLOAT_AS_INT), numeric strings parsed; "" and null map to null.
    if value is None:
        return None
    if isinstance(value, bool):
        raise _NotCoercible("boolean")
    if isinstance(value, int):
        if lo <= value <= hi:
            return value
        raise _NotCoercible("out of range")
    if isinstance(value, float):
        if math.isfinite(value) and lo <= int(value) <= hi:
            return int(value)
        raise _NotCoercible("out of range")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return java_parse_long(text) if hi > INT32_MAX else java_parse_int(text)
        except ValueError:
            raise _NotCoercible("not a number") from None
    raise _NotCoercible(type(value).__name__)


def _reject_constant(name: str) -> object:
    raise ValueError(f"non-standard JSON token {name}")


def _json_value(text: str) -> object:
    """Jackson's ``readTree``/``readValue`` of the first JSON value: leading whitespace skipped,
    trailing content ignored (``FAIL_ON_TRAILING_TOKENS`` is off), NaN/Infinity refused."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    stripped = text.lstrip(" \t\r\n")
    try:
        value, _end = decoder.raw_decode(stripped)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return value


def parse_clean_shutdown(content: bytes, *, path: str) -> CleanShutdown:
    """Read ``.kafka_cleanshutdown`` as ``CleanShutdownFileHandler.read`` does (§8.6). Never raises.

    Empty (up to 3.6) → no epoch. Otherwise the text (UTF-8, bad bytes replaced) must hold a
    JSON object whose ``brokerEpoch`` maps to a Java ``Long`` (unknown fields ignored, the
    version not checked); anything else — not JSON, not an object, a missing or null epoch — is
    what Kafka logs at debug level and treats as "no broker epoch".
    """
    if len(content) == 0:
        return CleanShutdown(None)
    text = bytes(content).decode("utf-8", "replace")
    try:
        value = _json_value(text)
    except ValueError as exc:
        return CleanShutdown(None, problem=f"not JSON: {exc}")
    if not isinstance(value, dict):
        return CleanShutdown(None, problem="not a JSON object")
    try:
        version = _jackson_coerce_integral(value.get("version"), INT32_MIN, INT32_MAX)
        epoch = _jackson_coerce_integral(value.get("brokerEpoch"), INT64_MIN, INT64_MAX)
    except _NotCoercible as exc:
        return CleanShutdown(None, problem=f"a field does not map to a number ({exc})")
    if epoch is None:
        return CleanShutdown(None, version=version if version is not None else 0,
                             problem="no brokerEpoch")
    return CleanShutdown(epoch, version=version if version is not None else 0)


# --- quorum-state -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class QuorumState:
    """KRaft ``quorum-state`` (§8.7). v0 carries ``cluster_id``, ``applied_offset`` and
    ``current_voters``; v1 drops them (``None``, 0 and ``()`` here) and adds
    ``voted_directory_id`` (canonical text). Ids and epochs default to -1 in Kafka."""

    data_version: int
    leader_id: int
    leader_epoch: int
    voted_id: int
    applied_offset: int
    current_voters: tuple[int, ...]
    cluster_id: str | None
    voted_directory_id: str | None = None


def _quorum_error(path: str, reason: str, field_name: str | None = None) -> Malformed:
    # IOExceptions (JSON syntax, shape) are wrapped in UncheckedIOException with this text.
    return Malformed(f"Error while reading the Quorum status from the file {path}: {reason}",
                     path=path, position=0, field=field_name)


def _converter_error(path: str, reason: str, field_name: str | None = None) -> Malformed:
    # The generated QuorumStateDataJsonConverter throws RuntimeExceptions, which are not wrapped.
    return Malformed(reason, path=path, position=0, field=field_name)


def _json_short_value(node: object) -> int:
    # JsonNode.shortValue(): numbers narrowed as Java casts them; any other node gives 0.
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        if math.isnan(node):
            as_int = 0
        else:
            as_int = max(INT32_MIN, min(INT32_MAX, int(node)))
    else:
        as_int = node
    return ((as_int + 2**15) % 2**16) - 2**15


def _json_int(obj: dict, key: str, lo: int, hi: int, path: str, version: int) -> int:
    if key not in obj:
        raise _converter_error(path, f"QuorumStateData: unable to locate field '{key}', which is "
                                  f"mandatory in version {version}", key)
    node = obj[key]
    if isinstance(node, int) and not isinstance(node, bool) and lo <= node <= hi:
        return node
    if isinstance(node, str):
        try:
            return _java_parse(node, lo, hi)
        except ValueError:
            raise _converter_error(path, f"QuorumStateData: failed to convert string to integer "
                                      f"for field '{key}'", key) from None
    raise _converter_error(path, f"QuorumStateData expected an integer for field '{key}'", key)


def _json_text(obj: dict, key: str, path: str, version: int) -> str:
    if key not in obj:
        raise _converter_error(path, f"QuorumStateData: unable to locate field '{key}', which is "
                                  f"mandatory in version {version}", key)
    node = obj[key]
    if not isinstance(node, str):
        raise _converter_error(path, f"QuorumStateData expected a string type for field '{key}'", key)
    return node


def parse_quorum_state(content: bytes, *, path: str) -> QuorumState:
    """Read ``quorum-state`` as ``FileQuorumStateStore.readStateFromFile`` does.

    Only the first line is read (UTF-8, strictly). Errors raise :class:`Malformed` with
    Kafka's messages: "File ended prematurely." (empty file), "Deserialized node … is not an
    object node", "… does not have data_version field", "data_version (N) is not within the
    min (0) and max (1) supported version" (``data_version`` is read with ``shortValue()``, so
    a non-number counts as 0), then the generated ``QuorumStateDataJsonConverter``'s
    mandatory-field and type errors ("QuorumStateData: unable to locate field 'leaderId', which
    is mandatory in version 0"), which Kafka does not wrap.
    """
    _decode_utf8(content, path)
    first = next(_java_lines(content), None)
    if first is None:
        raise Malformed("File ended prematurely. (java.io.EOFException)", path=path, position=0)
    try:
        node = _json_value(first.text)
    except ValueError as exc:
        if first.text.strip(" \t\r\n") == "":
            node = None   # readTree("") gives a MissingNode
        else:
            raise _quorum_error(path, f"invalid JSON ({exc})") from None
    if not isinstance(node, dict):
        shown = "" if node is None else json.dumps(node)
        raise _quorum_error(path, f"Deserialized node {shown} is not an object node")
    if "data_version" not in node:
        raise _quorum_error(path, f"Deserialized node {json.dumps(node)} does not have data_version field",
                            "data_version")
    version = _json_short_value(node["data_version"])
    if version not in QUORUM_STATE_VERSIONS:
        raise UnsupportedVersion(f"data_version ({version}) is not within the min ({QUORUM_STATE_VERSIONS[0]}) "
                                 f"and max ({QUORUM_STATE_VERSIONS[-1]}) supported version",
                                 path=path, position=0, field="data_version")
    cluster_id = None
    applied_offset = 0
    voters: tuple[int, ...] = ()
    voted_directory_id = None
    if version == 0:
        cluster_id = _json_text(node, "clusterId", path, version)
    leader_id = _json_int(node, "leaderId", INT32_MIN, INT32_MAX, path, version)
    leader_epoch = _json_int(node, "leaderEpoch", INT32_MIN, INT32_MAX, path, version)
    voted_id = _json_int(node, "votedId", INT32_MIN, INT32_MAX, path, version)
    if version == 0:
        applied_offset = _json_int(node, "appliedOffset", INT64_MIN, INT64_MAX, path, version)
        if "currentVoters" not in node:
            raise _converter_error(path, "QuorumStateData: unable to locate field 'currentVoters', "
                                      "which is mandatory in version 0", "currentVoters")
        raw_voters = node["currentVoters"]
        if raw_voters is not None:
            if not isinstance(raw_voters, list):
                raise _converter_error(path, "QuorumStateData expected a JSON array for field 'currentVoters'",
                                    "currentVoters")
            collected = []
            for voter in raw_voters:
                if not isinstance(voter, dict):
                    raise _converter_error(path, "Voter expected a JSON object", "currentVoters")
                collected.append(_json_int(voter, "voterId", INT32_MIN, INT32_MAX, path, version))
            voters = tuple(collected)
    else:
        text = _json_text(node, "votedDirectoryId", path, version)
        try:
            voted_directory_id = format_uuid(parse_uuid(text))
        except Malformed as exc:
            raise _converter_error(path, f"java.lang.IllegalArgumentException: {exc.reason}",
                                   "votedDirectoryId") from exc
    return QuorumState(version, leader_id, leader_epoch, voted_id, applied_offset, voters,
                       cluster_id, voted_directory_id)


__all__ = [
    "CheckpointVersionMismatch", "CleanShutdown", "EpochEntryLine", "MetaProperties",
    "PartitionMetadata", "QuorumState",
    "build_checkpoint", "build_leader_epoch_checkpoint", "build_meta_properties",
    "build_offset_checkpoint", "build_partition_metadata",
    "java_parse_int", "java_parse_long", "java_split_whitespace", "java_trim",
    "parse_checkpoint", "parse_clean_shutdown", "parse_java_properties",
    "parse_leader_epoch_checkpoint", "parse_meta_properties", "parse_offset_checkpoint",
    "parse_partition_metadata", "parse_quorum_state",
]
