"""The timeline of a ZooKeeper-mode cluster: Kafka's znode changes, transaction by transaction.

Sources: ``../shared/specs/zookeeper-formats.md`` §5 (sessions: a ``closeSession`` with cxid 0 is
the server expiring a session, any other cxid the client closing it) and §7 (Kafka's znodes and
how Kafka writes them: every controller write is a multi guarded by ``check /controller_epoch``;
a leader that changes its ISR itself writes the state znode with a plain ``setData``);
``../shared/specs/kafka-algorithms.md`` §4. The tree and its transactions come from
:mod:`kreplica.model.zookeeper.history`; the causes from :func:`~kreplica.analysis.timeline.events.classify`.

Znodes read, under Kafka's chroot: ``/brokers/ids/<id>`` (registrations; the broker epoch is the
czxid), ``/brokers/topics/<t>`` (assignment, adding/removing replicas),
``/brokers/topics/<t>/partitions/<p>/state`` (leader, epochs, ISR), ``/controller`` and
``/controller_epoch``, ``/admin/reassign_partitions``, ``/admin/preferred_replica_election``,
``/admin/delete_topics/<t>``, ``/log_dir_event_notification/*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kreplica.analysis.timeline.events import (
    BY_CONTROLLER,
    BY_SNAPSHOT,
    BY_TRANSACTION,
    CREATED,
    DELETED,
    SNAPSHOT,
    BrokerEvent,
    ChangeContext,
    ControllerEvent,
    LeaderIsr,
    PartitionEvent,
    TimelineEnd,
    classify,
    is_offline,
)
from kreplica.formats.errors import Malformed
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.zookeeper import znodes
from kreplica.model.cluster.zk_chroot import KAFKA_MARKERS, kafka_roots, resolve_chroot
from kreplica.model.zookeeper import ZkFiles
from kreplica.model.zookeeper.history import ZkStep, iter_zk_steps, start_state
from kreplica.model.zookeeper.snapshot_steps import SnapshotDiff, iter_snapshot_steps


#: NOTE: the per-transaction values (states, events) are built with ``tuple.__new__`` (NamedTuples)
_new = tuple.__new__


def parse_partition_state(data: bytes | None, version: int | None = None) -> tuple[LeaderIsr, int | None] | None:
    """``(LeaderIsr, controller_epoch)`` of a partition state znode (``TopicPartitionStateZNode``,
    decoded by :func:`~kreplica.formats.zookeeper.znodes.decode_partition_state`); ``None`` if it
    holds nothing or nothing Kafka writes."""
    try:
        s = znodes.decode_partition_state(data)
    except Malformed:
        return None
    if s is None:
        return None
    return (_new(LeaderIsr, (s.leader, s.leader_epoch, s.isr, s.leader_recovery_state, version)),
            s.controller_epoch)


def parse_assignment(data: bytes | None) -> dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """``{partition: (replicas, adding, removing)}`` of a ``/brokers/topics/<t>`` znode (``TopicZNode``)."""
    t = _decoded(znodes.decode_topic, data)
    if t is None:
        return {}
    return {p: (a.replicas, a.adding_replicas, a.removing_replicas) for p, a in t.partitions.items()}


def _decoded(decoder, data: bytes | None, default=None):
    """``decoder(data)``, or ``default`` for a payload that is not what Kafka writes."""
    try:
        return decoder(data)
    except Malformed:
        return default


class _Kafka:
    """Kafka's view of the tree, kept up to date step by step (only what the causes need).
    ``root`` is Kafka's chroot (``""``: the root); ``None`` until the history creates Kafka's
    ``/brokers/ids`` or ``/brokers/topics`` somewhere, which then decides it."""

    def __init__(self, root: str | None) -> None:
        self.root = root
        self.parts: dict[tuple[str, int], list] = {}      # -> [LeaderIsr, position of its last change]
        self.assign: dict[str, dict[int, tuple]] = {}
        self.brokers: dict[int, tuple[int, int]] = {}      # id -> (session, broker epoch)
        self.sessions: dict[int, int] = {}                 # session -> broker id
        self.gone_at: dict[int, int] = {}
        self.log_dir_at: dict[int, int] = {}
        self.controller: int | None = None
        self.controller_epoch: int | None = None
        self.reassign: dict[tuple[str, int], tuple[int, ...]] = {}
        self.preferred: set[tuple[str, int]] = set()
        self.deleting: set[str] = set()
        self._alive: frozenset[int] | None = None
        #: partition state znode path -> (its parts under the chroot, its partition key): written
        #: over and over, so each is split once (one entry per partition, not per transaction)
        self.paths: dict[str, tuple] = {}
        self.epoch_path = f"{root}/controller_epoch" if root is not None else None

    @property
    def alive(self) -> frozenset[int]:
        if self._alive is None:
            self._alive = frozenset(self.brokers)
        return self._alive

    def rel(self, path: str) -> str | None:
        if self.root is None and not self.found_root(path):
            return None
        if not self.root:
            return path
        if path == self.root:
            return "/"
        return path[len(self.root):] if path.startswith(self.root + "/") else None

    def found_root(self, path: str) -> bool:
        """Kafka's chroot decided by the first ``/brokers/ids`` or ``/brokers/topics`` the
        history writes (every broker creates both under its chroot at start-up; a topic created
        before any broker started creates the second)."""
        for marker in KAFKA_MARKERS:
            if path.endswith(marker):
                self.set_root(path[:-len(marker)])
                return True
        return False

    def set_root(self, root: str) -> None:
        self.root = root
        self.epoch_path = f"{root}/controller_epoch"

    # -- znode payloads --------------------------------------------------------------------------
    def set_reassign(self, data: bytes | None) -> None:
        self.reassign = {(e.topic, e.partition): e.replicas
                         for e in _decoded(znodes.decode_reassignment, data, ())}

    def set_preferred(self, data: bytes | None) -> None:
        self.preferred = {(e.topic, e.partition) for e in _decoded(znodes.decode_preferred_election, data, ())}

    def register(self, broker: int, session: int, epoch: int) -> None:
        self._alive = None
        self.brokers[broker] = (session, epoch)
        self.sessions[session] = broker

    def deregister(self, broker: int, zxid: int) -> int | None:
        self._alive = None
        session, _epoch = self.brokers.pop(broker, (None, None))
        if session is not None and self.sessions.get(session) == broker:
            del self.sessions[session]
        self.gone_at[broker] = zxid
        return session

    def context(self, key: tuple[str, int], since: int, by_controller: bool | None) -> ChangeContext:
        replicas, adding, removing = self.assign.get(key[0], _UNASSIGNED).get(key[1], _NO_REPLICAS)
        return ChangeContext(
            alive=self.alive,
            gone_since=frozenset(b for b, z in self.gone_at.items() if z > since) if self.gone_at else _NONE,
            log_dir_failed=frozenset(b for b, z in self.log_dir_at.items() if z > since) if self.log_dir_at else _NONE,
            replicas=replicas, adding=adding, removing=removing,
            reassign_target=self.reassign.get(key),
            preferred_requested=key in self.preferred,
            deleting=key[0] in self.deleting,
            by_controller=by_controller,
        )


_NONE: frozenset[int] = frozenset()
_UNASSIGNED: dict = {}                 # never written to
_NO_REPLICAS = ((), (), ())
#: the context of a change that keeps the leader and epoch: only who wrote it (built once)
_WRITER_ONLY = {b: ChangeContext(by_controller=b) for b in (True, False, None)}


def _split(rel: str) -> list[str]:
    return rel.strip("/").split("/")


def _partition_key(parts: list[str]) -> tuple[str, int] | None:
    """``/brokers/topics/<t>/partitions/<p>/state`` → ``(t, p)``."""
    if len(parts) == 6 and parts[0] == "brokers" and parts[1] == "topics" and parts[3] == "partitions" \
            and parts[5] == "state" and parts[4].isdigit():
        return parts[2], int(parts[4])
    return None


def _controller_id(data: bytes | None) -> int | None:
    return _decoded(znodes.decode_controller, data)


def _epoch_text(data: bytes | None) -> int | None:
    return _decoded(znodes.decode_controller_epoch, data)


def _snapshot_events(k: _Kafka, nodes, label: str) -> list:
    """The Kafka state in the starting tree, as ``snapshot`` events at the zxid that wrote each part."""
    out: list = []
    root = k.root
    if root is None:
        return out
    ids = nodes.get(f"{root}/brokers/ids")
    for name in sorted(ids.children if ids is not None else ()):
        if not name.isdigit():
            continue
        n = nodes[f"{root}/brokers/ids/{name}"]
        k.register(int(name), n.ephemeral_owner, n.czxid)
        out.append(BrokerEvent(int(name), SNAPSHOT, n.czxid, n.ctime, n.czxid, n.ephemeral_owner))
    epoch_node = nodes.get(f"{root}/controller_epoch")
    k.controller_epoch = _epoch_text(epoch_node.data) if epoch_node is not None else None
    ctrl = nodes.get(f"{root}/controller")
    if ctrl is not None:
        k.controller = _controller_id(ctrl.data)
        out.append(ControllerEvent(SNAPSHOT, ctrl.czxid, ctrl.ctime, k.controller, k.controller_epoch))
    admin = nodes.get(f"{root}/admin/reassign_partitions")
    if admin is not None:
        k.set_reassign(admin.data)
    pref = nodes.get(f"{root}/admin/preferred_replica_election")
    if pref is not None:
        k.set_preferred(pref.data)
    dels = nodes.get(f"{root}/admin/delete_topics")
    k.deleting = set(dels.children) if dels is not None else set()
    topics = nodes.get(f"{root}/brokers/topics")
    alive = frozenset(k.brokers)
    for t in sorted(topics.children if topics is not None else ()):
        tnode = nodes[f"{root}/brokers/topics/{t}"]
        k.assign[t] = parse_assignment(tnode.data)
        for p in sorted(k.assign[t]):   # the assigned partitions (as cluster-state reads them)
            snode = nodes.get(f"{root}/brokers/topics/{t}/partitions/{p}/state")
            parsed = parse_partition_state(snode.data, snode.version) if snode is not None else None
            if parsed is None:
                continue
            state, ce = parsed
            key = (t, int(p))
            k.parts[key] = [state, snode.mzxid]
            out.append(PartitionEvent(t, int(p), snode.mzxid, snode.mtime, ce, None, state, SNAPSHOT, None,
                                      f"as {label} holds it", k.assign[t].get(int(p), ((),))[0],
                                      is_offline(state, alive)))
    out.sort(key=lambda ev: ev.position)
    return out


def iter_zookeeper_timeline(files: ZkFiles, *, from_zxid: int | None = None, from_time: int | None = None,
                            to_zxid: int | None = None, to_time: int | None = None,
                            chroot: str | None = None) -> Iterator[PartitionEvent | BrokerEvent | ControllerEvent
                                                                  | Finding | TimelineEnd]:
    """Every partition, broker and controller event of a ZooKeeper SOURCE in zxid order, then one
    :class:`TimelineEnd`.

    The history starts at the oldest loadable snapshot, or at ``from_zxid``/``from_time`` (the
    state replayed there), with one ``snapshot`` event per partition, broker and controller it
    holds (at the zxid that wrote each), and runs to the end of the logs or to ``to_zxid``/
    ``to_time``. When the logs begin with the ensemble's first transaction, before any snapshot,
    it starts from the empty tree (:func:`~kreplica.model.zookeeper.history.start_state`): no
    ``snapshot`` events, every partition ``created``. Without any transaction log it goes from
    snapshot to snapshot (:mod:`~kreplica.model.zookeeper.snapshot_steps`; ``resolution``
    ``snapshot``): each change at the zxid that wrote it as the later snapshot holds it, what is
    gone at that snapshot (``gone``), changes in between unseen. Kafka's znodes are read under
    ``chroot`` (``""``: the root), or where the starting tree holds them, or where the history
    first creates ``/brokers/ids`` or ``/brokers/topics``. Findings (damaged logs, unreadable state znodes) come in the
    stream where they arise. Raises :class:`~kreplica.formats.errors.FormatError` when there is
    no start, or when the starting tree holds Kafka's znodes in several places.
    """
    state = start_state(files, from_zxid=from_zxid, from_time=from_time)
    by_snapshots = not files.logs
    end = TimelineEnd("zookeeper", files.source, state.zxid, state.zxid,
                      "replay" if from_zxid is not None or from_time is not None
                      else ("snapshot" if state.snapshot else "empty"),
                      resolution=BY_SNAPSHOT if by_snapshots else BY_TRANSACTION)
    for f in state.findings:
        yield f
    k = _Kafka(resolve_chroot(state.nodes, chroot, where=f"zxid {state.zxid:#x}", required=False,
                              source=files.source or None))
    label = state.snapshot if end.start_from == "snapshot" else f"the replay to {state.zxid:#x}"
    yield from _snapshot_events(k, state.nodes, label)
    if by_snapshots:
        steps = _snapshot_steps(k, iter_snapshot_steps(files, state, to_zxid=to_zxid, to_time=to_time))
    else:
        steps = iter_zk_steps(files, state, to_zxid=to_zxid, to_time=to_time)
    for item in steps:
        if isinstance(item, Finding):
            end.findings.append(item)
            yield item
            continue
        end.end = item.entry.zxid
        if item.changes:   # errors, failed multis and sessions without ephemerals change no znode
            yield from _step_events(k, item)
    yield end


#: what a broker or controller registration that is absent from the next snapshot is (no
#: transaction log: whether it expired, was closed or deleted is not recorded)
GONE = "gone"


class _SnapshotEntry(NamedTuple):
    """Stands in for the transaction of one zxid when only snapshots are there: what it wrote is
    known (the znodes), who wrote it and how are not (``type`` ``None``, no session)."""

    path: str
    position: int
    zxid: int
    time: int | None
    client_id: int = 0
    cxid: int = -1
    type: None = None
    body: None = None


def _snapshot_steps(k: _Kafka, diffs: Iterator[SnapshotDiff | Finding]) -> Iterator[ZkStep | Finding]:
    """Each snapshot's writes as steps of the history. The brokers registered in a snapshot count
    as live from the snapshot before it on: the registration it shows may be a later one than
    the broker held when the writes in between were made (Kafka's controller makes only live
    brokers leaders), so a partition is not taken for offline for want of a registration the
    snapshots could not show."""
    for diff in diffs:
        if isinstance(diff, Finding):
            yield diff
            continue
        _register_all(k, diff.nodes)
        for w in diff.writes:
            yield ZkStep(_SnapshotEntry(w.snapshot, 0, w.zxid, w.time), w.changes)


def _register_all(k: _Kafka, nodes) -> None:
    """Register (without events) every broker ``nodes`` holds under Kafka's chroot."""
    if k.root is None:
        roots = kafka_roots(nodes)
        if len(roots) != 1:
            return
        k.set_root(roots[0])
    ids = nodes.get(f"{k.root}/brokers/ids")
    for name in (ids.children if ids is not None else ()):
        if name.isdigit():
            n = nodes[f"{k.root}/brokers/ids/{name}"]
            k.register(int(name), n.ephemeral_owner, n.czxid)


