"""The leader-epoch cache: Kafka's ``LeaderEpochFileCache``, in memory.

Source (apache/kafka 3.9): ``storage/src/main/java/org/apache/kafka/storage/internals/epoch/
LeaderEpochFileCache.java``; the 0.11–2.0 behaviour from ``core/src/main/scala/kafka/server/
epoch/LeaderEpochFileCache.scala`` on branch ``2.0``.

An ordered map from leader epoch to the first offset written in it; epochs and start offsets
both strictly increase. How ``assign`` keeps that invariant changed in 2.1 (KAFKA-7415): before,
an out-of-order entry was rejected; since, the newest entry wins and conflicting entries are
removed. The rule is chosen by ``newest_wins`` (see :func:`for_version`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kreplica.model.versions import Feature, KafkaVersion


class EpochEntry(NamedTuple):
    """``(epoch, start_offset)``: the first offset written in ``epoch``."""

    epoch: int
    start_offset: int


@dataclass
class LeaderEpochCache:
    """A mutable cache with Kafka's ``assign`` and truncation rules.

    ``newest_wins`` selects the 2.1+ ``assign`` (truncate conflicting entries); ``False`` gives
    the 0.11–2.0 append-only rule that ignores out-of-order entries.
    """

    newest_wins: bool = True
    entries: list[EpochEntry] = field(default_factory=list)

    @property
    def latest(self) -> EpochEntry | None:
        return self.entries[-1] if self.entries else None

    @property
    def latest_epoch(self) -> int | None:
        return self.entries[-1].epoch if self.entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; True if the cache changed.

        2.1+: a negative value is an error in Kafka (``IllegalArgumentException``), raised here as
        ``ValueError``; the same epoch at a later offset is a no-op; otherwise every trailing entry
        with an epoch or start offset at or above the new one is removed first.
        """
        if self.newest_wins:
            if epoch < 0 or start_offset < 0:
                raise ValueError(f"Received invalid partition leader epoch entry ({epoch}, {start_offset})")
            last = self.latest
            if last is not None and last.epoch == epoch and start_offset >= last.start_offset:
                return False
            while self.entries and (self.entries[-1].epoch >= epoch or self.entries[-1].start_offset >= start_offset):
                self.entries.pop()
            self.entries.append(EpochEntry(epoch, start_offset))
            return True
        last = self.latest
        latest_epoch = last.epoch if last else -1
        latest_start = last.start_offset if last else -1
        if epoch >= 0 and epoch > latest_epoch and start_offset >= latest_start:
            self.entries.append(EpochEntry(epoch, start_offset))
            return True
        return False

    def end_offset_for(self, requested_epoch: int, log_end_offset: int,
                       kafka_version: "KafkaVersion | None" = None) -> EndOffset:
        """See :func:`end_offset_for`."""
        return end_offset_for(self.entries, requested_epoch, log_end_offset, kafka_version)

    def epoch_for_offset(self, offset: int) -> int | None:
        """``epochForOffset``: the epoch whose range holds ``offset``; no upper bound at the LEO."""
        previous = None
        for e in self.entries:
            if e.start_offset == offset:
                return e.epoch
            if e.start_offset > offset:
                return previous
            previous = e.epoch
        return previous

    def previous_epoch(self, epoch: int | None = None) -> int | None:
        """Greatest epoch strictly below ``epoch`` (default: below the latest entry)."""
        if epoch is None:
            return self.entries[-2].epoch if len(self.entries) >= 2 else None
        below = [e.epoch for e in self.entries if e.epoch < epoch]
        return below[-1] if below else None

    def next_epoch(self, epoch: int) -> int | None:
        """Least epoch strictly above ``epoch``."""
        return next((e.epoch for e in self.entries if e.epoch > epoch), None)

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        return next((e for e in self.entries if e.epoch == epoch), None)

    def clear(self) -> None:
        self.entries.clear()

    def copy(self) -> "LeaderEpochCache":
        return LeaderEpochCache(self.newest_wins, list(self.entries))

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop every entry whose start offset is at or after ``end_offset`` (-1: no-op)."""
        if end_offset >= 0 and self.entries and self.entries[-1].start_offset >= end_offset:
            while self.entries and self.entries[-1].start_offset >= end_offset:
                self.entries.pop()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries starting at or before ``start_offset`` but keep the last of them, moved up
        to ``start_offset`` (the epoch that covers the new log start). -1 is a no-op."""
        if start_offset < 0:
            return
        removed = None
        while self.entries and self.entries[0].start_offset <= start_offset:
            removed = self.entries.pop(0)
        if removed is not None:
            self.entries.insert(0, EpochEntry(removed.epoch, start_offset))


UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EndOffset(NamedTuple):
    """What ``endOffsetFor`` returns: ``(leader_epoch, end_offset)``; (-1, -1) means undefined."""

    leader_epoch: int
    end_offset: int


#: ``endOffsetFor``'s answer for an epoch it has no end offset for.
UNDEFINED_END_OFFSET = EndOffset(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def end_offset_for(entries: list[EpochEntry] | tuple[EpochEntry, ...], requested_epoch: int, log_end_offset: int,
                   kafka_version: "KafkaVersion | None" = None) -> EndOffset:
    """``LeaderEpochFileCache.endOffsetFor`` as a broker of ``kafka_version`` answers it.

    2.1+ (default): -1 → (-1, -1); the latest epoch → (epoch, LEO); above every entry (or empty)
    → (-1, -1); below the first entry → (requested, first start) — the requested epoch echoed;
    otherwise (greatest epoch <= requested, start of the next higher epoch).
    2.0 (KIP-279): the same except below the first entry → (-1, -1).
    0.11–1.1 (KIP-101, offset only; the epoch is reported as -1): below the first entry → -1; an
    empty cache answers the LEO even for -1 (the "latest" row matches -1 == -1) until KAFKA-6857,
    which is in 2.0 and was backported to 0.11.0.3, 1.0.2 and 1.1.1.
    """
    newest = kafka_version is None or kafka_version.has(Feature.END_OFFSET_ECHOES_EPOCH_BELOW_FIRST)
    kip279 = kafka_version is None or kafka_version.has(Feature.KIP_279_EPOCH_COMPARISON)
    undefined_first = kafka_version is None or kafka_version.has(Feature.UNDEFINED_EPOCH_ANSWERS_UNDEFINED)
    latest = entries[-1].epoch if entries else UNDEFINED_EPOCH
    if requested_epoch == UNDEFINED_EPOCH and (undefined_first or entries):
        return UNDEFINED_END_OFFSET
    if not kip279 and requested_epoch == latest:
        return EndOffset(UNDEFINED_EPOCH, log_end_offset)
    if entries and requested_epoch == latest:
        return EndOffset(requested_epoch, log_end_offset)
    higher = next((e for e in entries if e.epoch > requested_epoch), None)
    if higher is None:
        return UNDEFINED_END_OFFSET
    floor = None
    for e in entries:
        if e.epoch <= requested_epoch:
            floor = e
        else:
            break
    if floor is None:
        if newest:
            return EndOffset(requested_epoch, entries[0].start_offset)
        return UNDEFINED_END_OFFSET
    if not kip279:
        return EndOffset(UNDEFINED_EPOCH, higher.start_offset)
    return EndOffset(floor.epoch, higher.start_offset)


def for_version(kafka_version: KafkaVersion) -> LeaderEpochCache:
    """An empty cache with the ``assign`` rule of a broker at ``kafka_version``."""
    return LeaderEpochCache(newest_wins=kafka_version.has(Feature.EPOCH_CACHE_LAST_WRITE_WINS))
