"""The causes of ``kreplica timeline`` on hand-built ZooKeeper histories (tests/builders/zk_history.py), one
history per cause, each shaped the way Kafka writes (kafka-algorithms spec §4, zookeeper-formats
spec §7.3): the expected cause is worked out from who wrote what, not read off kreplica."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.zookeeper import find_zk_files, load_zk_state
from tests.builders.zk_history import SKELETON, ZkHistory


def _run(h: ZkHistory, tmp_path, **kw) -> list:
    d = h.write(tmp_path / "zk")
    assert load_zk_state([d]).findings == ()        # the history itself is well formed
    items = list(iter_zookeeper_timeline(find_zk_files([d]), **kw))
    assert isinstance(items[-1], TimelineEnd)
    assert not [x for x in items if isinstance(x, Finding)]
    return items[:-1]


def _changes(items) -> list[tuple]:
    """(cause, by, before (leader, epoch, isr), after) of each partition event after the snapshot."""
    return [(ev.cause, ev.by,
             None if ev.before is None else (ev.before.leader, ev.before.leader_epoch, ev.before.isr),
             None if ev.after is None else (ev.after.leader, ev.after.leader_epoch, ev.after.isr))
            for ev in items if isinstance(ev, PartitionEvent) and ev.cause != "snapshot"]


def test_creation_and_isr_changes_by_the_leader(tmp_path):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)          # the leader's own write (pre-AlterIsr)
    h.set_state("orders", 0, 1, 0, [1, 2, 3])                     # AlterPartition: the controller writes, no bump
    items = _run(h, tmp_path)
    assert _changes(items) == [
        ("created", "controller", None, (1, 0, (1, 2, 3))),
        ("isr_shrink", "leader", (1, 0, (1, 2, 3)), (1, 0, (1, 2))),
        ("isr_expand", "leader", (1, 0, (1, 2)), (1, 0, (1, 2, 3))),
    ]
    shrink = [ev for ev in items if isinstance(ev, PartitionEvent)][1]
    assert shrink.writer == 1 and shrink.controller_epoch == 1 and not shrink.offline


def test_unclean_election_after_the_last_isr_member_expired(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.set_state("orders", 0, 1, 0, [1], by_broker=1)
    expired = h.end_session(1, expired=True)
    h.set_state("orders", 0, -1, 1, [1], controller=3)            # the offline election fails
    h.set_state("orders", 0, 2, 2, [2], controller=3, recovering=True)
    items = _run(h, tmp_path)
    assert _changes(items)[2:] == [
        ("leader_election", "controller", (1, 0, (1,)), (-1, 1, (1,))),
        ("unclean_leader_election", "controller", (-1, 1, (1,)), (2, 2, (2,))),
    ]
    offline, unclean = [ev for ev in items if isinstance(ev, PartitionEvent)][-2:]
    assert offline.offline and not unclean.offline and unclean.unclean
    assert unclean.after.leader_recovery_state == 1
    ends = [(b.broker, b.event, b.position) for b in items if isinstance(b, BrokerEvent) and b.event != "snapshot"]
    assert ends == [(1, "session_expired", expired)]


def test_broker_failure_gives_a_clean_election_and_controller_isr_removals(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3], 1: [2, 1, 3]}, controller=3)
    h.end_session(1, expired=True)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)          # led by 1: offline election
    h.set_state("orders", 1, 2, 1, [2, 3], controller=3)          # followed by 1: OfflineReplica removal
    assert _changes(_run(h, tmp_path))[2:] == [
        ("leader_election", "controller", (1, 0, (1, 2, 3)), (2, 1, (2, 3))),
        ("isr_shrink", "controller", (2, 0, (2, 1, 3)), (2, 1, (2, 3))),
    ]


def test_controlled_shutdown_of_a_leader_and_a_follower_then_its_session_closed(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3], 1: [2, 1, 3]}, controller=3)
    # broker 1 asks the controller to shut down: it is still registered while the controller moves it
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)
    h.set_state("orders", 1, 2, 1, [2, 3], controller=3)
    closed = h.end_session(1, expired=False)
    items = _run(h, tmp_path)
    assert _changes(items)[2:] == [
        ("controlled_shutdown", "controller", (1, 0, (1, 2, 3)), (2, 1, (2, 3))),
        ("controlled_shutdown", "controller", (2, 0, (2, 1, 3)), (2, 1, (2, 3))),
    ]
    ends = [(b.broker, b.event, b.position) for b in items if isinstance(b, BrokerEvent) and b.event != "snapshot"]
    assert ends == [(1, "session_closed", closed)]


def test_a_log_directory_failure_is_not_taken_for_a_controlled_shutdown(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.admin_create("/log_dir_event_notification/log_dir_event_0000000000", b'{"version":1,"broker":1,"event":1}')
    h.admin_delete("/log_dir_event_notification/log_dir_event_0000000000", controller=3)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=3)
    (cause,) = _changes(_run(h, tmp_path))[1:]
    assert cause[0] == "unknown"


def test_reassignment_steps(tmp_path):
    # KIP-455: [1,2,3] -> [4,2,3]: RS [4,2,3,1], adding [4], removing [1]
    h = ZkHistory(brokers=(1, 2, 3, 4), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.set_topic("orders", {0: [4, 2, 3, 1]}, adding={0: [4]}, removing={0: [1]}, controller=3)
    h.set_state("orders", 0, 1, 1, [1, 2, 3], controller=3)       # A1: epoch bump, nothing else
    h.set_state("orders", 0, 1, 1, [1, 2, 3, 4], controller=3)    # 4 caught up (AlterPartition)
    h.set_state("orders", 0, 4, 2, [1, 2, 3, 4], controller=3)    # B3: leader 1 is not in the target
    h.set_state("orders", 0, 4, 3, [2, 3, 4], controller=3)       # B4: 1 leaves the ISR
    h.set_topic("orders", {0: [4, 2, 3]}, controller=3)           # B6
    assert [c[:2] for c in _changes(_run(h, tmp_path))] == [
        ("created", "controller"), ("reassignment", "controller"), ("isr_expand", "leader"),
        ("reassignment", "controller"), ("reassignment", "controller")]


def test_legacy_reassignment_znode_counts_too(tmp_path):
    # <= 2.3: /admin/reassign_partitions names the target; leader 1 is not in it
    h = ZkHistory(brokers=(1, 2, 3, 4), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    h.admin_create("/admin/reassign_partitions",
                   b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,2,3]}]}')
    h.set_state("orders", 0, 1, 0, [1, 2, 3, 4], controller=3)
    h.set_state("orders", 0, 4, 1, [1, 2, 3, 4], controller=3)
    h.set_state("orders", 0, 4, 2, [2, 3, 4], controller=3)
    assert [c[0] for c in _changes(_run(h, tmp_path))[2:]] == ["reassignment", "reassignment"]


def test_preferred_election(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3, alive={2, 3})   # 1 was down: 2 leads
    h.set_state("orders", 0, 2, 0, [2, 3, 1], by_broker=2)                 # 1 caught up
    h.admin_create("/admin/preferred_replica_election", b'{"version":1,"partitions":[{"topic":"orders","partition":0}]}')
    h.set_state("orders", 0, 1, 1, [2, 3, 1], controller=3)
    h.admin_delete("/admin/preferred_replica_election", controller=3)
    items = _run(h, tmp_path)
    assert _changes(items)[-1] == ("preferred_election", "controller", (2, 0, (2, 3, 1)), (1, 1, (2, 3, 1)))
    assert "as an admin requested" in [ev for ev in items if isinstance(ev, PartitionEvent)][-1].evidence


def test_topic_deletion(tmp_path):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2]})
    h.admin_create("/admin/delete_topics/orders", None)
    h.admin_delete("/brokers/topics/orders/partitions/0/state")
    assert _changes(_run(h, tmp_path))[-1] == ("deleted", "controller", (1, 0, (1, 2)), None)


def test_controller_changes_and_a_failed_multi_changes_nothing(tmp_path):
    h = ZkHistory(brokers=(1, 2, 3), controller=1)
    h.create_topic("orders", {0: [1, 2, 3]})
    gone = h.end_session(1, expired=True)
    elected = h.elect_controller(2)
    h.failed_write(1)
    items = _run(h, tmp_path)
    ctrl = [(c.event, c.controller, c.controller_epoch, c.position) for c in items if isinstance(c, ControllerEvent)]
    assert ctrl == [("snapshot", 1, 1, h.snapshot_zxid), ("session_expired", 1, 1, gone), ("elected", 2, 2, elected)]
    assert len(_changes(items)) == 1


def test_snapshot_events_and_the_from_to_window(tmp_path):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    shrink = h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    expand = h.set_state("orders", 0, 1, 0, [1, 2, 3], by_broker=1)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=1)
    # from the shrink on: the state there is the "snapshot" event (at the zxid that wrote it)
    items = _run(h, tmp_path, from_zxid=shrink, to_zxid=expand)
    parts = [ev for ev in items if isinstance(ev, PartitionEvent)]
    assert [(ev.cause, ev.position, ev.after.isr) for ev in parts] == [
        ("snapshot", shrink, (1, 2)), ("isr_expand", expand, (1, 2, 3))]
    assert parts[0].before is None


@pytest.mark.parametrize("chroot", [pytest.param("", id="no-chroot")])
def test_writer_is_the_broker_whose_session_wrote(tmp_path, chroot):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    h.set_state("orders", 0, 1, 0, [1, 3], by_broker=1)
    parts = [ev for ev in _run(h, tmp_path, chroot=chroot) if isinstance(ev, PartitionEvent)]
    assert [ev.writer for ev in parts] == [1, 1]


def test_a_damaged_oldest_snapshot_is_passed_over_for_the_next(tmp_path):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    d = h.write(tmp_path / "zk")
    (d / "version-2" / "snapshot.1").write_bytes(b"ZKSN\x00\x00\x00\x02garbage")
    items = list(iter_zookeeper_timeline(find_zk_files([d])))
    rejected = [x for x in items if isinstance(x, Finding)]
    assert [f.kind for f in rejected] == ["zk_snapshot_rejected"] and rejected[0].path.endswith("snapshot.1")
    assert [ev.cause for ev in items if isinstance(ev, PartitionEvent)] == ["created"]


# -- histories whose logs begin before the oldest snapshot ------------------------------------------

def _fresh(first: int, *, purged_before: int = 0) -> ZkHistory:
    """An ensemble's life logged from zxid ``first``: Kafka's skeleton, three brokers, the
    controller and a topic are all created by logged transactions. With ``purged_before``, that
    many skeleton nodes were created earlier (zxids from 1) and their log is gone."""
    h = ZkHistory(brokers=(), controller=None)
    h.nodes, h.sessions, h.entries, h.zxid = {}, {}, [], 0
    skeleton = [*SKELETON, "/controller_epoch"]
    for p in skeleton[:purged_before]:
        h.admin_create(p, b"0" if p == "/controller_epoch" else None)
    h.entries, h.zxid = [], max(h.zxid, first - 1)
    h.first = first
    for p in skeleton[purged_before:]:
        h.admin_create(p, b"0" if p == "/controller_epoch" else None)
    for b in (1, 2, 3):
        h.register(b)
    h.elect_controller(1)
    h.create_topic("orders", {0: [1, 2, 3]})
    return h


def _timeline(h: ZkHistory, tmp_path, snapshot: bytes | None = None) -> list:
    d = tmp_path / "zk" / "version-2"
    d.mkdir(parents=True)
    (d / f"log.{h.first:x}").write_bytes(zkl.build_txnlog(h.entries))
    if snapshot is not None:
        (d / f"snapshot.{h.snapshot_zxid:x}").write_bytes(snapshot)
    return list(iter_zookeeper_timeline(find_zk_files([d.parent])))


def _snapshot_now(h: ZkHistory) -> bytes:
    """The state after the last transaction so far, as a (non-fuzzy) snapshot named after it."""
    h.snapshot_zxid = h.zxid
    return h._snapshot()


@pytest.mark.parametrize("first", [pytest.param(0x1, id="standalone-zxid-1"),
                                   pytest.param(0x100000001, id="quorum-epoch-1")])
@pytest.mark.parametrize("with_snapshot", [pytest.param(False, id="logs-only"),
                                           pytest.param(True, id="snapshot-purged-to-a-later-one")])
def test_logs_from_the_ensembles_first_transaction_are_told_from_the_start(tmp_path, first, with_snapshot):
    """A fresh data directory's snapshot.0 is the empty tree ZooKeeper starts with; when it is
    gone (purged, or only the logs were copied) but the logs still begin at the first zxid an
    ensemble logs, the history starts from that empty tree, as FileTxnSnapLog restores it from
    snapshot.0 (or from none, with zookeeper.snapshot.trust.empty): every transaction is told."""
    h = _fresh(first)
    snap = _snapshot_now(h) if with_snapshot else None
    shrink = h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    items = _timeline(h, tmp_path, snap)
    end = items[-1]
    assert isinstance(end, TimelineEnd) and (end.start, end.start_from, end.end) == (0, "empty", shrink)
    assert not [x for x in items if isinstance(x, Finding)]
    assert [(ev.broker, ev.event) for ev in items if isinstance(ev, BrokerEvent)] == [
        (1, "registered"), (2, "registered"), (3, "registered")]
    assert [(ev.event, ev.controller, ev.controller_epoch) for ev in items
            if isinstance(ev, ControllerEvent)] == [("elected", 1, 1)]
    assert _changes(items) == [("created", "controller", None, (1, 0, (1, 2, 3))),
                               ("isr_shrink", "leader", (1, 0, (1, 2, 3)), (1, 0, (1, 2)))]
    assert not [ev for ev in items if getattr(ev, "event", getattr(ev, "cause", None)) == "snapshot"]


def test_logs_that_do_not_begin_the_ensemble_start_at_the_snapshot(tmp_path):
    """Epoch 1's first zxid, but the snapshot holds nodes created before it (a standalone server's
    epoch 0, its logs purged): the logs are not the ensemble's whole life, the snapshot starts."""
    h = _fresh(0x100000001, purged_before=3)
    snap = _snapshot_now(h)
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    items = _timeline(h, tmp_path, snap)
    assert (items[-1].start, items[-1].start_from) == (h.snapshot_zxid, "snapshot")
    assert [ev.cause for ev in items if isinstance(ev, PartitionEvent)] == ["snapshot", "isr_shrink"]


