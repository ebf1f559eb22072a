"""The cluster state a controller believed in: one model, built from ZooKeeper or from KRaft.

From ZooKeeper (``../shared/specs/zookeeper-formats.md`` §7; Kafka ``core/src/main/scala/kafka/
zk/ZkData.scala``, ``KafkaZkClient.scala``): the znodes of a replayed tree (:mod:`kreplica.model.
zk_tree`) — ``/cluster/id``, ``/controller``, ``/controller_epoch``, ``/brokers/ids/<id>``
(ephemeral: alive means its owning session is still open; the broker epoch is its czxid),
``/brokers/topics/<t>`` (assignment, adding/removing replicas, topic id),
``/brokers/topics/<t>/partitions/<p>/state`` (leader, epochs, ISR; its dataVersion is the
partition epoch), ``/config/topics|brokers/<name>``, ``/admin/*``, ``/isr_change_notification``,
``/log_dir_event_notification``.

From KRaft (``../shared/specs/kafka-formats.md`` §10; Kafka ``metadata/src/main/java/org/apache/
kafka/image/*Delta.java``, ``metadata/PartitionRegistration.java``): the metadata records of a
snapshot and the log after it, applied in offset order (:func:`cluster_state_from_kraft`). A
``PartitionChangeRecord`` bumps the partition epoch by one, and the leader epoch by one when it
names a leader (``PartitionRegistration.merge``). Brokers are alive when registered and not
fenced; the controller is the Raft leader of the last ``LeaderChange``.

Health lists (partitions named ``topic-p``) follow the oracle's definitions: ``no_leader``
(leader -1), ``leader_not_alive`` (a leader that is not a live broker), ``offline`` (either),
``under_replicated`` (ISR shorter than the replicas), ``live_isr_empty``, ``under_min_isr``
(live ISR members fewer than ``min.insync.replicas`` from the topic config, else the cluster
default broker config, else 1), ``reassigning`` (adding or removing replicas, Kafka's
``isBeingReassigned``), ``preferred_leader_not_leader`` (the first replica does not lead).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kreplica.formats.findings import Finding
from kreplica.model.zk_tree import ZkState

#: The entity name of cluster-wide broker defaults (ZooKeeper ``/config/brokers/<default>``;
#: KRaft writes an empty ResourceName, normalised to this).
DEFAULT_BROKER_ENTITY = "<default>"
MIN_INSYNC_REPLICAS = "min.insync.replicas"
NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker. ``broker_epoch`` is the czxid of its ZooKeeper registration or the
    KRaft BrokerEpoch; ``session`` (ZooKeeper) is the owning session; ``fenced`` (KRaft)."""

    id: int
    alive: bool
    rack: str | None
    endpoints: tuple[str, ...]
    broker_epoch: int
    session: int | None = None
    fenced: bool | None = None
    in_controlled_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition: assignment and the leader/ISR state. ``version`` is the state znode's
    dataVersion (ZooKeeper) or the partition epoch (KRaft); ``controller_epoch`` is ``None``
    in KRaft (not recorded) or when no state exists yet."""

    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int | None
    leader_recovery_state: int
    version: int | None


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    topic_id: str | None
    config: Mapping[str, str]
    partitions: tuple[PartitionState, ...]


@dataclass(frozen=True, slots=True)
class Controller:
    broker_id: int | None
    epoch: int | None


@dataclass(frozen=True, slots=True)
class Pending:
    """Admin work requested and not yet done (ZooKeeper's ``/admin`` and notification znodes)."""

    reassignments: tuple[Mapping, ...] = ()            # {"topic","partition","replicas"}
    preferred_elections: tuple[Mapping, ...] = ()      # {"topic","partition"}
    topic_deletions: tuple[str, ...] = ()
    isr_change_notifications: tuple[Mapping, ...] = ()     # {"name","partitions":[...]}
    log_dir_event_notifications: tuple[Mapping, ...] = ()  # {"name","broker","event"}


@dataclass(frozen=True, slots=True)
class Health:
    no_leader: tuple[str, ...] = ()
    leader_not_alive: tuple[str, ...] = ()
    offline: tuple[str, ...] = ()
    under_replicated: tuple[str, ...] = ()
    live_isr_empty: tuple[str, ...] = ()
    under_min_isr: tuple[str, ...] = ()
    reassigning: tuple[str, ...] = ()
    preferred_leader_not_leader: tuple[str, ...] = ()


HEALTH_LISTS = tuple(Health.__dataclass_fields__)


@dataclass(frozen=True)
class ClusterState:
    """What the control plane held at ``position`` (``{"zxid": n}`` or ``{"offset": n}``)."""

    source_kind: str        # "zookeeper" | "kraft"
    source: str
    position: Mapping[str, int]
    cluster_id: str | None
    controller: Controller
    brokers: tuple[Broker, ...]
    topics: tuple[Topic, ...]
    broker_configs: Mapping[str, Mapping[str, str]]
    pending: Pending
    health: Health
    findings: tuple[Finding, ...] = field(default=())

    def broker(self, broker_id: int) -> Broker | None:
        return next((b for b in self.brokers if b.id == broker_id), None)

    def topic(self, name: str) -> Topic | None:
        return next((t for t in self.topics if t.name == name), None)

    @property
    def has_problems(self) -> bool:
        """The exit-code rule of ``cluster-state``: any partition offline or under min ISR."""
        return bool(self.health.offline or self.health.under_min_isr)


def _pname(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def compute_health(brokers: Iterable[Broker], topics: Iterable[Topic],
                   broker_configs: Mapping[str, Mapping[str, str]]) -> Health:
    """The health lists for these brokers and topics (see the module docstring)."""
    alive = {b.id for b in brokers if b.alive}
    default_min = broker_configs.get(DEFAULT_BROKER_ENTITY, {}).get(MIN_INSYNC_REPLICAS)
    lists: dict[str, list[tuple[str, int]]] = {k: [] for k in HEALTH_LISTS}
    for t in topics:
        raw_min = t.config.get(MIN_INSYNC_REPLICAS, default_min)
        try:
            min_isr = int(raw_min) if raw_min is not None else 1
        except ValueError:
            min_isr = 1
        for p in t.partitions:
            key = (t.name, p.partition)
            live_isr = [r for r in p.isr if r in alive]
            if p.leader == NO_LEADER:
                lists["no_leader"].append(key)
            elif p.leader not in alive:
                lists["leader_not_alive"].append(key)
            if p.leader == NO_LEADER or p.leader not in alive:
                lists["offline"].append(key)
            if len(p.isr) < len(p.replicas):
                lists["under_replicated"].append(key)
            if not live_isr:
                lists["live_isr_empty"].append(key)
            if len(live_isr) < min_isr:
                lists["under_min_isr"].append(key)
            if p.adding_replicas or p.removing_replicas:
                lists["reassigning"].append(key)
            if p.replicas and p.leader != p.replicas[0]:
                lists["preferred_leader_not_leader"].append(key)
    return Health(**{k: tuple(_pname(*x) for x in sorted(v)) for k, v in lists.items()})


# -- ZooKeeper ------------------------------------------------------------------------------


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
                leader_epoch=s.get("leader_epoch", -1) if isinstance(s.get("leader_epoch"), int) else -1,
                isr=_ints(s.get("isr")),
                controller_epoch=s.get("controller_epoch") if isinstance(s.get("controller_epoch"), int) else None,
                leader_recovery_state=s.get("leader_recovery_state", 0)
                if isinstance(s.get("leader_recovery_state"), int) else 0,
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
    pending = Pending(
        reassignments=tuple(reassign.get("partitions", ())) if isinstance(reassign, dict) else (),
        preferred_elections=tuple(preferred.get("partitions", ())) if isinstance(preferred, dict) else (),
        topic_deletions=tuple(z.children("/admin/delete_topics")),
        isr_change_notifications=tuple(
            {"name": n, "partitions": (z.json(f"/isr_change_notification/{n}") or {}).get("partitions", [])
             if isinstance(z.json(f"/isr_change_notification/{n}"), dict) else []}
            for n in z.children("/isr_change_notification")),
        log_dir_event_notifications=tuple(
            dict({"name": n}, **(z.json(f"/log_dir_event_notification/{n}") or {}))
            if isinstance(z.json(f"/log_dir_event_notification/{n}"), (dict, type(None))) else {"name": n}
            for n in z.children("/log_dir_event_notification")),
    )
    health = compute_health(brokers, topics, broker_configs)
    return ClusterState("zookeeper", state.source, {"zxid": state.zxid}, cluster_id, controller,
                        tuple(brokers), tuple(topics), broker_configs, pending, health,
                        tuple(state.findings) + tuple(z.findings))
