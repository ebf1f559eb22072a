"""In-flight reassignments judged as ``kafka-reassign-partitions.sh --verify`` judges them, each
rule with its counter-case.

Kafka: ``ReassignPartitionsCommand.findPartitionReassignmentStates`` (2.6+): a partition in
``listPartitionReassignments`` (adding or removing replicas, KIP-455) is still in progress; any
other is complete when its replica list equals the file's (``Seq`` equality: order counts), else
"no active reassignment, but replica set is X rather than Y". The ≤ 2.5 ZooKeeper tool reads the
in-progress set from ``/admin/reassign_partitions``. The controller finishes a reassignment once
every target replica is in the ISR (``isReassignmentComplete``). Throttles are cleared only by a
``--verify`` that finds nothing in progress; until then they are left behind
(kafka-algorithms spec §5.4, §5.5).
"""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.phases import (
    ALTER_LOG_DIRS_RATE,
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
)
from kreplica.analysis.reassignment.verify import verify_reassignments
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas

P = PartitionReplicas


def cluster(*parts: PartitionReplicas, topic_configs=None, broker_configs=None, pending=()) -> Assignment:
    return Assignment("zookeeper", "test", (1, 2, 3, 4), {b: None for b in (1, 2, 3, 4)}, parts,
                      topic_configs or {}, broker_configs or {}, tuple(pending))


def statuses(result) -> list[tuple]:
    return [(s.topic, s.partition, s.status) for s in result.statuses]


@pytest.mark.parametrize("partition, pending, status", [
    pytest.param(P("t", 0, (1, 2, 4), isr=(1, 2, 4)), (), "completed", id="replicas-equal-the-file"),
    pytest.param(P("t", 0, (2, 1, 4), isr=(1, 2, 4)), (), "differs", id="same-set-other-order"),
    pytest.param(P("t", 0, (1, 2, 3), isr=(1, 2, 3)), (), "differs", id="other-replicas"),
    # KIP-455: adding/removing present -> listPartitionReassignments has it
    pytest.param(P("t", 0, (1, 2, 4, 3), adding=(4,), removing=(3,), isr=(1, 2, 3)), (), "in_progress",
                 id="adding-and-removing"),
    pytest.param(P("t", 0, (1, 2, 4), adding=(4,), isr=(1, 2)), (), "in_progress",
                 id="adding-only-although-the-list-already-matches"),
    pytest.param(P("t", 0, (1, 2, 4, 3), removing=(3,), isr=(1, 2, 4, 3)), (), "in_progress", id="removing-only"),
    # the ZooKeeper tool: an entry in /admin/reassign_partitions
    pytest.param(P("t", 0, (1, 2, 3), isr=(1, 2, 3)), ({"topic": "t", "partition": 0, "replicas": [1, 2, 4]},),
                 "in_progress", id="zookeeper-pending-znode"),
    pytest.param(P("t", 0, (1, 2, 4), isr=(1, 2, 4)), ({"topic": "t", "partition": 1, "replicas": [1, 2, 3]},),
                 "completed", id="pending-entry-of-another-partition"),
])
def test_status_against_the_file(partition, pending, status) -> None:
    result = verify_reassignments(cluster(partition, pending=pending), {("t", 0): (1, 2, 4)})
    assert statuses(result) == [("t", 0, status)]
    assert result.has_problems == (status != "completed")
    assert result.in_progress == (status == "in_progress")


def test_without_a_file_only_moving_partitions_are_listed() -> None:
    a = cluster(P("t", 0, (1, 2)), P("t", 1, (1, 2, 3), adding=(3,)), P("t", 2, (2, 3)),
                pending=({"topic": "t", "partition": 2, "replicas": [3, 4]},))
    assert statuses(verify_reassignments(a)) == [("t", 1, "in_progress"), ("t", 2, "in_progress")]


def test_with_a_file_only_its_partitions_are_listed_in_order() -> None:
    a = cluster(P("t", 0, (1, 2)), P("t", 1, (1, 2, 3), adding=(3,)), P("u", 0, (2, 3)))
    result = verify_reassignments(a, {("u", 0): (2, 3), ("t", 0): (1, 2)})
    assert statuses(result) == [("t", 0, "completed"), ("u", 0, "completed")]


@pytest.mark.parametrize("partition, pending, target, caught_up, lagging", [
    # KIP-455: the target is the replica list less the removing replicas; adding replicas join the ISR
    pytest.param(P("t", 0, (1, 2, 4, 3), adding=(4,), removing=(3,), isr=(1, 2, 3)), (), (1, 2, 4), (), (4,),
                 id="adding-replica-not-in-isr-lags"),
    pytest.param(P("t", 0, (1, 2, 4, 3), adding=(4,), removing=(3,), isr=(1, 2, 3, 4)), (), (1, 2, 4), (4,), (),
                 id="adding-replica-in-isr-caught-up"),
    # ZooKeeper znode: the target is the znode's list; a target replica not yet in the ISR lags
    pytest.param(P("t", 0, (1, 2, 3, 4), isr=(1, 2, 3)), ({"topic": "t", "partition": 0, "replicas": [1, 2, 4]},),
                 (1, 2, 4), (), (4,), id="znode-target-replica-lags"),
    pytest.param(P("t", 0, (1, 2, 3, 4), isr=(1, 2, 3, 4)), ({"topic": "t", "partition": 0, "replicas": [1, 2, 4]},),
                 (1, 2, 4), (), (), id="znode-target-in-isr"),
])
def test_which_replicas_have_caught_up(partition, pending, target, caught_up, lagging) -> None:
    (s,) = verify_reassignments(cluster(partition, pending=pending)).statuses
    assert (s.status, s.target, s.caught_up, s.lagging) == ("in_progress", target, caught_up, lagging)


