"""The timeline's cause rules (``events.classify`` and its ``_controller_shrink``), one table row
per branch and, beside it, the counter-example that must not match.

Each expected cause follows from who writes which change in Kafka, not from kreplica's output:

* ZooKeeper controller (``Election.scala``, ``PartitionStateMachine`` / ``ReplicaStateMachine``
  at 3.8): every controller write is ``LeaderAndIsr.newLeaderAndIsr`` / ``newLeader`` /
  ``newEpoch``, a leader-epoch bump. ``leaderForPreferredReplica`` and ``leaderForReassign``
  keep the ISR (``newLeader``); ``leaderForControlledShutdown`` takes the shutting-down brokers
  out of it; ``leaderForOffline`` keeps the live ISR members, or makes the ISR ``[leader]`` and,
  from IBP 3.2, RECOVERING (``newRecoveringLeaderAndIsr``) when the leader was not in the ISR.
  ``ReplicaStateMachine.doRemoveReplicasFromIsr`` (OfflineReplica: broker failure, the
  followers of a controlled shutdown, topic deletion, reassignment's removed replicas) bumps the
  epoch too. A leader's own ISR change (``Partition.shrinkIsr``/``expandIsr``, direct write or
  AlterIsr/AlterPartition) does not (kafka-algorithms §4.3 "Epoch bookkeeping").
* KRaft (``PartitionChangeBuilder.build``): an ISR shrink bumps the leader epoch on MV < 3.6
  whoever asked (``triggerLeaderEpochBumpForIsrShrinkIfNeeded``), so the epoch does not tell the
  writer; the controller's own ISR removals are for fenced, unregistered or shutting-down brokers
  (``ReplicationControlManager.handleBrokerFenced`` / ``handleBrokerInControlledShutdown`` /
  ``handleBrokerUnregistered``); ``tryElection`` sets RECOVERING only for an unclean result.

Rows are ``pytest.param(before, after, context, expected)`` with ``expected`` = ``None`` (no
event) or ``(cause, by, words the evidence must hold)``: the words tell apart two branches that
give the same cause.
"""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import (
    BY_CONTROLLER,
    BY_LEADER,
    CONTROLLED_SHUTDOWN,
    ISR_EXPAND,
    ISR_SHRINK,
    LEADER_ELECTION,
    PREFERRED_ELECTION,
    REASSIGNMENT,
    UNCLEAN_LEADER_ELECTION,
    UNKNOWN,
    ChangeContext,
    LeaderIsr,
    PartitionEvent,
    TimelineEnd,
    classify,
)
from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import find_kraft_files

RECOVERING = 1      # LeaderRecoveryState.RECOVERING


def li(leader: int, epoch: int, isr, recovery: int = 0) -> LeaderIsr:
    return LeaderIsr(leader, epoch, tuple(isr), recovery)


def zk(alive=(1, 2, 3, 4), replicas=(1, 2, 3), **kw) -> ChangeContext:
    """A ZooKeeper change: liveness is registration; the epoch tells the writer; controlled
    shutdowns are not recorded, so they are inferred."""
    return ChangeContext(alive=frozenset(alive), replicas=tuple(replicas), **_sets(kw))


def kr(alive=(1, 2, 3, 4), replicas=(1, 2, 3), **kw) -> ChangeContext:
    """A KRaft change: liveness is unfenced registration; controlled shutdowns are recorded."""
    return ChangeContext(alive=frozenset(alive), replicas=tuple(replicas), epoch_tells_writer=False,
                         shutdown_known=True, **_sets(kw))


def _sets(kw: dict) -> dict:
    for name in ("shutting_down", "gone_since", "log_dir_failed"):
        if name in kw:
            kw[name] = frozenset(kw[name])
    return kw


NO_CHANGE = [
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2, 3]), zk(), None, id="same-leader-epoch-isr-no-event"),
    # AlterPartition from a leader that finished recovering (RECOVERING -> RECOVERED) changes
    # neither leader, epoch nor ISR (ReplicationControlManager.alterPartition)
    pytest.param(li(2, 6, [2], RECOVERING), li(2, 6, [2]), kr(), None, id="recovery-finished-only-no-event"),
    # counter: the same leader and ISR with a new epoch is an event (LeaderAndIsr.newEpoch)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(), (UNKNOWN, BY_CONTROLLER, "epoch bumped to 6"),
                 id="counter-epoch-bump-alone-is-an-event"),
]

