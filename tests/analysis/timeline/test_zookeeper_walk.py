"""The walk of ``kreplica timeline`` over a ZooKeeper SOURCE (``iter_zookeeper_timeline`` and its
``snapshot`` events), on hand-built histories (tests/builders/zk_history.py).

Rules tested, and where they come from:

* the starting tree gives one ``snapshot`` event per broker registration (at its czxid, the
  broker epoch ``KafkaZkClient.registerBroker`` returns, with its ctime and owner session), per
  ``/controller`` (czxid, ctime) and per assigned partition whose state znode is there (at its
  mzxid and mtime, its ``controller_epoch``, offline when it has no live leader); an assigned
  partition without a state znode yet (``KafkaController.initializeControllerContext`` reads
  the states of the assigned partitions; a NewPartition has none) gives no event and does not
  hide the partitions after it;
* ``--from`` zxid or time restores the tree there (``FileTxnSnapLog.restore``: a snapshot and the
  logged transactions after it, up to the last one stamped at or before the time): the history
  is quiet before it and starts ``replay``; without it the oldest snapshot starts (``snapshot``);
* ``--to`` zxid or time is inclusive, with transaction logs and with snapshots only (then each
  write is at the zxid and mtime the later snapshot holds, ``DataTree``'s ``mzxid``/``mtime``);
* a log entry failing its Adler-32 check ends the history (``FileTxnLog``'s iterator: "CRC check
  failed") and its finding is in the ``TimelineEnd``;
* Kafka's znodes in two places of the tree with no ``--chroot`` is a usage error naming where
  and the evidence; the image starts with the tree's open sessions (``SessionTrackerImpl``'s
  table, as the snapshot holds it) even before Kafka has created its znodes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, LeaderIsr, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.findings import Finding
from kreplica.formats.usage import UsageError
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import find_zk_files
from tests.builders.zk_history import ADMIN, T0, ZkHistory, state_json, topic_json


def _snap(h: ZkHistory) -> tuple[int, bytes]:
    """The tree after the last transaction so far, as a snapshot named after it."""
    h.snapshot_zxid = h.zxid
    return h.zxid, h._snapshot()


def _dir(tmp_path, snaps: dict[int, bytes], entries=None, first: int = 0) -> Path:
    d = tmp_path / "zk" / "version-2"
    d.mkdir(parents=True)
    for zxid, data in snaps.items():
        (d / f"snapshot.{zxid:x}").write_bytes(data)
    if entries is not None:
        (d / f"log.{first:x}").write_bytes(zkl.build_txnlog(entries))
    return d.parent


def _walk(d: Path, **kw) -> tuple[list, TimelineEnd]:
    items = list(iter_zookeeper_timeline(find_zk_files([d]), **kw))
    end = items.pop()
    assert isinstance(end, TimelineEnd)
    assert not [x for x in items if isinstance(x, TimelineEnd)]
    return items, end


def _li(leader: int, epoch: int, isr, version: int = 0) -> LeaderIsr:
    return LeaderIsr(leader, epoch, tuple(isr), 0, version)


# -- the starting snapshot ------------------------------------------------------------------------

def test_the_starting_snapshot_gives_whole_snapshot_events_in_zxid_order(tmp_path):
    """Brokers 1-3 and controller 1 (epoch 1); ``orders`` assigned partitions 0 and 1, only 1 has a
    state znode (0 is still a NewPartition: no event, and partition 1 after it is still read);
    ``stock-0``'s offline election found no live ISR member (leader -1, ``NoLeader``): offline."""
    h = ZkHistory()
    first = h.zxid + 1
    h.admin_create("/brokers/topics/orders", topic_json({0: [1, 2, 3], 1: [2, 3, 1]}))
    h.controller_write(1, h._create("/brokers/topics/orders/partitions", None))
    h.controller_write(1, h._create("/brokers/topics/orders/partitions/1", None))
    orders1 = h.controller_write(1, h._create("/brokers/topics/orders/partitions/1/state",
                                              state_json(2, 0, [2, 3, 1])))
    h.create_topic("stock", {0: [3]})
    stock0 = h.set_state("stock", 0, -1, 1, [3])
    start, snapshot = _snap(h)
    shrink = h.set_state("orders", 1, 2, 0, [2, 3], by_broker=2)
    d = _dir(tmp_path, {start: snapshot}, h.entries, first)
    items, end = _walk(d)
    path = str(d / "version-2" / f"snapshot.{start:x}")
    evidence = f"as {path} holds it"
    reg = {b: h.nodes[f"/brokers/ids/{b}"][1] for b in (1, 2, 3)}
    ctrl = h.nodes["/controller"][1]
    stock_created = h.nodes["/brokers/topics/stock/partitions/0/state"][1]   # the builder's mzxid is the czxid
    assert stock0 > stock_created
    assert [tuple(ev) for ev in items] == [
        *[(b, "snapshot", reg[b], T0 + reg[b], reg[b], h.session_of(b), None) for b in (1, 2, 3)],
        ("snapshot", ctrl, T0 + ctrl, 1, 1),
        ("orders", 1, orders1, T0 + orders1, 1, None, _li(2, 0, [2, 3, 1]), "snapshot", None, evidence,
         (2, 3, 1), False, None),
        ("stock", 0, stock_created, T0 + stock_created, 1, None, _li(-1, 1, [3], 1), "snapshot", None, evidence,
         (3,), True, None),
        ("orders", 1, shrink, T0 + shrink * 1000, 1, _li(2, 0, [2, 3, 1]), _li(2, 0, [2, 3], 1), "isr_shrink",
         "leader", items[-1].evidence, (2, 3, 1), False, 2),
    ]
    assert isinstance(items[0], BrokerEvent) and isinstance(items[3], ControllerEvent)
    assert end == TimelineEnd("zookeeper", str(d), start, shrink, "snapshot", [], "transaction")


