"""Kafka's ZooKeeper-mode metadata, read from a replayed ZooKeeper tree.

Sources: ``../shared/specs/zookeeper-formats.md`` §7; Kafka ``core/src/main/scala/kafka/zk/
ZkData.scala`` and ``KafkaZkClient.scala``. The znodes read (under Kafka's chroot):
``/cluster/id``, ``/controller``, ``/controller_epoch``, ``/brokers/ids/<id>`` (ephemeral:
alive means its owning session is still open; the broker epoch is its czxid),
``/brokers/topics/<t>`` (assignment, adding/removing replicas, topic id),
``/brokers/topics/<t>/partitions/<p>/state`` (leader, epochs, ISR; its dataVersion is the
partition epoch), ``/config/topics|brokers/<name>``, ``/admin/*``, ``/isr_change_notification``,
``/log_dir_event_notification``. Their payloads are decoded by
:mod:`kreplica.formats.zookeeper.znodes`; the tree comes from :mod:`kreplica.model.zookeeper`.
"""

from __future__ import annotations

from kreplica.formats.errors import Malformed
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import znodes
from kreplica.model.cluster.state import (
    NO_LEADER,
    RECOVERED,
    Broker,
    ClusterState,
    Controller,
    PartitionState,
    Pending,
    Topic,
    compute_health,
)
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH
from kreplica.model.zookeeper import ZkState


class _Znodes:
    """Kafka's znodes under a chroot, decoded; a payload that is not Kafka's JSON is a finding
    and reads as absent."""

    def __init__(self, state: ZkState, chroot: str) -> None:
        self.state = state
        self.root = chroot.rstrip("/")
        self.findings: list[Finding] = []

    def path(self, p: str) -> str:
        return (self.root + p) if self.root else p

    def node(self, p: str):
        return self.state.nodes.get(self.path(p))

    def children(self, p: str) -> list[str]:
        n = self.node(p)
        return sorted(n.children) if n is not None else []

    def decode(self, p: str, decoder, default=None):
        n = self.node(p)
        try:
            return decoder(n.data if n is not None else None)
        except Malformed as exc:
            what = "valid JSON" if exc.reason == "not JSON" else f"what Kafka writes there ({exc.reason})"
            self.findings.append(Finding("kafka_invalid_znode", self.state.snapshot, 0,
                                         f"znode {self.path(p)} does not hold {what}",
                                         details={"znode": self.path(p)}))
            return default


_NO_STATE = znodes.PartitionStateZnode(NO_LEADER, UNDEFINED_EPOCH, (), None, RECOVERED)
_NO_TOPIC = znodes.TopicZnode(None, {})


def _log_dir_event(name: str, event: znodes.LogDirEventZnode | None) -> dict:
    out: dict = {"name": name}
    if event is not None:
        for key in ("version", "broker", "event"):
            if getattr(event, key) is not None:
                out[key] = getattr(event, key)
    return out


def cluster_state_from_zk(state: ZkState, *, chroot: str = "") -> ClusterState:
    """Kafka's ZooKeeper-mode metadata in a replayed tree (``chroot`` = Kafka's root, e.g. ``/kafka``).

    A topic's partitions are those of its assignment (``/brokers/topics/<t>``), as
    ``KafkaController.initializeControllerContext`` reads them (``getFullReplicaAssignmentForTopics``),
    each with the state its state znode holds (``updateLeaderAndIsrCache``); a partition whose
    state znode is absent or unreadable has no leader (``NewPartition``), and a state znode of a
    partition the assignment does not list is not read. Unparseable payloads are findings
    (``kafka_invalid_znode``) and the object is skipped or left with defaults; nothing raises.
    """
    z = _Znodes(state, chroot)
    cluster_id = z.decode("/cluster/id", znodes.decode_cluster_id)
    controller = Controller(z.decode("/controller", znodes.decode_controller),
                            z.decode("/controller_epoch", znodes.decode_controller_epoch))

    brokers = []
    for name in z.children("/brokers/ids"):
        if not name.isdigit():
            continue
        node = z.node(f"/brokers/ids/{name}")
        reg = z.decode(f"/brokers/ids/{name}", znodes.decode_broker)
        owner = node.ephemeral_owner
        brokers.append(Broker(
            id=int(name),
            alive=owner in state.sessions,
            rack=reg.rack if reg is not None else None,
            endpoints=reg.endpoints if reg is not None else (),
            broker_epoch=node.czxid,
            session=owner,
        ))

    topics = []
    for tname in z.children("/brokers/topics"):
        tz = z.decode(f"/brokers/topics/{tname}", znodes.decode_topic, _NO_TOPIC)
        config = z.decode(f"/config/topics/{tname}", znodes.decode_config) or {}
        partitions = []
        for pid, assigned in sorted(tz.partitions.items()):
            spath = f"/brokers/topics/{tname}/partitions/{pid}/state"
            snode = z.node(spath)
            s = z.decode(spath, znodes.decode_partition_state) or _NO_STATE
            partitions.append(PartitionState(
                partition=pid,
                replicas=assigned.replicas,
                adding_replicas=assigned.adding_replicas,
                removing_replicas=assigned.removing_replicas,
                leader=s.leader,
                leader_epoch=s.leader_epoch,
                isr=s.isr,
                controller_epoch=s.controller_epoch,
                leader_recovery_state=s.leader_recovery_state,
                version=snode.version if snode is not None else None,
            ))
        topics.append(Topic(tname, tz.topic_id, config, tuple(partitions)))

    broker_configs = {}
    for entity in z.children("/config/brokers"):
        cfg = z.decode(f"/config/brokers/{entity}", znodes.decode_config)
        if cfg is not None:
            broker_configs[entity] = cfg

    pending = Pending(
        reassignments=tuple(e.as_dict() for e in z.decode("/admin/reassign_partitions",
                                                          znodes.decode_reassignment, ())),
        preferred_elections=tuple(e.as_dict() for e in z.decode("/admin/preferred_replica_election",
                                                                znodes.decode_preferred_election, ())),
        topic_deletions=tuple(z.children("/admin/delete_topics")),
        isr_change_notifications=tuple(
            {"name": n, "partitions": [e.as_dict() for e in z.decode(f"/isr_change_notification/{n}",
                                                                     znodes.decode_isr_change, ())]}
            for n in z.children("/isr_change_notification")),
        log_dir_event_notifications=tuple(
            _log_dir_event(n, z.decode(f"/log_dir_event_notification/{n}", znodes.decode_log_dir_event))
            for n in z.children("/log_dir_event_notification")),
    )
    health = compute_health(brokers, topics, broker_configs, controller.broker_id)
    return ClusterState("zookeeper", state.source, {"zxid": state.zxid}, cluster_id, controller,
                        tuple(brokers), tuple(topics), broker_configs, pending, health,
                        tuple(state.findings) + tuple(z.findings))
