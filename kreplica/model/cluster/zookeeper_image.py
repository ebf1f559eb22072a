"""A znode change applied to the cluster image: Kafka's ZooKeeper-mode metadata, znode by znode.

Sources: ``../shared/specs/zookeeper-formats.md`` §7; Kafka ``core/src/main/scala/kafka/zk/
ZkData.scala`` (the payloads, decoded by :mod:`kreplica.formats.zookeeper.znodes`) and
``KafkaZkClient.scala``/``KafkaController.initializeControllerContext`` (what the controller reads
of them). The znodes, under Kafka's chroot: ``/cluster/id``, ``/controller``,
``/controller_epoch``, ``/brokers/ids/<id>`` (ephemeral: alive while its owning session is open;
the broker epoch is its czxid), ``/brokers/topics/<t>`` (assignment, adding/removing replicas,
topic id), ``/brokers/topics/<t>/partitions/<p>/state`` (leader, epochs, ISR; its dataVersion is
the partition epoch), ``/config/topics|brokers/<name>``, ``/admin/reassign_partitions``,
``/admin/preferred_replica_election``, ``/admin/delete_topics/<t>``, ``/isr_change_notification/*``,
``/log_dir_event_notification/*``.

``cluster-state`` builds the image from the tree at a zxid (:meth:`ZkImage.from_tree`: every
Kafka znode applied as it stands); the timeline applies each transaction's znode changes to the
image as they come (:meth:`ZkImage.apply`). A topic's partitions are its assignment's, each with
the state its state znode holds (none when absent or unreadable: ``NewPartition``), so states
and assignments are held apart and joined when a :class:`ClusterState` is made.
"""

from __future__ import annotations

from collections.abc import Mapping

from kreplica.formats.errors import Malformed
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import znodes
from kreplica.model.cluster.image import ClusterImage, TopicImage
from kreplica.model.cluster.state import Broker, ClusterState, PartitionState, Pending
from kreplica.model.cluster.zk_chroot import KAFKA_MARKERS

#: what :meth:`ZkImage.apply` says a znode is (the timeline's dispatch)
STATE, TOPIC, BROKER, CONTROLLER, CONTROLLER_EPOCH = "state", "topic", "broker", "controller", "controller_epoch"
REASSIGN, PREFERRED, DELETE_TOPIC, LOG_DIR_EVENT = "reassign", "preferred", "delete_topic", "log_dir_event"
ISR_CHANGE, CONFIG, CLUSTER_ID = "isr_change", "config", "cluster_id"

_NO_TOPIC = znodes.TopicZnode(None, {})


def _kind(parts: list[str]) -> tuple[str, object] | None:
    """What the znode at ``parts`` (its path under the chroot, split) is, and its key."""
    n = len(parts)
    head = parts[0]
    if head == "brokers" and n >= 3:
        if parts[1] == "topics":
            if n == 3:
                return TOPIC, parts[2]
            if n == 6 and parts[3] == "partitions" and parts[5] == "state" and parts[4].isdigit():
                return STATE, (parts[2], int(parts[4]))
        elif parts[1] == "ids" and n == 3 and parts[2].isdigit():
            return BROKER, int(parts[2])
        return None
    if n == 1:
        return {"controller": (CONTROLLER, None), "controller_epoch": (CONTROLLER_EPOCH, None)}.get(head)
    if head == "admin":
        if n == 2:
            return {"reassign_partitions": (REASSIGN, None), "preferred_replica_election": (PREFERRED, None)}.get(parts[1])
        return (DELETE_TOPIC, parts[2]) if n == 3 and parts[1] == "delete_topics" else None
    if n == 2 and head == "isr_change_notification":
        return ISR_CHANGE, parts[1]
    if n == 2 and head == "log_dir_event_notification":
        return LOG_DIR_EVENT, parts[1]
    if n == 3 and head == "config" and parts[1] in ("topics", "brokers"):
        return CONFIG, (parts[1], parts[2])
    if parts == ["cluster", "id"]:
        return CLUSTER_ID, None
    return None