LEADER_GONE = [
    # leaderForOffline finds no live ISR member and unclean election is off: the OfflineReplica
    # write leaves leader -1 (§4.4)
    pytest.param(li(1, 5, [1]), li(-1, 6, [1]), zk(alive=(2, 3)), (LEADER_ELECTION, BY_CONTROLLER, "no leader could"),
                 id="no-leader-could-be-elected"),
    # counter: the failed leader's successor is a live ISR member (leaderForOffline, clean)
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), zk(alive=(2, 3)),
                 (LEADER_ELECTION, BY_CONTROLLER, "lost its registration"),
                 id="counter-leader-gone-isr-member-takes-over"),
    # a broker that re-registered since the partition's last change was gone in between: its
    # partitions went through leaderForOffline
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), zk(alive=(1, 2, 3), gone_since=(1,)),
                 (LEADER_ELECTION, BY_CONTROLLER, "lost its registration"), id="leader-gone-since-last-change"),
    pytest.param(li(-1, 6, [2]), li(2, 7, [2]), zk(alive=(2, 3)), (LEADER_ELECTION, BY_CONTROLLER, "no leader;"),
                 id="leaderless-partition-gets-its-isr-member-back"),
]

UNCLEAN = [
    # leaderForOffline's unclean branch before IBP 3.2: ISR [leader], no recovery state
    pytest.param(li(3, 5, [3]), li(2, 6, [2]), zk(alive=(1, 2), replicas=(3, 2, 1)),
                 (UNCLEAN_LEADER_ELECTION, BY_CONTROLLER, "not in the ISR [3]"), id="unclean-without-recovering"),
    # from IBP 3.2: newRecoveringLeaderAndIsr
    pytest.param(li(3, 5, [3]), li(2, 6, [2], RECOVERING), zk(alive=(1, 2), replicas=(3, 2, 1)),
                 (UNCLEAN_LEADER_ELECTION, BY_CONTROLLER, "RECOVERING"), id="unclean-with-recovering"),
    # counter: the new leader was in the ISR (clean, leaderForOffline's first branch)
    pytest.param(li(3, 5, [3, 2]), li(2, 6, [2]), zk(alive=(1, 2), replicas=(3, 2, 1)),
                 (LEADER_ELECTION, BY_CONTROLLER, None), id="counter-new-leader-was-in-the-isr"),
    # KRaft, ELR on: ISR and ELR empty, the last known leader is elected; canElectLastKnownLeader
    # flags it unclean, so tryElection sets ISR [3] and RECOVERING
    pytest.param(li(-1, 7, []), li(3, 8, [3], RECOVERING), kr(alive=(3,)),
                 (UNCLEAN_LEADER_ELECTION, BY_CONTROLLER, "RECOVERING"), id="kraft-last-known-leader-recovering"),
    # counter: ISR empty, a leader from the ELR: tryElection makes the ISR [leader] and it is
    # clean (no RECOVERING)
    pytest.param(li(-1, 7, []), li(2, 8, [2]), kr(alive=(2, 3)), (LEADER_ELECTION, BY_CONTROLLER, None),
                 id="counter-kraft-elr-leader-is-clean"),
    # counter: a RECOVERING state carried over from an earlier unclean election (tryElection
    # writes RECOVERING only when the partition is not RECOVERING already) does not make the
    # next, clean, election unclean
    pytest.param(li(2, 6, [2, 3], RECOVERING), li(3, 7, [3], RECOVERING), kr(alive=(3,)),
                 (LEADER_ELECTION, BY_CONTROLLER, None), id="counter-recovering-carried-over"),
    # ZooKeeper <= 1.0 with unclean election enabled empties the ISR when its last member goes
    # offline (KafkaController.removeReplicaFromIsr); the next OfflinePartitionLeaderSelector
    # .selectLeader finds no live ISR member and elects from the live assigned replicas: unclean
    # (uncleanLeaderElectionRate.mark(), "There's potential data loss")
    pytest.param(li(-1, 6, []), li(2, 7, [2]), zk(alive=(2,), replicas=(3, 2)),
                 (UNCLEAN_LEADER_ELECTION, BY_CONTROLLER, "controller of Kafka 1.0 or earlier empties"),
                 id="zk-legacy-election-from-empty-isr"),
]

