"""Leader election by the KRaft controller (3.0+), eligible leader replicas included.

Sources: ``metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java``
(``build()`` and its steps, one function here each: ``completeReassignmentIfNeeded``,
``maybePopulateTargetElr``, ``electLeader`` with ``electPreferredLeader``, ``electAnyLeader``,
``canElectLastKnownLeader`` and ``isValidNewLeader``, ``tryElection``,
``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``, ``maybeUpdateRecordElr``,
``triggerLeaderEpochBumpForIsrShrinkIfNeeded``, ``maybeUpdateLastKnownLeader``,
``setAssignmentChanges``), ``PartitionReassignmentReplicas.java`` (``maybeCompleteReassignment``),
``ReplicationControlManager.java`` (``generateLeaderAndIsrUpdates`` for ``handleBrokerFenced``
and ``handleBrokerInControlledShutdown``, ``electLeader`` for ElectLeaders, the periodic unclean
elections of leaderless partitions) at apache/kafka trunk after 3.9; kafka-algorithms spec §4.6.

The record ``build()`` writes is a :class:`~kreplica.model.cluster.partition_change.PartitionChange`,
merged by :func:`~kreplica.model.cluster.partition_change.merge_partition_change`
(``PartitionRegistration.merge``: the partition epoch moves by one, and the leader epoch by one
when the record names a leader, even the same one, even -1). A broker is an acceptable leader when it is registered, not
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
    REASSIGN,
    UNCLEAN_ELECTION,
    ControllerView,
    Election,
    IsrUpdate,
    Key,
    finish,
)
from kreplica.model.cluster import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERING,
    PartitionChange,
    PartitionState,
    merge_partition_change,
)
from kreplica.model.versions import Feature

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


@dataclass(frozen=True, slots=True)
class _Targets:
    """The builder's targets (``targetIsr``, ``targetReplicas``, ``targetRemoving``,
    ``targetAdding``, ``targetElr``): what the partition is to become. Kafka's
    ``targetLastKnownElr`` is left out: in the last-known-leader mode reproduced here (Kafka's
    default, ``useLastKnownLeaderInBalancedRecovery``) it is never written to the record."""

    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    removing: tuple[int, ...]
    adding: tuple[int, ...]
    elr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _ElectionResult:
    """``PartitionChangeBuilder.ElectionResult``: the node elected (``NO_LEADER``: none) and
    whether the election was unclean."""

    node: int
    unclean: bool


def _complete_reassignment_if_needed(t: _Targets) -> _Targets:
    """``completeReassignmentIfNeeded`` (``PartitionReassignmentReplicas.maybeCompleteReassignment``):
    when the target ISR without the removing replicas is not empty and holds every replica that
    stays, the removing replicas leave the replicas and the ISR and nothing is adding or removing."""
    if not (t.removing or t.adding):
        return t
    isr = tuple(r for r in t.isr if r not in t.removing)
    replicas = tuple(r for r in t.replicas if r not in t.removing)
    if isr and all(r in isr for r in replicas):
        return replace(t, isr=isr, replicas=replicas, removing=(), adding=())
    return t


def _maybe_populate_target_elr(p: PartitionState, t: _Targets, *, elr_enabled: bool, min_isr: int,
                               unclean_shutdown: Sequence[int]) -> _Targets:
    """``maybePopulateTargetElr``: with ELR on, a target ISR of at least ``min_isr`` clears the
    ELR; a smaller one makes the ELR the current ELR and ISR members (in ``HashSet`` order) that
    are not in the target ISR and did not shut down uncleanly."""
    if not elr_enabled:
        return t
    if len(t.isr) >= min_isr:
        return replace(t, elr=())
    seed = [*t.elr, *p.isr]             # new HashSet<>(targetElr), then the current ISR
    return replace(t, elr=tuple(r for r in java_hash_set_order(seed) if r not in t.isr and r not in unclean_shutdown))


def _is_valid_new_leader(r: int, t: _Targets, acceptable: Callable[[int], bool]) -> bool:
    """``isValidNewLeader``: in the target ISR, or in the target ELR when the ISR is empty; and acceptable."""
    return (r in t.isr or (not t.isr and r in t.elr)) and acceptable(r)


def _can_elect_last_known_leader(p: PartitionState, t: _Targets, *, elr_enabled: bool) -> bool:
    """``canElectLastKnownLeader``: ELR on, target ELR and ISR empty, and the partition's last
    known ELR holds exactly one broker, the last leader (Kafka only logs whether it is acceptable)."""
    return elr_enabled and not t.elr and not t.isr and len(p.last_known_elr) == 1


def _elect_preferred_leader(p: PartitionState, t: _Targets, acceptable: Callable[[int], bool], *,
                            elr_enabled: bool) -> _ElectionResult:
    """``electPreferredLeader``: the first target replica if valid, else the current leader if
    valid, else the next valid replica, else the last known leader (unclean), else none."""
    preferred = t.replicas[0] if t.replicas else NO_LEADER
    if _is_valid_new_leader(preferred, t, acceptable):
        return _ElectionResult(preferred, False)
    if _is_valid_new_leader(p.leader, t, acceptable):
        return _ElectionResult(p.leader, False)
    node = next((r for r in t.replicas[1:] if _is_valid_new_leader(r, t, acceptable)), None)
    if node is not None:
        return _ElectionResult(node, False)
    if _can_elect_last_known_leader(p, t, elr_enabled=elr_enabled):
        return _ElectionResult(p.last_known_elr[0], True)
    return _ElectionResult(NO_LEADER, False)


def _elect_any_leader(p: PartitionState, t: _Targets, acceptable: Callable[[int], bool], *, election: str,
                      elr_enabled: bool) -> _ElectionResult:
    """``electAnyLeader`` (ONLINE or UNCLEAN): the current leader if valid, else the first valid
    target replica, else the last known leader (unclean), else with UNCLEAN the first acceptable
    replica (unclean), else none."""
    if _is_valid_new_leader(p.leader, t, acceptable):
        return _ElectionResult(p.leader, False)
    node = next((r for r in t.replicas if _is_valid_new_leader(r, t, acceptable)), None)
    if node is not None:
        return _ElectionResult(node, False)
    if _can_elect_last_known_leader(p, t, elr_enabled=elr_enabled):
        return _ElectionResult(p.last_known_elr[0], True)
    if election == E_UNCLEAN:
        node = next((r for r in t.replicas if acceptable(r)), None)
        if node is not None:
            return _ElectionResult(node, True)
    return _ElectionResult(NO_LEADER, False)


def _elect_leader(p: PartitionState, t: _Targets, acceptable: Callable[[int], bool], *, election: str,
                  elr_enabled: bool) -> _ElectionResult:
    """``electLeader``: PREFERRED or any leader."""
    if election == E_PREFERRED:
        return _elect_preferred_leader(p, t, acceptable, elr_enabled=elr_enabled)
    return _elect_any_leader(p, t, acceptable, election=election, elr_enabled=elr_enabled)


def _mark_recovering(p: PartitionState, rec: PartitionChange, *, leader_recovery: bool) -> PartitionChange:
    """``tryElection``'s unclean branch (KIP-704, ``isLeaderRecoverySupported``): the new leader
    starts RECOVERING, unless the partition already is."""
    if p.leader_recovery_state != RECOVERING and leader_recovery:
        return replace(rec, leader_recovery_state=RECOVERING)
    return rec


def _try_election(p: PartitionState, t: _Targets, rec: PartitionChange, result: _ElectionResult, *,
                  leader_recovery: bool) -> tuple[_Targets, PartitionChange]:
    """``tryElection``: a new leader is written; one from the ELR becomes the whole target ISR
    and leaves the ELR; an unclean one becomes the record's whole ISR and is marked RECOVERING."""
    if result.node == p.leader:
        return t, rec
    if result.node in t.elr:
        t = replace(t, isr=(result.node,), elr=tuple(r for r in t.elr if r != result.node))
    rec = replace(rec, leader=result.node)
    if result.unclean:
        rec = _mark_recovering(p, replace(rec, isr=(result.node,)), leader_recovery=leader_recovery)
    return t, rec


