"""The per-transaction fold of ``kreplica timeline`` on ZooKeeper histories (tests/builders/zk_history.py):
the fields of broker, controller and partition events, who counts as the controller, and the context a
leader change is classified in. Expected values come from how Kafka writes its znodes
(``KafkaZkClient``, ``KafkaController``, ``PartitionStateMachine``, ``ReplicaStateMachine``) and
ZooKeeper's ``closeSession`` (``SessionTrackerImpl``: cxid 0 is the server expiring the session)."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import find_zk_files
from tests.builders.zk_history import ADMIN, T0, ZkHistory

STATE = "/brokers/topics/orders/partitions/0/state"


def _items(h: ZkHistory, tmp_path) -> list:
    d = h.write(tmp_path / "zk")
    items = list(iter_zookeeper_timeline(find_zk_files([d])))
    assert isinstance(items[-1], TimelineEnd)
    return items[:-1]


def _parts(items) -> list[PartitionEvent]:
    return [ev for ev in items if isinstance(ev, PartitionEvent) and ev.cause != "snapshot"]


def _multi(h: ZkHistory, session: int, *ops) -> int:
    return h.txn(session, zkl.OP_MULTI, zkl.MultiTxn(ops))


# -- _partition_change: the replicas and offline of each event ----------------------------------------

def test_every_partition_event_carries_the_assignment_and_a_deleted_state_is_not_offline(tmp_path):
    """The replicas are the topic znode's assignment (``/brokers/topics/T``, what
    ``KafkaZkClient.getReplicaAssignmentForTopics`` reads); a deleted state znode
    (``TopicDeletionManager``) has no leader to be offline with: ``offline`` is ``False``."""
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    h.set_state("orders", 0, 2, 1, [2], controller=1)
    h.admin_delete(STATE)
    parts = _parts(_items(h, tmp_path))
    assert [(ev.cause, ev.replicas, ev.offline) for ev in parts] == [
        ("created", (1, 2, 3), False), ("isr_shrink", (1, 2, 3), False),
        ("controlled_shutdown", (1, 2, 3), False), ("deleted", (1, 2, 3), False)]
    assert parts[-1].offline is False


@pytest.mark.parametrize("topic_znode", [pytest.param(True, id="partition-not-assigned"),
                                         pytest.param(False, id="topic-znode-without-data")])
def test_a_state_outside_the_assignment_has_no_replicas(tmp_path, topic_znode):
    """A state znode whose partition the topic znode does not list (or whose topic znode holds no
    assignment it can read):
    no assignment to read, ``replicas`` ``()``; its leader changes are classified without one
    (counter-case: the assigned partition above)."""
    h = ZkHistory()
    if topic_znode:
        h.create_topic("orders", {1: [1, 2, 3]})
    else:
        h.controller_write(1, h._create("/brokers/topics/orders", None))
        h.controller_write(1, h._create("/brokers/topics/orders/partitions", None))
    h.controller_write(1, h._create("/brokers/topics/orders/partitions/0", None))
    h.controller_write(1, h._create(STATE, b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,'
                                           b'"isr":[1,2]}'))
    h.set_state("orders", 0, 1, 1, [1, 2], controller=1)     # epoch bump: the full context is built
    h.set_state("orders", 0, 2, 2, [2], controller=1)
    parts = [ev for ev in _parts(_items(h, tmp_path)) if ev.partition == 0]
    assert [(ev.cause, ev.replicas) for ev in parts] == [
        ("created", ()), ("unknown", ()), ("controlled_shutdown", ())]


# -- _Kafka.context ---------------------------------------------------------------------------------

@pytest.mark.parametrize("adding, removing, cause", [
    ({0: [4]}, None, "reassignment"),
    (None, {0: [3]}, "reassignment"),
    (None, None, "unknown"),
])
def test_an_epoch_bump_during_a_reassignment(tmp_path, adding, removing, cause):
    """KIP-455 (``KafkaController.onPartitionReassignment``): the controller bumps the leader epoch
    with the leader and ISR unchanged while ``adding_replicas`` or ``removing_replicas`` is set in
    the topic znode; either alone is a reassignment in progress (counter-case: neither)."""
    h = ZkHistory(brokers=(1, 2, 3, 4), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.set_topic("orders", {0: [1, 2, 3, 4]}, adding=adding, removing=removing, controller=3)
    h.set_state("orders", 0, 1, 1, [1, 2, 3], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))] == ["created", cause]


@pytest.mark.parametrize("queued, cause", [(True, "unknown"), (False, "controlled_shutdown")])
def test_a_leader_taken_out_while_the_topic_is_queued_for_deletion(tmp_path, queued, cause):
    """``TopicDeletionManager.onPartitionDeletion`` moves the replicas of a topic under
    ``/admin/delete_topics`` offline (``ReplicaStateMachine`` OfflineReplica): a live leader taken
    out of the ISR then is no controlled shutdown (counter-case: the topic is not queued)."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    if queued:
        h.admin_create("/admin/delete_topics/orders", None)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))] == ["created", cause]