REASSIGNING = [
    # KIP-455: replicas [2,3,4,1], adding [4], removing [1]; leaderForReassign moves the leader
    # off the removed replica 1, ISR unchanged (newLeader)
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(2, 6, [1, 2, 3, 4]), zk(replicas=(2, 3, 4, 1), adding=(4,), removing=(1,)),
                 (REASSIGNMENT, BY_CONTROLLER, "moved off by a reassignment"), id="leader-moved-off-removed-replica"),
    # <= 2.3: the target comes from /admin/reassign_partitions
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(2, 6, [1, 2, 3, 4]), zk(reassign_target=(2, 3, 4)),
                 (REASSIGNMENT, BY_CONTROLLER, "moved off by a reassignment"), id="legacy-znode-target"),
    # the topic znode already holds the target: the old leader is no longer assigned
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(2, 6, [1, 2, 3, 4]), zk(replicas=(2, 3, 4), reassign_target=(2, 3, 4)),
                 (REASSIGNMENT, BY_CONTROLLER, "moved off by a reassignment"), id="old-leader-no-longer-assigned"),
    # KRaft: the completing record (maybeCompleteReassignment) moves the replicas and the leader
    pytest.param(li(3, 1, [2, 3, 4]), li(2, 2, [2, 4]), kr(replicas=(4, 2, 3), adding=(4,), removing=(3,),
                                                          replicas_changed=True),
                 (REASSIGNMENT, BY_CONTROLLER, "record that moves the replicas"), id="kraft-record-moves-replicas"),
    # KRaft: a reassignment whose target the ISR already covers completes in the record that
    # starts it (changePartitionReassignment -> maybeCompleteReassignment): [1,2,3] to [2,3]; the
    # leader 1 was neither adding nor removing before it
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), kr(replicas=(1, 2, 3), replicas_changed=True),
                 (REASSIGNMENT, BY_CONTROLLER, "record that moves the replicas"),
                 id="kraft-reassignment-completes-in-one-record"),
    # KRaft: the new first replica's AlterPartition (the leader adds 6 to the ISR) covers the
    # target, so the same record completes the reassignment and elects 6 from the target ISR
    # (PartitionChangeBuilder: setTargetIsr, completeReassignmentIfNeeded, electLeader): clean, as
    # a real 4.4 cluster under kafka-reassign-partitions wrote it (replicas [6,5,7], ISR [5,6,7])
    pytest.param(li(4, 0, [4, 5, 7]), li(6, 1, [5, 6, 7]),
                 kr(alive=(4, 5, 6, 7), replicas=(6, 5, 7), adding=(6,), removing=(4,), replicas_changed=True),
                 (REASSIGNMENT, BY_CONTROLLER, "record that moves the replicas"),
                 id="kraft-caught-up-first-replica-leads-in-the-completing-record"),
    # counter: a leader from outside the ISR that is left alone in it is KRaft's unclean
    # election (electLeader's unclean branch: targetIsr = [leader]) even during a reassignment
    pytest.param(li(4, 0, [4]), li(6, 1, [6]),
                 kr(alive=(5, 6, 7), replicas=(6, 5, 7, 4), adding=(6,), removing=(4,)),
                 (UNCLEAN_LEADER_ELECTION, BY_CONTROLLER, "not in the ISR [4]"),
                 id="counter-kraft-outside-leader-alone-in-the-isr-is-unclean"),
    # counter: a reassignment is running but the leader is a target replica and its broker is
    # gone: that is leaderForOffline
    pytest.param(li(2, 5, [1, 2, 3, 4]), li(3, 6, [1, 3, 4]),
                 zk(alive=(1, 3, 4), replicas=(2, 3, 4, 1), adding=(4,), removing=(1,)),
                 (LEADER_ELECTION, BY_CONTROLLER, None), id="counter-reassigning-target-leader-died"),
    # counter: a reassignment is running, the live leader 2 is kept by it, and leadership goes
    # to replicas[0] with the ISR unchanged: leaderForPreferredReplica
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(replicas=(1, 2, 3, 4), removing=(4,)),
                 (PREFERRED_ELECTION, BY_CONTROLLER, None), id="counter-reassigning-leader-kept-preferred"),
]