def _trigger_leader_epoch_bump_for_replica_reassignment_if_needed(p: PartitionState, t: _Targets,
                                                                   rec: PartitionChange) -> PartitionChange:
    """``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``: a replica set that lost a member
    names the current leader again, so the leader epoch moves."""
    if rec.leader == NO_LEADER_CHANGE and not all(r in t.replicas for r in p.replicas):
        return replace(rec, leader=p.leader)
    return rec


def _maybe_update_record_elr(p: PartitionState, t: _Targets, rec: PartitionChange, *,
                             elr_enabled: bool) -> tuple[_Targets, PartitionChange]:
    """``maybeUpdateRecordElr`` (last-known-leader mode): an unclean election (the record already
    sets the ISR) or ELR off clears the target ELR; the record carries it when it changed."""
    if rec.isr is not None or not elr_enabled:
        t = replace(t, elr=())
    if t.elr != tuple(p.elr):
        rec = replace(rec, elr=t.elr)
    return t, rec


def _set_target_isr(p: PartitionState, t: _Targets, rec: PartitionChange, *, elr_enabled: bool) -> PartitionChange:
    """``build()``'s ISR step: the target ISR when it differs and no unclean election set one; an
    empty ISR only with ELR on."""
    if rec.isr is None and (t.isr or elr_enabled) and t.isr != tuple(p.isr):
        return replace(rec, isr=t.isr)
    return rec


def _trigger_leader_epoch_bump_for_isr_shrink_if_needed(p: PartitionState, rec: PartitionChange, *,
                                                         isr_shrink_bumps_epoch: bool) -> PartitionChange:
    """``triggerLeaderEpochBumpForIsrShrinkIfNeeded`` (metadata.version < 3.6-IV0, KAFKA-15021): an
    ISR that lost a member names the current leader again, so the leader epoch moves."""
    if (isr_shrink_bumps_epoch and rec.leader == NO_LEADER_CHANGE and rec.isr is not None
            and not all(r in rec.isr for r in p.isr)):
        return replace(rec, leader=p.leader)
    return rec