# -- --from: the replayed start -------------------------------------------------------------------

def _orders() -> tuple[ZkHistory, int, int, int]:
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    created = h.nodes["/brokers/topics/orders/partitions/0/state"][1]
    shrink = h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    expand = h.set_state("orders", 0, 1, 0, [1, 2, 3], by_broker=1)
    return h, created, shrink, expand


@pytest.mark.parametrize("kw_of, at", [
    pytest.param(lambda z: {"from_zxid": z}, 0, id="from-zxid"),
    pytest.param(lambda z: {"from_zxid": z - 1}, -1, id="from-zxid-before"),
    pytest.param(lambda z: {"from_time": T0 + z * 1000}, 0, id="from-time-of-the-txn"),
    pytest.param(lambda z: {"from_time": T0 + z * 1000 - 1}, -1, id="from-time-1ms-before"),
])
def test_a_from_zxid_or_time_replays_the_tree_there_and_is_quiet_before(tmp_path, kw_of, at):
    """``FileTxnSnapLog.restore`` to the last transaction at or before the bound (a time: the last
    one stamped at or before it): the state there is the ``snapshot`` event, labelled the replay;
    nothing before it is told, the transactions after it are (counter-case: one zxid or one
    millisecond earlier, the shrink is a change of the walk)."""
    h, created, shrink, expand = _orders()
    d = h.write(tmp_path / "zk")
    items, end = _walk(d, **kw_of(shrink))
    start = shrink + at
    evidence = f"as the replay to {start:#x} holds it"
    parts = [(ev.cause, ev.position, ev.before, ev.after, ev.evidence if ev.cause == "snapshot" else None)
             for ev in items if isinstance(ev, PartitionEvent)]
    grown = ("isr_expand", expand, _li(1, 0, [1, 2], 1), _li(1, 0, [1, 2, 3], 2), None)
    if at == 0:
        assert parts == [("snapshot", shrink, None, _li(1, 0, [1, 2], 1), evidence), grown]
    else:
        assert parts == [("snapshot", created, None, _li(1, 0, [1, 2, 3]), evidence),
                         ("isr_shrink", shrink, _li(1, 0, [1, 2, 3]), _li(1, 0, [1, 2], 1), None), grown]
    assert end == TimelineEnd("zookeeper", str(d), start, expand, "replay", [], "transaction")


