"""Kafka's KRaft metadata, replayed from the ``__cluster_metadata-0`` snapshots and log.

Sources: ``../shared/specs/kafka-formats.md`` §10; Kafka ``metadata/src/main/java/org/apache/
kafka/image/*Delta.java`` and ``metadata/PartitionRegistration.java``. The metadata records of
a snapshot and the log after it are applied in offset order (:func:`cluster_state_from_kraft`).
Partition records start and change registrations as :mod:`~kreplica.model.cluster.partition_change`
says (``PartitionRegistration.merge``). Brokers are alive when registered and not fenced; the
controller is the Raft leader of the last ``LeaderChange``. The records themselves are decoded
by :mod:`kreplica.formats.kraft.records`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.kraft import records as kraft
from kreplica.formats.kraft.quorum_state import QUORUM_STATE_FILE, parse_quorum_state
from kreplica.formats.errors import FormatError
from kreplica.formats.mapped import open_buffer
from kreplica.formats.findings import Finding
from kreplica.model.cluster.partition_change import PartitionChange, merge_partition_change, partition_from_record
from kreplica.model.cluster.state import (
    DEFAULT_BROKER_ENTITY,
    Broker,
    ClusterState,
    Controller,
    Pending,
    Topic,
    compute_health,
)

@dataclass(frozen=True, slots=True)
class KraftFiles:
    """The metadata evidence of a SOURCE: snapshots ``(end_offset, epoch, path)`` and segments
    ``(base_offset, path)``, each sorted; ``cluster_id`` from a ``meta.properties`` nearby;
    ``quorum_state`` the path of the metadata directory's ``quorum-state``, when there is one."""

    snapshots: tuple[tuple[int, int, str], ...]
    segments: tuple[tuple[int, str], ...]
    cluster_id: str | None = None
    source: str = ""
    quorum_state: str | None = None