def _maybe_update_last_known_leader(p: PartitionState, rec: PartitionChange, *, elr_enabled: bool) -> PartitionChange:
    """``maybeUpdateLastKnownLeader``: with ELR on, the first time the ISR becomes empty the last
    known ELR records the leader; it is cleared once the partition has, or keeps, a leader."""
    if not elr_enabled:
        return rec
    if rec.isr is not None and not rec.isr and (len(p.last_known_elr) != 1 or p.last_known_elr[0] != p.leader):
        return replace(rec, last_known_elr=(p.leader,))
    if (rec.leader >= 0 or (p.leader != NO_LEADER and rec.leader != NO_LEADER)) and p.last_known_elr:
        return replace(rec, last_known_elr=())
    return rec


def _set_assignment_changes(p: PartitionState, t: _Targets, rec: PartitionChange) -> PartitionChange:
    """``setAssignmentChanges``: the replicas (unless the target is empty), removing and adding
    replicas that changed."""
    if t.replicas and t.replicas != tuple(p.replicas):
        rec = replace(rec, replicas=t.replicas)
    if t.removing != tuple(p.removing_replicas):
        rec = replace(rec, removing_replicas=t.removing)
    if t.adding != tuple(p.adding_replicas):
        rec = replace(rec, adding_replicas=t.adding)
    return rec


def build(p: PartitionState, *, acceptable: Callable[[int], bool], election: str, elr_enabled: bool,
          min_isr: int, leader_recovery: bool, isr_shrink_bumps_epoch: bool,
          target_isr: Sequence[int] | None = None, unclean_shutdown: Sequence[int] = ()) -> BuildResult:
    """``PartitionChangeBuilder.build()`` for partition ``p`` and the record merged into it
    (``PartitionRegistration.merge``), its steps in Kafka's order.

    Complete the reassignment when ISR minus removing covers the replicas minus removing; maintain
    the ELR; run the election; force an epoch bump when the replica set lost a member; finalise
    the ELR; set the ISR; force an epoch bump on an ISR shrink (MV < 3.6-IV0); update the last
    known leader; record assignment changes. No change written: ``after`` is ``None``.
    """
    t = _Targets(isr=tuple(p.isr if target_isr is None else target_isr), replicas=tuple(p.replicas),
                 removing=tuple(p.removing_replicas), adding=tuple(p.adding_replicas), elr=tuple(p.elr))
    t = _complete_reassignment_if_needed(t)
    t = _maybe_populate_target_elr(p, t, elr_enabled=elr_enabled, min_isr=min_isr, unclean_shutdown=unclean_shutdown)
    result = _elect_leader(p, t, acceptable, election=election, elr_enabled=elr_enabled)
    leader_changed = result.node != p.leader
    via_elr = leader_changed and result.node in t.elr
    t, rec = _try_election(p, t, PartitionChange(), result, leader_recovery=leader_recovery)
    rec = _trigger_leader_epoch_bump_for_replica_reassignment_if_needed(p, t, rec)
    t, rec = _maybe_update_record_elr(p, t, rec, elr_enabled=elr_enabled)
    rec = _set_target_isr(p, t, rec, elr_enabled=elr_enabled)
    rec = _trigger_leader_epoch_bump_for_isr_shrink_if_needed(p, rec, isr_shrink_bumps_epoch=isr_shrink_bumps_epoch)
    rec = _maybe_update_last_known_leader(p, rec, elr_enabled=elr_enabled)
    rec = _set_assignment_changes(p, t, rec)
    if rec.is_noop:
        return BuildResult(None, False, False, False)
    return BuildResult(merge_partition_change(p, rec), leader_changed, result.unclean and leader_changed, via_elr)


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

    def on_unclean_election(self, keys: Iterable[Key]) -> list[Election]:
        """ElectLeaders UNCLEAN (``ReplicationControlManager.electLeader``): ELECTION_NOT_NEEDED
        when the partition has a leader; otherwise the builder's UNCLEAN election, and
        ELIGIBLE_LEADERS_NOT_AVAILABLE when it writes nothing (no acceptable replica)."""
        v = self.view
        out = []
        rule = f"{_BUILDER} {E_UNCLEAN}"
        for key in keys:
            p = v.partitions[key]
            if p.leader != NO_LEADER:
                out.append(finish(v, key, UNCLEAN_ELECTION, p, elected=False, unclean=False, rule=rule,
                                  reason=f"ELECTION_NOT_NEEDED: broker {p.leader} leads"))
                continue
            res = self._build(key, E_UNCLEAN)
            if res.after is None:
                out.append(finish(v, key, UNCLEAN_ELECTION, p, elected=False, unclean=False, rule=rule,
                                  reason="ELIGIBLE_LEADERS_NOT_AVAILABLE: no replica of "
                                         f"{list(p.replicas)} is an acceptable leader"))
                continue
            out.append(self._election(key, UNCLEAN_ELECTION, p, res, E_UNCLEAN))
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
