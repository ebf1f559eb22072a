"""Leader election by the KRaft controller (3.0+), eligible leader replicas included.

Sources: ``metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java``
(``electLeader``, ``electPreferredLeader``, ``electAnyLeader``, ``canElectLastKnownLeader``,
``isValidNewLeader``, ``tryElection``, ``maybePopulateTargetElr``, ``maybeUpdateRecordElr``,
``maybeUpdateLastKnownLeader``, the ``build()`` order), ``PartitionReassignmentReplicas.java``
(``maybeCompleteReassignment``), ``ReplicationControlManager.java``
(``generateLeaderAndIsrUpdates`` for ``handleBrokerFenced`` and
``handleBrokerInControlledShutdown``, ``electLeader`` for ElectLeaders, the periodic unclean
elections of leaderless partitions) and ``PartitionRegistration.merge`` at apache/kafka trunk
after 3.9; kafka-algorithms spec §4.6.

A change record bumps the partition epoch by one, and the leader epoch by one when it names a
leader (even the same one, even -1). A broker is an acceptable leader when it is registered, not
fenced and not in controlled shutdown (``LeaderAcceptor``; the broker being fenced or shut down is
excluded explicitly). ELR (KIP-966) is on when the emulated version has it and the metadata
finalized ``eligible.leader.replicas.version`` ≥ 1; the minimum ISR is the topic's effective
``min.insync.replicas`` (capped at the replication factor). Java's ``HashSet`` iteration order is
reproduced for the ELR lists (:func:`java_hash_set_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from kreplica.analysis.election.common import (
    CONTROLLED_SHUTDOWN,
    OFFLINE,
    PREFERRED,
    RECOVERING,
    REASSIGN,
    ControllerView,
    Election,
    IsrUpdate,
    Key,
    finish,
)
from kreplica.model.cluster import NO_LEADER, PartitionState
from kreplica.model.versions import Feature

NO_LEADER_CHANGE = -2
ELR_FEATURE = "eligible.leader.replicas.version"

#: election types (``PartitionChangeBuilder.Election``)
E_PREFERRED, E_ONLINE, E_UNCLEAN = "PREFERRED", "ONLINE", "UNCLEAN"

_BUILDER = "PartitionChangeBuilder"


def java_hash_set_order(values: Iterable[int]) -> list[int]:
    """The iteration order of a ``java.util.HashSet<Integer>`` built by adding ``values`` in
    order: buckets by ``(h ^ h >>> 16) & (capacity - 1)``, each bucket in insertion order; the
    table starts at 16 and doubles when the size exceeds 3/4 of it."""
    seen: list[int] = []
    for x in values:
        if x not in seen:
            seen.append(x)
    capacity = 16
    while len(seen) > capacity * 3 // 4:
        capacity *= 2

    def bucket(x: int) -> int:
        h = x & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(seen, key=lambda x: bucket(x))   # sorted is stable: insertion order within a bucket


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What ``build()`` decided: the merged record (``None``: no record), whether the election
    chose a new leader, and whether it was unclean."""

    after: PartitionState | None
    leader_changed: bool
    unclean: bool
    via_elr: bool


