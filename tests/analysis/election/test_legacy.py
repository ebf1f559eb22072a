"""The 0.8 – 1.0 ZooKeeper controller's ``PartitionLeaderSelector`` classes, selector by selector,
each rule beside its counter-case, and the event sequences they run in.

Expected values come from apache/kafka ``core/src/main/scala/kafka/controller/
PartitionLeaderSelector.scala`` and ``KafkaController.removeReplicaFromIsr`` at the tags
0.8.1.1, 0.8.2.0, 0.9.0.1, 0.10.0.0, 0.10.2.0 and 1.0.0, read for these tests:

* ``OfflinePartitionLeaderSelector.selectLeader``: ``liveBrokersInIsr`` (ISR order) is the new
  ISR; the leader is its head in 0.8.1, and from 0.8.2 (KAFKA-1503) the first of the live
  assigned replicas (assignment order) in it; with no live ISR member the head of the live
  assigned replicas, ISR ``[leader]`` — always in 0.8.1, from 0.8.2 (KAFKA-1028) only when the
  topic's ``unclean.leader.election.enable`` holds (``KafkaConfig`` default true up to 0.10.2,
  false from 0.11, KIP-106);
* ``ReassignedPartitionLeaderSelector``: the first reassigned replica that is live and in the
  ISR; ISR unchanged;
* ``PreferredReplicaPartitionLeaderSelector``: ``assignedReplicas.head`` if live and in the ISR
  (``LeaderElectionNotNeededException`` when it already leads);
* ``ControlledShutdownLeaderSelector``: ISR minus the shutting-down brokers; the leader is its
  head in 0.9 (no liveness check), and from 0.10.0.0 (KAFKA-3670, commit a1afbab3) the first
  live-or-shutting-down assigned replica in it;
* ``removeReplicaFromIsr``: leader -1 if it led; an ISR that would empty keeps its last member
  only when unclean election is disabled (0.8.2+; 0.8.1 always empties it).

``liveBrokerIds`` is ``liveBrokerIdsUnderlying -- shuttingDownBrokerIds`` (1.0
``ControllerContext``): a broker shutting down is not live.
"""

from __future__ import annotations

import pytest

from kreplica.analysis.election.common import ControllerView
from kreplica.analysis.election.legacy import LegacyRules
from kreplica.analysis.election.scenarios import Scenario, plan_elections, rules_for
from kreplica.model.cluster import Pending
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

UNCLEAN = "unclean.leader.election.enable"
ON, OFF = {UNCLEAN: "true"}, {UNCLEAN: "false"}


def legacy(version: str, p, *, alive, shutting=(), config=None, pending=None) -> tuple[LegacyRules, ControllerView]:
    s = cluster({"t": [p]}, alive=alive, shutting=shutting, configs={"t": config or {}}, pending=pending)
    view = ControllerView(s, parse_kafka_version(version))
    return LegacyRules(view), view


# ---- OfflinePartitionLeaderSelector ----------------------------------------------------------------

@pytest.mark.parametrize("version,replicas,isr,alive,shutting,config,expected", [
    # KAFKA-1503 (0.8.2): assignment order among the live ISR members; the ISR keeps ISR order
    pytest.param("0.8.2", [3, 1, 2], [2, 1], (1, 2), (), None, (1, (2, 1), False), id="0.8.2-assignment-order"),
    # counter: 0.8.1 takes the head of the live ISR
    pytest.param("0.8.1", [3, 1, 2], [2, 1], (1, 2), (), None, (2, (2, 1), False), id="0.8.1-isr-order"),
    # dead ISR members leave the ISR
    pytest.param("1.0", [3, 1, 2], [3, 2, 1], (1, 2), (), None, (1, (2, 1), False), id="1.0-live-isr-only"),
    # a broker shutting down is not in liveBrokerIds
    pytest.param("1.0", [1, 2, 3], [1, 2], (1, 2, 3), (1,), None, (2, (2,), False), id="1.0-shutting-down-not-live"),
    pytest.param("1.0", [1, 2, 3], [1, 2], (1, 2, 3), (), None, (1, (1, 2), False), id="counter-1.0-nobody-shutting"),
    # no live ISR member: the first live assigned replica, ISR [leader]
    pytest.param("1.0", [4, 3, 2, 1], [4], (1, 2, 3), (), ON, (3, (3,), True), id="1.0-unclean-enabled"),
    pytest.param("1.0", [4, 3, 2, 1], [4], (1, 2, 3), (), OFF, (None, (4,), False), id="counter-1.0-unclean-disabled"),
    pytest.param("0.10.2", [4, 3, 2, 1], [4], (1, 2, 3), (), None, (3, (3,), True), id="0.10.2-default-true"),
    pytest.param("0.11", [4, 3, 2, 1], [4], (1, 2, 3), (), None, (None, (4,), False), id="counter-0.11-default-false"),
    # 0.8.1 has no switch: unclean even with the topic config false
    pytest.param("0.8.1", [4, 3, 2, 1], [4], (1, 2, 3), (), OFF, (3, (3,), True), id="0.8.1-always-unclean"),
    # NoReplicaOnlineException: nothing alive
    pytest.param("1.0", [3, 4], [3], (1, 2), (), ON, (None, (3,), False), id="1.0-no-live-replica"),
    # the live ISR member 2 is not assigned: liveReplicasInIsr.head throws (0.8.2+), no leader;
    # counter-case: 0.8.1 takes liveBrokersInIsr.head, assigned or not
    pytest.param("1.0", [3, 4], [2, 3], (1, 2, 4), (), ON, (None, (2, 3), False), id="1.0-live-isr-not-assigned"),
    pytest.param("0.8.1", [3, 4], [2, 3], (1, 2, 4), (), ON, (2, (2,), False), id="0.8.1-live-isr-head-unassigned"),
])
def test_offline_partition_leader_selector(version, replicas, isr, alive, shutting, config, expected) -> None:
    p = part(0, replicas, replicas[0], isr)
    rules, _ = legacy(version, p, alive=alive, shutting=shutting, config=config)
    leader, new_isr, unclean, _reason = rules.offline_leader(("t", 0), p)
    assert (leader, new_isr, unclean) == expected



