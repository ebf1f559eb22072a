"""``plan_reassign``, the one analysis behind ``plan-reassign``: each decision it makes, with the
counter-case that must not match. Expected values come from what Kafka's tool does
(``ReassignPartitionsCommand`` in ``tools/src/main/java/org/apache/kafka/tools/reassign/`` from
3.7, ``core/src/main/scala/kafka/admin/ReassignPartitionsCommand.scala`` before; AdminUtils for
placement), worked by hand below, and from the contract the README states."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.phases import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
)
from kreplica.analysis.reassignment.plan import PlannedReassignment, plan_reassign
from kreplica.analysis.reassignment.planner import PlanError
from kreplica.analysis.reassignment.verify import VerifyResult
from kreplica.model.cluster.assignment import Assignment
from kreplica.model.cluster.assignment import PartitionReplicas as P
from kreplica.model.versions import DEFAULT_VERSION, parse_kafka_version

# a: 3 partitions, b: 1 partition, replication factor 2, on brokers 1-3 without racks
CURRENT = {("a", 0): (1, 2), ("a", 1): (3, 2), ("a", 2): (3, 1), ("b", 0): (2, 3)}


def _assignment(layout=CURRENT, *, kind: str = "assignment", racks=None, live=(1, 2, 3), **configs) -> Assignment:
    parts = tuple(p if isinstance(p, P) else P(k[0], k[1], p, leader=p[0], isr=p) for k, p in layout.items())
    return Assignment(kind, "test", tuple(live), racks or {b: None for b in live},
                      tuple(sorted(parts, key=lambda p: p.key)), **configs)


# -- which path runs ------------------------------------------------------------------------------


@pytest.mark.parametrize(("partition", "topic_configs", "executed", "status", "problems"), [
    # kafka-reassign-partitions.sh --verify: "Reassignment of partition a-0 is still in progress."
    pytest.param(P("a", 0, (1, 2, 3), adding=(1,), removing=(3,), isr=(2, 3)), {}, None, "in_progress", True,
                 id="in-flight-is-in-progress"),
    # "Reassignment of partition a-0 is completed." and no throttle left: nothing to report
    pytest.param(P("a", 0, (1, 2)), {}, {("a", 0): (1, 2)}, "completed", False, id="as-executed-is-completed"),
    # "There is no active reassignment of partition a-0, but replica set is 1,2 rather than 2,1."
    pytest.param(P("a", 0, (1, 2)), {}, {("a", 0): (2, 1)}, "differs", True, id="order-counts"),
    # completed, but the throttle --execute set is still there: --verify clears it only when done
    pytest.param(P("a", 0, (1, 2)), {"a": {LEADER_THROTTLED_REPLICAS: "0:1"}}, {("a", 0): (1, 2)}, "completed", True,
                 id="throttle-left"),
])
def test_verify_judges_reassignments_as_kafkas_verify(partition, topic_configs, executed, status, problems) -> None:
    outcome = plan_reassign(_assignment({partition.key: partition}, topic_configs=topic_configs), "verify",
                            executed=executed)
    assert isinstance(outcome, VerifyResult)
    assert [(s.topic, s.partition, s.status) for s in outcome.statuses] == [("a", 0, status)]
    assert outcome.has_problems is problems


@pytest.mark.parametrize(("action", "raises"), [
    pytest.param("verify", False, id="verify-builds-no-request"),
    pytest.param("rebalance", True, id="planning-checks-the-request"),
])
def test_only_planning_actions_build_a_request(action: str, raises: bool) -> None:
    # --topics means nothing to verify (Kafka's --verify reads only the reassignment file)
    if raises:
        with pytest.raises(PlanError, match="unknown topic"):
            plan_reassign(_assignment(), action, topics=["nope"])
    else:
        outcome = plan_reassign(_assignment(), action, topics=["nope"])
        assert isinstance(outcome, VerifyResult) and outcome.statuses == ()


# -- what proposal.json and rollback.json cover ---------------------------------------------------

# AdminUtils.assignReplicasToBrokers, rack unaware, brokers [1,2,3], fixed start index 0 (startIndex
# and nextReplicaShift 0): partition p's first replica is broker index p, its follower index
# (p + 1 + (0 + 0) % 2) % 3 (replicaIndex); below 3 partitions the shift never grows
GENERATED_A = {("a", 0): (1, 2), ("a", 1): (2, 3), ("a", 2): (3, 1)}
GENERATED_B = {("b", 0): (1, 2)}


@pytest.mark.parametrize(("topics", "proposal"), [
    pytest.param(["a"], GENERATED_A, id="the-requested-topics"),
    pytest.param(None, GENERATED_A | GENERATED_B, id="no-topics-means-all"),
])
def test_generate_files_cover_every_partition_of_the_topics(topics, proposal) -> None:
    # ReassignPartitionsCommand.generateAssignment: the proposal places every partition of the
    # topics (a-0 and a-2 land where they are and are still listed), and "Current partition replica
    # assignment", the rollback, lists the same partitions as they are now
    outcome = plan_reassign(_assignment(), "generate", topics=topics, start_index=0, rack_aware=False)
    assert dict(outcome.proposal) == proposal
    assert dict(outcome.rollback) == {k: CURRENT[k] for k in proposal}


def test_other_actions_files_cover_only_what_changes() -> None:
    # counter-case: a plan's proposal lists the partitions it changes (a-0 stays on 1,2 and is not
    # listed); the rollback puts each of them back
    outcome = plan_reassign(_assignment(), "decommission", removed=[3])
    changed = {("a", 1), ("a", 2), ("b", 0)}
    assert set(outcome.proposal) == changed
    assert all(set(reps) == {1, 2} for reps in outcome.proposal.values())
    assert dict(outcome.rollback) == {k: CURRENT[k] for k in changed}


# -- phases ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "phase_count"), [
    pytest.param({}, 1, id="one-phase-no-phase-files"),
    pytest.param({"phases": 2}, 2, id="phases-2"),
    pytest.param({"max_moves": 1}, 3, id="one-move-a-phase"),
])
def test_phase_files_exist_only_for_several_phases(options, phase_count: int) -> None:
    # each phase file is an executable reassignment of its partitions' final replica lists, and
    # together they are the proposal; a single phase is the proposal itself
    outcome = plan_reassign(_assignment(), "decommission", removed=[3], **options)
    assert len(outcome.phases) == phase_count
    if phase_count == 1:
        assert outcome.phase_proposals == {}
        return
    assert sorted(outcome.phase_proposals) == list(range(1, phase_count + 1))
    merged: dict = {}
    for number, replicas in outcome.phase_proposals.items():
        assert replicas.keys().isdisjoint(merged)
        merged |= replicas
    assert merged == dict(outcome.proposal)


# -- throttles ------------------------------------------------------------------------------------

# t-0 loses broker 3; u-0 is mid-reassignment (KIP-455: replicas = target 2,4 then removing 1)
THROTTLED = {("t", 0): P("t", 0, (1, 3), leader=1, isr=(1, 3)),
             ("u", 0): P("u", 0, (2, 4, 1), adding=(4,), removing=(1,), leader=2, isr=(2, 1))}


def _throttled(version: str | None, rate: int | None, sizes=None) -> tuple[PlannedReassignment, int]:
    outcome = plan_reassign(_assignment(THROTTLED, kind="zookeeper", live=(1, 2, 3, 4)), "decommission",
                            removed=[3], kafka_version=parse_kafka_version(version) if version else None,
                            throttle_rate=rate, sizes=sizes)
    (new,) = set(outcome.proposal[("t", 0)]) - {1}
    return outcome, new


@pytest.mark.parametrize("version", [pytest.param("2.6", id="admin-api-2.6"), pytest.param(None, id="default")])
def test_admin_api_tool_throttles_in_flight_reassignments_too(version) -> None:
    # 2.6+ calculateProposedMoveMap starts from listPartitionReassignments: u-0's sources are its
    # replicas less adding (2,1), its destination 4; t-0's sources its replicas (1,3)
    outcome, new = _throttled(version, 1000)
    (t,) = outcome.throttles
    assert dict(t.throttle.topics) == {
        "t": {LEADER_THROTTLED_REPLICAS: "0:1,0:3", FOLLOWER_THROTTLED_REPLICAS: f"0:{new}"},
        "u": {LEADER_THROTTLED_REPLICAS: "0:1,0:2", FOLLOWER_THROTTLED_REPLICAS: "0:4"}}
    assert dict(t.throttle.brokers) == {b: {LEADER_THROTTLED_RATE: 1000, FOLLOWER_THROTTLED_RATE: 1000}
                                        for b in (1, 2, 3, 4)}


def test_zookeeper_tool_throttles_only_the_proposal() -> None:
    # counter-case, up to 2.5 (assignThrottledReplicas): leader list the current replicas of a
    # partition that gains a broker, follower list the gained broker; rates on the brokers of the
    # proposal's topics and the proposed brokers. u-0 is not in the proposal, so nothing for it
    outcome, new = _throttled("2.5", 1000)
    (t,) = outcome.throttles
    assert dict(t.throttle.topics) == {
        "t": {LEADER_THROTTLED_REPLICAS: "0:1,0:3", FOLLOWER_THROTTLED_REPLICAS: f"0:{new}"}}
    assert sorted(t.throttle.brokers) == sorted({1, 3, new})


@pytest.mark.parametrize(("rate", "sizes", "throttled", "seconds"), [
    pytest.param(None, {("t", 0): 1000}, False, None, id="no-rate-no-throttle"),
    # --throttle 0 is still a throttle (the tool sets one for any value >= 0); no duration
    pytest.param(0, {("t", 0): 1000}, True, None, id="rate-0"),
    pytest.param(100, None, True, None, id="no-sizes-no-duration"),
    # 1000 bytes into the new broker and out of the leader (1) at 100 B/s
    pytest.param(100, {("t", 0): 1000}, True, 10.0, id="busiest-broker-over-rate"),
])
def test_throttles_and_durations_per_phase(rate, sizes, throttled: bool, seconds) -> None:
    outcome, _ = _throttled(None, rate, sizes)
    assert dict(outcome.phase_seconds) == {1: seconds}
    assert [(t.phase, t.rate, t.seconds) for t in outcome.throttles] == ([(1, rate, seconds)] if throttled else [])


# -- the controller and its steps -----------------------------------------------------------------


@pytest.mark.parametrize(("version", "controller"), [
    # no --kafka-version: current Kafka, where ZooKeeper mode is gone (KIP-833): KRaft
    pytest.param(None, "kraft", id="default-current-kafka"),
    pytest.param("2.4", "zookeeper-kip455", id="2.4-kip455"),
    pytest.param("2.3", "zookeeper-legacy", id="2.3-legacy"),
])
def test_version_chooses_the_controller(version, controller: str) -> None:
    outcome = plan_reassign(_assignment(), "decommission", removed=[3],
                            kafka_version=parse_kafka_version(version) if version else None)
    assert outcome.kafka_version == (parse_kafka_version(version) if version else DEFAULT_VERSION)
    assert outcome.controller == controller
    assert {t.controller for t in outcome.transitions} == {controller}


def test_one_transition_table_per_changed_partition_in_phase_order() -> None:
    # b-0 loses the broker being removed, a-0 one that is not live: demanded removals come first
    # (README: "moves the request demands come first"), so b-0 leads although a-0 sorts first;
    # c-0 does not change and the controller does nothing to it
    layout = {("a", 0): (1, 4), ("b", 0): (2, 3), ("c", 0): (1, 2)}
    outcome = plan_reassign(_assignment(layout, live=(1, 2)), "decommission", removed=[3], max_moves=1)
    assert [[c.key for c in p.changes] for p in outcome.phases] == [[("b", 0)], [("a", 0)]]
    assert [(t.topic, t.partition) for t in outcome.transitions] == [("b", 0), ("a", 0)]
    # each ends on the proposal
    assert {(t.topic, t.partition): t.rows[-1].replicas for t in outcome.transitions} == dict(outcome.proposal)


# -- the exit status, as data ---------------------------------------------------------------------


@pytest.mark.parametrize(("racks", "problems"), [
    # rack-aware: every partition (rf 2) keeps a replica in each of two racks; broker 2 is rack b
    # alone, so it holds all four replicas, above its even share of 8/3: a goal a constraint forced
    pytest.param({1: "a", 2: "b", 3: "a"}, True, id="rack-forces-imbalance"),
    pytest.param({1: "a", 2: "b", 3: "c"}, False, id="three-racks-balance"),
])
def test_a_goal_a_constraint_blocks_is_a_problem(racks, problems: bool) -> None:
    layout = {("t", p): (1, 2) for p in range(4)}
    outcome = plan_reassign(_assignment(layout, racks=racks), "rebalance")
    assert bool(outcome.plan.warnings) is problems
    assert outcome.has_problems is problems


# -- what else the outcome carries ------------------------------------------------------------------


@pytest.mark.parametrize(("max_bytes", "phase_count"), [
    # each of the three changed partitions copies 100 bytes: a 150-byte cap holds one a phase
    pytest.param(150, 3, id="cap-below-two-partitions"),
    pytest.param(300, 1, id="cap-holds-all"),
])
def test_a_byte_cap_splits_phases(max_bytes: int, phase_count: int) -> None:
    sizes = {k: 100 for k in CURRENT}
    outcome = plan_reassign(_assignment(), "decommission", removed=[3], sizes=sizes, max_bytes=max_bytes)
    assert len(outcome.phases) == phase_count
    assert all(sum(c.bytes for c in p.changes) <= max_bytes for p in outcome.phases)


def test_the_outcome_names_its_source() -> None:
    outcome = plan_reassign(_assignment(kind="zookeeper"), "decommission", removed=[3])
    assert (outcome.source, outcome.source_kind) == ("test", "zookeeper")


@pytest.mark.parametrize(("u0", "throttled_u"), [
    # an in-flight reassignment that only adds a replica (a replication factor going up) is in
    # flight too: 2.6+ calculateProposedMoveMap throttles it (sources = replicas less adding)
    pytest.param(P("u", 0, (2, 4, 1), adding=(1,), leader=2, isr=(2, 4)),
                 {LEADER_THROTTLED_REPLICAS: "0:2,0:4", FOLLOWER_THROTTLED_REPLICAS: "0:1"}, id="adding-only"),
    # and one that only removes a replica: its sources are every replica, nothing arrives (the
    # topic still gets the follower config, empty: calculateFollowerThrottles puts every topic)
    pytest.param(P("u", 0, (2, 4, 1), removing=(1,), leader=2, isr=(2, 4, 1)),
                 {LEADER_THROTTLED_REPLICAS: "0:1,0:2,0:4", FOLLOWER_THROTTLED_REPLICAS: ""}, id="removing-only"),
    pytest.param(P("u", 0, (2, 4), leader=2, isr=(2, 4)), None, id="not-in-flight"),
])
def test_in_flight_means_adding_or_removing(u0, throttled_u) -> None:
    layout = {("t", 0): P("t", 0, (1, 3), leader=1, isr=(1, 3)), ("u", 0): u0}
    outcome = plan_reassign(_assignment(layout, kind="zookeeper", live=(1, 2, 3, 4)), "decommission",
                            removed=[3], kafka_version=parse_kafka_version("2.6"), throttle_rate=1000)
    (t,) = outcome.throttles
    assert dict(t.throttle.topics).get("u") == throttled_u


def test_a_leader_the_targets_do_not_include_is_replaced_by_the_kraft_controller() -> None:
    """u-0 is mid-reassignment away from 1, which still leads; the plan removes 1 and 4. The
    plan counts the reassignment as complete, so the controller (KRaft: PartitionChangeBuilder
    elects when the leader is not a live target replica) elects the first target replica in the
    ISR, 2, instead of keeping the removed broker as leader."""
    layout = {("u", 0): P("u", 0, (2, 4, 1), adding=(4,), removing=(1,), leader=1, isr=(2, 1))}
    outcome = plan_reassign(_assignment(layout, kind="kraft", live=(1, 2, 3, 4, 5)), "decommission",
                            removed=[1, 4])
    (table,) = outcome.transitions
    assert table.rows[0].leader == 1
    assert table.rows[-1].leader == 2