# -- --to with transaction logs -------------------------------------------------------------------

@pytest.mark.parametrize("kw_of, told", [
    pytest.param(lambda z: {"to_time": T0 + z * 1000}, True, id="to-time-of-the-txn"),
    pytest.param(lambda z: {"to_time": T0 + z * 1000 - 1}, False, id="to-time-1ms-before"),
])
def test_a_to_time_is_inclusive_with_logs(tmp_path, kw_of, told):
    """The history runs to the last transaction stamped at or before ``to_time``."""
    h, _created, shrink, expand = _orders()
    d = h.write(tmp_path / "zk")
    items, end = _walk(d, **kw_of(expand))
    assert [(ev.cause, ev.position) for ev in items if isinstance(ev, PartitionEvent)] == [
        ("created", shrink - 1), ("isr_shrink", shrink), *([("isr_expand", expand)] if told else [])]
    assert end == TimelineEnd("zookeeper", str(d), h.snapshot_zxid, expand if told else shrink, "snapshot", [],
                              "transaction")


def test_a_log_entry_failing_its_checksum_ends_the_history_and_is_in_its_end(tmp_path):
    """``FileTxnLog``'s iterator stops at an entry whose Adler-32 fails ("CRC check failed"):
    the walk ends at the transaction before it, the finding comes last and is the end's."""
    h, _created, shrink, expand = _orders()
    h.zxid += 1
    h.entries.append(zkl.build_entry(client_id=ADMIN, cxid=99, zxid=h.zxid, time=T0 + h.zxid * 1000,
                                     txn_type=zkl.OP_DELETE, body=zkl.DeleteTxn("/admin/delete_topics"),
                                     checksum=1))
    d = h.write(tmp_path / "zk")
    items, end = _walk(d)
    (finding,) = [x for x in items if isinstance(x, Finding)]
    assert items[-1] is finding
    assert (finding.kind, finding.details) == ("zk_checksum_mismatch", {"zxid": expand + 1})
    assert end == TimelineEnd("zookeeper", str(d), h.snapshot_zxid, expand, "snapshot", [finding], "transaction")


# -- --to with snapshots only ---------------------------------------------------------------------

@pytest.mark.parametrize("bound, at", [
    pytest.param("to_zxid", 0, id="to-zxid-of-the-state-write"),
    pytest.param("to_zxid", -1, id="to-zxid-before-it"),
    pytest.param("to_time", 0, id="to-time-of-the-state-write"),
    pytest.param("to_time", -1, id="to-time-1ms-before-it"),
])
def test_a_to_bound_is_inclusive_with_snapshots_only(tmp_path, bound, at):
    """No log: snapshot 2 shows ``stock`` created, its state znode written at zxid S (mtime T0 + S
    in these snapshots); snapshot 3 shows broker 4 registered. A bound at S keeps the state write
    and ends there (snapshot 3 is not read); one before S ends at the write before it."""
    h = ZkHistory()
    snaps = dict([_snap(h)])
    start = h.zxid
    h.create_topic("orders", {0: [1, 2, 3]})
    snaps.update([_snap(h)])
    h.create_topic("stock", {0: [2, 3]})
    written = h.nodes["/brokers/topics/stock/partitions/0/state"][1]
    assert written == h.zxid
    snaps.update([_snap(h)])
    h.register(4)
    snaps.update([_snap(h)])
    d = _dir(tmp_path, snaps)
    limit = written + at
    items, end = _walk(d, **{bound: limit if bound == "to_zxid" else T0 + limit})
    assert [(ev.topic, ev.cause) for ev in items if isinstance(ev, PartitionEvent)] == [
        ("orders", "created"), *([("stock", "created")] if at == 0 else [])]
    assert not [ev for ev in items if isinstance(ev, BrokerEvent) and ev.event != "snapshot"]
    assert end == TimelineEnd("zookeeper", str(d), start, limit, "snapshot", [], "snapshot")


