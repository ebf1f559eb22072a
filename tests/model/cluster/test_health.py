"""The health lists' Kafka rules where a reassignment is in flight (``compute_health``)."""

from __future__ import annotations

from tests.builders.cluster import cluster, part


def _urp(*partitions) -> tuple[str, ...]:
    return cluster({"t": list(partitions)}).health.under_replicated


def test_a_replica_a_reassignment_is_adding_is_not_missing_from_the_isr() -> None:
    """Kafka's replication factor of a partition being reassigned is its replicas less the adding
    ones (``OngoingReassignmentState.replicationFactor``: ``replicas.diff(addingReplicas).size``;
    ``TopicCommand.getReplicationFactor`` the same): the new replica still copying the log does
    not make the partition under-replicated. A real 4.4 cluster under kafka-reassign-partitions
    --throttle showed replicas [6, 5, 7, 4], adding [6], ISR [4, 5, 7], and Kafka counted it fine."""
    assert _urp(part(0, (6, 5, 7, 4), 4, (4, 5, 7), adding=(6,), removing=(4,))) == ()


def test_a_reassigning_partition_missing_an_original_replica_is_under_replicated() -> None:
    """The counter-case: replicas [6, 5, 7, 4] less adding [6] is three; an ISR of two is short."""
    assert _urp(part(0, (6, 5, 7, 4), 4, (4, 5), adding=(6,), removing=(4,))) == ("t-0",)


def test_without_a_reassignment_the_replication_factor_is_every_replica() -> None:
    assert _urp(part(0, (1, 2, 3), 1, (1, 2))) == ("t-0",)
    assert _urp(part(0, (1, 2, 3), 1, (1, 2, 3))) == ()