LIVE_LEADER_MOVES = [
    # leaderForControlledShutdown: first in assignment order not shutting down; newIsr = ISR
    # minus the shutting-down brokers; the broker is still registered
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), zk(alive=(1, 2, 3)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, "still registered"), id="zk-controlled-shutdown-of-leader"),
    # counter: the broker reported a failed log directory (the replica is offline, not the broker)
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), zk(alive=(1, 2, 3), log_dir_failed=(1,)),
                 (UNKNOWN, BY_CONTROLLER, "failed log directory"), id="counter-leader-log-dir-failed"),
    # counter: the topic is queued for deletion (TopicDeletionManager takes its replicas
    # offline; no controlled shutdown is inferred)
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), zk(alive=(1, 2, 3), deleting=True),
                 (UNKNOWN, BY_CONTROLLER, "from live leader 1"), id="counter-topic-being-deleted"),
    # counter: the old leader stays in the ISR: not leaderForControlledShutdown (it drops the
    # shutting-down broker from the ISR)
    pytest.param(li(1, 5, [1, 2, 3]), li(3, 6, [1, 2, 3]), zk(alive=(1, 2, 3)),
                 (UNKNOWN, BY_CONTROLLER, "from live leader 1"), id="counter-old-leader-stays-in-isr"),
    # a move to replicas[0] that also drops the old leader from the ISR is
    # leaderForControlledShutdown (first in assignment order), not leaderForPreferredReplica
    # (which keeps the ISR)
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 3]), zk(alive=(1, 2, 3)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, None), id="preferred-move-that-drops-old-leader-is-shutdown"),
    # KRaft records the shutdown (BrokerRegistrationChangeRecord in_controlled_shutdown)
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), kr(alive=(1, 2, 3), shutting_down=(1,)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, "shutting down"), id="kraft-controlled-shutdown-of-leader"),
    # counter: KRaft with no shutdown recorded: none is inferred
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [2, 3]), kr(alive=(1, 2, 3)), (UNKNOWN, BY_CONTROLLER, None),
                 id="counter-kraft-no-shutdown-recorded"),
    # leaderForPreferredReplica: replicas[0], ISR unchanged (newLeader)
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(alive=(1, 2, 3)),
                 (PREFERRED_ELECTION, BY_CONTROLLER, "back to preferred replica 1"), id="preferred-election"),
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(alive=(1, 2, 3), preferred_requested=True),
                 (PREFERRED_ELECTION, BY_CONTROLLER, "as an admin requested"), id="preferred-election-requested"),
    # counter: the preferred move also shrinks the ISR (3 leaves, the old leader stays)
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3)), (UNKNOWN, BY_CONTROLLER, None),
                 id="counter-preferred-move-that-changes-isr"),
    # counter: the ISR is unchanged but the new leader is not replicas[0]
    pytest.param(li(1, 5, [1, 2, 3]), li(2, 6, [1, 2, 3]), zk(alive=(1, 2, 3)), (UNKNOWN, BY_CONTROLLER, None),
                 id="counter-move-to-a-non-preferred-replica"),
    # counter: the assignment is not known
    pytest.param(li(2, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(alive=(1, 2, 3), replicas=()),
                 (UNKNOWN, BY_CONTROLLER, None), id="counter-assignment-unknown"),
]