@pytest.mark.parametrize("reregistered_before_write, cause", [
    (True, "leader_election"), (False, "leader_election")])
def test_a_leader_that_lost_its_registration_since_the_last_change(tmp_path, reregistered_before_write, cause):
    """``KafkaController.onBrokerFailure``: a leader whose ``/brokers/ids/N`` went since the
    partition's last change had its leader elected away, even when the broker is registered again
    (a new session) by the time the controller writes the state."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.end_session(1, expired=True)
    if reregistered_before_write:
        h.register(1, incarnation=1)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)
    (ev,) = _parts(_items(h, tmp_path))[1:]
    assert (ev.cause, ev.evidence) == (cause, "leader 1 lost its registration; 2 was in the ISR [1,2,3]")


def test_a_broker_gone_before_the_last_change_is_not_gone_since(tmp_path):
    """``gone_since`` is the brokers deregistered after the partition's last change: broker 1 went,
    the partition changed (ISR shrink), broker 1 came back; a later move of leadership off the live
    broker 1 is a controlled shutdown, not a failure."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [2, 1, 3]}, controller=3)
    h.set_state("orders", 0, 1, 1, [1, 2, 3], controller=3)
    h.end_session(2, expired=True)
    h.set_state("orders", 0, 1, 2, [1, 3], controller=3)
    h.register(2, incarnation=1)
    h.set_state("orders", 0, 3, 3, [3], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))][-1] == "controlled_shutdown"


# -- _guarded: a controller's write is a multi checking /controller_epoch ----------------------------

def _created_by(h: ZkHistory, tmp_path, *first) -> str | None:
    h.controller_write(1, h._create("/brokers/topics/orders/partitions/0", None))
    _multi(h, h.session_of(1), *first, h._create(STATE, b'{"controller_epoch":1,"leader":1,"version":1,'
                                                        b'"leader_epoch":0,"isr":[1,2]}'))
    (ev,) = [ev for ev in _parts(_items(h, tmp_path)) if ev.partition == 0]
    return ev.by


def _topic(h: ZkHistory) -> None:
    h.txn(ADMIN, zkl.OP_CREATE, h._create("/brokers/topics/orders", b'{"version":2,"partitions":{"0":[1,2]}}').body)
    h.controller_write(1, h._create("/brokers/topics/orders/partitions", None))


@pytest.mark.parametrize("op, by", [
    pytest.param("check-epoch", "controller", id="check-controller_epoch"),
    pytest.param("check-other", None, id="check-another-znode"),
    pytest.param("set-epoch", None, id="setData-controller_epoch-unchecked"),
])
def test_only_a_check_of_controller_epoch_makes_a_controller_write(tmp_path, op, by):
    """``KafkaZkClient.retryRequestsUntilConnected`` wraps every controller write in
    ``multi[check /controller_epoch (zkVersion), op]``; a check of another znode, or a write of
    ``/controller_epoch`` that is not a check, does not make the multi a controller's."""
    h = ZkHistory()
    _topic(h)
    first = {"check-epoch": zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/controller_epoch", 1), b""),
             "check-other": zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/brokers/ids/1", 1), b""),
             "set-epoch": None}[op]
    if first is None:
        first = h._set("/controller_epoch", b"1")
    assert _created_by(h, tmp_path, first) == by