@pytest.mark.parametrize("version,replicas,isr,alive,config,reason", [
    pytest.param("0.8.2", [3, 1, 2], [2, 1], (1, 2), None,
                 "first replica in assignment order [3, 1, 2] that is alive and in the ISR", id="0.8.2-clean"),
    pytest.param("0.8.1", [3, 1, 2], [2, 1], (1, 2), None, "head of the live ISR [2, 1] (0.8.1: ISR order)",
                 id="0.8.1-clean"),
    pytest.param("1.0", [4, 3, 2, 1], [4], (1, 2, 3), ON, "no ISR member of [4] is alive; unclean.leader.election."
                 "enable allows the first live replica in assignment order", id="1.0-unclean-by-config"),
    pytest.param("0.8.1", [4, 3, 2, 1], [4], (1, 2, 3), OFF, "no ISR member of [4] is alive; 0.8.1 always allows "
                 "the first live replica in assignment order", id="0.8.1-unclean-always"),
    pytest.param("1.0", [4, 3, 2, 1], [4], (1, 2, 3), OFF, "no ISR member of [4] is alive and unclean leader election "
                 "is not allowed (live replicas [3, 2, 1] are out of sync)", id="1.0-unclean-refused"),
    pytest.param("1.0", [3, 4], [3], (1, 2), OFF, "no replica of [3, 4] is alive", id="1.0-nothing-alive"),
    # 0.8.2 - 1.0: liveReplicasInIsr = liveAssignedReplicas.filter(liveBrokersInIsr.contains) is empty
    # when the live ISR members are not assigned, and its .head throws: no leader, nothing written
    pytest.param("1.0", [3, 4], [2, 3], (1, 2, 4), ON, "no live ISR member of [2, 3] is an assigned replica of "
                 "[3, 4] (NoSuchElementException)", id="1.0-live-isr-not-assigned"),
])
def test_offline_selector_says_which_rule_chose(version, replicas, isr, alive, config, reason) -> None:
    """The rule behind each outcome of ``OfflinePartitionLeaderSelector.selectLeader``: KAFKA-1503's
    assignment order (0.8.2) or 0.8.1's ISR head; unclean by ``unclean.leader.election.enable``
    (KAFKA-1028, 0.8.2) or unconditionally (0.8.1); ``NoReplicaOnlineException`` when the config
    refuses or nothing is alive."""
    p = part(0, replicas, replicas[0], isr)
    rules, _ = legacy(version, p, alive=alive, config=config)
    assert rules.offline_leader(("t", 0), p)[3] == reason


# ---- ReassignedPartitionLeaderSelector and PreferredReplicaPartitionLeaderSelector ---------------
# The same choice from 0.8.1 to 3.9 (Election.leaderForReassign / leaderForPreferredReplica at 3.8
# use reassignPartitionLeaderElection / preferredReplicaPartitionLeaderElection): each table runs
# against the rule set of every generation.

GENERATIONS = pytest.mark.parametrize("version", ["0.8.1", "1.0", "3.9"])


def rules_at(version: str, p, *, alive, shutting=()):
    s = cluster({"t": [p]}, alive=alive, shutting=shutting)
    cls, v = rules_for(s, parse_kafka_version(version))
    return cls(ControllerView(s, v))