SAME_LEADER = [
    # Partition.shrinkIsr / expandIsr by the leader: no epoch bump (ZooKeeper)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), zk(), (ISR_SHRINK, BY_LEADER, "leader 1 removed [3]"),
                 id="zk-leader-shrinks"),
    pytest.param(li(1, 5, [1, 2]), li(1, 5, [1, 2, 3]), zk(), (ISR_EXPAND, BY_LEADER, "leader 1 added [3]"),
                 id="zk-leader-expands"),
    # AlterIsr/AlterPartition (IBP 2.7-IV2+): the controller writes the leader's request, no bump
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), zk(by_controller=True),
                 (ISR_SHRINK, BY_LEADER, "(AlterPartition)"), id="zk-leader-shrinks-through-alterpartition"),
    # counter: with a bump the controller wrote it (OfflineReplica of a dead broker)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2)),
                 (ISR_SHRINK, BY_CONTROLLER, "([3] no longer live)"), id="counter-zk-controller-shrink-dead-broker"),
    pytest.param(li(1, 5, [1, 2]), li(1, 6, [1, 2, 3]), zk(), (ISR_EXPAND, BY_CONTROLLER, "controller added [3]"),
                 id="zk-controller-expands"),
    # one member out, another in: neither rule says which
    pytest.param(li(1, 5, [1, 2]), li(1, 5, [1, 3]), zk(), (UNKNOWN, None, None), id="isr-swap-no-bump"),
    pytest.param(li(1, 5, [1, 2]), li(1, 6, [1, 3]), zk(), (UNKNOWN, BY_CONTROLLER, None), id="isr-swap-with-bump"),
    # KRaft: a live member leaving is the leader's AlterPartition, epoch bump or not (MV < 3.6
    # bumps it on every shrink)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), kr(alive=(1, 2, 3)), (ISR_SHRINK, BY_LEADER, None),
                 id="kraft-live-follower-leaves"),
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), kr(alive=(1, 2, 3)), (ISR_SHRINK, BY_LEADER, None),
                 id="kraft-live-follower-leaves-with-mv-3-5-bump"),
    pytest.param(li(1, 5, [1, 2]), li(1, 5, [1, 2, 3]), kr(), (ISR_EXPAND, BY_LEADER, None), id="kraft-expand"),
    # counter: a fenced member leaving is handleBrokerFenced
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), kr(alive=(1, 2)),
                 (ISR_SHRINK, BY_CONTROLLER, "no longer live"), id="counter-kraft-fenced-follower-removed"),
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), kr(alive=(1, 2, 3), gone_since=(3,)),
                 (ISR_SHRINK, BY_CONTROLLER, "no longer live"), id="counter-kraft-follower-gone-since"),
    # counter: a member shutting down is handleBrokerInControlledShutdown
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), kr(alive=(1, 2, 3), shutting_down=(3,)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, "shutting down"), id="counter-kraft-follower-shutting-down"),
    # the same leader and ISR with a new epoch: a reassignment's start or finish
    # (LeaderAndIsr.newEpoch, or KRaft's triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2, 3]), zk(adding=(4,), replicas=(1, 2, 3, 4)),
                 (REASSIGNMENT, BY_CONTROLLER, None), id="epoch-bump-while-reassigning"),
]