def _guarded(e: zkl.TxnEntry, epoch_path: str) -> bool:
    """A multi guarded by ``check /controller_epoch``: a controller's write."""
    return e.type == zkl.OP_MULTI and e.body is not None and any(
        t.type == zkl.OP_CHECK and t.body is not None and t.body.path == epoch_path for t in e.body.txns)


def _step_events(k: _Kafka, step: ZkStep) -> Iterator:
    e = step.entry
    zxid, time = e.zxid, e.time
    by_controller = _guarded(e, k.epoch_path)
    pending_controller: ControllerEvent | None = None
    paths = k.paths
    for ch in step.changes:
        known = paths.get(ch.path)
        if known is None:
            rel = k.rel(ch.path)
            parts = _split(rel) if rel is not None else None
            known = (parts, _partition_key(parts) if parts is not None else None)
            if known[1] is not None:
                paths[ch.path] = known
        parts, key = known
        if parts is None:
            continue
        if key is not None:
            out = _partition_change(k, key, ch, e, by_controller)
            if out is not None:
                yield out
        elif len(parts) == 3 and parts[:2] == ["brokers", "topics"]:
            if ch.after is None:
                k.assign.pop(parts[2], None)
            else:
                k.assign[parts[2]] = parse_assignment(ch.after.data)
        elif len(parts) == 3 and parts[:2] == ["brokers", "ids"] and parts[2].isdigit():
            broker = int(parts[2])
            if ch.created:
                k.register(broker, ch.after.ephemeral_owner, ch.after.czxid)
                yield BrokerEvent(broker, "registered", zxid, time, ch.after.czxid, ch.after.ephemeral_owner)
            elif ch.deleted:
                k.deregister(broker, zxid)
                yield BrokerEvent(broker, _ended(e, "deregistered"), zxid, time, ch.before.czxid,
                                  ch.before.ephemeral_owner)
        elif parts == ["controller"]:
            if ch.after is not None:
                k.controller = _controller_id(ch.after.data)
                pending_controller = ControllerEvent("elected", zxid, time, k.controller, k.controller_epoch)
            elif ch.deleted:
                old = _controller_id(ch.before_data)
                k.controller = None
                yield ControllerEvent(_ended(e, "resigned"), zxid, time, old, k.controller_epoch)
        elif parts == ["controller_epoch"] and ch.after is not None:
            k.controller_epoch = _epoch_text(ch.after.data)
            if pending_controller is not None:
                pending_controller = ControllerEvent("elected", zxid, time, pending_controller.controller,
                                                     k.controller_epoch)
        elif parts == ["admin", "reassign_partitions"]:
            k.set_reassign(ch.after.data if ch.after is not None else None)
        elif parts == ["admin", "preferred_replica_election"]:
            k.set_preferred(ch.after.data if ch.after is not None else None)
        elif len(parts) == 3 and parts[:2] == ["admin", "delete_topics"]:
            (k.deleting.add if ch.after is not None else k.deleting.discard)(parts[2])
        elif len(parts) == 2 and parts[0] == "log_dir_event_notification" and ch.created:
            event = _decoded(znodes.decode_log_dir_event, ch.after.data)
            if event is not None and event.broker is not None:
                k.log_dir_at[event.broker] = zxid
    if pending_controller is not None:
        yield pending_controller


