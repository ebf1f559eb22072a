"""``plan_elections`` as a whole (``analysis/election/scenarios.py``): which rule set a control
plane and version get, when KIP-966 is on, the notes and refusals in their words, and the plan's
health afterwards. The elections themselves are KRaft's ``PartitionChangeBuilder``: the first
replica (in replica order) of the ISR left leads; with no ISR member left and unclean election
off, no leader and the ISR kept as it was (the last member stays)."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.kraft import KraftRules
from kreplica.analysis.election.legacy import LegacyRules
from kreplica.analysis.election.scenarios import Scenario, ScenarioError, elr_enabled, plan_elections, rules_for
from kreplica.analysis.election.zk import ZkRules
from kreplica.model.versions import DEFAULT_VERSION, parse_kafka_version as v
from tests.builders.cluster import cluster, part

TOPIC = {"t": [part(0, [1, 2, 3], 1, [1, 2, 3]), part(1, [2, 3, 1], 3, [1, 2, 3]), part(2, [3, 1], 3, [3])]}
KRAFT = cluster(TOPIC, alive=(1, 2, 3), dead=(4,), kind="kraft")
ZK = cluster(TOPIC, alive=(1, 2, 3))


@pytest.mark.parametrize("state, version, rules, emulated", [
    pytest.param(KRAFT, None, KraftRules, DEFAULT_VERSION, id="kraft-current"),
    pytest.param(KRAFT, "3.0", KraftRules, v("3.0"), id="kraft-3.0"),
    pytest.param(ZK, None, ZkRules, v("3.9"), id="zk-the-last-zookeeper-controller"),
    pytest.param(ZK, "1.1", ZkRules, v("1.1"), id="zk-1.1-election-scala"),
    pytest.param(ZK, "1.0", LegacyRules, v("1.0"), id="zk-1.0-selectors"),
    pytest.param(ZK, "0.8", LegacyRules, v("0.8"), id="zk-0.8"),
])
def test_the_rule_set_follows_the_control_plane_and_version(state, version, rules, emulated) -> None:
    assert rules_for(state, v(version) if version else None) == (rules, emulated)


@pytest.mark.parametrize("state, version, message", [
    pytest.param(KRAFT, "2.8", "KRaft metadata cannot come from Kafka 2.8.0: the KRaft controller starts in 3.0 "
                               "(give --kafka-version 3.0 or later)", id="kraft-before-3.0"),
    pytest.param(ZK, "4.0", "Kafka 4.0.0 has no ZooKeeper controller (replication starts in 0.8; ZooKeeper mode was "
                            "removed in 4.0): give --kafka-version 0.8 to 3.9 for a ZooKeeper SOURCE", id="zk-4.0"),
])
def test_a_version_that_never_ran_this_control_plane_is_refused(state, version, message) -> None:
    with pytest.raises(ScenarioError) as refused:
        rules_for(state, v(version))
    assert str(refused.value) == message


@pytest.mark.parametrize("state, version, enabled", [
    pytest.param(cluster(TOPIC, kind="kraft", features={"eligible.leader.replicas.version": 1}), "4.0", True,
                 id="finalized-at-1"),
    pytest.param(cluster(TOPIC, kind="kraft", features={"eligible.leader.replicas.version": 2}), "4.0", True,
                 id="finalized-above-1"),
    pytest.param(cluster(TOPIC, kind="kraft", features={"eligible.leader.replicas.version": 0}), "4.0", False,
                 id="finalized-at-0"),
    pytest.param(KRAFT, "4.0", False, id="not-finalized"),
    pytest.param(cluster(TOPIC, kind="kraft", features={"eligible.leader.replicas.version": 1}), "3.9", False,
                 id="a-version-without-kip-966"),
    pytest.param(cluster(TOPIC, features={"eligible.leader.replicas.version": 1}), "4.0", False, id="zookeeper"),
])
def test_kip_966_needs_the_version_and_the_finalized_feature(state, version, enabled) -> None:
    assert elr_enabled(state, v(version)) is enabled
    if state.source_kind == "kraft" and version == "4.0":
        assert plan_elections(state, Scenario()).elr_enabled is enabled


def test_a_failure_elects_in_replica_order_and_leaves_a_partition_without_isr_offline() -> None:
    plan = plan_elections(KRAFT, Scenario(fail=(3,)))
    got = [(e.key, e.kind, e.after.leader, e.after.isr, e.elected, e.offline) for e in plan.elections]
    assert got == [(("t", 1), "offline", 2, (1, 2), True, False), (("t", 2), "offline", -1, (3,), False, True)]
    assert (plan.rules, plan.kafka_version, plan.offline_after, plan.notes) == ("kraft", DEFAULT_VERSION, ("t-2",), ())
    assert plan.online_after == frozenset({1, 2}) and plan.has_problems
    # TopicCommand's PartitionDescription.isUnderMinIsr: no leader, or an ISR below the minimum
    assert "t-2" in plan.under_min_isr_after and "t-0" not in plan.under_min_isr_after


def test_a_failure_of_a_broker_already_gone_is_handled_again_with_a_note() -> None:
    plan = plan_elections(KRAFT, Scenario(fail=(4,)))
    assert plan.notes == ("brokers [4] were not alive already; their failure is handled again (their replicas go "
                          "offline)",)
    assert plan.elections == () and not plan.has_problems and plan.offline_after == ()


def test_no_scenario_runs_the_controllers_own_pass_and_healthy_is_no_problem() -> None:
    plan = plan_elections(KRAFT, Scenario())
    assert (plan.elections, plan.offline_after, plan.under_min_isr_after, plan.notes) == ((), (), (), ())
    assert plan.online_after == frozenset({1, 2, 3}) and not plan.has_problems
    # the counter-case: a partition offline in the source is elected by that pass
    offline = cluster({"t": [part(0, [1, 2], -1, [2])]}, alive=(1, 2), kind="kraft")
    (e,) = plan_elections(offline, Scenario()).elections
    assert (e.key, e.after.leader, e.elected) == (("t", 0), 2, True)


def test_every_preferred_election_is_for_a_partition_not_led_by_its_first_replica() -> None:
    plan = plan_elections(KRAFT, Scenario(preferred=()))
    assert [(e.key, e.kind, e.after.leader) for e in plan.elections] == [(("t", 1), "preferred", 2)]


def test_a_controlled_shutdown_named_twice_is_one_request() -> None:
    once = plan_elections(KRAFT, Scenario(shutdown=(1,)))
    twice = plan_elections(KRAFT, Scenario(shutdown=(1, 1)))
    assert [(e.key, e.after.leader) for e in once.elections] == [(("t", 0), 2)]
    assert (twice.elections, twice.isr_updates) == (once.elections, once.isr_updates)


def test_reassignment_complete_without_a_reassignment_says_so() -> None:
    plan = plan_elections(KRAFT, Scenario(reassign_complete=True))
    assert (plan.elections, plan.notes) == ((), ("no partition is being reassigned",))


@pytest.mark.parametrize("scenario, message", [
    pytest.param(Scenario(fail=(9,)), "broker 9 is not registered and holds no replica (brokers known: [1, 2, 3, 4])",
                 id="unknown-broker"),
    pytest.param(Scenario(shutdown=(4,)), "broker 4 is not alive: a controlled shutdown needs a live broker (use --fail "
                                          "for a broker that is gone)", id="shutdown-of-a-dead-broker"),
])
def test_refusals(scenario, message) -> None:
    with pytest.raises(ScenarioError) as refused:
        plan_elections(KRAFT, scenario)
    assert str(refused.value) == message


def test_a_shutdown_of_the_last_isr_member_of_a_leaderless_partition_writes_nothing() -> None:
    # PartitionChangeBuilder keeps the ISR's last member: removing 2 from ISR [2] with no leader
    # changes nothing, so no record, no election and no ISR update (counter-case: a led partition,
    # test_a_controlled_shutdown_named_twice_is_one_request)
    state = cluster({"t": [part(0, [1, 2], -1, [2])]}, alive=(1, 2), kind="kraft")
    plan = plan_elections(state, Scenario(shutdown=(2,)))
    assert (plan.elections, plan.isr_updates) == ((), ())


def _steps(plan) -> list[tuple]:
    return [(e.partition, e.kind, e.before.leader, e.after.leader, e.elected) for e in plan.elections]


def test_two_controlled_shutdowns_are_two_requests_the_second_on_the_first_ones_result() -> None:
    """``ReplicationControlManager.handleBrokerInControlledShutdown`` per request: shutting 1 down
    moves t-0 to 2 (the first replica of the ISR left, [2, 3]); shutting 2 down then moves t-0 on
    to 3, as 1, in controlled shutdown, is not ``ClusterControlManager.isActive``. The plan keeps
    both elections (counter-case: 1 alone, test_a_controlled_shutdown_named_twice_is_one_request)."""
    plan = plan_elections(KRAFT, Scenario(shutdown=(1, 2)))
    assert _steps(plan) == [("t-0", "controlled_shutdown", 1, 2, True), ("t-0", "controlled_shutdown", 2, 3, True)]


def test_a_preferred_election_after_a_controlled_shutdown_keeps_both_parts() -> None:
    """``--preferred`` runs on the state the shutdown left: t-0's preferred replica 1 is in
    controlled shutdown, so ``electLeader`` PREFERRED answers PREFERRED_LEADER_NOT_AVAILABLE; t-1's
    preferred replica 2 is in the ISR and acceptable and leads. The shutdown's own election of
    t-0 stays in the plan, before the preferred ones."""
    plan = plan_elections(KRAFT, Scenario(shutdown=(1,), preferred=()))
    assert _steps(plan) == [("t-0", "controlled_shutdown", 1, 2, True), ("t-0", "preferred", 2, 2, False),
                            ("t-1", "preferred", 3, 2, True)]
    assert plan.elections[1].reason.startswith("PREFERRED_LEADER_NOT_AVAILABLE")


@pytest.mark.parametrize("scenario, kind", [
    pytest.param(Scenario(fail=(2,), reassign_complete=True), "offline", id="after-a-failure"),
    pytest.param(Scenario(shutdown=(2,), reassign_complete=True), "controlled_shutdown", id="after-a-shutdown"),
])
def test_a_reassignment_completion_after_another_event_keeps_both_parts(scenario, kind) -> None:
    """u-0, led by 2, moves to 3 when 2 is fenced (``handleBrokerFenced``) or shuts down
    (``handleBrokerInControlledShutdown``); then t-0's reassignment to [2, 3] cannot complete
    (``PartitionReassignmentReplicas.maybeCompleteReassignment``: 2 has left the ISR). The plan
    holds the first event's election and the reassignment's."""
    state = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2], adding=[3], removing=[1])], "u": [part(0, [2, 3], 2, [2, 3])]},
                    alive=(1, 2, 3), kind="kraft")
    plan = plan_elections(state, scenario)
    assert _steps(plan) == [("u-0", kind, 2, 3, True), ("t-0", "reassign", 1, 1, False)]