CONTROLLER_SHRINK = [
    # the reassignment's removed replica goes OfflineReplica (KIP-455 phase B4)
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(1, 6, [1, 2, 4]), zk(replicas=(1, 2, 3, 4), adding=(4,), removing=(3,)),
                 (REASSIGNMENT, BY_CONTROLLER, "the reassignment removes them"), id="removed-replica-leaves-isr"),
    # counter: a reassignment runs, but the replica that left is kept by it (and is dead)
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(1, 6, [1, 3, 4]),
                 zk(alive=(1, 3, 4), replicas=(1, 2, 3, 4), adding=(4,), removing=(3,)),
                 (ISR_SHRINK, BY_CONTROLLER, "([2] no longer live)"), id="counter-reassigning-kept-replica-died"),
    # counter: as above, a kept replica, still registered: the controlled shutdown of a follower
    pytest.param(li(1, 5, [1, 2, 3, 4]), li(1, 6, [1, 3, 4]), zk(replicas=(1, 2, 3, 4), adding=(4,), removing=(3,)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, None), id="counter-reassigning-kept-replica-shut-down"),
    # OfflineReplica of a live broker whose log directory failed (onReplicasBecomeOffline)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3), log_dir_failed=(3,)),
                 (ISR_SHRINK, BY_CONTROLLER, "reported a failed log directory"), id="live-replica-log-dir-failed"),
    # counter: of two live replicas removed, only one reported a failed log directory
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1]), zk(alive=(1, 2, 3), log_dir_failed=(3,)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, None), id="counter-only-one-log-dir-failed"),
    # TopicDeletionManager: the replicas of a topic being deleted go OfflineReplica while live
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3), deleting=True),
                 (ISR_SHRINK, BY_CONTROLLER, "queued for deletion"), id="topic-being-deleted"),
    # counter: not being deleted, the broker still registered: a follower's controlled shutdown
    # (doControlledShutdown sends it OfflineReplica)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, "still registered"), id="zk-follower-controlled-shutdown"),
    # counter: the controller removed a dead broker (onBrokerFailure -> OfflineReplica)
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2)),
                 (ISR_SHRINK, BY_CONTROLLER, "([3] no longer live)"), id="counter-controller-removes-dead-broker"),
    # counter: one removed broker is live, one dead: a failure, not a shutdown
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1]), zk(alive=(1, 2)),
                 (ISR_SHRINK, BY_CONTROLLER, "([3] no longer live)"), id="counter-live-and-dead-removed"),
    # counter: re-registered since the last change: it was gone in between
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3), gone_since=(3,)),
                 (ISR_SHRINK, BY_CONTROLLER, "([3] no longer live)"), id="counter-removed-broker-gone-since"),
    # KRaft: two removed, one fenced and one live not shutting down: not a controlled shutdown
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1]), kr(alive=(1, 3)),
                 (ISR_SHRINK, BY_CONTROLLER, "([2] no longer live)"), id="kraft-fenced-and-live-removed"),
    # KRaft: two live removed, only one recorded as shutting down
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1]), kr(alive=(1, 2, 3), shutting_down=(2,)),
                 (ISR_SHRINK, BY_CONTROLLER, None), id="kraft-one-of-two-shutting-down"),
    pytest.param(li(1, 5, [1, 2, 3]), li(1, 5, [1]), kr(alive=(1, 2, 3), shutting_down=(2, 3)),
                 (CONTROLLED_SHUTDOWN, BY_CONTROLLER, None), id="kraft-both-shutting-down"),
]


@pytest.mark.parametrize("before,after,context,expected",
                         NO_CHANGE + LEADER_GONE + UNCLEAN + REASSIGNING + LIVE_LEADER_MOVES + SAME_LEADER
                         + CONTROLLER_SHRINK)
def test_classify(before, after, context, expected) -> None:
    cause = classify(before, after, context)
    if expected is None:
        assert cause is None
        return
    kind, by, words = expected
    assert cause is not None
    assert (cause.cause, cause.by) == (kind, by), cause.evidence
    if words is not None:
        assert words in cause.evidence


def test_controlled_shutdown_is_distinct_from_shrink_evidence() -> None:
    """The inferred shutdown (ZooKeeper) does not claim "shutting down"; the recorded one (KRaft) does."""
    zk_cause = classify(li(1, 5, [1, 2, 3]), li(1, 6, [1, 2]), zk(alive=(1, 2, 3)))
    kr_cause = classify(li(1, 5, [1, 2, 3]), li(1, 5, [1, 2]), kr(alive=(1, 2, 3), shutting_down=(3,)))
    assert zk_cause.cause == kr_cause.cause == CONTROLLED_SHUTDOWN
    assert "shutting down" not in zk_cause.evidence and "shutting down" in kr_cause.evidence


# ---- the KRaft record order of a fencing ---------------------------------------------------------

TOPIC_ID = "8um0e5Bd9LwnM_Jm3NHOHA"
INCARNATION = "PO89kIAdqvyBxJUUcsQbKQ"


def _register(broker: int):
    return ("RegisterBrokerRecord", 3, {
        "broker_id": broker, "incarnation_id": INCARNATION, "broker_epoch": 10 + broker, "rack": None,
        "fenced": False, "end_points": ({"name": "PLAINTEXT", "host": f"b{broker}", "port": 9092,
                                         "security_protocol": 0},),
        "features": (), "log_dirs": ()})


FENCE_1 = ("FenceBrokerRecord", 0, {"id": 1, "epoch": 11})


