"""Cluster layouts of the shapes issue 11 measures planners on, built deterministically with
Kafka's own placement (``AdminUtils``, per-topic random start from a seeded generator, as
``kafka-topics.sh --create`` in ZooKeeper mode places them). Small sizes in the tests, large ones
in ``bench/bench_reassign.py``."""

from __future__ import annotations

import random

from kreplica.analysis.reassignment.placement import assign_replicas_to_brokers
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas


def placed(brokers: list[int], partitions: int, rf: int, *, racks: dict[int, str] | None = None,
           per_topic: int = 100, seed: int = 1) -> list[PartitionReplicas]:
    """``partitions`` partitions in topics of ``per_topic``, each topic placed by AdminUtils."""
    rng = random.Random(seed)
    out = []
    for t in range(max(1, partitions // per_topic)):
        for pid, reps in assign_replicas_to_brokers(brokers, min(per_topic, partitions), rf, racks=racks,
                                                    rng=rng).items():
            out.append(PartitionReplicas(f"topic-{t:04d}", pid, tuple(reps)))
    return out


def assignment(brokers: list[int], parts: list[PartitionReplicas], racks: dict[int, str] | None = None) -> Assignment:
    return Assignment("assignment", "shape", tuple(brokers), dict(racks or {b: None for b in brokers}),
                      tuple(sorted(parts, key=lambda p: p.key)))


def balanced(n_brokers: int = 12, partitions: int = 1200, rf: int = 3) -> Assignment:
    """Every broker with the same replica and preferred-leader counts."""
    brokers = list(range(1, n_brokers + 1))
    return assignment(brokers, placed(brokers, partitions, rf, per_topic=n_brokers * 10))


def skewed_after_adding(n_old: int = 6, n_new: int = 6, partitions: int = 1200, rf: int = 3) -> Assignment:
    """Topics created on ``n_old`` brokers, then ``n_new`` empty brokers registered."""
    old = list(range(1, n_old + 1))
    return assignment(list(range(1, n_old + n_new + 1)), placed(old, partitions, rf))


def racked_with_violations(n_brokers: int = 60, n_racks: int = 5, partitions: int = 6000, rf: int = 3,
                           violations: int = 12, seed: int = 7) -> tuple[Assignment, dict[tuple[str, int], int]]:
    """Rack-aware placement, then ``violations`` partitions with a follower moved into the leader's
    rack; and a size per partition (1 byte to 1 GB)."""
    brokers = list(range(1, n_brokers + 1))
    racks = {b: f"rack-{(b - 1) % n_racks}" for b in brokers}
    parts = placed(brokers, partitions, rf, racks=racks, seed=seed)
    rng = random.Random(seed)
    for idx in rng.sample(range(len(parts)), violations):
        p = parts[idx]
        reps = list(p.replicas)
        same_rack = [b for b in brokers if racks[b] == racks[reps[0]] and b not in reps]
        reps[-1] = rng.choice(same_rack)
        parts[idx] = PartitionReplicas(p.topic, p.partition, tuple(reps))
    sizes = {p.key: rng.randrange(1, 10**9) for p in parts}
    return assignment(brokers, parts, racks), sizes
