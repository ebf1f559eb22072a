"""Where replicas are: the input of placement and reassignment planning, from any evidence.

One value whatever the source: a cluster state replayed from ZooKeeper or KRaft (with leaders,
ISRs, epochs, in-flight reassignments and throttle configs), or a version-1 assignment JSON plus
the broker list and racks a user gives (replicas only; the first replica is taken as leader and
the replicas as the ISR). Fields the source cannot tell are ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kreplica.formats.tools.reassignment_json import PartitionReassignment
from kreplica.model.cluster.racks import broker_racks, live_broker_ids
from kreplica.model.cluster.state import ClusterState

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class PartitionReplicas:
    """One partition: replicas in order (the first is the preferred leader), the replicas being
    added or removed by an in-flight reassignment, and the leader/ISR state when known."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    leader: int | None = None
    leader_epoch: int | None = None
    isr: tuple[int, ...] | None = None
    version: int | None = None

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def target(self) -> tuple[int, ...]:
        """The replicas once an in-flight reassignment completes: the list less the removing
        replicas (KIP-455 writes the target first, so the order is the target's)."""
        if not self.removing:
            return self.replicas
        return tuple(b for b in self.replicas if b not in self.removing)


@dataclass(frozen=True)
class Assignment:
    """Brokers (``live``: those that can take replicas now; ``racks`` for every known broker) and
    every partition's replicas, sorted by topic then partition."""

    source_kind: str                      # "zookeeper" | "kraft" | "assignment"
    source: str
    live: tuple[int, ...]
    racks: Mapping[int, str | None]
    partitions: tuple[PartitionReplicas, ...]
    topic_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    broker_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: ZooKeeper's /admin/reassign_partitions entries: {"topic","partition","replicas"}
    pending_reassignments: tuple[Mapping, ...] = ()

    def partition(self, topic: str, partition: int) -> PartitionReplicas | None:
        return next((p for p in self.partitions if p.topic == topic and p.partition == partition), None)

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({p.topic for p in self.partitions}))


def assignment_from_cluster_state(state: ClusterState) -> Assignment:
    """The assignment a controller held: live brokers, racks, replicas with leader/ISR state."""
    parts = tuple(
        PartitionReplicas(t.name, p.partition, tuple(p.replicas), tuple(p.adding_replicas),
                          tuple(p.removing_replicas), p.leader, p.leader_epoch, tuple(p.isr), p.version)
        for t in sorted(state.topics, key=lambda t: t.name)
        for p in sorted(t.partitions, key=lambda p: p.partition))
    return Assignment(state.source_kind, state.source, live_broker_ids(state), broker_racks(state), parts,
                      {t.name: dict(t.config) for t in state.topics},
                      {k: dict(v) for k, v in state.broker_configs.items()},
                      tuple(state.pending.reassignments))


def assignment_from_entries(entries: Iterable[PartitionReassignment], brokers: Iterable[int],
                            racks: Mapping[int, str | None], *, source: str) -> Assignment:
    """The assignment a version-1 JSON describes, on the brokers a user listed (all live).

    The leader is taken to be the first replica and every replica to be in sync: the file says
    nothing else.
    """
    parts = tuple(PartitionReplicas(e.topic, e.partition, e.replicas, leader=e.replicas[0], isr=e.replicas)
                  for e in sorted(entries, key=lambda e: (e.topic, e.partition)))
    live = tuple(sorted(set(brokers)))
    return Assignment("assignment", source, live, {b: racks.get(b) for b in sorted(set(live) | set(racks))}, parts)