def test_logs_from_a_later_zxid_and_no_snapshot_have_no_start(tmp_path):
    h = _fresh(0x200000001)
    with pytest.raises(FormatError, match="no ZooKeeper snapshot"):
        _timeline(h, tmp_path)


def test_snapshot_events_are_the_assigned_partitions(tmp_path):
    """``KafkaController.initializeControllerContext``: the partitions of a topic are its
    assignment's; a state znode under ``partitions/`` that the assignment does not list is not
    read, so it is no ``snapshot`` event (counter-case: the assigned partition is one), as
    ``cluster-state`` leaves it out."""
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    h.controller_write(1, h._create("/brokers/topics/orders/partitions/5", None))
    last = h.controller_write(1, h._create("/brokers/topics/orders/partitions/5/state", b'{"controller_epoch":1,'
                                           b'"leader":2,"version":1,"leader_epoch":0,"isr":[2]}'))
    items = _run(h, tmp_path, from_zxid=last)
    assert [(ev.topic, ev.partition) for ev in items if isinstance(ev, PartitionEvent)] == [("orders", 0)]


@pytest.mark.parametrize("expires, offline", [(True, True), (False, False)])
def test_a_leader_whose_registration_is_gone_is_offline(tmp_path, expires, offline):
    """Offline is no leader or a leader that is not a live broker (``is_offline``; Kafka's
    controller takes a broker for dead once ``/brokers/ids/N`` is gone, ``KafkaController.
    processBrokerChange``): a state write that still names broker 1 as leader after its session
    expired describes an offline partition; the same write with broker 1 registered does not."""
    h = ZkHistory(brokers=(1, 2, 3), controller=3)
    h.create_topic("orders", {0: [1, 2, 3]}, controller=3)
    if expires:
        h.end_session(1, expired=True)
    h.set_state("orders", 0, 1, 1, [1, 2], controller=3)
    last = [ev for ev in _run(h, tmp_path) if isinstance(ev, PartitionEvent)][-1]
    assert (last.after.leader, last.after.isr, last.offline) == (1, (1, 2), offline)