def test_a_change_after_a_non_kafka_znode_in_the_same_multi_is_read(tmp_path):
    """A multi whose first sub-transaction writes a znode Kafka does not read still has its state
    write read (each change is looked at, none ends the transaction)."""
    h = ZkHistory()
    _topic(h)
    assert _created_by(h, tmp_path, zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn("/other", None, (), False, -1), b""),
                       zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/controller_epoch", 1), b"")) == "controller"


# -- _step_events: broker and controller events ------------------------------------------------------

def test_broker_registration_and_its_end_carry_epoch_session_and_time(tmp_path):
    """``KafkaZkClient.registerBroker``: ``/brokers/ids/N`` is an ephemeral of the broker's
    session and its czxid is the broker epoch; the end (``closeSession``, cxid 0: expired) carries
    the registration it ended. The new broker counts as live (it leads, not offline) and its
    session's writes are its own (``writer``)."""
    h = ZkHistory(brokers=(1, 2, 3), controller=1)
    reg = h.register(4)
    h.create_topic("orders", {0: [4, 1]})
    shrink = h.set_state("orders", 0, 4, 0, [4], by_broker=4)
    gone = h.end_session(4, expired=True)
    items = _items(h, tmp_path)
    brokers = [tuple(ev) for ev in items if isinstance(ev, BrokerEvent) and ev.event != "snapshot"]
    s = h.session_of(4)
    assert brokers == [(4, "registered", reg, T0 + reg * 1000, reg, s, None),
                       (4, "session_expired", gone, T0 + gone * 1000, reg, s, None)]
    parts = _parts(items)
    assert [(ev.cause, ev.offline, ev.writer, ev.position) for ev in parts] == [
        ("created", False, 1, parts[0].position), ("isr_shrink", False, 4, shrink)]


def test_an_explicitly_deleted_registration_is_deregistered_and_its_session_writes_as_nobody(tmp_path):
    """A ``delete /brokers/ids/N`` (not a ``closeSession``) is ``deregistered``; the session that
    held the registration is no longer a broker's, so its later writes have no ``writer``
    (counter-case: its write before the delete is broker 1's)."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    czxid = h.nodes["/brokers/ids/1"][1]
    gone = h.txn(ADMIN, zkl.OP_DELETE, h._delete("/brokers/ids/1").body)
    h.set_state("orders", 0, 1, 0, [1], by_broker=1)
    items = _items(h, tmp_path)
    (end,) = [tuple(ev) for ev in items if isinstance(ev, BrokerEvent) and ev.event != "snapshot"]
    assert end == (1, "deregistered", gone, T0 + gone * 1000, czxid, h.session_of(1), None)
    assert [ev.writer for ev in _parts(items)] == [3, 1, None]


def test_a_deleted_registration_the_snapshot_could_not_read(tmp_path):
    """A ``/brokers/ids/N`` whose data is no registration is not taken for a broker; its deletion
    is still reported, with no session known beyond the znode's."""
    h = ZkHistory(brokers=(1, 2, 3), controller=1)
    s = h.session_of(4)
    h.sessions[s] = 18000
    h._snap_node("/brokers/ids/4", b"not json", owner=s)
    h.snapshot_zxid = h.zxid
    h._start_snapshot = h._snapshot()
    czxid = h.zxid
    gone = h.end_session(4, expired=False)
    ends = [tuple(ev) for ev in _items(h, tmp_path) if isinstance(ev, BrokerEvent) and ev.event != "snapshot"]
    assert ends == [(4, "session_closed", gone, T0 + gone * 1000, czxid, s, None)]


