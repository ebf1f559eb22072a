"""The cluster image: one value of brokers, topics, partitions, configs, controller, features,
pending work and (KRaft) the rest of Kafka's metadata image (registered controllers, ACLs, client
quotas, SCRAM users, delegation tokens, the producer id block), that a KRaft record (:mod:`~kreplica.model.cluster.kraft_image`) or a znode change
(:mod:`~kreplica.model.cluster.zookeeper_image`) changes, and that every command reads.

``cluster-state`` is the image at a point (:meth:`ClusterImage.state`), ``plan-elect`` reasons on
that state, and the timeline folds the same image record by record or transaction by
transaction, classifying the difference each change makes. The image is a working value (its
dictionaries change in place as a replay goes, as Kafka's ``MetadataDelta`` does before it
publishes an image); what leaves it, :class:`~kreplica.model.cluster.state.ClusterState`, is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kreplica.formats.findings import Finding
from kreplica.model.cluster.state import (
    Acl,
    Broker,
    ClientQuota,
    ClusterState,
    Controller,
    ControllerRegistration,
    DelegationToken,
    PartitionState,
    Pending,
    ProducerIds,
    ScramCredential,
    ScramUser,
    Topic,
    compute_health,
)


@dataclass(slots=True)
class TopicImage:
    """One topic of the image: its id (KRaft, or the ZooKeeper topic znode's ``topic_id``) and
    its partitions by number."""

    topic_id: str | None
    partitions: dict[int, PartitionState] = field(default_factory=dict)


@dataclass(slots=True)
class ClusterImage:
    """The cluster as a replay holds it (see the module docstring). ``topic_configs`` and
    ``broker_configs`` are by name (the cluster-wide broker default under
    :data:`~kreplica.model.cluster.state.DEFAULT_BROKER_ENTITY`); ``findings`` are what the
    changes applied so far were refused or flagged for. KRaft's other images: ``controllers`` by
    id, ``acls`` by id, ``client_quotas`` by entity (sorted ``(type, name)`` pairs) then key,
    ``scram`` by user name then mechanism code (the iterations), ``delegation_tokens`` by id,
    ``producer_ids`` the last block handed out."""

    kind: str
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, TopicImage] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    controller: int | None = None
    controller_epoch: int | None = None
    features: dict[str, int] = field(default_factory=dict)
    pending: Pending = field(default_factory=Pending)
    cluster_id: str | None = None
    findings: list[Finding] = field(default_factory=list)
    controllers: dict[int, ControllerRegistration] = field(default_factory=dict)
    acls: dict[str, Acl] = field(default_factory=dict)
    client_quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    scram: dict[str, dict[int, int]] = field(default_factory=dict)
    delegation_tokens: dict[str, DelegationToken] = field(default_factory=dict)
    producer_ids: ProducerIds | None = None

    def alive(self) -> frozenset[int]:
        """The brokers Kafka's controller may make leaders (registered and live, or not fenced)."""
        return frozenset(b for b, r in self.brokers.items() if r.alive)

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        t = self.topics.get(topic)
        return t.partitions.get(partition) if t is not None else None

    def state(self, source: str, position: dict[str, int], *, cluster_id: str | None = None,
              findings: tuple[Finding, ...] | list[Finding] = ()) -> ClusterState:
        """The frozen :class:`ClusterState` of the image at ``position``: brokers by id, topics by
        name, partitions by number, broker configs by entity; ``findings`` (the
        evidence's own) come before the image's."""
        brokers = tuple(b for _, b in sorted(self.brokers.items()))
        topics = tuple(Topic(name, t.topic_id, dict(self.topic_configs.get(name, {})),
                             tuple(p for _, p in sorted(t.partitions.items())))
                       for name, t in sorted(self.topics.items()))
        broker_configs = {name: dict(cfg) for name, cfg in sorted(self.broker_configs.items())}
        return ClusterState(
            self.kind, source, position, cluster_id if cluster_id is not None else self.cluster_id,
            Controller(self.controller, self.controller_epoch), brokers, topics, broker_configs,
            self.pending, compute_health(brokers, topics, broker_configs, self.controller),
            tuple(findings) + tuple(self.findings), dict(self.features),
            controllers=tuple(c for _, c in sorted(self.controllers.items())),
            acls=tuple(a for _, a in sorted(self.acls.items())),
            client_quotas=tuple(ClientQuota(e, dict(sorted(q.items())))
                                for e, q in sorted(self.client_quotas.items(), key=lambda x: _entity_key(x[0]))),
            scram_users=tuple(ScramUser(name, tuple(ScramCredential(m, i) for m, i in sorted(mechs.items())))
                              for name, mechs in sorted(self.scram.items())),
            delegation_tokens=tuple(t for _, t in sorted(self.delegation_tokens.items())),
            producer_ids=self.producer_ids)


def _entity_key(entity: tuple[tuple[str, str | None], ...]) -> tuple:
    """A client-quota entity's sort key: a default entity (name ``None``) before named ones."""
    return tuple((t, n is not None, n or "") for t, n in entity)