def build(p: PartitionState, *, acceptable: Callable[[int], bool], election: str, elr_enabled: bool,
          min_isr: int, leader_recovery: bool, isr_shrink_bumps_epoch: bool,
          target_isr: Sequence[int] | None = None, unclean_shutdown: Sequence[int] = ()) -> BuildResult:
    """``PartitionChangeBuilder.build()`` for partition ``p`` and the record merged into it.

    Order: complete the reassignment when ISR minus removing covers the replicas minus
    removing; maintain the ELR; run the election; force an epoch bump when the replica set lost
    a member; finalise ELR and last known ELR; set the ISR; force an epoch bump on an ISR shrink
    (MV < 3.6-IV0); update the last known leader; record assignment changes.
    """
    t_isr = list(p.isr if target_isr is None else target_isr)
    t_replicas = list(p.replicas)
    t_removing = list(p.removing_replicas)
    t_adding = list(p.adding_replicas)
    t_elr = list(p.elr)
    t_lkelr = list(p.last_known_elr)
    rec: dict = {}

    # completeReassignmentIfNeeded (PartitionReassignmentReplicas.maybeCompleteReassignment)
    if t_removing or t_adding:
        new_isr = [r for r in t_isr if r not in t_removing]
        new_replicas = [r for r in t_replicas if r not in t_removing]
        if new_isr and all(r in new_isr for r in new_replicas):
            t_isr, t_replicas, t_removing, t_adding = new_isr, new_replicas, [], []

    # maybePopulateTargetElr
    if elr_enabled:
        if len(t_isr) >= min_isr:
            t_elr, t_lkelr = [], []
        else:
            seed = [*t_elr, *p.isr]             # new HashSet<>(targetElr), then the current ISR
            t_elr = [r for r in java_hash_set_order(seed) if r not in t_isr and r not in unclean_shutdown]
            grown = java_hash_set_order([*seed, *t_lkelr])      # candidateSet.addAll(targetLastKnownElr)
            t_lkelr = [r for r in grown if r not in t_isr and r not in t_elr]

    def valid(r: int) -> bool:
        return (r in t_isr or (not t_isr and r in t_elr)) and acceptable(r)

    def can_elect_last_known() -> bool:
        return elr_enabled and not t_elr and not t_isr and len(p.last_known_elr) == 1

    # electLeader
    unclean = False
    if election == E_PREFERRED:
        preferred = t_replicas[0] if t_replicas else NO_LEADER
        if valid(preferred):
            node = preferred
        elif valid(p.leader):
            node = p.leader
        else:
            node = next((r for r in t_replicas[1:] if valid(r)), None)
            if node is None:
                if can_elect_last_known():
                    node, unclean = p.last_known_elr[0], True
                else:
                    node = NO_LEADER
    else:
        if valid(p.leader):
            node = p.leader
        else:
            node = next((r for r in t_replicas if valid(r)), None)
            if node is None:
                if can_elect_last_known():
                    node, unclean = p.last_known_elr[0], True
                elif election == E_UNCLEAN and any(acceptable(r) for r in t_replicas):
                    node, unclean = next(r for r in t_replicas if acceptable(r)), True
                else:
                    node = NO_LEADER

    # tryElection
    leader_changed = node != p.leader
    via_elr = False
    if leader_changed:
        if node in t_elr:
            t_isr = [node]
            t_elr = [r for r in t_elr if r != node]
            via_elr = True
        rec["leader"] = node
        if unclean:
            rec["isr"] = [node]
            if p.leader_recovery_state != RECOVERING and leader_recovery:
                rec["leader_recovery_state"] = RECOVERING
    else:
        unclean = False

    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded
    if "leader" not in rec and not all(r in t_replicas for r in p.replicas):
        rec["leader"] = p.leader

    # maybeUpdateRecordElr (last known leader mode, the default)
    clean = "isr" not in rec
    if not clean or not elr_enabled:
        t_elr, t_lkelr = [], []
    if t_elr != list(p.elr):
        rec["elr"] = list(t_elr)

    # the ISR
    if "isr" not in rec and (t_isr or elr_enabled) and t_isr != list(p.isr):
        rec["isr"] = list(t_isr)

    # triggerLeaderEpochBumpForIsrShrinkIfNeeded
    if isr_shrink_bumps_epoch and "leader" not in rec and "isr" in rec and not all(r in rec["isr"] for r in p.isr):
        rec["leader"] = p.leader

    # maybeUpdateLastKnownLeader
    if elr_enabled:
        new_leader = rec.get("leader", NO_LEADER_CHANGE)
        if "isr" in rec and not rec["isr"] and (len(p.last_known_elr) != 1 or p.last_known_elr[0] != p.leader):
            rec["last_known_elr"] = [p.leader]
        elif (new_leader >= 0 or (p.leader != NO_LEADER and new_leader != NO_LEADER)) and p.last_known_elr:
            rec["last_known_elr"] = []

    # setAssignmentChanges
    if t_replicas and t_replicas != list(p.replicas):
        rec["replicas"] = t_replicas
    if t_removing != list(p.removing_replicas):
        rec["removing_replicas"] = t_removing
    if t_adding != list(p.adding_replicas):
        rec["adding_replicas"] = t_adding

    if not rec:
        return BuildResult(None, False, False, False)
    # PartitionRegistration.merge
    changes: dict = {"version": (p.version or 0) + 1}
    for k in ("isr", "replicas", "removing_replicas", "adding_replicas", "elr", "last_known_elr"):
        if k in rec:
            changes[k] = tuple(rec[k])
    if "leader" in rec:
        changes["leader"] = rec["leader"]
        changes["leader_epoch"] = p.leader_epoch + 1
    if "leader_recovery_state" in rec:
        changes["leader_recovery_state"] = rec["leader_recovery_state"]
    return BuildResult(replace(p, **changes), leader_changed, unclean, via_elr)


