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
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kreplica.formats import kraft
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.zk_tree import ZkState, load_zk_state

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
    health = compute_health(brokers, topics, broker_configs)
    return ClusterState("zookeeper", state.source, {"zxid": state.zxid}, cluster_id, controller,
                        tuple(brokers), tuple(topics), broker_configs, pending, health,
                        tuple(state.findings) + tuple(z.findings))


# -- KRaft ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KraftFiles:
    """The metadata evidence of a SOURCE: snapshots ``(end_offset, epoch, path)`` and segments
    ``(base_offset, path)``, each sorted; ``cluster_id`` from a ``meta.properties`` nearby."""

    snapshots: tuple[tuple[int, int, str], ...]
    segments: tuple[tuple[int, str], ...]
    cluster_id: str | None = None
    source: str = ""


def _meta_cluster_id(directory: str) -> str | None:
    for d in (directory, os.path.dirname(os.path.abspath(directory))):
        p = os.path.join(d, "meta.properties")
        if os.path.isfile(p):
            with open(p, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    key, sep, value = line.partition("=")
                    if sep and key.strip() == "cluster.id":
                        return value.strip()
    return None


def find_kraft_files(sources: Iterable[str | os.PathLike]) -> KraftFiles:
    """``*.checkpoint`` snapshots and ``*.log`` segments in ``__cluster_metadata-0`` directories
    or given explicitly. ``.checkpoint.part``/``.deleted`` files (which Kafka deletes at start)
    and every other file are ignored."""
    snaps: dict[str, tuple[int, int, str]] = {}
    segs: dict[str, tuple[int, str]] = {}
    cluster_id = None
    names = []
    for src in sources:
        s = os.fspath(src)
        names.append(s)
        if os.path.isdir(s):
            cluster_id = cluster_id or _meta_cluster_id(s)
            entries = [os.path.join(s, n) for n in sorted(os.listdir(s))]
        elif os.path.isfile(s):
            cluster_id = cluster_id or _meta_cluster_id(os.path.dirname(os.path.abspath(s)))
            entries = [s]
        else:
            raise FormatError("no such file or directory", path=s)
        for full in entries:
            name = os.path.basename(full)
            snap = kraft.parse_checkpoint_name(name)
            if snap is not None:
                snaps[full] = (snap[0], snap[1], full)
                continue
            base = kraft.parse_segment_name(name)
            if base is not None:
                segs[full] = (base, full)
            elif os.path.isfile(s) and full == s:
                raise FormatError("not a KRaft metadata segment (<20 digits>.log) or snapshot "
                                  "(<20 digits>-<10 digits>.checkpoint)", path=s)
    return KraftFiles(tuple(sorted(snaps.values())), tuple(sorted(segs.values())), cluster_id,
                      ", ".join(names))


class _KraftImage:
    """The metadata image as ``MetadataDelta`` replays it (the parts that bear on replication)."""

    def __init__(self) -> None:
        self.brokers: dict[int, dict] = {}
        self.topics: dict[str, dict] = {}          # topic id -> {"name", "partitions": {pid: dict}}
        self.names: dict[str, str] = {}            # name -> topic id
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.features: dict[str, int] = {}
        self.controller: int | None = None
        self.controller_epoch: int | None = None
        self.findings: list[Finding] = []

    def replay(self, r) -> None:
        if isinstance(r, kraft.ControlRecord):
            if r.control_type == kraft.LEADER_CHANGE:
                leader = r.data.get("leader_id")
                self.controller = leader if leader is not None and leader >= 0 else None
                self.controller_epoch = r.epoch
            return
        d = r.data
        name = r.name
        if name == "RegisterBrokerRecord":
            self.brokers[d["broker_id"]] = {
                "epoch": d["broker_epoch"], "rack": d["rack"], "fenced": d["fenced"],
                "in_controlled_shutdown": d["in_controlled_shutdown"],
                "endpoints": tuple(f"{e['name']}://{e['host']}:{e['port']}" for e in d["end_points"]),
            }
        elif name == "UnregisterBrokerRecord":
            if self._broker(r, d["broker_id"], d["broker_epoch"], "unregister") is not None:
                del self.brokers[d["broker_id"]]
        elif name in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
            b = self._broker(r, d["id"], d["epoch"], "fence" if name == "FenceBrokerRecord" else "unfence")
            if b is not None:
                b["fenced"] = name == "FenceBrokerRecord"
        elif name == "BrokerRegistrationChangeRecord":
            b = self._broker(r, d["broker_id"], d["broker_epoch"], "change")
            if b is not None:
                if d["fenced"] == 1:
                    b["fenced"] = True
                elif d["fenced"] == -1:
                    b["fenced"] = False
                if d["in_controlled_shutdown"] == 1:
                    b["in_controlled_shutdown"] = True
        elif name == "TopicRecord":
            self.topics[d["topic_id"]] = {"name": d["name"], "partitions": {}}
            self.names[d["name"]] = d["topic_id"]
        elif name == "RemoveTopicRecord":
            t = self.topics.pop(d["topic_id"], None)
            if t is not None:
                self.names.pop(t["name"], None)
                self.configs.pop((kraft.RESOURCE_TOPIC, t["name"]), None)
        elif name == "PartitionRecord":
            t = self.topics.get(d["topic_id"])
            if t is None:
                self._orphan(r)
                return
            t["partitions"][d["partition_id"]] = {
                k: d[k] for k in ("replicas", "isr", "removing_replicas", "adding_replicas", "leader",
                                  "leader_recovery_state", "leader_epoch", "partition_epoch")}
        elif name == "PartitionChangeRecord":
            t = self.topics.get(d["topic_id"])
            p = t["partitions"].get(d["partition_id"]) if t is not None else None
            if p is None:
                self._orphan(r)
                return
            # PartitionRegistration.merge
            for k in ("isr", "replicas", "removing_replicas", "adding_replicas"):
                if d[k] is not None:
                    p[k] = d[k]
            if d["leader"] != -2:
                p["leader"] = d["leader"]
                p["leader_epoch"] += 1
            if d["leader_recovery_state"] != -1:
                p["leader_recovery_state"] = d["leader_recovery_state"]
            p["partition_epoch"] += 1
        elif name == "ConfigRecord":
            key = (d["resource_type"], d["resource_name"])
            if d["value"] is None:
                self.configs.get(key, {}).pop(d["name"], None)
            else:
                self.configs.setdefault(key, {})[d["name"]] = d["value"]
        elif name == "FeatureLevelRecord":
            self.features[d["name"]] = d["feature_level"]

    def _broker(self, r, broker_id: int, epoch: int, action: str) -> dict | None:
        """``ClusterDelta.getBrokerOrThrow``: the registration, or a finding (Kafka throws) when
        the broker is not registered or the record's epoch is not the registered one."""
        b = self.brokers.get(broker_id)
        if b is not None and b["epoch"] == epoch:
            return b
        why = "was not registered" if b is None else f"has broker epoch {b['epoch']}, not {epoch}"
        self.findings.append(Finding("kraft_invalid_record", r.path, r.batch_position,
                                     f"{r.name} at offset {r.offset} tries to {action} broker {broker_id}, "
                                     f"which {why}; Kafka's metadata loader refuses it",
                                     details={"offset": r.offset, "broker_id": broker_id}))
        return None

    def _orphan(self, r) -> None:
        self.findings.append(Finding("kraft_invalid_record", r.path, r.batch_position,
                                     f"{r.name} at offset {r.offset} names a topic or partition "
                                     "that does not exist at that point", details={"offset": r.offset}))

    def state(self, files: KraftFiles, offset: int, extra: list[Finding]) -> ClusterState:
        brokers = tuple(
            Broker(id=i, alive=not b["fenced"], rack=b["rack"], endpoints=b["endpoints"],
                   broker_epoch=b["epoch"], fenced=b["fenced"], in_controlled_shutdown=b["in_controlled_shutdown"])
            for i, b in sorted(self.brokers.items()))
        topics = []
        reassignments = []
        for tid, t in sorted(self.topics.items(), key=lambda kv: kv[1]["name"]):
            parts = []
            for pid, p in sorted(t["partitions"].items()):
                parts.append(PartitionState(
                    partition=pid, replicas=tuple(p["replicas"]), adding_replicas=tuple(p["adding_replicas"]),
                    removing_replicas=tuple(p["removing_replicas"]), leader=p["leader"],
                    leader_epoch=p["leader_epoch"], isr=tuple(p["isr"]), controller_epoch=None,
                    leader_recovery_state=p["leader_recovery_state"], version=p["partition_epoch"]))
                if p["adding_replicas"] or p["removing_replicas"]:
                    target = [x for x in p["replicas"] if x not in p["removing_replicas"]]
                    reassignments.append({"topic": t["name"], "partition": pid, "replicas": target})
            topics.append(Topic(t["name"], tid, dict(self.configs.get((kraft.RESOURCE_TOPIC, t["name"]), {})),
                                tuple(parts)))
        broker_configs = {(name or DEFAULT_BROKER_ENTITY): dict(cfg)
                          for (rtype, name), cfg in sorted(self.configs.items())
                          if rtype == kraft.RESOURCE_BROKER and cfg}
        health = compute_health(brokers, topics, broker_configs)
        return ClusterState("kraft", files.source, {"offset": offset}, files.cluster_id,
                            Controller(self.controller, self.controller_epoch), brokers, tuple(topics),
                            broker_configs, Pending(reassignments=tuple(reassignments)), health,
                            tuple(extra) + tuple(self.findings))


def cluster_state_from_kraft(files: KraftFiles, *, at_offset: int | None = None,
                             at_time: int | None = None) -> ClusterState:
    """The metadata image at ``at_offset`` (inclusive; default: the end), as a KRaft broker
    would rebuild it: the newest complete snapshot whose end offset is at most ``at_offset + 1``
    (it holds every record below its end offset), then the log records from that end offset on.
    ``at_time`` (epoch ms) stops before the first log record stamped later, and only takes a
    snapshot whose SNAPSHOT_HEADER ``last_contained_log_timestamp`` is not later.

    Records bracketed by Begin/EndTransactionRecord are applied together at the End; an
    AbortTransactionRecord drops them, and a transaction still open at the stopping point is not
    applied. ``position`` is the offset of the last record read (or the snapshot's end - 1).
    """
    findings: list[Finding] = []
    image = _KraftImage()
    start = 0
    last = -1
    for end_offset, _epoch, path in sorted(files.snapshots, reverse=True):
        if at_offset is not None and end_offset > at_offset + 1:
            continue
        items = kraft.read_metadata_file(path)
        bad = [x for x in items if isinstance(x, Finding) and x.is_error]
        if bad:
            findings.extend(bad)
            continue
        if at_time is not None:
            header = next((x for x in items if isinstance(x, kraft.ControlRecord)
                           and x.control_type == kraft.SNAPSHOT_HEADER), None)
            if header is None or header.data.get("last_contained_log_timestamp", 0) > at_time:
                continue
        findings.extend(x for x in items if isinstance(x, Finding))
        for x in items:
            if isinstance(x, kraft.MetadataRecord) and x.name is not None:
                image.replay(x)
        start = end_offset
        last = end_offset - 1
        break
    pending_txn: list | None = None
    done = False
    for _base, path in files.segments:
        for x in kraft.read_metadata_file(path):
            if isinstance(x, Finding):
                findings.append(x)
                continue
            if x.offset < start:
                continue
            if (at_offset is not None and x.offset > at_offset) or (at_time is not None and x.timestamp > at_time):
                done = True
                break
            last = x.offset
            if isinstance(x, kraft.ControlRecord):
                image.replay(x)
                continue
            if x.name == "BeginTransactionRecord":
                pending_txn = []
            elif x.name == "EndTransactionRecord":
                for r in pending_txn or ():
                    image.replay(r)
                pending_txn = None
            elif x.name == "AbortTransactionRecord":
                pending_txn = None
            elif x.name is not None:
                if pending_txn is not None:
                    pending_txn.append(x)
                else:
                    image.replay(x)
        if done:
            break
    return image.state(files, last, findings)


def load_kraft_state(sources: Iterable[str | os.PathLike], *, at_offset: int | None = None,
                     at_time: int | None = None) -> ClusterState:
    """:func:`find_kraft_files` then :func:`cluster_state_from_kraft`."""
    return cluster_state_from_kraft(find_kraft_files(sources), at_offset=at_offset, at_time=at_time)


# -- either source --------------------------------------------------------------------------

METADATA_DIR = "__cluster_metadata-0"


def detect_source_kind(sources: Iterable[str | os.PathLike]) -> tuple[str, list[str]]:
    """``("zookeeper" | "kraft", sources)``: which control plane SOURCE holds evidence of.

    A Kafka log directory holding ``__cluster_metadata-0`` is replaced by that directory.
    KRaft is recognised by ``*.checkpoint`` and 20-digit ``*.log`` names, ZooKeeper by
    ``snapshot.*``/``log.*`` names or a ``version-2`` directory. Raises :class:`FormatError`
    when nothing is recognised or both kinds are mixed.
    """
    kinds = set()
    resolved = []
    for src in sources:
        s = os.fspath(src)
        if os.path.isdir(os.path.join(s, METADATA_DIR)):
            s = os.path.join(s, METADATA_DIR)
        resolved.append(s)
        names = sorted(os.listdir(s)) if os.path.isdir(s) else [os.path.basename(s)]
        if os.path.isdir(os.path.join(s, "version-2")):
            kinds.add("zookeeper")
        for n in names:
            if kraft.parse_checkpoint_name(n) or kraft.parse_segment_name(n) is not None:
                kinds.add("kraft")
            elif n.startswith(("snapshot.", "log.")):
                kinds.add("zookeeper")
    if len(kinds) != 1:
        what = "both ZooKeeper and KRaft files" if kinds else "no ZooKeeper or KRaft metadata files"
        raise FormatError(f"cannot tell the control plane: SOURCE holds {what}",
                          path=", ".join(resolved) or None)
    return kinds.pop(), resolved


def load_cluster_state(sources: Iterable[str | os.PathLike], *, at_zxid: int | None = None,
                       at_time: int | None = None, at_offset: int | None = None,
                       chroot: str = "") -> ClusterState:
    """The cluster state of SOURCE, ZooKeeper or KRaft (detected), at the requested point.

    ``at_zxid`` applies to ZooKeeper only and ``at_offset`` to KRaft only (``ValueError`` for
    the other kind, so a command can reject the option); ``at_time`` (epoch ms) to both.
    """
    kind, resolved = detect_source_kind(sources)
    if kind == "zookeeper":
        if at_offset is not None:
            raise ValueError("--at-offset applies to KRaft metadata; this SOURCE is ZooKeeper (use --at-zxid)")
        return cluster_state_from_zk(load_zk_state(resolved, at_zxid=at_zxid, at_time=at_time), chroot=chroot)
    if at_zxid is not None:
        raise ValueError("--at-zxid applies to ZooKeeper; this SOURCE is KRaft metadata (use --at-offset)")
    return load_kraft_state(resolved, at_offset=at_offset, at_time=at_time)
