"""The ZooKeeper oracle's expected cluster points (``../shared/oracle/zookeeper/*/expected.json``)
as Kafka reads them.

The oracle's generator defines ``under_replicated`` as "ISR shorter than replicas"; Kafka leaves
the replicas a reassignment is adding out of the replication factor (``Partition.isUnderReplicated``
with ``OngoingReassignmentState.replicationFactor``; ``TopicCommand.isUnderReplicated``), and a
real cluster under a reassignment says so (fixtures/real-kafka, reassignment-throttled). Where the
two differ, Kafka's definition is the one kreplica's health lists follow."""

from __future__ import annotations


def kafka_health(kafka: dict) -> dict[str, list[str]]:
    """The oracle point's ``derived`` health lists, ``under_replicated`` by Kafka's rule."""
    derived = {name: list(names) for name, names in kafka["derived"].items()}
    derived["under_replicated"] = sorted(
        f"{topic}-{pid}" for topic, t in kafka["topics"].items() for pid, p in t["partitions"].items()
        if p.get("state") and len(p["replicas"]) - len(set(p.get("adding_replicas") or ()) & set(p["replicas"]))
        > len(p["state"]["isr"]))
    return derived
