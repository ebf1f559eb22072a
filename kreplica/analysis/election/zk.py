"""Leader election by the ZooKeeper controller of Kafka 1.1 – 3.9.

Sources: ``core/src/main/scala/kafka/controller/Election.scala`` (``leaderForOffline``,
``leaderForReassign``, ``leaderForPreferredReplica``, ``leaderForControlledShutdown``),
``PartitionStateMachine.scala`` (``PartitionLeaderElectionAlgorithms``,
``collectUncleanLeaderElectionState``), ``ReplicaStateMachine.scala`` (OfflineReplica's
``removeReplicasFromIsr``) and ``KafkaController.scala`` (``onBrokerFailure``,
``onReplicasBecomeOffline``, ``doControlledShutdown``, ``onPartitionReassignment``,
``onReplicaElection``) at apache/kafka 3.9; kafka-algorithms spec §4.1 – §4.4 and §5.5.

Every controller write is ``LeaderAndIsr.newLeaderAndIsr``: leader epoch + 1, and the
conditional ``setData`` makes the state znode's version + 1. Elections never run for topics
queued for deletion. :class:`ZkRules` holds the per-partition rules and the event sequences;
:mod:`~kreplica.analysis.election.legacy` overrides the rules that differ before 1.1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kreplica.analysis.election.common import (
    CONTROLLED_SHUTDOWN,
    OFFLINE,
    PREFERRED,
    REASSIGN,
    UNCLEAN_ELECTION,
    UNCLEAN_YES,
    ControllerView,
    Election,
    IsrUpdate,
    Key,
    bump,
    finish,
)
from kreplica.model.cluster import NO_LEADER, RECOVERING, PartitionState
from kreplica.model.versions import Feature

_ELECTION = "Election.scala"


class ZkRules:
    """The ZooKeeper controller of 1.1 – 3.9 (``Election.scala``)."""

    name = "zookeeper"

    def __init__(self, view: ControllerView) -> None:
        self.view = view
        self.deleting = set(view.state.pending.topic_deletions)

    # -- per-partition rules ---------------------------------------------------------------
    def offline_leader(self, key: Key, p: PartitionState) -> tuple[int | None, tuple[int, ...], bool, str]:
        """``leaderForOffline``: (leader or None, new ISR, unclean?, reason).

        The first replica in assignment order that is online and in the ISR; when no ISR member
        is online and unclean election is allowed (the topic's config, or as ``--unclean-allowed
        yes`` says), the first online replica in assignment order, with ISR
        ``[leader]``. A clean election keeps the ISR members that are online, in ISR order.
        """
        v = self.view
        live = [r for r in p.replicas if v.online(r)]
        leader = next((r for r in live if r in p.isr), None)
        if leader is not None:
            return leader, tuple(r for r in p.isr if v.online(r)), False, (
                f"first replica in assignment order {list(p.replicas)} that is alive and in the ISR")
        if not v.unclean_enabled(key[0]):
            return None, p.isr, False, self._no_leader_reason(p, live)
        if not live:
            return None, p.isr, False, f"no replica of {list(p.replicas)} is alive"
        how = ("an admin UNCLEAN election (ElectLeaders, KIP-460)" if v.admin_unclean else
               "unclean.leader.election.enable (true by --unclean-allowed yes)" if v.unclean_mode == UNCLEAN_YES
               else "unclean.leader.election.enable")
        return live[0], (live[0],), True, (
            f"no ISR member of {list(p.isr)} is alive; {how} allows the first live replica in assignment order")

    def _no_leader_reason(self, p: PartitionState, live: list[int]) -> str:
        if not live:
            return f"no replica of {list(p.replicas)} is alive"
        return (f"no ISR member of {list(p.isr)} is alive and unclean leader election is not allowed "
                f"(live replicas {live} are out of sync)")

    def new_partition_leader(self, p: PartitionState) -> tuple[int | None, tuple[int, ...]]:
        """NewPartition → OnlinePartition (``initializeLeaderAndIsrForPartitions``): the first
        online replica leads, the online replicas are the ISR, epoch 0, znode version 0."""
        live = tuple(r for r in p.replicas if self.view.online(r))
        return (live[0] if live else None), live

    def preferred_leader(self, p: PartitionState) -> int | None:
        """``leaderForPreferredReplica``: ``A[0]`` if online and in the ISR, else none."""
        if p.replicas and self.view.online(p.replicas[0]) and p.replicas[0] in p.isr:
            return p.replicas[0]
        return None

    def reassign_leader(self, p: PartitionState, target: Sequence[int]) -> int | None:
        """``leaderForReassign``: the first target replica that is online and in the ISR."""
        return next((r for r in target if self.view.online(r) and r in p.isr), None)

    def controlled_shutdown_leader(self, p: PartitionState, shutting: set[int]) -> tuple[int | None, tuple[int, ...]]:
        """``leaderForControlledShutdown``: the first replica in assignment order that is live or
        shutting down, in the ISR and not shutting down; new ISR: the ISR minus the brokers
        shutting down."""
        v = self.view
        new_isr = tuple(r for r in p.isr if r not in shutting)
        leader = next((r for r in p.replicas if v.live_or_shutting_down(r) and r in p.isr and r not in shutting), None)
        return leader, new_isr

    def remove_from_isr(self, key: Key, replica: int) -> None:
        """OfflineReplica (``removeReplicasFromIsr``): for a partition whose ISR holds
        ``replica``, leader -1 if it led, the ISR without it unless it is the last member
        (1.1+ always keeps the last member); one write, epoch + 1."""
        v = self.view
        p = v.partitions[key]
        if replica not in p.isr:
            return
        leader = NO_LEADER if p.leader == replica else p.leader
        isr = p.isr if len(p.isr) == 1 else tuple(r for r in p.isr if r != replica)
        after = v.write(key, **bump(p, leader=leader, isr=isr))
        v.isr_updates.append(IsrUpdate(key, p, after, f"replica {replica} goes offline (OfflineReplica)"))

    # -- the controller's events -----------------------------------------------------------
    def _electable(self, keys: Iterable[Key]) -> list[Key]:
        return [k for k in keys if k[0] not in self.deleting]

    def _offline_election(self, key: Key) -> tuple[bool, bool, str, str]:
        """Run the offline (or new-partition) election on ``key``; (elected, unclean, reason, rule)."""
        v = self.view
        p = v.partitions[key]
        if p.version is None:     # no state znode: NewPartition
            leader, isr = self.new_partition_leader(p)
            if leader is None:
                return False, False, "no assigned replica is alive (the partition has no state yet)", \
                    "PartitionStateMachine.initializeLeaderAndIsrForPartitions"
            v.write(key, leader=leader, isr=isr, leader_epoch=0, version=0)
            return True, False, "a new partition: the first live replica leads", \
                "PartitionStateMachine.initializeLeaderAndIsrForPartitions"
        leader, isr, unclean, reason = self.offline_leader(key, p)
        rule = f"{_ELECTION} leaderForOffline"
        if leader is None:
            return False, False, reason, rule
        changes = {"leader": leader, "isr": isr}
        if unclean and v.version.has(Feature.LEADER_RECOVERY_STATE):
            changes["leader_recovery_state"] = RECOVERING    # newRecoveringLeaderAndIsr
        v.write(key, **bump(p, **changes))
        return True, unclean, reason, rule

    def on_current_state(self) -> list[Election]:
        """With no scenario: what a controller taking over now does (``onControllerFailover``):
        the replica state machine starts first and, from 2.3 (KAFKA-3143), sends every replica
        on a broker that is not alive to OfflineReplica (an ISR write each, ascending broker id,
        topics queued for deletion included: their replicas start in ReplicaDeletionIneligible, a
        valid previous state; before 2.3 it only sends the live replicas to OnlineReplica, which
        writes nothing), then the partition state machine runs the offline election for every
        partition without an online leader whose topic is not queued for deletion
        (``triggerOnlinePartitionStateChange``)."""
        v = self.view
        befores = {}
        gone = sorted({r for p in v.partitions.values() for r in (*p.replicas, *p.isr) if r not in v.alive})
        for broker in gone if v.version.has(Feature.CONTROLLER_STARTUP_OFFLINE_REPLICAS) else ():
            for key, p in list(v.partitions.items()):
                if broker in p.replicas:    # topics queued for deletion too (ReplicaDeletionIneligible)
                    befores.setdefault(key, p)
                    self.remove_from_isr(key, broker)
        out = []
        for key in self._electable(v.offline_keys()):
            before = befores.get(key, v.partitions[key])
            elected, unclean, reason, rule = self._offline_election(key)
            out.append(finish(v, key, OFFLINE, before, elected=elected, unclean=unclean, reason=reason, rule=rule))
        return out

    def on_broker_failure(self, dead: Sequence[int]) -> list[Election]:
        """``onBrokerFailure`` → ``onReplicasBecomeOffline``: the dead brokers leave the live
        set; every partition whose leader is not online (including those already offline) goes
        through the offline election; then each dead broker's replicas go OfflineReplica, one
        ISR write per broker in ascending id order (``processBrokerChange`` sorts them)."""
        v = self.view
        dead = sorted(set(dead))
        v.alive.difference_update(dead)
        v.shutting_down.difference_update(dead)
        pending = []
        for key in self._electable(v.offline_keys()):
            before = v.partitions[key]
            pending.append((key, before, *self._offline_election(key)))
        for broker in dead:
            for key, p in list(v.partitions.items()):
                if broker in p.replicas and key[0] not in self.deleting:
                    self.remove_from_isr(key, broker)
        return [finish(v, key, OFFLINE, before, elected=e, unclean=u, reason=r, rule=rule)
                for key, before, e, u, r, rule in pending]

    def on_controlled_shutdown(self, broker: int) -> list[Election]:
        """``doControlledShutdown``: the broker joins the shutting-down set; partitions it leads
        (replication factor > 1) elect a new leader; partitions it follows have its replica go
        OfflineReplica (an ISR write). A failed election writes nothing: the broker keeps
        leading and reports the partition as remaining."""
        v = self.view
        v.shutting_down.add(broker)
        led, followed = [], []
        for key, p in v.partitions.items():
            if broker not in p.replicas or len(p.replicas) <= 1 or key[0] in self.deleting:
                continue
            (led if p.leader == broker else followed).append(key)
        out = []
        rule = f"{_ELECTION} leaderForControlledShutdown"
        for key in led:
            p = v.partitions[key]
            leader, isr = self.controlled_shutdown_leader(p, v.shutting_down)
            if leader is None:
                out.append(finish(v, key, CONTROLLED_SHUTDOWN, p, elected=False, unclean=False, rule=rule,
                                  reason=f"no other ISR member of {list(p.isr)} is alive: broker {broker} keeps "
                                         "leading and its shutdown reports the partition as remaining"))
                continue
            v.write(key, **bump(p, leader=leader, isr=isr))
            out.append(finish(v, key, CONTROLLED_SHUTDOWN, p, elected=True, unclean=False, rule=rule,
                              reason=self._shutdown_reason(p)))
        for key in followed:
            self.remove_from_isr(key, broker)
        return out

    def _shutdown_reason(self, p: PartitionState) -> str:
        return (f"first replica in assignment order {list(p.replicas)} that is in the ISR and not shutting down")

    def on_reassignment_complete(self, keys: Iterable[Key]) -> list[Election]:
        """The end of ``onPartitionReassignment`` (KIP-455 phase B; the ≤ 2.3 steps 4 – 10 give
        the same records): the adding replicas catch up (the leader adds each to the ISR: znode
        version + 1, no epoch change); if the leader is not in the target replicas or not
        online, the reassignment election (``leaderForReassign``, ISR unchanged), otherwise an
        epoch bump (``newEpoch``); each removed replica goes OfflineReplica; the replica list
        becomes the target. Nothing happens when an adding replica or the leader is not alive."""
        v = self.view
        out = []
        rule = f"{_ELECTION} leaderForReassign"
        for key in self._electable(keys):
            target = v.reassignment_target(key)
            if target is None:
                continue
            before = v.partitions[key]
            p = before
            missing = [r for r in target if r not in p.isr]
            dead = [r for r in missing if not v.online(r)]
            if p.leader == NO_LEADER or not v.online(p.leader) or dead:
                why = (f"target replicas {dead} are not alive and cannot join the ISR" if dead
                       else "the partition has no live leader for the new replicas to catch up from")
                out.append(finish(v, key, REASSIGN, before, elected=False, unclean=False, rule=rule,
                                  reason=f"the reassignment to {list(target)} cannot complete: {why}"))
                continue
            if missing:     # leader-initiated ISR expansions (AlterPartition / direct write)
                p = v.write(key, isr=p.isr + tuple(missing),
                            version=None if p.version is None else p.version + len(missing))
            if p.leader not in target:
                leader = self.reassign_leader(p, target)
                if leader is None:
                    out.append(finish(v, key, REASSIGN, before, elected=False, unclean=False, rule=rule,
                                      reason=f"no target replica of {list(target)} is alive and in the ISR"))
                    continue
                v.write(key, **bump(p, leader=leader))
                reason = (f"leader {p.leader} is not a target replica: the first of {list(target)} that is "
                          "alive and in the ISR")
            else:
                v.write(key, **bump(p))
                reason = f"leader {p.leader} stays (a target replica, alive): the epoch is bumped (newEpoch)"
            for r in [r for r in p.replicas if r not in target]:
                self.remove_from_isr(key, r)
            v.write(key, replicas=tuple(target), adding_replicas=(), removing_replicas=())
            out.append(finish(v, key, REASSIGN, before, elected=True, unclean=False, rule=rule, reason=reason))
        return out

    def on_unclean_election(self, keys: Iterable[Key]) -> list[Election]:
        """An admin ElectLeaders UNCLEAN (KIP-460, ``processReplicaLeaderElection``): a partition
        whose leader is alive is not elected (ELECTION_NOT_NEEDED); the others run
        ``leaderForOffline`` with unclean election allowed, whatever the topic config says, and
        nothing else (no OfflineReplica writes first, unlike a controller taking over): one
        write, epoch + 1."""
        v = self.view
        out = []
        rule = f"{_ELECTION} leaderForOffline"
        for key in self._electable(keys):
            p = v.partitions[key]
            if p.leader != NO_LEADER and v.online(p.leader):
                out.append(finish(v, key, UNCLEAN_ELECTION, p, elected=False, unclean=False, rule=rule,
                                  reason=f"ELECTION_NOT_NEEDED: broker {p.leader} leads and is alive"))
                continue
            mode, v.unclean_mode, v.admin_unclean = v.unclean_mode, UNCLEAN_YES, True
            try:
                elected, unclean, reason, rule = self._offline_election(key)
            finally:
                v.unclean_mode, v.admin_unclean = mode, False
            out.append(finish(v, key, UNCLEAN_ELECTION, p, elected=elected, unclean=unclean, reason=reason,
                              rule=rule))
        return out

    def on_preferred(self, keys: Iterable[Key]) -> list[Election]:
        """``onReplicaElection`` with the preferred strategy. A partition already led by its
        first replica is not elected (ELECTION_NOT_NEEDED); the election fails, writing
        nothing, when that replica is not online or not in the ISR."""
        v = self.view
        out = []
        rule = f"{_ELECTION} leaderForPreferredReplica"
        for key in self._electable(keys):
            p = v.partitions[key]
            if p.replicas and p.leader == p.replicas[0]:
                out.append(finish(v, key, PREFERRED, p, elected=False, unclean=False, rule=rule,
                                  reason=f"ELECTION_NOT_NEEDED: the preferred replica {p.replicas[0]} already leads"))
                continue
            leader = self.preferred_leader(p)
            if leader is None:
                first = p.replicas[0] if p.replicas else None
                why = "not alive" if first is None or not v.online(first) else "not in the ISR"
                out.append(finish(v, key, PREFERRED, p, elected=False, unclean=False, rule=rule,
                                  reason=f"PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica {first} is {why}"))
                continue
            v.write(key, **bump(p, leader=leader))
            out.append(finish(v, key, PREFERRED, p, elected=True, unclean=False, rule=rule,
                              reason=f"the preferred replica {leader} is alive and in the ISR"))
        return out