@GENERATIONS
@pytest.mark.parametrize("target,isr,alive,shutting,expected", [
    pytest.param([4, 2, 3], [1, 2, 3, 4], (1, 2, 3, 4), (), 4, id="first-target-live-and-in-isr"),
    pytest.param([4, 2, 3], [1, 2, 3], (1, 2, 3, 4), (), 2, id="counter-target-head-not-in-isr"),
    pytest.param([4, 2, 3], [1, 2, 3, 4], (1, 2, 3), (), 2, id="counter-target-head-dead"),
    pytest.param([4, 2, 3], [1, 2, 3, 4], (1, 2, 3, 4), (4,), 2, id="counter-target-head-shutting-down"),
    pytest.param([4, 5], [1, 2, 3], (1, 2, 3, 4, 5), (), None, id="no-target-in-isr"),
])
def test_reassigned_partition_leader_selector(version, target, isr, alive, shutting, expected) -> None:
    p = part(0, [1, 2, 3, 4, 5], 1, isr)
    assert rules_at(version, p, alive=alive, shutting=shutting).reassign_leader(p, target) == expected


@GENERATIONS
@pytest.mark.parametrize("isr,alive,shutting,expected", [
    pytest.param([2, 1], (1, 2), (), 1, id="preferred-live-and-in-isr"),
    pytest.param([2], (1, 2), (), None, id="counter-preferred-not-in-isr"),
    pytest.param([2, 1], (2,), (), None, id="counter-preferred-dead"),
    pytest.param([2, 1], (1, 2), (1,), None, id="counter-preferred-shutting-down"),
])
def test_preferred_replica_partition_leader_selector(version, isr, alive, shutting, expected) -> None:
    p = part(0, [1, 2], 2, isr)
    assert rules_at(version, p, alive=alive, shutting=shutting).preferred_leader(p) == expected


# ---- ControlledShutdownLeaderSelector --------------------------------------------------------------

@pytest.mark.parametrize("version,replicas,isr,alive,shutting,expected", [
    # from KAFKA-3670: assignment order (the preferred replica when possible)
    pytest.param("1.0", [1, 2, 3], [1, 3, 2], (1, 2, 3), {1}, (2, (3, 2)), id="1.0-assignment-order"),
    pytest.param("0.10.1", [1, 2, 3], [1, 3, 2], (1, 2, 3), {1}, (2, (3, 2)), id="0.10.1-assignment-order"),
    # counter: 0.9 takes the head of ISR minus the shutting-down brokers
    pytest.param("0.9", [1, 2, 3], [1, 3, 2], (1, 2, 3), {1}, (3, (3, 2)), id="0.9-isr-order"),
    # KAFKA-3670 is in 0.10.0.0 (commit a1afbab3: liveAssignedReplicas.filter(newIsr.contains).headOption)
    pytest.param("0.10.0", [1, 2, 3], [1, 3, 2], (1, 2, 3), {1}, (2, (3, 2)), id="0.10.0-assignment-order"),
    # 1.0 checks liveness: broker 2 is in the (stale) ISR but not registered
    pytest.param("1.0", [1, 2, 3], [1, 2, 3], (1, 3), {1}, (3, (2, 3)), id="1.0-skips-unregistered-isr-member"),
    # counter: 0.9 has no liveness check
    pytest.param("0.9", [1, 2, 3], [1, 2, 3], (1, 3), {1}, (2, (2, 3)), id="0.9-no-liveness-check"),
    # another broker already shutting down is neither leader nor ISR member
    pytest.param("1.0", [1, 2, 3], [1, 2, 3], (1, 2, 3), {1, 2}, (3, (3,)), id="1.0-other-shutting-down-skipped"),
    # StateChangeFailedException: no other ISR member
    pytest.param("1.0", [1, 2], [1], (1, 2), {1}, (None, ()), id="1.0-no-candidate"),
    # 0.9: newIsr.headOption is None -> StateChangeFailedException
    pytest.param("0.9", [1, 2], [1], (1, 2), {1}, (None, ()), id="0.9-no-candidate"),
])
def test_controlled_shutdown_leader_selector(version, replicas, isr, alive, shutting, expected) -> None:
    p = part(0, replicas, 1, isr)
    rules, _ = legacy(version, p, alive=alive)
    assert rules.controlled_shutdown_leader(p, set(shutting)) == expected



@pytest.mark.parametrize("version,leader,reason", [
    pytest.param("0.9", 3, "head of the ISR without the brokers shutting down (before 0.10.0: ISR order, "
                 "no liveness check)", id="0.9-isr-head"),
    pytest.param("1.0", 2, "first replica in assignment order [1, 2, 3] that is in the ISR and not shutting down",
                 id="counter-1.0-assignment-order"),
])
def test_controlled_shutdown_says_which_order_chose(version, leader, reason) -> None:
    """Broker 1 leading [1,2,3] with ISR [1,3,2] shuts down: ``ControlledShutdownLeaderSelector``
    takes the ISR head (3) before KAFKA-3670, the first assigned replica in the ISR (2) after it."""
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 3, 2])]}, alive=(1, 2, 3))
    (e,) = plan_elections(s, Scenario(shutdown=(1,)), parse_kafka_version(version)).elections
    assert (e.after.leader, e.reason) == (leader, reason)