class ZkImage(ClusterImage):
    """The cluster image of a ZooKeeper tree. ``root`` is Kafka's chroot (``""``: the root;
    ``None`` until a change to ``/brokers/ids`` or ``/brokers/topics`` somewhere decides it);
    ``sessions`` the open sessions (a registration is alive while its owner's is)."""

    __slots__ = ("root", "sessions", "assignments", "states", "registrations", "reassign", "preferred",
                 "deleting", "isr_changes", "log_dir_events", "invalid", "_state_paths")

    def __init__(self, root: str | None, sessions=()) -> None:
        super().__init__("zookeeper")
        self.root = root
        self.sessions = set(sessions)
        self.assignments: dict[str, znodes.TopicZnode] = {}
        #: (topic, partition) -> (the state or None when unreadable, the znode's dataVersion)
        self.states: dict[tuple[str, int], tuple[znodes.PartitionStateZnode | None, int]] = {}
        self.registrations: dict[int, tuple[znodes.BrokerZnode | None, int, int]] = {}   # (reg, czxid, owner)
        self.reassign: tuple[znodes.PartitionEntry, ...] = ()
        self.preferred: tuple[znodes.PartitionEntry, ...] = ()
        self.deleting: set[str] = set()
        self.isr_changes: dict[str, tuple[znodes.PartitionEntry, ...]] = {}
        self.log_dir_events: dict[str, znodes.LogDirEventZnode | None] = {}
        self.invalid: dict[str, str] = {}        # path -> why its payload is not Kafka's
        #: NOTE: a state znode is written over and over: its path is split once (bench_timeline.py)
        self._state_paths: dict[str, tuple[str, tuple[str, int]]] = {}   # path -> (STATE, key)

    @classmethod
    def from_tree(cls, nodes: Mapping[str, object], sessions, root: str) -> ZkImage:
        """The image of the tree ``nodes`` (path -> node) under ``root``: each Kafka znode applied."""
        img = cls(root.rstrip("/"), sessions)
        r = img.root

        def children(p: str) -> list[str]:
            n = nodes.get(r + p)
            return sorted(n.children) if n is not None else []

        paths = ["/cluster/id", "/controller", "/controller_epoch"]
        paths += [f"/brokers/ids/{b}" for b in children("/brokers/ids")]
        for t in children("/brokers/topics"):
            paths.append(f"/brokers/topics/{t}")
            paths.append(f"/config/topics/{t}")
            paths += [f"/brokers/topics/{t}/partitions/{p}/state"
                      for p in sorted(children(f"/brokers/topics/{t}/partitions"), key=_numeric)]
        paths += [f"/config/brokers/{e}" for e in children("/config/brokers")]
        paths += ["/admin/reassign_partitions", "/admin/preferred_replica_election"]
        paths += [f"/admin/delete_topics/{t}" for t in children("/admin/delete_topics")]
        paths += [f"/isr_change_notification/{n}" for n in children("/isr_change_notification")]
        paths += [f"/log_dir_event_notification/{n}" for n in children("/log_dir_event_notification")]
        for p in paths:
            node = nodes.get(r + p)
            if node is not None:
                img.apply(r + p, node)
        return img

    def alive(self) -> frozenset[int]:
        """The registered brokers whose session is open (Kafka's controller's live brokers)."""
        return frozenset(b for b, (_reg, _czxid, owner) in self.registrations.items() if owner in self.sessions)

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        """An assigned partition with the state its state znode holds (leaderless without one)."""
        t = self.assignments.get(topic)
        a = t.partitions.get(partition) if t is not None else None
        return _partition(partition, a, self.states.get((topic, partition))) if a is not None else None

    # -- where Kafka's znodes are ----------------------------------------------------------------
    def rel_parts(self, path: str) -> list[str] | None:
        """``path`` under Kafka's chroot, split; ``None`` outside it."""
        root = self.root
        if root is None:
            for marker in KAFKA_MARKERS:   # every broker creates both under its chroot at start-up
                if path.endswith(marker):
                    self.root = root = path[:-len(marker)]
                    break
            else:
                return None
        if root:
            if not path.startswith(root + "/"):
                return None
            path = path[len(root):]
        return path.strip("/").split("/")

    # -- one znode change ------------------------------------------------------------------------
    def apply(self, path: str, node) -> tuple[str, object] | None:
        """Apply the znode at ``path`` as it now stands (``node`` ``None``: deleted); what it is
        (:data:`STATE`, :data:`TOPIC`, ...) and its key, or ``None`` for a znode Kafka's
        metadata does not hold."""
        known = self._state_paths.get(path)
        if known is not None:   # NOTE: the state written over and over, inline (bench/bench_timeline.py)
            key = known[1]
            if node is None:
                self._set_state(path, key, node)
            else:
                try:
                    s = znodes.decode_partition_state(node.data)
                except Malformed as exc:
                    s = None
                    self.invalid[path] = exc.reason
                else:
                    if self.invalid and path in self.invalid:
                        del self.invalid[path]
                self.states[key] = (s, node.version)
            return known
        parts = self.rel_parts(path)
        kind = _kind(parts) if parts is not None and parts != [""] else None
        if kind is None:
            return None
        what, key = kind
        if what == STATE:
            self._state_paths[path] = kind
            self._set_state(path, key, node)
        elif what == TOPIC:
            if node is None:
                self.assignments.pop(key, None)
                self.invalid.pop(path, None)
            else:
                self.assignments[key] = self._decode(path, znodes.decode_topic, node.data, _NO_TOPIC)
        elif what == BROKER:
            if node is None:
                self.registrations.pop(key, None)
                self.invalid.pop(path, None)
            else:
                self.registrations[key] = (self._decode(path, znodes.decode_broker, node.data), node.czxid,
                                           node.ephemeral_owner)
        elif what == CONTROLLER:
            self.controller = self._decode(path, znodes.decode_controller, _data(node))
        elif what == CONTROLLER_EPOCH:
            self.controller_epoch = self._decode(path, znodes.decode_controller_epoch, _data(node))
        elif what == REASSIGN:
            self.reassign = self._decode(path, znodes.decode_reassignment, _data(node), ())
        elif what == PREFERRED:
            self.preferred = self._decode(path, znodes.decode_preferred_election, _data(node), ())
        elif what == DELETE_TOPIC:
            (self.deleting.add if node is not None else self.deleting.discard)(key)
        elif what == ISR_CHANGE:
            self._keep(self.isr_changes, key, node, path, znodes.decode_isr_change, ())
        elif what == LOG_DIR_EVENT:
            self._keep(self.log_dir_events, key, node, path, znodes.decode_log_dir_event, None)
        elif what == CONFIG:
            configs = self.topic_configs if key[0] == "topics" else self.broker_configs
            cfg = self._decode(path, znodes.decode_config, _data(node))
            if cfg is None:
                configs.pop(key[1], None)
            else:
                configs[key[1]] = cfg
        else:
            self.cluster_id = self._decode(path, znodes.decode_cluster_id, _data(node))
        return kind

    def _set_state(self, path: str, key: tuple[str, int], node) -> None:
        if node is None:
            self.states.pop(key, None)
            self.invalid.pop(path, None)
        else:
            self.states[key] = (self._decode(path, znodes.decode_partition_state, node.data), node.version)

    def _keep(self, held: dict, key: str, node, path: str, decoder, default) -> None:
        if node is None:
            held.pop(key, None)
            self.invalid.pop(path, None)
        else:
            held[key] = self._decode(path, decoder, node.data, default)

    def _decode(self, path: str, decoder, data, default=None):
        try:
            value = decoder(data)
        except Malformed as exc:
            self.invalid[path] = exc.reason
            return default
        if path in self.invalid:
            del self.invalid[path]
        return value

    # -- the image at a point --------------------------------------------------------------------
    def state(self, source: str, position: dict[str, int], *, cluster_id: str | None = None,
              findings=(), where: str = "") -> ClusterState:
        """The frozen state: brokers alive while their session is open, each topic's assigned
        partitions with their states, the pending admin work; an unreadable znode is a
        ``kafka_invalid_znode`` finding at ``where`` (the snapshot read)."""
        self.brokers = {
            b: Broker(id=b, alive=owner in self.sessions, rack=reg.rack if reg is not None else None,
                      endpoints=reg.endpoints if reg is not None else (), broker_epoch=czxid, session=owner)
            for b, (reg, czxid, owner) in self.registrations.items()}
        self.topics = {name: TopicImage(t.topic_id, {
            pid: _partition(pid, a, self.states.get((name, pid))) for pid, a in t.partitions.items()})
            for name, t in self.assignments.items()}
        self.pending = Pending(
            reassignments=tuple(e.as_dict() for e in self.reassign),
            preferred_elections=tuple(e.as_dict() for e in self.preferred),
            topic_deletions=tuple(sorted(self.deleting)),
            isr_change_notifications=tuple({"name": n, "partitions": [e.as_dict() for e in self.isr_changes[n]]}
                                           for n in sorted(self.isr_changes)),
            log_dir_event_notifications=tuple(_log_dir_event(n, self.log_dir_events[n])
                                              for n in sorted(self.log_dir_events)))
        bad = [Finding("kafka_invalid_znode", where, 0,
                       f"znode {p} does not hold "
                       + ("valid JSON" if why == "not JSON" else f"what Kafka writes there ({why})"),
                       details={"znode": p}) for p, why in self.invalid.items() if self._read(p)]
        return ClusterImage.state(self, source, position, cluster_id=cluster_id, findings=(*findings, *bad))


    def _read(self, path: str) -> bool:
        """Whether the image's state reads the znode at ``path`` (the state znode of a partition
        the assignment does not list is not read, as Kafka's controller does not)."""
        known = self._state_paths.get(path)
        return known is None or known[1][1] in self.assignments.get(known[1][0], _NO_TOPIC).partitions


def _numeric(name: str) -> tuple:
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def _data(node) -> bytes | None:
    return node.data if node is not None else None


_NO_STATE = znodes.PartitionStateZnode(znodes.NO_LEADER, znodes.UNDEFINED_EPOCH, (), None, znodes.RECOVERED)


def _partition(pid: int, assigned: znodes.ReplicaAssignment, held) -> PartitionState:
    s, version = held if held is not None else (None, None)
    s = s or _NO_STATE
    return PartitionState(partition=pid, replicas=assigned.replicas, adding_replicas=assigned.adding_replicas,
                          removing_replicas=assigned.removing_replicas, leader=s.leader, leader_epoch=s.leader_epoch,
                          isr=s.isr, controller_epoch=s.controller_epoch,
                          leader_recovery_state=s.leader_recovery_state, version=version)


def _log_dir_event(name: str, event: znodes.LogDirEventZnode | None) -> dict:
    out: dict = {"name": name}
    if event is not None:
        for key in ("version", "broker", "event"):
            if getattr(event, key) is not None:
                out[key] = getattr(event, key)
    return out
