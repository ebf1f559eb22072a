"""Replicas of one ``__consumer_offsets`` partition compared: which answers, where they differ.

Each broker holding a replica of ``__consumer_offsets-N`` would load it as its coordinator if it
became the partition's leader, so each replica gives a state (:mod:`kreplica.model.coordinator.fold`).
The answer is the replica with the highest log end offset (:func:`answering_replica`), for
``groups`` and ``fleet analyze`` alike. Kafka's group coordinator is the leader of the partition,
and it loads *its own* log, from the log start to the log end offset
(``CoordinatorLoaderImpl.doLoad``, ``GroupMetadataManager.doLoadGroupsAndOffsets`` before it:
``FetchIsolation.LOG_END``, not the high watermark); a follower fetches from the leader and is
never ahead of it, so of the replicas at hand the longest log is the leader's, or holds all of
it. Not the replica whose commits reach the highest record offset: a tombstone or group record
after the last commit moves the log end, not the commits (a deleted group's offsets make the
longer log's last commit *older*). A tie goes to the replica given first. Every difference from it is a
:class:`GroupDisagreement`: a group present in one replica and not another, or with another
protocol, state, generation or members; a committed or pending offset present in one and not
another, or with another offset, leader epoch or metadata. Expiry is left out (it follows from
the evaluation time, not from the replica). A follower that lags shows older commits: that is a
disagreement to read, not damage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kreplica.model.coordinator.replay import GroupPartitionState
from kreplica.model.coordinator.groups import CommittedOffset, Group


@dataclass(frozen=True, slots=True)
class GroupDisagreement:
    """Replicas of ``__consumer_offsets-<coordinator_partition>`` differ on ``field`` of ``group``
    (``topic``/``partition`` for an offset; ``None`` for the group itself). ``values`` is each
    replica's label with what it holds (``None``: absent); ``chosen`` the replica that answers."""

    coordinator_partition: int
    group: str
    topic: str | None
    partition: int | None
    field: str
    values: tuple[tuple[str, object], ...]
    chosen: str


def answering_replica(log_end_offsets: Sequence[int]) -> int:
    """Which of the replicas of one ``__consumer_offsets`` partition answers, given their log end
    offsets in the order given: the index of the highest, the first on a tie (module docstring)."""
    best = 0
    for i in range(1, len(log_end_offsets)):
        if log_end_offsets[i] > log_end_offsets[best]:
            best = i
    return best


def choose_replica(states: Sequence[GroupPartitionState]) -> GroupPartitionState:
    """The replica that answers (:func:`answering_replica`)."""
    return states[answering_replica([s.log_end_offset for s in states])]


def _group_view(g: Group | None) -> dict | None:
    if g is None:
        return None
    return {"protocol": g.protocol, "state": g.state, "generation": g.generation,
            "members": sorted(m.member_id for m in g.members)}


def _offset_view(o: CommittedOffset | None) -> dict | None:
    if o is None:
        return None
    return {"offset": o.offset, "leader_epoch": o.leader_epoch, "metadata": o.metadata, "record_offset": o.record_offset}


def _offsets(g: Group | None, pending: bool) -> dict[tuple[str, int, int | None], CommittedOffset]:
    if g is None:
        return {}
    items = g.pending_offsets if pending else g.offsets
    return {(o.topic, o.partition, o.producer_id if pending else None): o for o in items}


def compare_replicas(states: Sequence[GroupPartitionState]) -> tuple[GroupPartitionState, tuple[GroupDisagreement, ...]]:
    """The answering replica of one partition's ``states`` and every disagreement among them
    (group by group, then offset by offset, in name order)."""
    chosen = choose_replica(states)
    if len(states) < 2:
        return chosen, ()
    by_replica = [(s.label, {g.group: g for g in s.groups}) for s in states]
    names = sorted({name for _label, groups in by_replica for name in groups})
    out: list[GroupDisagreement] = []

    def differ(group: str, topic, partition, field: str, views: list[tuple[str, object]]) -> None:
        if any(v != views[0][1] for _label, v in views[1:]):
            out.append(GroupDisagreement(chosen.coordinator_partition, group, topic, partition, field, tuple(views),
                                         chosen.label))

    for name in names:
        groups = [(label, groups.get(name)) for label, groups in by_replica]
        differ(name, None, None, "group", [(label, _group_view(g)) for label, g in groups])
        for pending, field in ((False, "offset"), (True, "pending_offset")):
            per = [(label, _offsets(g, pending)) for label, g in groups]
            for key in sorted({k for _label, offsets in per for k in offsets}, key=lambda k: (k[0], k[1], k[2] or 0)):
                differ(name, key[0], key[1], field, [(label, _offset_view(offsets.get(key))) for label, offsets in per])
    return chosen, tuple(out)