# ---- removeReplicaFromIsr ----------------------------------------------------------------------------

@pytest.mark.parametrize("version,leader,isr,replica,config,expected", [
    pytest.param("1.0", 3, [3], 3, ON, (-1, (), 6, 8), id="1.0-unclean-on-empties-isr"),
    pytest.param("1.0", 3, [3], 3, OFF, (-1, (3,), 6, 8), id="counter-1.0-unclean-off-keeps-last"),
    pytest.param("0.10.2", 3, [3], 3, None, (-1, (), 6, 8), id="0.10.2-default-on-empties-isr"),
    pytest.param("0.11", 3, [3], 3, None, (-1, (3,), 6, 8), id="counter-0.11-default-off-keeps-last"),
    pytest.param("0.8.1", 3, [3], 3, OFF, (-1, (), 6, 8), id="0.8.1-always-empties-isr"),
    pytest.param("1.0", 1, [1, 3], 3, OFF, (1, (1,), 6, 8), id="follower-removed-leader-stays"),
    pytest.param("1.0", 1, [1], 3, OFF, (1, (1,), 5, 7), id="not-in-isr-no-write"),
])
def test_remove_replica_from_isr(version, leader, isr, replica, config, expected) -> None:
    p = part(0, [1, 3], leader, isr)
    rules, view = legacy(version, p, alive=(1,), config=config)
    rules.remove_from_isr(("t", 0), replica)
    a = view.partitions[("t", 0)]
    assert (a.leader, a.isr, a.leader_epoch, a.version) == expected
    assert len(view.isr_updates) == (a.version - p.version)
    # each write is recorded as the ISR change it is, with the partition before and after
    assert [(u.key, u.before, u.after, u.reason) for u in view.isr_updates] == \
        [(("t", 0), p, a, "replica 3 goes offline (removeReplicaFromIsr)")] * (a.version - p.version)


# ---- the event sequences -----------------------------------------------------------------------------

@pytest.mark.parametrize("version,rules", [
    pytest.param("0.8", "zookeeper-legacy", id="0.8"),
    pytest.param("1.0", "zookeeper-legacy", id="1.0"),
    pytest.param("1.1", "zookeeper", id="1.1-election-scala"),
])
def test_rule_set_by_version(version, rules) -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2))
    assert plan_elections(s, Scenario(), parse_kafka_version(version)).rules == rules


@pytest.mark.parametrize("scenario,pending,selector", [
    pytest.param(Scenario(fail=(1,)), None, "OfflinePartitionLeaderSelector", id="offline"),
    pytest.param(Scenario(shutdown=(1,)), None, "ControlledShutdownLeaderSelector", id="controlled-shutdown"),
    pytest.param(Scenario(preferred=()), None, "PreferredReplicaPartitionLeaderSelector", id="preferred"),
    pytest.param(Scenario(reassign_complete=True),
                 Pending(reassignments=({"topic": "t", "partition": 0, "replicas": [2, 3]},)),
                 "ReassignedPartitionLeaderSelector", id="reassign"),
])
def test_each_event_names_its_selector(scenario, pending, selector) -> None:
    # replicas [2,1,3], leader 1, ISR [1,2,3]: each selector picks 2 (the first live ISR member
    # in assignment order; the preferred replica; the first target replica in the ISR)
    s = cluster({"t": [part(0, [2, 1, 3], 1, [1, 2, 3])]}, alive=(1, 2, 3), pending=pending)
    plan = plan_elections(s, scenario, parse_kafka_version("1.0"))
    (e,) = plan.elections
    assert e.rule == f"PartitionLeaderSelector.scala {selector}"
    assert e.elected and e.after.leader == 2


def test_controller_takeover_sends_no_offline_replica_before_1_1() -> None:
    # 1.0 onControllerFailover: replicaStateMachine.startup sends only the live replicas to
    # OnlineReplica; then the offline partitions elect. t-0 (leader 3 dead): leader 1, ISR the
    # live ISR [1], one write (e6 v8); u-0 (follower 3 dead): no write at all
    s = cluster({"t": [part(0, [3, 1], 3, [3, 1])], "u": [part(0, [1, 3], 1, [1, 3])]}, alive=(1,))
    plan = plan_elections(s, Scenario(), parse_kafka_version("1.0"))
    (e,) = plan.elections
    a = e.after
    assert (e.partition, a.leader, a.isr, a.leader_epoch, a.version) == ("t-0", 1, (1,), 6, 8)
    assert plan.isr_updates == ()