def offset_gap(expected: int, base: int, path: str, *, snapshot: str | None = None) -> Finding:
    """A ``kraft_offset_gap`` finding: the segment ``path`` starts at ``base`` although the
    records replayed so far (the ``snapshot``, or the log) end below ``expected``, so offsets
    ``expected`` .. ``base - 1`` are missing from the history (as ``zk_zxid_gap`` for ZooKeeper)."""
    before = (f"the snapshot {os.path.basename(snapshot)} holds the records below offset {expected}"
              if snapshot is not None else
              (f"the records present end at offset {expected - 1}" if expected else "no snapshot holds them"))
    return Finding("kraft_offset_gap", path, 0,
                   f"metadata offsets {expected}..{base - 1} are missing: {before} and the next segment present "
                   f"starts at {base}; the records between are not replayed (a segment left out of the copy?)",
                   details={"expected": expected, "actual": base})


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
    cluster_id = quorum_state = None
    names = []
    for src in sources:
        s = os.fspath(src)
        names.append(s)
        if os.path.isdir(s):
            cluster_id = cluster_id or _meta_cluster_id(s)
            entries = [os.path.join(s, n) for n in sorted(os.listdir(s))]
            if os.path.isfile(os.path.join(s, QUORUM_STATE_FILE)):
                quorum_state = quorum_state or os.path.join(s, QUORUM_STATE_FILE)
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
                      ", ".join(names), quorum_state)


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
                if d["fenced"] == kraft.FENCE:
                    b["fenced"] = True
                elif d["fenced"] == kraft.UNFENCE:
                    b["fenced"] = False
                if d["in_controlled_shutdown"] == kraft.IN_CONTROLLED_SHUTDOWN:
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
            t["partitions"][d["partition_id"]] = partition_from_record(d)
        elif name == "PartitionChangeRecord":
            t = self.topics.get(d["topic_id"])
            p = t["partitions"].get(d["partition_id"]) if t is not None else None
            if p is None:
                self._orphan(r)
                return
            t["partitions"][d["partition_id"]] = merge_partition_change(p, PartitionChange.from_record(d))
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
            for _pid, p in sorted(t["partitions"].items()):
                parts.append(p)
                if p.adding_replicas or p.removing_replicas:
                    target = [x for x in p.replicas if x not in p.removing_replicas]
                    reassignments.append({"topic": t["name"], "partition": p.partition, "replicas": target})
            topics.append(Topic(t["name"], tid, dict(self.configs.get((kraft.RESOURCE_TOPIC, t["name"]), {})),
                                tuple(parts)))
        broker_configs = {(name or DEFAULT_BROKER_ENTITY): dict(cfg)
                          for (rtype, name), cfg in sorted(self.configs.items())
                          if rtype == kraft.RESOURCE_BROKER and cfg}
        health = compute_health(brokers, topics, broker_configs, self.controller)
        return ClusterState("kraft", files.source, {"offset": offset}, files.cluster_id,
                            Controller(self.controller, self.controller_epoch), brokers, tuple(topics),
                            broker_configs, Pending(reassignments=tuple(reassignments)), health,
                            tuple(extra) + tuple(self.findings), dict(self.features))


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
    Offsets missing between the snapshot (or the log's start) and the next segment present are a
    ``kraft_offset_gap`` finding. The controller is the leader of the last ``LeaderChange``
    replayed; a snapshot holds none, so when the log after it has none either, the Raft leader of
    the epoch reached (:func:`_raft_leader`) is taken.
    """
    findings: list[Finding] = []
    image = _KraftImage()
    start = 0
    last = -1
    snapshot = None
    epoch = None            # the Raft epoch of the last record replayed (a snapshot's: its name's)
    for end_offset, snapshot_epoch, path in sorted(files.snapshots, reverse=True):
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
        start, snapshot, epoch = end_offset, path, snapshot_epoch
        last = end_offset - 1
        break
    pending_txn: list | None = None
    done = False
    expected = start
    earlier_leader = None   # the last LeaderChange below the snapshot's end: (leader, epoch)
    for base, path in files.segments:
        if base > expected and not done and (at_offset is None or expected <= at_offset):
            findings.append(offset_gap(expected, base, path, snapshot=snapshot if expected == start else None))
        for x in kraft.read_metadata_file(path):
            if isinstance(x, Finding):
                findings.append(x)
                continue
            expected = max(expected, x.offset + 1)
            if x.offset < start:
                if isinstance(x, kraft.ControlRecord) and x.control_type == kraft.LEADER_CHANGE:
                    earlier_leader = (x.data.get("leader_id"), x.epoch)
                continue
            if (at_offset is not None and x.offset > at_offset) or (at_time is not None and x.timestamp > at_time):
                done = True
                break
            last, epoch = x.offset, x.epoch
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
    if image.controller_epoch is None and epoch is not None:
        at_end = at_offset is None and at_time is None
        image.controller, image.controller_epoch = _raft_leader(files, epoch, earlier_leader, at_end=at_end,
                                                                findings=findings)
    return image.state(files, last, findings)


def _raft_leader(files: KraftFiles, epoch: int, earlier: tuple[int | None, int] | None, *, at_end: bool,
                 findings: list[Finding]) -> tuple[int | None, int | None]:
    """The Raft leader (the active controller) of ``epoch`` when no ``LeaderChange`` of the
    replayed records names it: the last one below the snapshot when it is of that epoch, else
    ``quorum-state`` (``FileQuorumStateStore``: the leader this node last knew) when its epoch
    is that one, or later and the replay went to the end of the evidence. ``(None, None)`` when
    neither says; an unreadable ``quorum-state`` is a finding."""
    if earlier is not None and earlier[1] == epoch:
        leader = earlier[0]
        return (leader if leader is not None and leader >= 0 else None), epoch
    if files.quorum_state is None:
        return None, None
    try:
        with open_buffer(files.quorum_state) as buf:
            qs = parse_quorum_state(bytes(buf), path=files.quorum_state)
    except FormatError as exc:
        # a warning here: all this command wanted of the file was the controller's id
        findings.append(Finding("checkpoint_malformed", files.quorum_state, exc.position or 0,
                                f"quorum-state cannot be read as Kafka reads it ({exc.one_line()}); the "
                                "controller stays unknown", severity="warning"))
        return None, None
    if qs.leader_id >= 0 and (qs.leader_epoch == epoch or (at_end and qs.leader_epoch > epoch)):
        return qs.leader_id, qs.leader_epoch
    return None, None


def load_kraft_state(sources: Iterable[str | os.PathLike], *, at_offset: int | None = None,
                     at_time: int | None = None) -> ClusterState:
    """:func:`find_kraft_files` then :func:`cluster_state_from_kraft`."""
    return cluster_state_from_kraft(find_kraft_files(sources), at_offset=at_offset, at_time=at_time)