def _ended(e: zkl.TxnEntry, otherwise: str) -> str:
    """How an ephemeral went: ``closeSession`` with cxid 0 is the server expiring the session
    (``SessionTrackerImpl``), any other cxid the client closing it; else an explicit delete, or
    (:data:`GONE`) not known when only snapshots show it went."""
    if e.type is None:
        return GONE
    if e.type == zkl.OP_CLOSE_SESSION:
        return "session_expired" if e.cxid == 0 else "session_closed"
    return otherwise


def _partition_change(k: _Kafka, key: tuple[str, int], ch, e: zkl.TxnEntry,
                      by_controller: bool) -> PartitionEvent | Finding | None:
    """The event (or finding) of one write to a partition state znode; ``None`` when it changes
    nothing a timeline reports. NOTE: a function, not a generator: it runs for most
    transactions of a Kafka cluster's history (bench/bench_timeline.py)."""
    topic, pid = key
    zxid, time = e.zxid, e.time
    writer = k.sessions.get(e.client_id)
    replicas = k.assign.get(topic, _UNASSIGNED).get(pid, _NO_REPLICAS)[0]
    current = k.parts.get(key)
    if ch.after is None:
        if current is None:
            return None
        del k.parts[key]
        return PartitionEvent(topic, pid, zxid, time, None, current[0], None, DELETED,
                              BY_CONTROLLER if by_controller else None,
                              "the partition state znode was deleted"
                              + (" (topic queued for deletion)" if topic in k.deleting else ""),
                              replicas, False, writer)
    parsed = parse_partition_state(ch.after.data, ch.after.version)
    if parsed is None:
        return Finding("kafka_invalid_znode", e.path, e.position,
                       f"zxid {zxid:#x} wrote {ch.path} with data that is not a partition state; ignored",
                       details={"zxid": zxid, "znode": ch.path})
    after, ce = parsed
    alive = k.alive
    if current is None:
        k.parts[key] = [after, zxid]
        return PartitionEvent(topic, pid, zxid, time, ce, None, after, CREATED,
                              BY_CONTROLLER if by_controller else None,
                              f"state created: leader {after.leader}, ISR {list(after.isr)}", replicas,
                              is_offline(after, alive), writer)
    before, since = current
    if before.leader == after.leader and before.leader_epoch == after.leader_epoch:
        # NOTE: the most common write by far (a leader's ISR change, no epoch bump); its rule needs
        # nothing of the context but who wrote it, so the context is not built (bench_timeline.py)
        ctx = _WRITER_ONLY[by_controller]
    else:
        ctx = k.context(key, since, by_controller)
    cause = classify(before, after, ctx)
    current[0] = after
    if cause is None:
        return None
    current[1] = zxid
    return _new(PartitionEvent, (topic, pid, zxid, time, ce, before, after, cause.cause, cause.by, cause.evidence,
                                 replicas, is_offline(after, alive), writer))