def _fenced_in_kafka_order(root, closing=FENCE_1, next_batch=False):
    """Broker 1 leads t-0 and follows t-1; it stops heartbeating. ``handleBrokerFenced`` appends
    the partition changes (``generateLeaderAndIsrUpdates``) and then the fence record, one
    batch: the changes come first. ``closing`` replaces the fence record; ``next_batch`` writes
    it in a batch of its own."""
    d = root / "__cluster_metadata-0"
    d.mkdir()
    first = [_register(1), _register(2), _register(3),
             ("TopicRecord", 0, {"name": "t", "topic_id": TOPIC_ID}),
             ("PartitionRecord", 0, {"partition_id": 0, "topic_id": TOPIC_ID, "replicas": (1, 2, 3),
                                     "isr": (1, 2, 3), "leader": 1, "leader_epoch": 0, "partition_epoch": 0}),
             ("PartitionRecord", 0, {"partition_id": 1, "topic_id": TOPIC_ID, "replicas": (2, 1, 3),
                                     "isr": (2, 1, 3), "leader": 2, "leader_epoch": 0, "partition_epoch": 0})]
    changes = [("PartitionChangeRecord", 0, {"partition_id": 0, "topic_id": TOPIC_ID, "leader": 2, "isr": (2, 3)}),
               ("PartitionChangeRecord", 0, {"partition_id": 1, "topic_id": TOPIC_ID, "isr": (2, 3)})]
    batches = [first, changes, [closing]] if next_batch else [first, changes + [closing]]
    ts, offset, data = 1_700_000_000_000, 0, b""
    for records in batches:
        data += kraft.build_metadata_batch(records, base_offset=offset, epoch=1, timestamp=ts + offset)
        offset += len(records)
    (d / "00000000000000000000.log").write_bytes(data)
    return d


def _changes(root) -> list:
    items = list(iter_kraft_timeline(find_kraft_files([root])))
    assert isinstance(items[-1], TimelineEnd)
    return [(ev.name, ev.cause, ev.by) for ev in items if isinstance(ev, PartitionEvent)
            and ev.cause not in ("created", "snapshot")]


def test_kraft_fencing_in_kafkas_record_order(tmp_path) -> None:
    changes = _changes(_fenced_in_kafka_order(tmp_path))
    assert changes == [("t-0", LEADER_ELECTION, BY_CONTROLLER), ("t-1", ISR_SHRINK, BY_CONTROLLER)]


@pytest.mark.parametrize("closing", [
    # MV 3.3+: handleBrokerFenced writes a BrokerRegistrationChangeRecord with fenced = FENCE (1)
    pytest.param(("BrokerRegistrationChangeRecord", 0, {"broker_id": 1, "broker_epoch": 11, "fenced": 1}),
                 id="registration-change-fences"),
    # handleBrokerUnregistered: the same generateLeaderAndIsrUpdates, then UnregisterBrokerRecord
    pytest.param(("UnregisterBrokerRecord", 0, {"broker_id": 1, "broker_epoch": 11}), id="unregister"),
])
def test_kraft_other_records_closing_a_fencing(tmp_path, closing) -> None:
    changes = _changes(_fenced_in_kafka_order(tmp_path, closing))
    assert changes == [("t-0", LEADER_ELECTION, BY_CONTROLLER), ("t-1", ISR_SHRINK, BY_CONTROLLER)]


@pytest.mark.parametrize("closing,next_batch", [
    # a fence in a later batch is another ControllerResult: broker 1 was live at the changes
    pytest.param(FENCE_1, True, id="fence-in-next-batch"),
    # the fence of broker 3 (in both ISRs, kept by both changes) says nothing of broker 1
    pytest.param(("FenceBrokerRecord", 0, {"id": 3, "epoch": 13}), False, id="another-broker-fenced"),
])
def test_kraft_changes_not_closed_by_their_fencing(tmp_path, closing, next_batch) -> None:
    changes = _changes(_fenced_in_kafka_order(tmp_path, closing, next_batch))
    assert changes == [("t-0", UNKNOWN, BY_CONTROLLER), ("t-1", ISR_SHRINK, BY_LEADER)]
