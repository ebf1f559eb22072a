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
``/admin/delete_topics/<t>``, ``/log_dir_event_notification/*``, ``/config/topics/<t>`` and
``/config/brokers/<id>|<default>`` (each key a write sets, changes or removes is a
:class:`~kreplica.analysis.timeline.events.ConfigEvent` with the session of the write, and the
broker whose session it is when a broker wrote it, as it does for an AlterConfigs request; a
topic's config znode deleted with the topic is no event, as in KRaft).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    ConfigEvent,
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
from kreplica.model.cluster.zk_chroot import kafka_roots, resolve_chroot
from kreplica.model.cluster.zookeeper_image import (
    BROKER,
    CONFIG,
    CONTROLLER,
    CONTROLLER_EPOCH,
    LOG_DIR_EVENT,
    PREFERRED,
    REASSIGN,
    STATE,
    ZkImage,
)
from kreplica.model.zookeeper import ZkFiles
from kreplica.model.zookeeper.files import iter_log_entries
from kreplica.model.zookeeper.history import ZkStep, iter_zk_steps, start_state
from kreplica.model.zookeeper.snapshot_steps import SnapshotDiff, iter_snapshot_steps


#: NOTE: the per-transaction values (states, events) are built with ``tuple.__new__`` (NamedTuples)
_new = tuple.__new__


def _controller_id(data: bytes | None) -> int | None:
    try:
        return znodes.decode_controller(data)
    except Malformed:
        return None


class _Kafka:
    """The timeline's fold: the cluster image (:class:`~kreplica.model.cluster.zookeeper_image.ZkImage`,
    what ``cluster-state`` builds from a tree), changed znode by znode, and what the causes need
    beside it: each partition's last state and where it changed, the brokers taken for live and
    their sessions, when each broker went or lost a log directory."""

    def __init__(self, image: ZkImage) -> None:
        self.image = image
        self.parts: dict[tuple[str, int], list] = {}      # -> [LeaderIsr, position of its last change]
        self.brokers: dict[int, tuple[int, int]] = {}      # id -> (session, broker epoch)
        self.sessions: dict[int, int] = {}                 # session -> broker id
        self.gone_at: dict[int, int] = {}
        self.log_dir_at: dict[int, int] = {}
        self.reassign: dict[tuple[str, int], tuple[int, ...]] = {}
        self.preferred: set[tuple[str, int]] = set()
        self._alive: frozenset[int] | None = None
        self._epoch_path: tuple[str | None, str | None] = (None, None)

    @property
    def alive(self) -> frozenset[int]:
        if self._alive is None:
            self._alive = frozenset(self.brokers)
        return self._alive

    @property
    def epoch_path(self) -> str | None:
        """``/controller_epoch`` under Kafka's chroot (``None`` while it is not known)."""
        root = self.image.root
        if self._epoch_path[0] != root:
            self._epoch_path = (root, f"{root}/controller_epoch" if root is not None else None)
        return self._epoch_path[1]

    def admin_changed(self) -> None:
        """The reassignments and preferred elections the image holds, by partition."""
        self.reassign = {(e.topic, e.partition): e.replicas for e in self.image.reassign}
        self.preferred = {(e.topic, e.partition) for e in self.image.preferred}

    def register(self, broker: int, session: int, epoch: int) -> None:
        """A broker registration owned by ``session``; 0 is no session (a persistent znode, which
        Kafka never writes: ``KafkaZkClient.registerBroker`` creates it ephemeral), so nothing
        written by client 0 is the broker's."""
        self._alive = None
        self.brokers[broker] = (session, epoch)
        if session:
            self.sessions[session] = broker

    def deregister(self, broker: int, zxid: int) -> int | None:
        self._alive = None
        session, _epoch = self.brokers.pop(broker, (None, None))
        if session is not None and self.sessions.get(session) == broker:
            del self.sessions[session]
        self.gone_at[broker] = zxid
        return session

    def context(self, key: tuple[str, int], since: int, by_controller: bool | None) -> ChangeContext:
        t = self.image.assignments.get(key[0])
        a = t.partitions.get(key[1]) if t is not None else None
        return ChangeContext(
            alive=self.alive,
            gone_since=frozenset(b for b, z in self.gone_at.items() if z > since) if self.gone_at else _NONE,
            log_dir_failed=frozenset(b for b, z in self.log_dir_at.items() if z > since) if self.log_dir_at else _NONE,
            replicas=a.replicas if a is not None else (), adding=a.adding_replicas if a is not None else (),
            removing=a.removing_replicas if a is not None else (),
            reassign_target=self.reassign.get(key),
            preferred_requested=key in self.preferred,
            deleting=key[0] in self.image.deleting,
            by_controller=by_controller,
        )


_NONE: frozenset[int] = frozenset()
#: the context of a change that keeps the leader and epoch: only who wrote it (built once)
_WRITER_ONLY = {b: ChangeContext(by_controller=b) for b in (True, False, None)}


def _leader_isr(held) -> tuple[LeaderIsr, int | None] | None:
    """``(LeaderIsr, controller_epoch)`` of a state the image holds; ``None`` if unreadable."""
    s, version = held
    if s is None:
        return None
    return _new(LeaderIsr, (s.leader, s.leader_epoch, s.isr, s.leader_recovery_state, version)), s.controller_epoch


def _departures_before(files: ZkFiles, snapshot_zxid: int, root: str | None) -> dict[int, BrokerEvent]:
    """The brokers whose registration went in a transaction log *before* the starting snapshot
    (a log may begin before it): each one's last departure, its session closed or expired or its
    znode deleted, as the event that dates it. The snapshot shows only that they are gone."""
    if root is None or not files.logs:
        return {}
    prefix = f"{root}/brokers/ids/"
    out: dict[int, BrokerEvent] = {}
    for e in iter_log_entries(sorted(files.logs, key=lambda f: f.zxid)):
        if not isinstance(e, zkl.TxnEntry):
            continue
        if e.zxid >= snapshot_zxid:
            break
        if e.type == zkl.OP_CLOSE_SESSION:
            paths = list(e.body.paths or ()) if e.body is not None else []
        elif e.type == zkl.OP_DELETE:
            paths = list(e.paths)
        else:
            continue
        for path in paths:
            broker = path[len(prefix):] if path.startswith(prefix) else ""
            if broker.isdigit():
                out[int(broker)] = BrokerEvent(int(broker), _ended(e, "deregistered"), e.zxid, e.time,
                                               session=e.client_id if e.type == zkl.OP_CLOSE_SESSION else None)
    return out


def _snapshot_events(k: _Kafka, nodes, label: str, departed: dict[int, BrokerEvent] | None = None) -> list:
    """The Kafka state in the starting tree, as ``snapshot`` events at the zxid that wrote each part;
    with the departures a log shows before it (``departed``): those events, and a partition whose
    leader left after its state was written is not offline until then."""
    out: list = []
    img = k.image
    root = img.root
    if root is None:
        return out
    departed = {b: ev for b, ev in (departed or {}).items() if b not in img.registrations}
    out.extend(departed.values())
    for b, (_reg, czxid, owner) in sorted(img.registrations.items()):
        k.register(b, owner, czxid)
        out.append(BrokerEvent(b, SNAPSHOT, czxid, nodes[f"{root}/brokers/ids/{b}"].ctime, czxid, owner))
    ctrl = nodes.get(f"{root}/controller")
    if ctrl is not None:
        out.append(ControllerEvent(SNAPSHOT, ctrl.czxid, ctrl.ctime, img.controller, img.controller_epoch))
    k.admin_changed()
    alive = frozenset(k.brokers)
    for t, assigned in sorted(img.assignments.items()):
        for p in sorted(assigned.partitions):   # the assigned partitions (as cluster-state reads them)
            held = img.states.get((t, p))
            parsed = _leader_isr(held) if held is not None else None
            if parsed is None:
                continue
            state, ce = parsed
            snode = nodes[f"{root}/brokers/topics/{t}/partitions/{p}/state"]
            k.parts[(t, p)] = [state, snode.mzxid]
            left = departed.get(state.leader)
            out.append(PartitionEvent(t, p, snode.mzxid, snode.mtime, ce, None, state, SNAPSHOT, None,
                                      f"as {label} holds it", assigned.partitions[p].replicas,
                                      is_offline(state, alive) and (left is None or left.position <= snode.mzxid)))
    out.sort(key=lambda ev: ev.position)
    return out


def iter_zookeeper_timeline(files: ZkFiles, *, from_zxid: int | None = None, from_time: int | None = None,
                            to_zxid: int | None = None, to_time: int | None = None,
                            chroot: str | None = None, watch: Callable[[int, ZkImage], None] | None = None
                            ) -> Iterator[PartitionEvent | BrokerEvent | ControllerEvent | Finding | TimelineEnd]:
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
    stream where they arise. The timeline is a fold of the one cluster image
    (:class:`~kreplica.model.cluster.zookeeper_image.ZkImage`): every znode change is applied to
    it and the causes are read from it; ``watch``, when given, is called with the zxid reached
    and the image there: at the start, then after each step. Raises :class:`~kreplica.formats.errors.FormatError` when there is
    no start, and :class:`~kreplica.formats.usage.UsageError` when the starting tree holds Kafka's znodes in several
    places (choose with ``--chroot``).
    """
    state = start_state(files, from_zxid=from_zxid, from_time=from_time)
    by_snapshots = not files.logs
    end = TimelineEnd("zookeeper", files.source, state.zxid, state.zxid,
                      "replay" if from_zxid is not None or from_time is not None
                      else ("snapshot" if state.snapshot else "empty"),
                      resolution=BY_SNAPSHOT if by_snapshots else BY_TRANSACTION)
    for f in state.findings:
        yield f
    root = resolve_chroot(state.nodes, chroot, where=f"zxid {state.zxid:#x}", required=False,
                          source=files.source or None)
    k = _Kafka(ZkImage.from_tree(state.nodes, state.sessions, root) if root is not None
               else ZkImage(None, state.sessions))
    label = state.snapshot if end.start_from == "snapshot" else f"the replay to {state.zxid:#x}"
    before = _departures_before(files, state.zxid, k.image.root) if end.start_from == "snapshot" else {}
    yield from _snapshot_events(k, state.nodes, label, before)
    if watch is not None:
        watch(state.zxid, k.image)
    if by_snapshots:
        steps = _snapshot_steps(k, iter_snapshot_steps(files, state, to_zxid=to_zxid, to_time=to_time), state.zxid)
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
        if watch is not None:
            watch(item.entry.zxid, k.image)
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
    alive_at: int | None = None   # the snapshot before: what it lacks was there then


def _snapshot_steps(k: _Kafka, diffs: Iterator[SnapshotDiff | Finding], start: int) -> Iterator[ZkStep | Finding]:
    """Each snapshot's writes as steps of the history. The brokers registered in a snapshot count
    as live from the snapshot before it on: the registration it shows may be a later one than
    the broker held when the writes in between were made (Kafka's controller makes only live
    brokers leaders), so a partition is not taken for offline for want of a registration the
    snapshots could not show."""
    before = start
    for diff in diffs:
        if isinstance(diff, Finding):
            yield diff
            continue
        _register_all(k, diff.nodes)
        for w in diff.writes:
            yield ZkStep(_SnapshotEntry(w.snapshot, 0, w.zxid, w.time, alive_at=before), w.changes)
        before = diff.zxid


def _register_all(k: _Kafka, nodes) -> None:
    """Register (without events) every broker ``nodes`` holds under Kafka's chroot."""
    if k.image.root is None:
        roots = kafka_roots(nodes)
        if len(roots) != 1:
            return
        k.image.root = roots[0]
    root = k.image.root
    ids = nodes.get(f"{root}/brokers/ids")
    for name in (ids.children if ids is not None else ()):
        if name.isdigit():
            n = nodes[f"{root}/brokers/ids/{name}"]
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
    apply = k.image.apply
    for ch in step.changes:
        kind = apply(ch.path, ch.after)
        if kind is None:
            continue
        what, key = kind
        if what is STATE:
            out = _partition_change(k, key, ch, e, by_controller)
            if out is not None:
                yield out
        elif what == BROKER:
            if ch.created:
                k.image.sessions.add(ch.after.ephemeral_owner)
                k.register(key, ch.after.ephemeral_owner, ch.after.czxid)
                yield BrokerEvent(key, "registered", zxid, time, ch.after.czxid, ch.after.ephemeral_owner)
            elif ch.deleted:
                k.deregister(key, zxid)
                yield BrokerEvent(key, _ended(e, "deregistered"), zxid, time, ch.before.czxid,
                                  ch.before.ephemeral_owner, getattr(e, "alive_at", None))
        elif what == CONTROLLER:
            if ch.after is not None:
                pending_controller = ControllerEvent("elected", zxid, time, k.image.controller,
                                                     k.image.controller_epoch)
            elif ch.deleted:
                yield ControllerEvent(_ended(e, "resigned"), zxid, time, _controller_id(ch.before_data),
                                      k.image.controller_epoch)
        elif what == CONTROLLER_EPOCH and ch.after is not None:
            if pending_controller is not None:
                pending_controller = ControllerEvent("elected", zxid, time, pending_controller.controller,
                                                     k.image.controller_epoch)
        elif what == REASSIGN or what == PREFERRED:
            k.admin_changed()
        elif what == CONFIG:
            yield from _config_events(k, key, ch, e)
        elif what == LOG_DIR_EVENT and ch.created:
            event = k.image.log_dir_events.get(key)
            if event is not None and event.broker is not None:
                k.log_dir_at[event.broker] = zxid
    if pending_controller is not None:
        yield pending_controller


def _config(data: bytes | None) -> dict[str, str]:
    try:
        return znodes.decode_config(data) or {}
    except Malformed:      # the image has its finding; no key is taken for changed
        return {}


def _config_events(k: _Kafka, key: tuple[str, str], ch, e) -> list[ConfigEvent]:
    """The keys one write to ``/config/topics/<t>`` or ``/config/brokers/<b>`` changed, with the
    writing session (and the broker it belongs to)."""
    if ch.after is None and key[0] == "topics":
        return []
    before, after = _config(ch.before_data), _config(ch.after.data if ch.after is not None else None)
    session = e.client_id or None
    writer = k.sessions.get(e.client_id) if session is not None else None
    resource = "topic" if key[0] == "topics" else "broker"
    return [ConfigEvent(resource, key[1], name, before.get(name), after.get(name), e.zxid, e.time, None, writer,
                        session)
            for name in sorted(before.keys() | after.keys()) if before.get(name) != after.get(name)]


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
    t = k.image.assignments.get(topic)      # NOTE: inline (once per state write)
    a = t.partitions.get(pid) if t is not None else None
    replicas = a.replicas if a is not None else ()
    current = k.parts.get(key)
    if ch.after is None:
        if current is None:
            return None
        del k.parts[key]
        return PartitionEvent(topic, pid, zxid, time, None, current[0], None, DELETED,
                              BY_CONTROLLER if by_controller else None,
                              "the partition state znode was deleted"
                              + (" (topic queued for deletion)" if topic in k.image.deleting else ""),
                              replicas, False, writer)
    s, version = k.image.states[key]
    parsed = None if s is None else \
        (_new(LeaderIsr, (s.leader, s.leader_epoch, s.isr, s.leader_recovery_state, version)), s.controller_epoch)
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
