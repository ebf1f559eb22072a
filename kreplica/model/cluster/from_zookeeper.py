"""Kafka's ZooKeeper-mode metadata, read from a replayed ZooKeeper tree.

Sources: ``../shared/specs/zookeeper-formats.md`` §7; Kafka ``core/src/main/scala/kafka/zk/
ZkData.scala`` and ``KafkaZkClient.scala``. The znodes read (under Kafka's chroot):
``/cluster/id``, ``/controller``, ``/controller_epoch``, ``/brokers/ids/<id>`` (ephemeral:
alive means its owning session is still open; the broker epoch is its czxid),
``/brokers/topics/<t>`` (assignment, adding/removing replicas, topic id),
``/brokers/topics/<t>/partitions/<p>/state`` (leader, epochs, ISR; its dataVersion is the
partition epoch), ``/config/topics|brokers/<name>``, ``/admin/*``, ``/isr_change_notification``,
``/log_dir_event_notification``. The tree comes from :mod:`kreplica.model.zookeeper`.
"""

from __future__ import annotations

import json

from kreplica.formats.findings import Finding
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
    """Typed reads of Kafka's znodes under a chroot, collecting findings for bad payloads."""

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

    def text(self, p: str) -> str | None:
        n = self.node(p)
        if n is None or n.data is None:
            return None
        return n.data.decode("utf-8", "replace")

    def json(self, p: str):
        raw = self.text(p)
        if raw is None or raw == "":
            return None
        try:
            return json.loads(raw)
        except ValueError:
            self.findings.append(Finding("kafka_invalid_znode", self.state.snapshot, 0,
                                         f"znode {self.path(p)} does not hold valid JSON",
                                         details={"znode": self.path(p)}))
            return None


def _ints(value) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(int(v) for v in value if isinstance(v, int) and not isinstance(v, bool))


def cluster_state_from_zk(state: ZkState, *, chroot: str = "") -> ClusterState:
    """Kafka's ZooKeeper-mode metadata in a replayed tree (``chroot`` = Kafka's root, e.g. ``/kafka``).

    Unparseable payloads are findings (``kafka_invalid_znode``) and the object is skipped or
    left with defaults; nothing raises.
    """
    z = _Znodes(state, chroot)
    cid = z.json("/cluster/id")
    cluster_id = cid.get("id") if isinstance(cid, dict) else None

    ctrl = z.json("/controller")
    epoch_text = z.text("/controller_epoch")
    try:
        controller_epoch = int(epoch_text) if epoch_text not in (None, "") else None
    except ValueError:
        controller_epoch = None
    controller = Controller(ctrl.get("brokerid") if isinstance(ctrl, dict) else None, controller_epoch)

    brokers = []
    for name in z.children("/brokers/ids"):
        if not name.isdigit():
            continue
        node = z.node(f"/brokers/ids/{name}")
        reg = z.json(f"/brokers/ids/{name}")
        reg = reg if isinstance(reg, dict) else {}
        owner = node.ephemeral_owner
        endpoints = reg.get("endpoints")
        brokers.append(Broker(
            id=int(name),
            alive=owner in state.sessions,
            rack=reg.get("rack"),
            endpoints=tuple(str(e) for e in endpoints) if isinstance(endpoints, list) else (),
            broker_epoch=node.czxid,
            session=owner,
        ))

    topics = []
    for tname in z.children("/brokers/topics"):
        tz = z.json(f"/brokers/topics/{tname}")
        tz = tz if isinstance(tz, dict) else {}
        assignment = tz.get("partitions") if isinstance(tz.get("partitions"), dict) else {}
        adding = tz.get("adding_replicas") if isinstance(tz.get("adding_replicas"), dict) else {}
        removing = tz.get("removing_replicas") if isinstance(tz.get("removing_replicas"), dict) else {}
        cfg = z.json(f"/config/topics/{tname}")
        config = cfg.get("config", {}) if isinstance(cfg, dict) else {}
        partitions = []
        pids = {int(p) for p in assignment if str(p).lstrip("-").isdigit()}
        pids |= {int(p) for p in z.children(f"/brokers/topics/{tname}/partitions") if p.isdigit()}
        for pid in sorted(pids):
            spath = f"/brokers/topics/{tname}/partitions/{pid}/state"
            snode = z.node(spath)
            s = z.json(spath)
            s = s if isinstance(s, dict) else {}
            partitions.append(PartitionState(
                partition=pid,
                replicas=_ints(assignment.get(str(pid))),
                adding_replicas=_ints(adding.get(str(pid))),
                removing_replicas=_ints(removing.get(str(pid))),
                leader=s.get("leader", NO_LEADER) if isinstance(s.get("leader"), int) else NO_LEADER,
                leader_epoch=s.get("leader_epoch", UNDEFINED_EPOCH) if isinstance(s.get("leader_epoch"), int)
                else UNDEFINED_EPOCH,
                isr=_ints(s.get("isr")),
                controller_epoch=s.get("controller_epoch") if isinstance(s.get("controller_epoch"), int) else None,
                leader_recovery_state=s.get("leader_recovery_state", RECOVERED)
                if isinstance(s.get("leader_recovery_state"), int) else RECOVERED,
                version=snode.version if snode is not None else None,
            ))
        topics.append(Topic(tname, tz.get("topic_id"), dict(config), tuple(partitions)))

    broker_configs = {}
    for entity in z.children("/config/brokers"):
        cfg = z.json(f"/config/brokers/{entity}")
        if isinstance(cfg, dict) and isinstance(cfg.get("config"), dict):
            broker_configs[entity] = dict(cfg["config"])

    reassign = z.json("/admin/reassign_partitions")
    preferred = z.json("/admin/preferred_replica_election")
    isr_changes = []
    for n in z.children("/isr_change_notification"):
        body = z.json(f"/isr_change_notification/{n}")
        parts = body.get("partitions", []) if isinstance(body, dict) else []
        isr_changes.append({"name": n, "partitions": parts})
    log_dir_events = []
    for n in z.children("/log_dir_event_notification"):
        body = z.json(f"/log_dir_event_notification/{n}")
        log_dir_events.append(dict({"name": n}, **body) if isinstance(body, dict) else {"name": n})
    pending = Pending(
        reassignments=tuple(reassign.get("partitions", ())) if isinstance(reassign, dict) else (),
        preferred_elections=tuple(preferred.get("partitions", ())) if isinstance(preferred, dict) else (),
        topic_deletions=tuple(z.children("/admin/delete_topics")),
        isr_change_notifications=tuple(isr_changes),
        log_dir_event_notifications=tuple(log_dir_events),
    )
    health = compute_health(brokers, topics, broker_configs, controller.broker_id)
    return ClusterState("zookeeper", state.source, {"zxid": state.zxid}, cluster_id, controller,
                        tuple(brokers), tuple(topics), broker_configs, pending, health,
                        tuple(state.findings) + tuple(z.findings))
