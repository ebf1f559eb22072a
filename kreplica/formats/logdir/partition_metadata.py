"""``partition.metadata`` (kafka-formats spec §8.4): the topic id of a partition directory.

One file per partition directory since Kafka 2.8. Kafka's classes: ``PartitionMetadataFile``
and ``PartitionMetadataReadBuffer`` in ``storage/src/main/java/org/apache/kafka/storage/
internals/checkpoint/`` (apache/kafka trunk 2024-10 baseline).

Layout (UTF-8, ``\\n`` between the lines, no trailing newline)::

    PartitionMetadata => "version: " Version EOL "topic_id: " TopicId
    Version           => Integer.parseInt text, >= 0
    TopicId           => 22-character base64url Uuid, not the zero id (§1.3)

Each line is split on ``:\\s+``. No checksum; written via ``partition.metadata.tmp`` and an
atomic rename. Errors raise :class:`~kreplica.formats.errors.Malformed` with Kafka's message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kreplica.formats._java import JAVA_WS, JavaLine, check_utf8, java_lines, java_parse_int, java_split
from kreplica.formats.errors import Malformed
from kreplica.formats.uuid import ZERO_UUID, format_uuid, parse_uuid

PARTITION_METADATA_VERSION = 0       # PartitionMetadataFile.CURRENT_VERSION
PARTITION_METADATA_FILE = "partition.metadata"

_COLON_WS_RUN = re.compile(":" + JAVA_WS + "+")   # PartitionMetadataReadBuffer's pattern


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """``partition.metadata``: the file version and the topic id in Kafka's canonical
    22-character text form (``Uuid.toString``, whatever padding the file used)."""

    version: int
    topic_id: str


def _partition_metadata_malformed(path: str, line: JavaLine) -> Malformed:
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
    check_utf8(content, path)
    lines = java_lines(content)
    first = next(lines, None)
    if first is None:
        raise Malformed(f"java.lang.NullPointerException: partition metadata file [{path}] has no "
                        "version line", path=path, position=0, field="version")
    version_parts = java_split(_COLON_WS_RUN, first.text)
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
    id_parts = java_split(_COLON_WS_RUN, second.text)
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