def test_a_controller_elected_without_an_epoch_write_in_the_same_transaction(tmp_path):
    """Before Kafka 2.x's ``registerControllerAndIncrementControllerEpoch`` multi, the controller
    created ``/controller`` and bumped ``/controller_epoch`` in separate writes: the ``elected``
    event of the create alone carries its zxid, time and the epoch then held."""
    h = ZkHistory(brokers=(1, 2, 3), controller=None)
    z = h.txn(h.session_of(2), zkl.OP_CREATE,
              h._create("/controller", h._controller(2), owner=h.session_of(2)).body)
    ctrl = [tuple(ev) for ev in _items(h, tmp_path) if isinstance(ev, ControllerEvent)]
    assert ctrl == [("elected", z, T0 + z * 1000, 2, 1)]


@pytest.mark.parametrize("data, cause", [
    pytest.param(b'{"version":1,"broker":1,"event":1}', "unknown", id="log-dir-failure-of-the-leader"),
    pytest.param(b"not json", "controlled_shutdown", id="unreadable-notification"),
])
def test_a_log_dir_notification_counts_when_created(tmp_path, data, cause):
    """``LogDirFailureHandler``: a broker reports a failed log directory by creating a sequential
    ``/log_dir_event_notification/log_dir_event_N``; one whose data names no broker reports
    nothing (counter-case: broker 1's)."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.admin_create("/log_dir_event_notification/log_dir_event_0000000000", data)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))] == ["created", cause]


def test_a_log_dir_notification_rewritten_after_the_last_change_is_no_new_failure(tmp_path):
    """Only the creation of a notification reports a failure (the controller reads the children
    of ``/log_dir_event_notification``): one created before the partition's last change and
    written again after it does not make a later leader move a log-directory failure."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    path = "/log_dir_event_notification/log_dir_event_0000000000"
    h.admin_create(path, b'{"version":1,"broker":1,"event":1}')
    h.set_state("orders", 0, 1, 1, [1, 2, 3], controller=3)
    h.txn(ADMIN, zkl.OP_SET_DATA, h._set(path, b'{"version":1,"broker":1,"event":1}').body)
    h.set_state("orders", 0, 2, 2, [2, 3], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))][-1] == "controlled_shutdown"


# -- _snapshot_steps: snapshots only ---------------------------------------------------------------

def _snapshots_only(tmp_path, snaps: dict[int, bytes]):
    d = tmp_path / "zk" / "version-2"
    d.mkdir(parents=True)
    for zxid, data in snaps.items():
        (d / f"snapshot.{zxid:x}").write_bytes(data)
    return list(iter_zookeeper_timeline(find_zk_files([d.parent])))


def test_snapshot_steps_stand_for_the_zxid_that_wrote_each_znode(tmp_path):
    """No transaction log: each write is at the zxid and time (mtime) the later snapshot holds;
    an unreadable state znode is a finding at that snapshot (position 0: no log entry)."""
    h = ZkHistory()
    first = h._start_snapshot
    start = h.snapshot_zxid
    h.create_topic("orders", {0: [1, 2, 3], 1: [2, 3, 1]})
    h.nodes["/brokers/topics/orders/partitions/1/state"][0] = b"not json"
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    wrote = h.nodes[STATE][1]          # the builder's snapshot gives each znode mzxid = czxid, mtime T0 + it
    second = h.zxid
    snap = {start: first, second: _snapshot_now_(h)}
    items = _snapshots_only(tmp_path, snap)
    findings = [f for f in items if isinstance(f, Finding)]
    assert [(f.kind, f.path.rsplit("/", 1)[-1], f.position) for f in findings] == [
        ("kafka_invalid_znode", f"snapshot.{second:x}", 0)]
    (ev,) = [ev for ev in items if isinstance(ev, PartitionEvent) and ev.cause != "snapshot"]
    assert (ev.cause, ev.position, ev.time, ev.after.isr) == ("created", wrote, T0 + wrote, (1, 2))