# -- where Kafka's znodes are ---------------------------------------------------------------------

def _two_roots(tmp_path) -> tuple[Path, int]:
    h = ZkHistory()
    for p in ("/kafka", "/kafka/brokers", "/kafka/brokers/ids"):
        h._snap_node(p, None)
    start, snapshot = _snap(h)
    return _dir(tmp_path, {start: snapshot}), start


def test_kafka_znodes_in_two_places_need_a_chroot(tmp_path):
    """A tree holding ``/brokers/ids`` at ``/`` and under ``/kafka`` is two Kafka clusters' (or a
    migration's): without ``--chroot`` the walk refuses, saying at which zxid and in which SOURCE."""
    d, start = _two_roots(tmp_path)
    with pytest.raises(UsageError) as exc:
        _walk(d)
    assert (exc.value.reason, exc.value.path) == (
        f"the ZooKeeper tree at zxid {start:#x} holds Kafka's znodes in 2 places (/, /kafka): "
        "choose one with --chroot", str(d))


@pytest.mark.parametrize("chroot, brokers", [("", [1, 2, 3]), ("/kafka", [])])
def test_a_chroot_chooses_which_kafka_znodes_are_read(tmp_path, chroot, brokers):
    """Counter-case: with ``--chroot`` the walk reads that cluster's znodes only (``/kafka`` has
    no registration and no controller)."""
    d, start = _two_roots(tmp_path)
    items, end = _walk(d, chroot=chroot)
    assert [ev.broker for ev in items if isinstance(ev, BrokerEvent)] == brokers
    assert len([ev for ev in items if isinstance(ev, ControllerEvent)]) == (1 if brokers else 0)
    assert (end.start, end.end, end.start_from) == (start, start, "snapshot")


def test_the_image_starts_with_the_snapshots_sessions_before_kafka_has_znodes(tmp_path):
    """A snapshot taken after broker 1 opened its session but before it created Kafka's znodes:
    no chroot yet, but the image's open sessions are the snapshot's session table
    (``SessionTrackerImpl``); the registration that follows is told."""
    h = ZkHistory(brokers=(), controller=None)
    h.nodes, h.sessions, h.entries, h.zxid = {}, {}, [], 0
    h._snap_node("/zookeeper", None)
    h.txn(h.session_of(1), zkl.OP_CREATE_SESSION, zkl.CreateSessionTxn(18000), cxid=0)
    h.sessions[h.session_of(1)] = 18000
    h.entries = []
    start, snapshot = _snap(h)
    first = h.zxid + 1
    for p in ("/brokers", "/brokers/ids"):
        h.admin_create(p, None)
    path = "/brokers/ids/1"
    reg = h.txn(h.session_of(1), zkl.OP_MULTI, zkl.MultiTxn(
        (h._create(path, None, owner=h.session_of(1)), h._set(path, h._registration(1)))))
    d = _dir(tmp_path, {start: snapshot}, h.entries, first)
    seen = []
    items, end = _walk(d, watch=lambda z, img: seen.append((z, img.root, frozenset(img.sessions))))
    assert seen[0] == (start, None, frozenset({h.session_of(1)}))
    assert [tuple(ev) for ev in items] == [(1, "registered", reg, T0 + reg * 1000, reg, h.session_of(1), None)]
    assert (end.start, end.end, end.start_from) == (start, reg, "snapshot")
