"""The timeline joined with the data: which offsets each leader epoch wrote on each replica.

Every v2 batch carries the epoch of the leader that appended it, so a replica's lineage
(:class:`~kreplica.model.log.lineage.LineageEntry` runs) says which epoch wrote which offsets
(``../shared/specs/kafka-algorithms.md`` §1.6). Joined with the epochs the metadata granted
(the timeline's ``after.leader_epoch`` with a leader), per partition:

* ``epoch_evidence``: for each epoch, its leader per the metadata and the offsets each replica
  holds from it;
* epochs the metadata granted that no replica holds (the leader wrote nothing, or the data is
  gone from every copy given);
* zombie epochs: epochs a replica holds that the metadata never granted to a leader, counting
  only epochs from the first one the history knows (earlier ones predate the evidence);
* for each unclean election: the offsets the old leader (the last broker that led before it)
  holds from epochs before the election that the new leader's log does not hold with the same
  epoch at the same offset — the data the election lost — and how many of them lie below the
  old leader's high watermark (acknowledged to producers with ``acks=all``).

Two replicas hold the same record when they hold the same offset from the same epoch (Kafka's
log matching, which epoch-based truncation relies on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.analysis.consumers.elections import end_at_election
from kreplica.analysis.timeline.events import PartitionEvent
from kreplica.model.cluster import NO_LEADER
from kreplica.model.log.lineage import LineageEntry
from kreplica.model.log.partition_log import PartitionLog


@dataclass(frozen=True, slots=True)
class EpochHolding:
    """Offsets ``start_offset`` .. ``end_offset - 1`` of one epoch on one replica."""

    broker: int
    start_offset: int
    end_offset: int


@dataclass(frozen=True, slots=True)
class EpochEvidence:
    topic: str
    partition: int
    epoch: int
    leader: int | None          # per the metadata (-1: recorded with no leader); None: never recorded
    position: int | None        # where the metadata granted it
    time: int | None
    in_metadata: bool
    holdings: tuple[EpochHolding, ...]

    @property
    def start_offset(self) -> int | None:
        return min((h.start_offset for h in self.holdings), default=None)

    @property
    def end_offset(self) -> int | None:
        return max((h.end_offset for h in self.holdings), default=None)


@dataclass(frozen=True, slots=True)
class ElectionLoss:
    """What one unclean election lost: ``first_lost_offset`` .. ``end_offset - 1`` of the old
    leader's log (``lost_offsets`` of them, ``below_high_watermark`` under its high watermark).
    ``None`` values when a replica needed is not among the log directories given (``note``)."""

    topic: str
    partition: int
    position: int
    time: int | None
    leader_epoch: int
    old_leader: int | None
    new_leader: int
    first_lost_offset: int | None
    end_offset: int | None
    lost_offsets: int | None
    below_high_watermark: int | None
    old_high_watermark: int | None
    note: str


@dataclass(frozen=True, slots=True)
class PartitionEvidence:
    topic: str
    partition: int
    brokers: tuple[int, ...]
    first_known_epoch: int | None
    epochs: tuple[EpochEvidence, ...]
    epochs_without_data: tuple[int, ...]
    zombie_epochs: tuple[int, ...]
    losses: tuple[ElectionLoss, ...]

    @property
    def has_problems(self) -> bool:
        return bool(self.zombie_epochs or any(loss.lost_offsets for loss in self.losses))


def _runs_below(runs: Iterable[LineageEntry], epoch: int) -> list[LineageEntry]:
    return [r for r in runs if r.epoch < epoch]


def _run_at(runs: list[LineageEntry], offset: int) -> LineageEntry | None:
    for r in runs:
        if r.start_offset <= offset <= r.last_offset:
            return r
    return None


def lost_range(old: PartitionLog, new: PartitionLog, epoch: int) -> tuple[int, int, int]:
    """``(first lost offset, end, count)``: the old leader's offsets from epochs before ``epoch``
    that the new leader did not hold, with the same epoch, when it was elected at ``epoch``
    (the new leader's log below :func:`~kreplica.analysis.consumers.elections.end_at_election`)."""
    new_end = end_at_election(new, epoch)
    new_runs = [r for r in _runs_below(new.lineage, epoch) if r.start_offset < new_end]
    old_runs = _runs_below(old.lineage, epoch)
    first = None
    for run in old_runs:
        x = run.start_offset
        while x <= run.last_offset:
            held = _run_at(new_runs, x) if x < new_end else None
            if held is None or held.epoch != run.epoch:
                first = x
                break
            x = min(run.last_offset, held.last_offset, new_end - 1) + 1
        if first is not None:
            break
    if first is None:
        end = max((r.last_offset + 1 for r in old_runs), default=0)
        return end, end, 0
    end = max(r.last_offset + 1 for r in old_runs)
    count = sum(r.last_offset + 1 - max(r.start_offset, first) for r in old_runs if r.last_offset >= first)
    return first, end, count


def _loss(ev: PartitionEvent, old_leader: int | None, replicas: Mapping[int, PartitionLog]) -> ElectionLoss:
    epoch = ev.after.leader_epoch
    new_leader = ev.after.leader
    old, new = replicas.get(old_leader) if old_leader is not None else None, replicas.get(new_leader)
    missing = [f"broker {b}" for b, r in ((old_leader, old), (new_leader, new)) if r is None and b is not None]
    if old_leader is None or missing:
        note = ("the history does not say who led before" if old_leader is None
                else f"no replica data for {' and '.join(missing)}: give its log directory with --log-dirs")
        return ElectionLoss(ev.topic, ev.partition, ev.position, ev.time, epoch, old_leader, new_leader,
                            None, None, None, None, old.high_watermark if old is not None else None, note)
    first, end, count = lost_range(old, new, epoch)
    hw = old.high_watermark
    below = max(0, min(hw, end) - first) if hw is not None and count else (0 if count == 0 else None)
    note = (f"broker {new_leader} held everything broker {old_leader} holds from before epoch {epoch}"
            if count == 0 else
            f"broker {old_leader} holds offsets {first}..{end - 1} from epochs before {epoch} that broker "
            f"{new_leader} did not have when it was elected")
    if any(r.epoch >= epoch for r in old.lineage):
        note += f"; broker {old_leader} has since followed the new leader, so its copy may already be truncated"
    return ElectionLoss(ev.topic, ev.partition, ev.position, ev.time, epoch, old_leader, new_leader,
                        first, end, count, below, hw, note)


def join_partition(events: Iterable[PartitionEvent], replicas: Mapping[int, PartitionLog]) -> PartitionEvidence | None:
    """Join one partition's events (in order) with its replicas (broker id → its partition log)."""
    events = list(events)
    if not events:
        return None
    topic, partition = events[0].topic, events[0].partition
    recorded: dict[int, PartitionEvent] = {}     # every epoch the metadata names, leader or not
    granted: set[int] = set()                     # epochs given to a leader
    losses = []
    last_leader: int | None = None
    for ev in events:
        if ev.unclean:
            old = ev.before.leader if ev.before is not None and ev.before.leader != NO_LEADER else last_leader
            losses.append(_loss(ev, old, replicas))
        if ev.after is not None:
            epoch = ev.after.leader_epoch
            first = recorded.get(epoch)
            if first is None or (first.after.leader == NO_LEADER and ev.after.leader != NO_LEADER):
                recorded[epoch] = ev
            if ev.after.leader != NO_LEADER:
                granted.add(epoch)
                last_leader = ev.after.leader
    known = [ev.after.leader_epoch for ev in events if ev.after is not None]
    first_known = min(known) if known else None
    held: dict[int, list[EpochHolding]] = {}
    for broker, log in sorted(replicas.items()):
        per_epoch: dict[int, list[int]] = {}
        for r in log.lineage:
            span = per_epoch.setdefault(r.epoch, [r.start_offset, r.last_offset + 1])
            span[0], span[1] = min(span[0], r.start_offset), max(span[1], r.last_offset + 1)
        for epoch, (start, end) in per_epoch.items():
            held.setdefault(epoch, []).append(EpochHolding(broker, start, end))
    evidence = []
    for epoch in sorted(set(recorded) | set(held)):
        ev = recorded.get(epoch)
        evidence.append(EpochEvidence(topic, partition, epoch, ev.after.leader if ev else None,
                                      ev.position if ev else None, ev.time if ev else None, ev is not None,
                                      tuple(held.get(epoch, ()))))
    without = tuple(e for e in sorted(granted) if e not in held)
    zombies = tuple(e for e in sorted(held) if e not in granted and first_known is not None and e >= first_known)
    return PartitionEvidence(topic, partition, tuple(sorted(replicas)), first_known, tuple(evidence), without,
                             zombies, tuple(losses))