def _snapshot_now_(h: ZkHistory) -> bytes:
    h.snapshot_zxid = h.zxid
    return h._snapshot()


def test_a_damaged_snapshot_between_two_good_ones_does_not_end_the_history(tmp_path):
    """A snapshot that cannot be read is reported and passed over; the snapshots after it still
    give their changes."""
    h = ZkHistory()
    snaps = {h.snapshot_zxid: h._start_snapshot}
    h.create_topic("orders", {0: [1, 2, 3]})
    snaps[h.zxid] = b"ZKSN\x00\x00\x00\x02garbage"
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    snaps[h.zxid] = _snapshot_now_(h)
    items = _snapshots_only(tmp_path, snaps)
    assert [f.kind for f in items if isinstance(f, Finding)] == ["zk_snapshot_rejected"]
    assert [(ev.cause, ev.position) for ev in items if isinstance(ev, PartitionEvent)] == [("created", h.nodes[STATE][1])]


@pytest.mark.parametrize("first", ["registration-deleted", "log-dir-failure"])
def test_what_happened_in_the_transaction_of_the_last_change_is_not_since_it(tmp_path, first):
    """``gone_since`` and ``log_dir_failed`` are what happened *after* the partition's last change:
    a multi that first deletes broker 1's registration (or reports its failed log directory) and
    then writes the state makes that write the last change; broker 1, registered again, later
    losing the leadership to the controller is a controlled shutdown, as for any live leader
    taken out of the ISR (``KafkaController.doControlledShutdown``)."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    if first == "registration-deleted":
        op = h._delete("/brokers/ids/1")
    else:
        op = h._create("/log_dir_event_notification/log_dir_event_0000000000", b'{"version":1,"broker":1,"event":1}')
    path = STATE
    data = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    _multi(h, ADMIN, op, h._set(path, data))
    if first == "registration-deleted":
        h.register(1, incarnation=1)
    h.set_state("orders", 0, 2, 1, [2], controller=3)
    assert [ev.cause for ev in _parts(_items(h, tmp_path))] == ["created", "isr_shrink", "controlled_shutdown"]


def test_a_registration_owned_by_no_session_names_no_writer() -> None:
    """``/brokers/ids/N`` with ephemeralOwner 0 (persistent: Kafka never writes one so,
    ``KafkaZkClient.registerBroker`` creates it ephemeral) owns no session, so the writes of a
    snapshot-only history (client 0) are not attributed to broker N (counter-case: an ephemeral
    registration's session names its broker)."""
    from kreplica.analysis.timeline.zookeeper import _Kafka
    from kreplica.model.cluster.zookeeper_image import ZkImage

    k = _Kafka(ZkImage(None))
    k.register(7, 0, 0x10)
    assert k.sessions.get(0) is None and 7 in k.brokers
    k.register(8, 0x55, 0x11)
    assert k.sessions[0x55] == 8


def test_a_leader_gone_between_two_snapshots_is_offline_since_after_the_first(tmp_path):
    """Snapshots only: broker 1 leads orders-0 in the first snapshot and is absent from the second
    (its session ended in between, unrecorded): ``gone``, placed at the second, and orders-0,
    whose state still names it, offline since after the first snapshot, where it was last seen."""
    from kreplica.analysis.timeline.events import TimelineSummary

    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    first_at = h.zxid
    snaps = {first_at: _snapshot_now_(h)}
    h.end_session(1, expired=True)
    snaps[h.zxid] = _snapshot_now_(h)
    items = _snapshots_only(tmp_path, snaps)
    (gone,) = [ev for ev in items if isinstance(ev, BrokerEvent) and ev.event == "gone"]
    assert (gone.broker, gone.alive_at) == (1, first_at)
    summary = TimelineSummary()
    for ev in items:
        if isinstance(ev, (BrokerEvent, PartitionEvent)):
            summary.feed(ev)
    assert [(p.topic, p.partition, p.start, p.since_after) for p in summary.periods()] == [
        ("orders", 0, first_at, True)]
