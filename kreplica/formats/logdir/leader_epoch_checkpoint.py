"""``leader-epoch-checkpoint`` (kafka-formats spec §8.3): a partition replica's epoch lineage.

One file per partition directory: for each leader epoch the replica knows, the first offset
written in it. Kafka's class: ``LeaderEpochCheckpointFile`` in ``storage/src/main/java/org/
apache/kafka/storage/internals/checkpoint/LeaderEpochCheckpointFile.java`` (apache/kafka trunk
2024-10 baseline), over the generic envelope of :mod:`~kreplica.formats.logdir.checkpoint_file`; what
``LeaderEpochFileCache`` makes of the lines on load is the model's
(:mod:`~kreplica.model.log.epoch_cache`).

Layout::

    LeaderEpochCheckpoint => "0" EOL Count EOL (EpochEntry EOL)*
    EpochEntry            => LeaderEpoch WS+ StartOffset   (split on \\s+, exactly 2 parts)
    LeaderEpoch           => Integer.parseInt text
    StartOffset           => Long.parseLong text

No checksum (§8.1); Kafka rewrites the whole file (tmp + rename) whenever the cache changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kreplica.formats._java import JavaLine, java_parse_int, java_parse_long
from kreplica.formats.logdir.checkpoint_file import build_checkpoint, number_format_error, parse_entries

LEADER_EPOCH_CHECKPOINT_VERSION = 0  # LeaderEpochCheckpointFile.CURRENT_VERSION
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"


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
    then ``Long.parseLong``) and the generic rules of :func:`~kreplica.formats.logdir.checkpoint_file.parse_checkpoint`. Nothing is
    repaired: negative values, duplicates and out-of-order lines are returned as they are,
    because what Kafka's ``LeaderEpochFileCache`` makes of them on load is a model decision.
    """
    def entry(line: JavaLine, parts: list[str]) -> EpochEntryLine:
        try:
            epoch = java_parse_int(parts[0])
            start_offset = java_parse_long(parts[1])
        except ValueError as exc:
            raise number_format_error(path, line, exc, f"entry line {line.number}") from None
        return EpochEntryLine(epoch, start_offset, line.number, line.position)

    return parse_entries(content, path, LEADER_EPOCH_CHECKPOINT_VERSION, 2, entry)


def build_leader_epoch_checkpoint(entries: Sequence[tuple[int, int]]) -> bytes:
    """A ``leader-epoch-checkpoint`` holding ``(epoch, start_offset)`` lines, version 0."""
    return build_checkpoint([(epoch, start) for epoch, start in entries], LEADER_EPOCH_CHECKPOINT_VERSION)