class KraftRules:
    """The KRaft controller (``ReplicationControlManager`` + ``PartitionChangeBuilder``)."""

    name = "kraft"

    def __init__(self, view: ControllerView) -> None:
        self.view = view

    # -- helpers -----------------------------------------------------------------------------
    def _min_isr(self, key: Key) -> int:
        """``getTopicEffectiveMinIsr``: ``min.insync.replicas`` capped at the replication factor."""
        p = self.view.partitions[key]
        return max(1, min(self.view.min_isr(key[0]), len(p.replicas) or 1))

    def _build(self, key: Key, election: str, *, excluded: int | None = None,
               target_isr: Sequence[int] | None = None) -> BuildResult:
        v = self.view

        def acceptable(r: int) -> bool:
            return r != excluded and v.online(r)

        return build(v.partitions[key], acceptable=acceptable, election=election, elr_enabled=v.elr_enabled,
                     min_isr=self._min_isr(key), leader_recovery=v.version.has(Feature.LEADER_RECOVERY_STATE),
                     isr_shrink_bumps_epoch=v.version.has(Feature.KRAFT_ISR_SHRINK_BUMPS_EPOCH),
                     target_isr=target_isr)

    def _type(self, key: Key) -> str:
        """ONLINE, or UNCLEAN when the topic allows unclean election."""
        return E_UNCLEAN if self.view.unclean_enabled(key[0]) else E_ONLINE

    def _reason(self, before: PartitionState, res: BuildResult, election: str) -> str:
        after = res.after or before
        if not res.leader_changed or after.leader == NO_LEADER:
            if after.leader == NO_LEADER or not self.view.online(after.leader):
                live = [r for r in before.replicas if self.view.online(r)]
                if not live:
                    return f"no replica of {list(before.replicas)} is an acceptable leader"
                return (f"no acceptable replica is in the ISR {list(after.isr)}"
                        + (f" or the ELR {list(after.elr)}" if self.view.elr_enabled else "")
                        + ("" if election == E_UNCLEAN else "; unclean leader election is not allowed"))
            return f"leader {after.leader} is still valid (in the ISR and acceptable)"
        if res.via_elr:
            return f"elected from the eligible leader replicas (KIP-966): ISR becomes [{after.leader}]"
        if res.unclean:
            if before.last_known_elr and before.last_known_elr[0] == after.leader and not before.isr:
                return "the last known leader is elected (KIP-966 balanced recovery; counted unclean)"
            return "no ISR member is acceptable; UNCLEAN: the first acceptable replica in replica order"
        return f"first replica in {list(before.replicas)} that is in the ISR and acceptable"

    def _election(self, key: Key, kind: str, before: PartitionState, res: BuildResult, election: str) -> Election:
        v = self.view
        if res.after is not None:
            v.partitions[key] = res.after
        return finish(v, key, kind, before, elected=res.leader_changed and v.partitions[key].leader != NO_LEADER,
                      unclean=res.unclean, reason=self._reason(before, res, election),
                      rule=f"{_BUILDER} {election}")

    def _isr_removal(self, broker: int, kind: str, context: str) -> list[Election]:
        """``generateLeaderAndIsrUpdates(brokerToRemove=broker)`` over the partitions with the
        broker in their ISR: target ISR without it; an election result for the partitions it
        led (and any whose leader changes), an ISR update for the others."""
        v = self.view
        out = []
        for key, p in list(v.partitions.items()):
            if broker not in p.isr:
                continue
            election = self._type(key)
            res = self._build(key, election, excluded=broker, target_isr=[r for r in p.isr if r != broker])
            if p.leader == broker or res.leader_changed:
                out.append(self._election(key, kind, p, res, election))
            elif res.after is not None:
                v.partitions[key] = res.after
                v.isr_updates.append(IsrUpdate(key, p, res.after, f"broker {broker} leaves the ISR ({context})"))
        return out

    # -- the controller's events -------------------------------------------------------------
    def on_current_state(self) -> list[Election]:
        """With no scenario: an election for every leaderless partition, UNCLEAN where the topic
        allows it (the periodic unclean elections), ONLINE otherwise (what a broker
        registration or unfencing triggers)."""
        v = self.view
        out = []
        for key in v.offline_keys():
            election = self._type(key)
            before = v.partitions[key]
            out.append(self._election(key, OFFLINE, before, self._build(key, election), election))
        return out

    def on_broker_failure(self, dead: Sequence[int]) -> list[Election]:
        """``handleBrokerFenced`` for each broker (heartbeats stop, the session times out), in
        ascending id order, then the leaderless partitions get an election (as on the current
        state)."""
        v = self.view
        out = []
        for broker in sorted(set(dead)):
            out += self._isr_removal(broker, OFFLINE, "handleBrokerFenced")
            v.alive.discard(broker)
            v.shutting_down.discard(broker)
        done = {e.key for e in out}
        for key in v.offline_keys():
            if key in done:
                continue
            election = self._type(key)
            before = v.partitions[key]
            out.append(self._election(key, OFFLINE, before, self._build(key, election), election))
        return out

    def on_controlled_shutdown(self, broker: int) -> list[Election]:
        """``handleBrokerInControlledShutdown``: the broker is excluded as a leader and removed
        from every ISR; the partitions it led elect (ONLINE, or UNCLEAN where allowed)."""
        out = self._isr_removal(broker, CONTROLLED_SHUTDOWN, "handleBrokerInControlledShutdown")
        self.view.shutting_down.add(broker)
        return out

    def on_reassignment_complete(self, keys: Iterable[Key]) -> list[Election]:
        """The adding replicas join the ISR one AlterPartition at a time (partition epoch + 1
        each); the ``build()`` that makes ISR minus removing cover the replicas minus removing
        completes the reassignment: removed replicas leave, the leader is re-elected if it was
        removed, and the shrunk replica set bumps the leader epoch."""
        v = self.view
        out = []
        for key in keys:
            p = v.partitions[key]
            if not (p.adding_replicas or p.removing_replicas):
                continue
            before = p
            target = [r for r in p.replicas if r not in p.removing_replicas]
            missing = [r for r in target if r not in p.isr]
            dead = [r for r in missing if not v.online(r)]
            if p.leader == NO_LEADER or not v.online(p.leader) or dead:
                why = (f"target replicas {dead} are not alive and cannot join the ISR" if dead
                       else "the partition has no live leader for the new replicas to catch up from")
                out.append(finish(v, key, REASSIGN, before, elected=False, unclean=False,
                                  rule=f"{_BUILDER} (PartitionReassignmentReplicas)",
                                  reason=f"the reassignment to {target} cannot complete: {why}"))
                continue
            election = self._type(key)
            res = BuildResult(None, False, False, False)
            isr = list(p.isr)
            for r in missing or [None]:
                if r is not None:
                    isr.append(r)
                res = self._build(key, election, target_isr=isr)
                if res.after is not None:
                    v.partitions[key] = res.after
            after = v.partitions[key]
            moved = after.leader != before.leader
            reason = (f"leader {before.leader} is removed: the first target replica of {target} in the ISR "
                      "and acceptable" if moved else
                      f"leader {before.leader} stays; the replica set shrinks, so the leader epoch is bumped"
                      if after.leader_epoch != before.leader_epoch else f"leader {before.leader} stays")
            out.append(finish(v, key, REASSIGN, before, elected=True, unclean=res.unclean, reason=reason,
                              rule=f"{_BUILDER} (PartitionReassignmentReplicas)"))
        return out

    def on_preferred(self, keys: Iterable[Key]) -> list[Election]:
        """ElectLeaders PREFERRED (``ReplicationControlManager.electLeader``): ELECTION_NOT_NEEDED
        when ``replicas[0]`` leads; PREFERRED_LEADER_NOT_AVAILABLE when the builder writes
        nothing (the preferred replica is not valid and the current leader is)."""
        v = self.view
        out = []
        for key in keys:
            p = v.partitions[key]
            rule = f"{_BUILDER} {E_PREFERRED}"
            if p.replicas and p.leader == p.replicas[0]:
                out.append(finish(v, key, PREFERRED, p, elected=False, unclean=False, rule=rule,
                                  reason=f"ELECTION_NOT_NEEDED: the preferred replica {p.replicas[0]} already leads"))
                continue
            res = self._build(key, E_PREFERRED)
            if res.after is None:
                out.append(finish(v, key, PREFERRED, p, elected=False, unclean=False, rule=rule,
                                  reason=f"PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica "
                                         f"{p.replicas[0] if p.replicas else None} is not in the ISR or not "
                                         "acceptable"))
                continue
            e = self._election(key, PREFERRED, p, res, E_PREFERRED)
            if res.leader_changed and e.after.leader == (p.replicas[0] if p.replicas else None):
                e = replace(e, reason=f"the preferred replica {e.after.leader} is in the ISR and acceptable")
            out.append(e)
        return out