@pytest.mark.parametrize("topic_configs, broker_configs, left", [
    pytest.param({}, {}, [], id="none"),
    pytest.param({"t": {LEADER_THROTTLED_REPLICAS: "0:1,0:2", "retention.ms": "1000"}}, {},
                 [("topic", "t", LEADER_THROTTLED_REPLICAS)], id="topic-leader-list"),
    pytest.param({"t": {FOLLOWER_THROTTLED_REPLICAS: "0:4"}}, {}, [("topic", "t", FOLLOWER_THROTTLED_REPLICAS)],
                 id="topic-follower-list"),
    pytest.param({"t": {LEADER_THROTTLED_REPLICAS: ""}}, {}, [], id="empty-list-is-no-throttle"),
    pytest.param({"t": {"retention.ms": "1000"}}, {"1": {"log.retention.hours": "1"}}, [], id="other-configs"),
    pytest.param({}, {"1": {LEADER_THROTTLED_RATE: "1000", FOLLOWER_THROTTLED_RATE: "1000"},
                      "<default>": {ALTER_LOG_DIRS_RATE: "50"}},
                 [("broker", "1", FOLLOWER_THROTTLED_RATE), ("broker", "1", LEADER_THROTTLED_RATE),
                  ("broker", "<default>", ALTER_LOG_DIRS_RATE)], id="broker-rates"),
])
def test_throttles_left_behind(topic_configs, broker_configs, left) -> None:
    a = cluster(P("t", 0, (1, 2, 4)), topic_configs=topic_configs, broker_configs=broker_configs)
    result = verify_reassignments(a, {("t", 0): (1, 2, 4)})
    assert [(t.entity_type, t.entity, t.config) for t in result.throttles] == left
    assert statuses(result) == [("t", 0, "completed")]
    assert result.has_problems == bool(left)


def test_a_file_partition_the_cluster_lacks_differs_with_no_replicas() -> None:
    """``ReassignPartitionsCommand.topicDescriptionFutureToState``: a partition that
    ``describeTopics`` does not know (UnknownTopicOrPartitionException) is
    ``PartitionReassignmentState(emptyList, targetReplicas, done=true)``, so ``--verify`` says "no
    active reassignment, but replica set is [] rather than ..."; the partitions after it are
    still judged (counter-case: one that exists and matches is completed)."""
    a = cluster(P("t", 1, (1, 2), leader=1, isr=(1, 2)))
    result = verify_reassignments(a, {("t", 0): (3, 4), ("t", 1): (1, 2)})
    missing, present = result.statuses
    assert (missing.topic, missing.partition, missing.status, missing.replicas, missing.adding, missing.removing,
            missing.target, missing.leader, missing.isr, missing.caught_up, missing.lagging) == \
        ("t", 0, "differs", (), (), (), (3, 4), None, None, (), ())
    assert (present.topic, present.partition, present.status) == ("t", 1, "completed")
    assert result.has_problems and result.in_progress == 0


@pytest.mark.parametrize("entry", [
    pytest.param({"topic": "t", "partition": 0}, id="no-replicas"),
    pytest.param({"topic": "t"}, id="topic-only"),
    pytest.param({"partition": 0, "replicas": [1, 2, 4]}, id="no-topic"),
])
def test_a_malformed_znode_entry_is_no_reassignment(entry) -> None:
    """``KafkaZkClient.getPartitionReassignment``: /admin/reassign_partitions that does not decode
    (``ReassignPartitionsZNode.decode`` gives Left) is ignored, so nothing is in progress; the
    counter-case, a well-formed entry, is ``zookeeper-pending-znode`` above."""
    assert verify_reassignments(cluster(P("t", 0, (1, 2, 3)), pending=(entry,))).statuses == ()


def test_kip455_target_is_the_replicas_less_removing() -> None:
    """KIP-455 ``ReplicaAssignment.targetReplicas`` = replicas -- removingReplicas, whether the
    reassignment only removes (a replication-factor decrease) or also adds."""
    shrink = P("t", 0, (1, 2, 4, 3), removing=(3,), isr=(1, 2, 4, 3))
    both = P("t", 1, (1, 2, 4, 3), adding=(4,), removing=(3,), isr=(1, 2, 3, 4))
    grow = P("t", 2, (1, 2, 4), adding=(4,), isr=(1, 2))
    got = [(s.target, s.caught_up, s.lagging) for s in verify_reassignments(cluster(shrink, both, grow)).statuses]
    assert got == [((1, 2, 4), (), ()), ((1, 2, 4), (4,), ()), ((1, 2, 4), (), (4,))]
