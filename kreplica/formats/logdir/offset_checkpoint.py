"""Offset checkpoints (kafka-formats spec §8.2): one offset per partition of a log directory.

Four files in a log directory's root share this format, each with its own meaning of the
offset: ``replication-offset-checkpoint`` (high watermarks), ``recovery-point-offset-checkpoint``
(recovery points), ``log-start-offset-checkpoint`` (log start offsets above the first segment's
base offset) and ``cleaner-offset-checkpoint`` (first dirty offsets of compacted partitions).
Kafka's class: ``OffsetCheckpointFile`` in ``storage/src/main/java/org/apache/kafka/storage/
internals/checkpoint/OffsetCheckpointFile.java`` (apache/kafka trunk 2024-10 baseline), over the
generic envelope of :mod:`~kreplica.formats.logdir.checkpoint_file`.

Layout::

    OffsetCheckpoint => "0" EOL Count EOL (OffsetEntry EOL)*
    OffsetEntry      => Topic WS+ Partition WS+ Offset   (split on \\s+, exactly 3 parts)
    Partition        => Integer.parseInt text
    Offset           => Long.parseLong text

No checksum (§8.1).
"""

from __future__ import annotations

from collections.abc import Mapping

from kreplica.formats._java import JavaLine, java_parse_int, java_parse_long
from kreplica.formats.logdir.checkpoint_file import build_checkpoint, number_format_error, parse_entries

OFFSET_CHECKPOINT_VERSION = 0        # OffsetCheckpointFile.CURRENT_VERSION

OFFSET_CHECKPOINT_FILES = (
    "replication-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)


def parse_offset_checkpoint(content: bytes, *, path: str) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}`` of an offset checkpoint file (§8.2).

    ``OffsetCheckpointFile.Formatter``: ``topic partition offset``, partition by
    ``Integer.parseInt`` and offset by ``Long.parseLong``; a non-number raises
    :class:`Malformed` naming ``NumberFormatException`` (which escapes Kafka's reader unwrapped)
    at that line, before the entry count is compared. If a partition appears twice the later
    line wins, as in Kafka's ``HashMap``. Negative values are returned as written.
    """
    def entry(line: JavaLine, parts: list[str]) -> tuple[tuple[str, int], int]:
        try:
            partition = java_parse_int(parts[1])
            offset = java_parse_long(parts[2])
        except ValueError as exc:
            raise number_format_error(path, line, exc, f"entry line {line.number}") from None
        return (parts[0], partition), offset

    return dict(parse_entries(content, path, OFFSET_CHECKPOINT_VERSION, 3, entry))


def build_offset_checkpoint(offsets: Mapping[tuple[str, int], int]) -> bytes:
    """An offset checkpoint (``topic partition offset`` lines, version 0) in the mapping's order
    (Kafka writes its ``HashMap`` order, which readers must not rely on)."""
    return build_checkpoint([(topic, partition, offset) for (topic, partition), offset in offsets.items()],
                            OFFSET_CHECKPOINT_VERSION)
