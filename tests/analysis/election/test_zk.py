"""The ZooKeeper controller's elections (1.1 – 3.9) and the 0.8 – 1.0 selectors, rule by rule, on
hand-built cluster states. Every expected leader, ISR, epoch and znode version is worked out in
the comment beside it from kafka-algorithms spec §4.3 – §4.5, not copied from kreplica's output."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.scenarios import Scenario, ScenarioError, plan_elections
from kreplica.model.cluster import Pending
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

V39, V31, V10, V081, V09 = (parse_kafka_version(x) for x in ("3.9", "3.1", "1.0", "0.8.1", "0.9"))


def one(state, scenario=Scenario(), version=V39):
    plan = plan_elections(state, scenario, version)
    return plan, {e.partition: e for e in plan.elections}


def rec(p):
    return p.leader, p.isr, p.leader_epoch, p.version


def test_offline_election_takes_assignment_order_not_isr_order() -> None:
    # replicas [3,1,2], ISR [2,1], leader 3 is dead: the first of 3,1,2 alive and in the ISR is 1
    # (the ISR head 2 is not chosen); new ISR = the live ISR in ISR order [2,1]; epoch 5+1,
    # version 7+1 (newLeaderAndIsr and the conditional setData)
    s = cluster({"t": [part(0, [3, 1, 2], 3, [2, 1])]}, alive=(1, 2))
    plan, e = one(s, Scenario(fail=(3,)))
    assert rec(e["t-0"].after) == (1, (2, 1), 6, 8)
    assert not e["t-0"].unclean and e["t-0"].elected and not e["t-0"].offline


def test_live_isr_member_beats_live_out_of_sync_replica() -> None:
    # replicas [2,1,3], ISR [1,3]; 3 leads and fails: 2 is alive but out of sync, 1 is the first
    # live ISR member in assignment order; ISR [1]
    s = cluster({"t": [part(0, [2, 1, 3], 3, [1, 3])]}, alive=(1, 2, 3))
    _, e = one(s, Scenario(fail=(3,)))
    assert rec(e["t-0"].after)[:2] == (1, (1,))
    assert not e["t-0"].unclean


def test_unclean_fallback_to_the_first_live_assigned_replica() -> None:
    # replicas [3,2,1], ISR [3]; 3 fails; the topic allows unclean election: the first live
    # replica in assignment order is 2, ISR [2], RECOVERING on 3.2+ (KIP-704); then OfflineReplica
    # for 3 finds it no longer in the ISR: no further write -> epoch 6, version 8
    s = cluster({"t": [part(0, [3, 2, 1], 3, [3])]}, alive=(1, 2, 3),
                configs={"t": {"unclean.leader.election.enable": "true"}})
    _, e = one(s, Scenario(fail=(3,)))
    assert rec(e["t-0"].after) == (2, (2,), 6, 8)
    assert e["t-0"].unclean and e["t-0"].after.leader_recovery_state == 1
    _, e = one(s, Scenario(fail=(3,)), V31)        # before 3.2: no recovery state
    assert e["t-0"].unclean and e["t-0"].after.leader_recovery_state == 0


def test_unclean_disabled_leaves_the_partition_offline_with_the_last_isr_member() -> None:
    # the same partition without unclean election (default false since 0.11): the election fails;
    # OfflineReplica for 3 writes leader -1 and keeps the last ISR member [3]: epoch 6, version 8
    s = cluster({"t": [part(0, [3, 2, 1], 3, [3])]}, alive=(1, 2, 3))
    plan, e = one(s, Scenario(fail=(3,)))
    assert rec(e["t-0"].after) == (-1, (3,), 6, 8)
    assert e["t-0"].offline and not e["t-0"].elected and not e["t-0"].unclean
    assert plan.has_problems and plan.offline_after == ("t-0",)
    # --unclean-allowed yes (unclean.leader.election.enable true) elects 2
    _, e = one(s, Scenario(fail=(3,), unclean="yes"))
    assert rec(e["t-0"].after)[:2] == (2, (2,)) and e["t-0"].unclean
    assert "unclean.leader.election.enable (true by --unclean-allowed yes)" in e["t-0"].reason
    assert "KIP-460" not in e["t-0"].reason   # the topic's config, not an admin ElectLeaders request


def test_broker_default_and_controller_config_decide_unclean() -> None:
    # no topic config: the controller broker's own dynamic config (broker 1 is the controller)
    # wins over <default>
    p = part(0, [3, 2], 3, [3])
    s = cluster({"t": [p]}, alive=(1, 2, 3), broker_configs={"<default>": {"unclean.leader.election.enable": "true"}})
    assert one(s, Scenario(fail=(3,)))[1]["t-0"].unclean
    s = cluster({"t": [p]}, alive=(1, 2, 3), broker_configs={"<default>": {"unclean.leader.election.enable": "true"},
                                                             "1": {"unclean.leader.election.enable": "false"}})
    assert one(s, Scenario(fail=(3,)))[1]["t-0"].offline
    # 0.9 defaults to true (KIP-106 flipped it in 0.11)
    s = cluster({"t": [p]}, alive=(1, 2, 3))
    assert one(s, Scenario(fail=(3,)), V09)[1]["t-0"].unclean


def test_no_live_replica_gives_leader_minus_one() -> None:
    # replicas [3,4], both fail; unclean allowed but nobody is alive: leader -1. Broker failure
    # order: elections first (fail), then OfflineReplica 3 (leader -1, ISR [4], epoch 6, v8), then
    # OfflineReplica 4 (last member kept, epoch 7, v9)
    s = cluster({"t": [part(0, [3, 4], 3, [3, 4])]}, alive=(1, 2, 3, 4),
                configs={"t": {"unclean.leader.election.enable": "true"}})
    _, e = one(s, Scenario(fail=(3, 4)))
    assert rec(e["t-0"].after) == (-1, (4,), 7, 9)
    assert e["t-0"].offline and not e["t-0"].unclean


def test_failure_also_elects_partitions_that_were_already_offline() -> None:
    # u-0 is offline already (leader -1, ISR [2], 2 came back alive); failing broker 4 (which u-0
    # does not use) re-runs its offline election: 2 is alive and in the ISR -> leader 2
    s = cluster({"t": [part(0, [4, 1], 4, [4, 1])], "u": [part(0, [2, 3], -1, [2])]}, alive=(1, 2, 3, 4))
    _, e = one(s, Scenario(fail=(4,)))
    assert rec(e["u-0"].after) == (2, (2,), 6, 8)
    assert rec(e["t-0"].after) == (1, (1,), 6, 8)


def test_follower_failure_is_an_isr_write_not_an_election() -> None:
    # broker 2 follows t-0: no election; OfflineReplica removes it from the ISR with an epoch bump
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2))
    plan, e = one(s, Scenario(fail=(2,)))
    assert e == {}
    (u,) = plan.isr_updates
    assert rec(u.after) == (1, (1,), 6, 8)


def test_controlled_shutdown_skips_shutting_down_brokers() -> None:
    # 1 leads [1,2,3] with ISR [1,2,3]; 2 shuts down first: a follower, so OfflineReplica takes it
    # out of the ISR ([1,3], e6 v8). Then 1: the first replica in assignment order that is in the
    # ISR and not shutting down is 3 (2 is skipped); ISR minus the shutting-down brokers [3]; e7 v9
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2, 3])]}, alive=(1, 2, 3))
    _, e = one(s, Scenario(shutdown=(2, 1)))
    assert rec(e["t-0"].after) == (3, (3,), 7, 9)
    # 2 still in the ISR when 1 goes first (ISR [1,2,3] minus {1}): 2 is chosen
    _, e = one(s, Scenario(shutdown=(1,)))
    assert rec(e["t-0"].after) == (2, (2, 3), 6, 8)
    assert e["t-0"].kind == "controlled_shutdown"


def test_controlled_shutdown_elects_only_for_led_partitions_and_fails_without_candidate() -> None:
    # 1 leads a-0 (ISR [1] only): no candidate, nothing written, the broker keeps leading;
    # 1 follows b-0: an ISR write, not an election; c-0 has replication factor 1: untouched
    s = cluster({"a": [part(0, [1, 2], 1, [1])], "b": [part(0, [2, 1], 2, [2, 1])], "c": [part(0, [1], 1, [1])]},
                alive=(1, 2))
    plan, e = one(s, Scenario(shutdown=(1,)))
    assert set(e) == {"a-0"}
    assert rec(e["a-0"].after) == (1, (1,), 5, 7) and not e["a-0"].elected
    assert [(u.key, u.after.isr) for u in plan.isr_updates] == [(("b", 0), (2,))]


def test_controlled_shutdown_of_a_dead_broker_is_refused() -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1,))
    with pytest.raises(ScenarioError, match="not alive"):
        plan_elections(s, Scenario(shutdown=(2,)), V39)


def test_preferred_only_when_the_preferred_replica_is_alive_and_in_the_isr() -> None:
    # a-0: preferred 1 alive and in ISR -> elected, ISR unchanged; b-0: preferred 3 out of the
    # ISR -> fails; c-0: preferred 4 is dead -> fails; d-0: already led by 1 -> not needed
    s = cluster({"a": [part(0, [1, 2], 2, [2, 1])], "b": [part(0, [3, 2], 2, [2])],
                 "c": [part(0, [4, 2], 2, [2, 4])], "d": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2, 3))
    _, e = one(s, Scenario(preferred=()))
    assert rec(e["a-0"].after) == (1, (2, 1), 6, 8) and e["a-0"].elected
    assert not e["b-0"].elected and "not in the ISR" in e["b-0"].reason
    assert not e["c-0"].elected and "not alive" in e["c-0"].reason
    assert "d-0" not in e       # every partition not led by its preferred replica
    _, e = one(s, Scenario(preferred=(("d", 0),)))
    assert "ELECTION_NOT_NEEDED" in e["d-0"].reason


def test_reassignment_completion_elects_from_the_target_when_the_leader_leaves() -> None:
    # KIP-455 znode: replicas [2,3,4,1], adding [4], removing [1]; leader 1, ISR [1,2,3], e5 v7.
    # 4 catches up (ISR [1,2,3,4], v8); 1 is not a target: the first of [2,3,4] alive and in the
    # ISR is 2 (e6 v9); OfflineReplica for 1: ISR [2,3,4] (e7 v10); replicas become [2,3,4]
    s = cluster({"t": [part(0, [2, 3, 4, 1], 1, [1, 2, 3], adding=[4], removing=[1])]})
    _, e = one(s, Scenario(reassign_complete=True))
    assert rec(e["t-0"].after) == (2, (2, 3, 4), 7, 10)
    assert e["t-0"].after.replicas == (2, 3, 4) and e["t-0"].after.adding_replicas == ()


def test_reassignment_completion_keeps_a_target_leader_with_an_epoch_bump() -> None:
    # ≤ 2.3: the target comes from /admin/reassign_partitions: [1,3]; leader 1 stays (newEpoch):
    # e6 v8; 2 leaves the ISR: e7 v9
    pending = Pending(reassignments=({"topic": "t", "partition": 0, "replicas": [1, 3]},))
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2, 3])]}, pending=pending)
    _, e = one(s, Scenario(reassign_complete=True))
    assert rec(e["t-0"].after) == (1, (1, 3), 7, 9)


def test_reassignment_cannot_complete_when_a_new_replica_is_dead() -> None:
    s = cluster({"t": [part(0, [1, 5, 2], 1, [1, 2], adding=[5], removing=[2])]}, alive=(1, 2))
    _, e = one(s, Scenario(reassign_complete=True))
    assert not e["t-0"].elected and "[5] are not alive" in e["t-0"].reason


def test_topic_queued_for_deletion_is_not_elected() -> None:
    s = cluster({"t": [part(0, [3, 1], 3, [3, 1])]}, alive=(1, 3),
                pending=Pending(topic_deletions=("t",)))
    _, e = one(s, Scenario(fail=(3,)))
    assert e == {}


def test_unknown_broker_is_refused() -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2))
    with pytest.raises(ScenarioError, match="broker 9"):
        plan_elections(s, Scenario(fail=(9,)), V39)


def test_zookeeper_source_refuses_a_version_without_zookeeper() -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2))
    with pytest.raises(ScenarioError, match="no ZooKeeper controller"):
        plan_elections(s, Scenario(), parse_kafka_version("4.0"))


# ---- the 0.8 – 1.0 selectors -------------------------------------------------------------------

def test_081_offline_selector_takes_the_live_isr_head_and_always_allows_unclean() -> None:
    # replicas [3,1,2], ISR [2,1], 3 dead: 0.8.1 takes the live ISR head 2 (1.0 would take 1)
    s = cluster({"t": [part(0, [3, 1, 2], 3, [2, 1])]}, alive=(1, 2))
    assert one(s, Scenario(fail=(3,)), V081)[1]["t-0"].after.leader == 2
    assert one(s, Scenario(fail=(3,)), V10)[1]["t-0"].after.leader == 1
    # no live ISR member, unclean disabled by config: 0.8.1 elects anyway (KAFKA-1028 came in 0.8.2)
    s = cluster({"t": [part(0, [3, 2], 3, [3])]}, alive=(2,), configs={"t": {"unclean.leader.election.enable": "false"}})
    e = one(s, Scenario(fail=(3,)), V081)[1]["t-0"]
    assert e.after.leader == 2 and e.unclean
    assert one(s, Scenario(fail=(3,)), V10)[1]["t-0"].offline


def test_legacy_isr_removal_empties_the_isr_when_unclean_is_enabled() -> None:
    # 1.0, unclean enabled, the only ISR member 3 fails and no replica is alive: the election
    # fails and removeReplicaFromIsr leaves ISR [] (the forensic flag); 1.1+ keeps [3]
    s = cluster({"t": [part(0, [3, 4], 3, [3])]}, alive=(3,), configs={"t": {"unclean.leader.election.enable": "true"}})
    assert rec(one(s, Scenario(fail=(3,)), V10)[1]["t-0"].after) == (-1, (), 6, 8)
    assert rec(one(s, Scenario(fail=(3,)), V39)[1]["t-0"].after) == (-1, (3,), 6, 8)
    # unclean disabled: 1.0 keeps the last member too
    s = cluster({"t": [part(0, [3, 4], 3, [3])]}, alive=(3,))
    assert rec(one(s, Scenario(fail=(3,)), V10)[1]["t-0"].after) == (-1, (3,), 6, 8)


def test_legacy_controlled_shutdown_order_changed_in_0_10_0() -> None:
    # 1 leads replicas [1,2,3] with ISR [1,3,2]: before 0.10.0 the head of ISR-minus-shutting-down
    # is 3; from 0.10.0 (KAFKA-3670) the first in assignment order is 2
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 3, 2])]}, alive=(1, 2, 3))
    assert one(s, Scenario(shutdown=(1,)), V09)[1]["t-0"].after.leader == 3
    assert one(s, Scenario(shutdown=(1,)), V10)[1]["t-0"].after.leader == 2
    assert one(s, Scenario(shutdown=(1,)), V10)[1]["t-0"].rule.startswith("PartitionLeaderSelector.scala")


# ---- Election.scala rule by rule, each with its counter-case ---------------------------------------
# apache/kafka 3.8.0 core/src/main/scala/kafka/controller/: Election.scala (leaderForOffline,
# leaderForReassign, leaderForPreferredReplica, leaderForControlledShutdown),
# PartitionStateMachine.scala (PartitionLeaderElectionAlgorithms: offlinePartitionLeaderElection,
# reassignPartitionLeaderElection, preferredReplicaPartitionLeaderElection,
# controlledShutdownPartitionLeaderElection), ReplicaStateMachine.doRemoveReplicasFromIsr.
# ``isReplicaOnline`` excludes brokers shutting down unless includeShuttingDownBrokers.
# leaderForReassign and leaderForPreferredReplica choose as the 0.8.1 – 1.0 selectors do: their
# tables, run against every rule set, are in test_election_legacy.py.

UNCLEAN_ON = {"unclean.leader.election.enable": "true"}


def zk_rules(p, *, alive, shutting=(), config=None, unclean="config", version=V39):
    from kreplica.analysis.election.common import ControllerView
    from kreplica.analysis.election.zk import ZkRules

    s = cluster({"t": [p]}, alive=alive, shutting=shutting, configs={"t": config or {}})
    view = ControllerView(s, version, unclean)
    return ZkRules(view), view


@pytest.mark.parametrize("replicas,isr,alive,shutting,config,unclean,expected", [
    # assignment.find(live && in isr); newIsr = the online ISR members in ISR order
    pytest.param([3, 1, 2], [2, 1], (1, 2), (), None, "config", (1, (2, 1), False), id="assignment-order"),
    # a broker shutting down is not online
    pytest.param([1, 2, 3], [1, 2], (1, 2, 3), (1,), None, "config", (2, (2,), False), id="shutting-down-not-online"),
    pytest.param([1, 2, 3], [1, 2], (1, 2, 3), (), None, "config", (1, (1, 2), False), id="counter-nobody-shutting"),
    # no online ISR member: assignment.find(live) when unclean is allowed, ISR [leader]
    pytest.param([4, 3, 2, 1], [4], (1, 2, 3), (), UNCLEAN_ON, "config", (3, (3,), True), id="unclean-by-config"),
    pytest.param([4, 3, 2, 1], [4], (1, 2, 3), (), None, "config", (None, (4,), False), id="counter-unclean-off"),
    # OfflinePartitionLeaderElectionStrategy(allowUnclean = true): an admin UNCLEAN election
    pytest.param([4, 3, 2, 1], [4], (1, 2, 3), (), None, "yes", (3, (3,), True), id="admin-unclean-election"),
    pytest.param([4, 3, 2, 1], [4], (1, 2, 3), (), UNCLEAN_ON, "no", (None, (4,), False), id="forced-clean"),
    # counter: a live ISR member beats the unclean path even with unclean allowed
    pytest.param([4, 3, 2, 1], [4, 2], (1, 2, 3), (), UNCLEAN_ON, "config", (2, (2,), False),
                 id="counter-live-isr-member-beats-unclean"),
    pytest.param([4, 5], [4], (1, 2, 3), (), UNCLEAN_ON, "config", (None, (4,), False), id="nothing-alive"),
])
def test_leader_for_offline(replicas, isr, alive, shutting, config, unclean, expected) -> None:
    p = part(0, replicas, replicas[0], isr)
    rules, _ = zk_rules(p, alive=alive, shutting=shutting, config=config, unclean=unclean)
    assert rules.offline_leader(("t", 0), p)[:3] == expected


@pytest.mark.parametrize("alive,expected", [
    # initializeLeaderAndIsrForPartitions: the live assigned replicas are the ISR, the first leads
    pytest.param((1, 2), (1, (1, 2)), id="first-live-replica-leads"),
    pytest.param((4,), (None, ()), id="no-live-replica"),
])
def test_new_partition_leader(alive, expected) -> None:
    p = part(0, [3, 1, 2], -1, [], version=None)
    rules, _ = zk_rules(p, alive=alive)
    assert rules.new_partition_leader(p) == expected


@pytest.mark.parametrize("isr,alive,shutting,expected", [
    # assignment order, in the ISR, not shutting down; newIsr = ISR minus the shutting-down brokers
    pytest.param([1, 3, 2], (1, 2, 3), {1}, (2, (3, 2)), id="assignment-order-not-isr-order"),
    # live-or-shutting-down: 2 is in the (stale) ISR but not registered; it stays in the new ISR
    pytest.param([1, 2, 3], (1, 3), {1}, (3, (2, 3)), id="unregistered-isr-member-skipped"),
    pytest.param([1, 2, 3], (1, 2, 3), {1, 2}, (3, (3,)), id="other-shutting-down-skipped"),
    pytest.param([1], (1, 2, 3), {1}, (None, ()), id="no-candidate"),
])
def test_leader_for_controlled_shutdown(isr, alive, shutting, expected) -> None:
    p = part(0, [1, 2, 3], 1, isr)
    rules, _ = zk_rules(p, alive=alive)
    assert rules.controlled_shutdown_leader(p, set(shutting)) == expected


@pytest.mark.parametrize("leader,isr,replica,config,expected", [
    # doRemoveReplicasFromIsr: the last member is always kept (1.1+), whatever the unclean config
    pytest.param(3, [3], 3, UNCLEAN_ON, (-1, (3,), 6, 8), id="last-member-kept-even-unclean-on"),
    pytest.param(3, [3, 1], 3, None, (-1, (1,), 6, 8), id="leader-removed-leader-minus-one"),
    pytest.param(1, [1, 3], 3, None, (1, (1,), 6, 8), id="follower-removed-leader-stays"),
    pytest.param(1, [1], 3, None, (1, (1,), 5, 7), id="not-in-isr-no-write"),
])
def test_offline_replica_isr_removal(leader, isr, replica, config, expected) -> None:
    p = part(0, [1, 3], leader, isr)
    rules, view = zk_rules(p, alive=(1,), config=config)
    rules.remove_from_isr(("t", 0), replica)
    a = view.partitions[("t", 0)]
    assert (a.leader, a.isr, a.leader_epoch, a.version) == expected


@pytest.mark.parametrize("version,expected_t,expected_updates", [
    # 2.3+: the dead broker's replicas go OfflineReplica first (t-0: leader -1, ISR [1], e6 v8;
    # u-0: ISR [1], e6 v8), then t-0's offline election (leader 1, e7 v9)
    pytest.param("3.9", (1, (1,), 7, 9), [("t", 0), ("u", 0)], id="3.9"),
    pytest.param("2.3", (1, (1,), 7, 9), [("t", 0), ("u", 0)], id="2.3"),
    # before 2.3 (KAFKA-3143, commit 423610f3d08, tag 2.3.0): startup sends only the live replicas
    # to OnlineReplica, so only the offline election (e6 v8); u-0 untouched
    pytest.param("2.2", (1, (1,), 6, 8), [], id="2.2"),
    pytest.param("1.1", (1, (1,), 6, 8), [], id="1.1"),
])
def test_controller_takeover_offline_replicas(version, expected_t, expected_updates) -> None:
    s = cluster({"t": [part(0, [3, 1], 3, [3, 1])], "u": [part(0, [1, 3], 1, [1, 3])]}, alive=(1,))
    plan, e = one(s, Scenario(), parse_kafka_version(version))
    assert set(e) == {"t-0"}
    assert rec(e["t-0"].after) == expected_t
    assert [u.key for u in plan.isr_updates] == expected_updates


# ---- every field of each election an event returns -------------------------------------------------
# An Election carries the record before and after, whether a leader was elected, whether it was
# unclean, the Election.scala / PartitionStateMachine method that decided, and the reason the
# report prints. Each case below pins all of them, with the Kafka rule that makes it so.

def full(e):
    return e.kind, rec(e.before), rec(e.after), e.elected, e.unclean, e.rule, e.reason


def test_new_partition_takes_the_first_live_replica_with_epoch_and_version_zero() -> None:
    """``PartitionStateMachine.initializeLeaderAndIsrForPartitions``: a partition with no state
    znode (NewPartition) gets the live assigned replicas as ISR, the first of them as leader,
    ``LeaderAndIsr(leader, liveReplicas)`` at leader epoch 0, created with znode version 0; with
    no live replica it stays without state (``NoReplicaOnlineException``)."""
    rule = "PartitionStateMachine.initializeLeaderAndIsrForPartitions"
    s = cluster({"t": [part(0, [3, 1, 2], -1, [], version=None)]}, alive=(1, 2))
    _, e = one(s)
    assert full(e["t-0"]) == ("offline", (-1, (), 5, None), (1, (1, 2), 0, 0), True, False, rule,
                              "a new partition: the first live replica leads")
    assert not e["t-0"].offline
    # counter: none of 3, 1, 2 alive -> nothing written
    s = cluster({"t": [part(0, [3, 1, 2], -1, [], version=None)]}, alive=(4,))
    _, e = one(s)
    assert full(e["t-0"]) == ("offline", (-1, (), 5, None), (-1, (), 5, None), False, False, rule,
                              "no assigned replica is alive (the partition has no state yet)")


def test_offline_reasons_tell_out_of_sync_from_nothing_alive() -> None:
    """``leaderForOffline`` finds no leader for two reasons: live replicas exist but none is in the
    ISR and unclean election is off, or no assigned replica is alive at all."""
    p = part(0, [4, 3], 4, [4])
    rules, _ = zk_rules(p, alive=(1, 2, 3))
    assert rules.offline_leader(("t", 0), p) == (None, (4,), False, (
        "no ISR member of [4] is alive and unclean leader election is not allowed "
        "(live replicas [3] are out of sync)"))
    p = part(0, [4, 5], 4, [4])
    rules, _ = zk_rules(p, alive=(1, 2, 3))
    assert rules.offline_leader(("t", 0), p)[3] == "no replica of [4, 5] is alive"


@pytest.mark.parametrize("unclean,config,version,how", [
    # topic config unclean.leader.election.enable=true (OfflinePartitionLeaderElectionStrategy(false)
    # falls back to the config): the config is the reason, even on 2.4+
    pytest.param("config", UNCLEAN_ON, V39, "unclean.leader.election.enable", id="config-3.9"),
    # --unclean-allowed yes stands for the config set to true (an offline partition's election
    # reads unclean.leader.election.enable), not for an admin ElectLeaders request, on any version
    pytest.param("yes", None, V39, "unclean.leader.election.enable (true by --unclean-allowed yes)", id="yes-3.9"),
    pytest.param("yes", None, parse_kafka_version("2.3"), "unclean.leader.election.enable (true by "
                 "--unclean-allowed yes)", id="yes-2.3"),
])
def test_unclean_reason_names_what_allowed_it(unclean, config, version, how) -> None:
    p = part(0, [4, 3, 2], 4, [4])
    rules, _ = zk_rules(p, alive=(1, 2, 3), config=config, unclean=unclean, version=version)
    assert rules.offline_leader(("t", 0), p) == (3, (3,), True, (
        f"no ISR member of [4] is alive; {how} allows the first live replica in assignment order"))


def test_offline_replica_write_is_recorded_with_its_before() -> None:
    """``ReplicaStateMachine`` OfflineReplica (``doRemoveReplicasFromIsr``): the follower 2 leaves
    the ISR [1,2] in one write (epoch 5+1, version 7+1); the record before is the znode read."""
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, alive=(1, 2))
    plan, _ = one(s, Scenario(fail=(2,)))
    (u,) = plan.isr_updates
    assert (rec(u.before), rec(u.after), u.reason) == (
        (1, (1, 2), 5, 7), (1, (1,), 6, 8), "replica 2 goes offline (OfflineReplica)")


def test_takeover_keeps_the_record_read_before_the_offline_replica_writes() -> None:
    """``onControllerFailover`` (2.3+): ``ReplicaStateMachine.startup`` moves the replicas of dead
    brokers to OfflineReplica, then ``triggerOnlinePartitionStateChange`` elects. t-0 (leader 3
    dead): OfflineReplica writes leader -1 ISR [1] (e6 v8), the election leader 1 (e7 v9); its
    before is the znode as read (e5 v7). u-0 (leader -1, every replica alive) is elected from
    its record as read."""
    s = cluster({"t": [part(0, [3, 1], 3, [3, 1])], "u": [part(0, [1, 2], -1, [2])]}, alive=(1, 2))
    _, e = one(s)
    rule = "Election.scala leaderForOffline"
    reason = "first replica in assignment order {} that is alive and in the ISR"
    assert full(e["t-0"]) == ("offline", (3, (3, 1), 5, 7), (1, (1,), 7, 9), True, False, rule,
                              reason.format([3, 1]))
    assert full(e["u-0"]) == ("offline", (-1, (2,), 5, 7), (2, (2,), 6, 8), True, False, rule,
                              reason.format([1, 2]))


@pytest.mark.parametrize("scenario", [Scenario(), Scenario(fail=(3,))], ids=["takeover", "broker-failure"])
def test_offline_replicas_come_from_the_assignment_not_a_stale_isr(scenario) -> None:
    """The replicas that go OfflineReplica are the dead broker's assigned replicas
    (``ControllerContext.onlineAndOfflineReplicas`` at takeover, ``replicasOnBrokers`` in
    ``onBrokerFailure``): 3 in a stale ISR of t-0 (replicas [1,2]) is not one of them, so t-0 is
    not written; u-0 assigns 3 and loses it from the ISR (counter-case)."""
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2, 3])], "u": [part(0, [1, 3], 1, [1, 3])]}, alive=(1, 2, 3))
    if not scenario.fail:
        s = cluster({"t": [part(0, [1, 2], 1, [1, 2, 3])], "u": [part(0, [1, 3], 1, [1, 3])]}, alive=(1, 2))
    plan, e = one(s, scenario)
    assert e == {}
    assert [(u.key, rec(u.after)) for u in plan.isr_updates] == [(("u", 0), (1, (1,), 6, 8))]


def test_broker_failure_leaves_topics_queued_for_deletion_alone() -> None:
    """``onReplicasBecomeOffline``: replicas of topics queued for deletion go to
    ReplicaDeletionIneligible, not OfflineReplica, so no ISR write for d-0; u-0 (counter) loses
    the dead follower 3 from its ISR."""
    s = cluster({"d": [part(0, [1, 3], 1, [1, 3])], "u": [part(0, [1, 3], 1, [1, 3])]}, alive=(1, 2, 3),
                pending=Pending(topic_deletions=("d",)))
    plan, _ = one(s, Scenario(fail=(3,)))
    assert [u.key for u in plan.isr_updates] == [("u", 0)]


def test_controlled_shutdown_results_and_deletion() -> None:
    """``doControlledShutdown``: partitions of topics queued for deletion are not acted on (d-0);
    a led partition with no other live ISR member fails and writes nothing (a-0), and the next
    led partition is still elected (b-0, ``leaderForControlledShutdown``: 2, ISR [2], e6 v8)."""
    s = cluster({"a": [part(0, [1, 2], 1, [1])], "b": [part(0, [1, 2], 1, [1, 2])],
                 "d": [part(0, [1, 2], 1, [1, 2]), part(1, [2, 1], 2, [2, 1])]}, alive=(1, 2),
                pending=Pending(topic_deletions=("d",)))
    plan, e = one(s, Scenario(shutdown=(1,)))
    rule = "Election.scala leaderForControlledShutdown"
    assert set(e) == {"a-0", "b-0"} and plan.isr_updates == ()
    assert full(e["a-0"]) == ("controlled_shutdown", (1, (1,), 5, 7), (1, (1,), 5, 7), False, False, rule,
                              "no other ISR member of [1] is alive: broker 1 keeps leading and its shutdown "
                              "reports the partition as remaining")
    assert full(e["b-0"]) == ("controlled_shutdown", (1, (1, 2), 5, 7), (2, (2,), 6, 8), True, False, rule,
                              "first replica in assignment order [1, 2] that is in the ISR and not shutting down")


REASSIGN_RULE = "Election.scala leaderForReassign"


@pytest.mark.parametrize("p,alive,after,elected,reason", [
    # the leader 1 is dead: the adding replica 3 cannot catch up, nothing is written
    pytest.param(part(0, [1, 2, 3], 1, [1, 2], adding=[3]), (2, 3), (1, (1, 2), 5, 7), False,
                 "the reassignment to [1, 2, 3] cannot complete: the partition has no live leader for the new "
                 "replicas to catch up from", id="leader-dead"),
    # target [2,3] both in the ISR but dead, leader 1 alive and not a target: leaderForReassign
    # finds no target replica online and in the ISR
    pytest.param(part(0, [2, 3, 1], 1, [1, 2, 3], removing=[1]), (1,), (1, (1, 2, 3), 5, 7), False,
                 "no target replica of [2, 3] is alive and in the ISR", id="no-target-in-isr"),
    # adding [3], removing [1], leader 1 not a target: 3 joins the ISR (v8), 2 leads (e6 v9),
    # 1 goes OfflineReplica (e7 v10)
    pytest.param(part(0, [2, 3, 1], 1, [1, 2], adding=[3], removing=[1]), (1, 2, 3), (2, (2, 3), 7, 10), True,
                 "leader 1 is not a target replica: the first of [2, 3] that is alive and in the ISR",
                 id="leader-leaves"),
    # adding [3] only, leader 1 a live target: 3 joins (v8), newEpoch (e6 v9)
    pytest.param(part(0, [1, 2, 3], 1, [1, 2], adding=[3]), (1, 2, 3), (1, (1, 2, 3), 6, 9), True,
                 "leader 1 stays (a target replica, alive): the epoch is bumped (newEpoch)", id="leader-stays"),
])
def test_reassignment_results_for_each_outcome(p, alive, after, elected, reason) -> None:
    """``onPartitionReassignment`` phase B with ``leaderForReassign``; a completed reassignment
    leaves the target as the replica list and clears the adding and removing replicas."""
    s = cluster({"t": [p]}, alive=alive)
    _, e = one(s, Scenario(reassign_complete=True))
    assert full(e["t-0"]) == ("reassign", rec(p), after, elected, False, REASSIGN_RULE, reason)
    a = e["t-0"].after
    target = tuple(r for r in p.replicas if r not in p.removing_replicas)
    assert (a.replicas, a.adding_replicas, a.removing_replicas) == (
        (target, (), ()) if elected else (p.replicas, p.adding_replicas, p.removing_replicas))


def test_reassignments_in_one_event_are_all_handled() -> None:
    """Every partition being reassigned is handled, whatever happened to the one before it
    (``onPartitionReassignment`` runs per partition): a-0 is not being reassigned, b-0 cannot
    complete (its adding replica 5 is dead), c-0 completes, e-0 finds no target replica (4, 5)
    alive in the ISR, and f-0 after it still completes."""
    s = cluster({"a": [part(0, [1, 2], 1, [1, 2])],
                 "b": [part(0, [1, 5], 1, [1], adding=[5])],
                 "c": [part(0, [1, 2, 3], 1, [1, 2], adding=[3])],
                 "e": [part(0, [4, 5, 1], 1, [1, 4, 5], removing=[1])],
                 "f": [part(0, [1, 3], 1, [1], adding=[3])]}, alive=(1, 2, 3))
    _, e = one(s, Scenario(reassign_complete=True))
    assert sorted(e) == ["b-0", "c-0", "e-0", "f-0"]
    assert [e[k].elected for k in ("b-0", "c-0", "e-0", "f-0")] == [False, True, False, True]


def test_preferred_election_results() -> None:
    """``onReplicaElection`` with ``leaderForPreferredReplica``: d-0 is led by its preferred replica
    (ELECTION_NOT_NEEDED, nothing written, and the next partition is still elected); a-0's
    preferred 1 is alive and in the ISR (elected, e6 v8); b-0's preferred 3 is alive but out of
    the ISR and c-0's preferred 4 is dead (PREFERRED_LEADER_NOT_AVAILABLE); e-0 has no assigned
    replica (``assignment.headOption`` is empty: not available either)."""
    s = cluster({"a": [part(0, [1, 2], 2, [2, 1])], "b": [part(0, [3, 2], 2, [2])],
                 "c": [part(0, [4, 2], 2, [2, 4])], "d": [part(0, [2, 1], 2, [1, 2])],
                 "e": [part(0, [], -1, [])]}, alive=(1, 2, 3))
    keys = [("d", 0), ("a", 0), ("b", 0), ("c", 0), ("e", 0)]
    _, e = one(s, Scenario(preferred=tuple(keys)))
    rule = "Election.scala leaderForPreferredReplica"
    assert full(e["d-0"]) == ("preferred", (2, (1, 2), 5, 7), (2, (1, 2), 5, 7), False, False, rule,
                              "ELECTION_NOT_NEEDED: the preferred replica 2 already leads")
    assert full(e["a-0"]) == ("preferred", (2, (2, 1), 5, 7), (1, (2, 1), 6, 8), True, False, rule,
                              "the preferred replica 1 is alive and in the ISR")
    assert full(e["b-0"]) == ("preferred", (2, (2,), 5, 7), (2, (2,), 5, 7), False, False, rule,
                              "PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica 3 is not in the ISR")
    assert full(e["c-0"]) == ("preferred", (2, (2, 4), 5, 7), (2, (2, 4), 5, 7), False, False, rule,
                              "PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica 4 is not alive")
    assert full(e["e-0"])[3:] == (False, False, rule,
                                  "PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica None is not alive")


def test_takeover_removes_dead_replicas_of_topics_queued_for_deletion_but_does_not_elect() -> None:
    """``ReplicaStateMachine.startup`` (2.3+): ``initializeReplicaState`` puts a dead broker's
    replicas in ReplicaDeletionIneligible, and every offline replica of
    ``ControllerContext.onlineAndOfflineReplicas`` (no deletion filter) then goes OfflineReplica,
    whose ``doRemoveReplicasFromIsr`` writes the ISR whatever the topic's deletion state; only
    ``triggerOnlinePartitionStateChange`` leaves topics queued for deletion out. d-0 (leader 3
    dead, ISR [3,1]): OfflineReplica writes leader -1, ISR [1] (e6 v8), and no election follows.
    Counter-case: a broker failure (``onReplicasBecomeOffline``) sends them to
    ReplicaDeletionIneligible instead, with no ISR write
    (test_broker_failure_leaves_topics_queued_for_deletion_alone)."""
    s = cluster({"d": [part(0, [3, 1], 3, [3, 1])], "u": [part(0, [3, 1], 3, [3, 1])]}, alive=(1,),
                pending=Pending(topic_deletions=("d",)))
    plan, e = one(s)
    assert set(e) == {"u-0"}
    assert [(u.key, rec(u.after)) for u in plan.isr_updates] == [
        (("d", 0), (-1, (1,), 6, 8)), (("u", 0), (-1, (1,), 6, 8))]


def test_an_admin_unclean_election_is_one_write_and_no_offline_replica_step() -> None:
    # KafkaController.processReplicaLeaderElection, ElectLeaders UNCLEAN from the admin client
    # (KIP-460): a-0 replicas [1,2,3], leader -1, ISR [1], broker 1 dead, the topic forbidding
    # unclean election: leaderForOffline with allowUnclean = true -> 2, ISR [2], RECOVERING
    # (3.2+), one write: e5 -> e6, v7 -> v8 (a real 3.9.2 cluster: epoch 3 -> 4, recorded in
    # fixtures/real-kafka/unclean-election-zookeeper-3.9.2). b-0 is led by live 2:
    # ELECTION_NOT_NEEDED, nothing written. 'all' (()) asks only for the partitions without a live
    # leader.
    s = cluster({"a": [part(0, [1, 2, 3], -1, [1])], "b": [part(0, [2, 3], 2, [2, 3])]}, alive=(2, 3),
                configs={"a": {"unclean.leader.election.enable": "false"}})
    plan, e = one(s, Scenario(unclean_election=(("a", 0), ("b", 0))))
    assert rec(e["a-0"].after) == (2, (2,), 6, 8)
    assert e["a-0"].kind == "unclean_election" and e["a-0"].unclean and e["a-0"].elected
    assert e["a-0"].after.leader_recovery_state == 1 and "KIP-460" in e["a-0"].reason
    assert not e["b-0"].elected and e["b-0"].after == e["b-0"].before
    assert e["b-0"].reason == "ELECTION_NOT_NEEDED: broker 2 leads and is alive"
    assert plan.isr_updates == ()
    _, e = one(s, Scenario(unclean_election=()))
    assert sorted(e) == ["a-0"]
    # the counter-case: a controller taking over (no scenario, unclean allowed) first sends dead
    # broker 1's replica OfflineReplica (leader -1, ISR [1] kept: e6 v8), then elects (e7 v9)
    plan, e = one(s, Scenario(unclean="yes"))
    assert rec(e["a-0"].after) == (2, (2,), 7, 9) and len(plan.isr_updates) == 1
    # the admin election needs ElectLeaders with an election type (2.4+)
    with pytest.raises(ScenarioError, match="KIP-460"):
        plan_elections(s, Scenario(unclean_election=()), parse_kafka_version("2.3"))
