"""The KRaft timeline's fold (``kreplica/analysis/timeline/kraft.py``), function by function, with
whole expected values: the events :func:`apply_record` makes of each record kind (and what it
keeps, ``gone_at``/``changed_at``, ``quiet`` or not), the brokers a record fences or unregisters
(:func:`_leaving_broker`) and the run of change records each closes in its batch
(:func:`_batch_with_leaving`, :func:`_with_leaving`), the ``snapshot`` events of a start or a
``--from`` point, the bridge of a gap by a later snapshot (:func:`_bridge`), and the window of
:func:`iter_kraft_timeline` (``from_offset``/``from_time``/``to_offset``/``to_time``) on both sides of
each boundary; each rule beside the near-identical input where it does not apply.

Kafka rules encoded (``metadata/src/main/java/org/apache/kafka``):
``controller/ReplicationControlManager.handleBrokerFenced`` / ``handleBrokerUnregistered`` append
``generateLeaderAndIsrUpdates``' ``PartitionChangeRecord``s first, then ``FenceBrokerRecord`` (or,
MV 3.3+, ``BrokerRegistrationChangeRecord`` with ``fenced = FENCE (1)``) or
``UnregisterBrokerRecord``; ``handleBrokerUnfenced`` and ``handleBrokerInControlledShutdown`` write
their ``BrokerRegistrationChangeRecord`` (``UNFENCE (-1)``, ``IN_CONTROLLED_SHUTDOWN (1)``) *before*
their changes; ``handleDirectoriesOffline`` writes its changes, then a ``BrokerRegistrationChangeRecord``
with the remaining ``log_dirs``. ``image/ClusterDelta.replay`` and ``metadata/BrokerRegistration.cloneWith``
(fencing keeps ``in_controlled_shutdown``), ``metadata/PartitionRegistration.merge`` (a change naming a
leader bumps the leader epoch, the partition epoch always moves; no leader field, no leader epoch bump).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.timeline import kraft as timeline
from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, LeaderIsr, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import find_kraft_files
from kreplica.model.cluster.kraft_history import KraftStart
from tests.analysis.timeline.test_kraft_gap import SNAPSHOT_16
from tests.builders.kraft_metadata import (
    CLUSTER,
    ORDERS,
    PAYMENTS,
    SNAPSHOT_13,
    broker_registration,
    history_batches,
    write_metadata_dir,
)

T0 = 1_700_000_000_000
NOBODY: frozenset[int] = frozenset()


# ---- builders ------------------------------------------------------------------------------------

def _md(name: str, data: dict, offset: int = 0, *, version: int = 0, pos: int = 0, path: str = "seg",
        epoch: int = 1) -> kraft.MetadataRecord:
    """One metadata record as the reader yields it: ``data`` encoded and decoded by kreplica's
    codec (so the defaults of the fields left out are filled in), stamped ``T0 + offset``."""
    api_key, version, name, full, raw = kraft.parse_metadata_value(kraft.build_metadata_value(name, version, data))
    return kraft.MetadataRecord(path, offset, pos, epoch, T0 + offset, api_key, version, name, full, raw)


def _leader_change(leader: int, offset: int, epoch: int, control_type: int = kraft.LEADER_CHANGE):
    return kraft.ControlRecord("seg", offset, 0, epoch, T0 + offset, control_type, "LeaderChangeMessage",
                               {"version": 0, "leader_id": leader, "voters": (), "granting_voters": ()})


def _ctl(leader: int, epoch: int = 1):
    return ("ctl", kraft.LEADER_CHANGE, {"version": 0, "leader_id": leader, "voters": ({"voter_id": leader},),
                                         "granting_voters": ()}, epoch)


def _register(broker: int, epoch: int, *, fenced: bool = True):
    return ("RegisterBrokerRecord", 3, dict(broker_registration(broker, None, epoch)[2], fenced=fenced))


def _partition(pid: int, replicas: tuple, leader: int, isr: tuple | None = None, *, topic: str = ORDERS,
               leader_epoch: int = 0):
    return ("PartitionRecord", 0, {"partition_id": pid, "topic_id": topic, "replicas": replicas,
                                   "isr": replicas if isr is None else isr, "leader": leader,
                                   "leader_epoch": leader_epoch, "partition_epoch": 0})


def _change(pid: int, **fields):
    return ("PartitionChangeRecord", 0, dict({"partition_id": pid, "topic_id": ORDERS}, **fields))


def _fence(broker: int):
    return ("FenceBrokerRecord", 0, {"id": broker, "epoch": 9 + broker})


def _unfence(broker: int):
    return ("UnfenceBrokerRecord", 0, {"id": broker, "epoch": 9 + broker})


def _brcr(broker: int, *, fenced: int = 0, shutdown: int = 0):
    return ("BrokerRegistrationChangeRecord", 1, {"broker_id": broker, "broker_epoch": 9 + broker,
                                                  "fenced": fenced, "in_controlled_shutdown": shutdown})


CONFIG = ("ConfigRecord", 0, {"resource_type": kraft.RESOURCE_TOPIC, "resource_name": "orders",
                              "name": "retention.ms", "value": "1"})

#: offsets 0..10: controller 3000 (epoch 1); brokers 1, 2, 3 registered (epochs 10, 11, 12) and
#: unfenced; orders-0 on (1,2,3) led by 1, orders-1 on (2,3,1) led by 2, orders-2 on (3,1,2)
#: without a leader, its ISR [3] (what PartitionChangeBuilder leaves when the last member goes)
SETUP = [
    [_ctl(3000)],                                                                    # 0
    [_register(1, 10), _register(2, 11), _register(3, 12)],                          # 1-3
    [_unfence(1), _unfence(2), _unfence(3)],                                         # 4-6
    [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),                     # 7
     _partition(0, (1, 2, 3), 1), _partition(1, (2, 3, 1), 2),                       # 8-9
     _partition(2, (3, 1, 2), -1, (3,))],                                            # 10
]


def _write_log(root: Path, batches: list, *, base: int = 0) -> Path:
    """``__cluster_metadata-0`` with one segment: ``batches`` at consecutive offsets from ``base``,
    each batch stamped ``T0 +`` its base offset."""
    d = root / "__cluster_metadata-0"
    d.mkdir(exist_ok=True)
    out, offset = [], base
    for records in batches:
        if records[0][0] == "ctl":
            out.append(kraft.build_control_batch([(r[1], r[2]) for r in records], base_offset=offset,
                                                 epoch=records[0][3], timestamp=T0 + offset))
        else:
            out.append(kraft.build_metadata_batch(records, base_offset=offset, epoch=1, timestamp=T0 + offset))
        offset += len(records)
    (d / f"{base:020d}.log").write_bytes(b"".join(out))
    return d


def _timeline(root: Path, **bounds) -> list:
    items = list(iter_kraft_timeline(find_kraft_files([root]), **bounds))
    assert isinstance(items[-1], TimelineEnd)
    return items


def _changes(items: list, first: int = 11) -> list:
    """``(position, partition, cause, by, evidence)`` of the partition events from ``first`` on."""
    return [(e.position, e.partition, e.cause, e.by, e.evidence) for e in items
            if isinstance(e, PartitionEvent) and e.position >= first]


def _fold(records) -> timeline.ImageFold:
    fold = timeline.ImageFold()
    for r in records:
        list(timeline.apply_record(fold, r, True))
    return fold


def _state(leader: int, leader_epoch: int, isr: tuple, partition_epoch: int) -> LeaderIsr:
    return LeaderIsr(leader, leader_epoch, isr, 0, partition_epoch)


# ---- _leaving_broker ---------------------------------------------------------------------------

@pytest.mark.parametrize("record,broker", [
    # handleBrokerFenced before MV 3.3 / from MV 3.3 on; handleBrokerUnregistered
    pytest.param(_md("FenceBrokerRecord", {"id": 3, "epoch": 12}), 3, id="fence-record"),
    pytest.param(_md("BrokerRegistrationChangeRecord", {"broker_id": 4, "broker_epoch": 1, "fenced": 1}), 4,
                 id="registration-change-fences"),
    pytest.param(_md("BrokerRegistrationChangeRecord", {"broker_id": 4, "broker_epoch": 1, "fenced": 1,
                                                        "in_controlled_shutdown": 1}, version=1), 4,
                 id="registration-change-fences-in-shutdown"),
    pytest.param(_md("UnregisterBrokerRecord", {"broker_id": 5, "broker_epoch": 1}), 5, id="unregister"),
    # handleBrokerUnfenced, handleBrokerInControlledShutdown: written before their changes
    pytest.param(_md("BrokerRegistrationChangeRecord", {"broker_id": 4, "broker_epoch": 1, "fenced": -1}), None,
                 id="registration-change-unfences"),
    pytest.param(_md("BrokerRegistrationChangeRecord", {"broker_id": 4, "broker_epoch": 1,
                                                        "in_controlled_shutdown": 1}, version=1), None,
                 id="registration-change-shutting-down"),
    pytest.param(_md("BrokerRegistrationChangeRecord", {"broker_id": 4, "broker_epoch": 1}), None,
                 id="registration-change-no-fencing-change"),
    pytest.param(_md("UnfenceBrokerRecord", {"id": 3, "epoch": 12}), None, id="unfence-record"),
    pytest.param(_md(*_register(3, 12)[0::2], version=3), None, id="register"),
    pytest.param(_md(*_change(0, isr=(1,))[0::2]), None, id="partition-change"),
    pytest.param(_leader_change(3, 0, 1), None, id="control-record"),
])
def test_leaving_broker_of_each_record(record, broker) -> None:
    assert timeline._leaving_broker(record) == broker


# ---- _batch_with_leaving, _with_leaving ------------------------------------------------------------

def test_batch_with_leaving_pairs_each_run_of_changes_with_the_fence_that_ends_it() -> None:
    """Read backwards: a change takes the broker of the next applied record that is not a change
    (a fence or unregistration: that broker; anything else: nobody); the other records, and
    records read that apply nothing (``None``, ``()``: a transaction's middle), pair with nobody."""
    c1, c2, c3, c4, c5 = (_md(*_change(0, isr=(1,))[0::2], i) for i in (1, 2, 4, 6, 9))
    fence3, config, unreg2, begin = (_md(*_fence(3)[0::2], 3), _md(*CONFIG[0::2], 5),
                                     _md("UnregisterBrokerRecord", {"broker_id": 2, "broker_epoch": 11}, 8),
                                     _md("BeginTransactionRecord", {}, 7))
    batch = [(c1, [c1]), (c2, [c2]), (fence3, [fence3]), (c3, [c3]), (config, [config]), (c4, [c4]),
             (begin, ()), (unreg2, [unreg2]), (c5, [c5]), (c5, None)]
    assert timeline._batch_with_leaving(batch) == [
        (c1, [(c1, frozenset({3}))]), (c2, [(c2, frozenset({3}))]), (fence3, [(fence3, NOBODY)]),
        (c3, [(c3, NOBODY)]), (config, [(config, NOBODY)]), (c4, [(c4, frozenset({2}))]), (begin, []),
        (unreg2, [(unreg2, NOBODY)]), (c5, [(c5, NOBODY)]), (c5, None)]


def test_batch_with_leaving_inside_one_applied_list() -> None:
    """A transaction's records, applied together at its End, are paired the same way."""
    c1, c2, fence2 = _md(*_change(0, isr=(1,))[0::2], 1), _md(*_change(1, isr=(1,))[0::2], 2), _md(*_fence(2)[0::2], 3)
    end = _md("EndTransactionRecord", {}, 4)
    assert timeline._batch_with_leaving([(end, [c1, c2, fence2])]) == [
        (end, [(c1, frozenset({2})), (c2, frozenset({2})), (fence2, NOBODY)])]


def test_with_leaving_holds_each_batch_by_path_and_position() -> None:
    """A batch is the records read with one ``(path, batch_position)``: a fence in the next batch
    (or the same position of another file) does not reach back; a finding ends the batch held."""
    a1 = _md(*_change(0, isr=(1,))[0::2], 1, pos=0)
    a2 = _md(*_change(1, isr=(1,))[0::2], 2, pos=0)
    b1 = _md(*_fence(2)[0::2], 3, pos=100)
    c1 = _md(*_change(0, isr=(1,))[0::2], 4, pos=200)
    d1 = _md(*_fence(3)[0::2], 5, pos=200, path="other")
    e1 = _md(*_change(1, isr=(1,))[0::2], 6, pos=300)
    e2 = _md(*_fence(2)[0::2], 8, pos=300)
    gap = Finding("kraft_offset_gap", "seg", 0, "gap", details={"expected": 7, "actual": 8})
    items = [(a1, [a1]), (a2, [a2]), (b1, [b1]), (c1, [c1]), (d1, [d1]), (e1, [e1]), gap, (e2, [e2])]
    assert list(timeline._with_leaving(iter(items))) == [
        (a1, [(a1, NOBODY)]), (a2, [(a2, NOBODY)]), (b1, [(b1, NOBODY)]), (c1, [(c1, NOBODY)]),
        (d1, [(d1, NOBODY)]), (e1, [(e1, NOBODY)]), gap, (e2, [(e2, NOBODY)])]
    # counter-case: the same records in one batch
    a3 = _md(*_fence(2)[0::2], 3, pos=0)
    one = [(r, [r]) for r in (a1, a2, a3)]
    assert list(timeline._with_leaving(iter(one))) == [(a1, [(a1, frozenset({2}))]), (a2, [(a2, frozenset({2}))]),
                                                       (a3, [(a3, NOBODY)])]
    assert list(timeline._with_leaving(iter([]))) == []


# ---- apply_record: brokers and the controller ---------------------------------------------------

def test_broker_records_make_broker_events_and_gone_at() -> None:
    """``registered``/``unfenced``/``controlled_shutdown`` leave ``gone_at``; ``fenced`` and
    ``unregistered`` set it to the record's offset (``ClusterDelta.replay``; fencing keeps the
    ``in_controlled_shutdown`` flag, ``BrokerRegistration.cloneWith``)."""
    fold = timeline.ImageFold()
    steps = [
        (_md(*_register(1, 10)[0::2], 1, version=3), BrokerEvent(1, "registered", 1, T0 + 1, 10), {}, set(), set()),
        (_md(*_unfence(1)[0::2], 2), BrokerEvent(1, "unfenced", 2, T0 + 2, 10), {}, {1}, set()),
        (_md(*_brcr(1, shutdown=1)[0::2], 3, version=1), BrokerEvent(1, "controlled_shutdown", 3, T0 + 3, 10),
         {}, {1}, {1}),
        (_md(*_brcr(1, fenced=1)[0::2], 4, version=1), BrokerEvent(1, "fenced", 4, T0 + 4, 10), {1: 4}, set(), {1}),
        (_md("UnregisterBrokerRecord", {"broker_id": 1, "broker_epoch": 10}, 5),
         BrokerEvent(1, "unregistered", 5, T0 + 5, 10), {1: 5}, set(), set()),
    ]
    for record, event, gone_at, alive, shutting in steps:
        assert list(timeline.apply_record(fold, record, False)) == [event], record.offset
        assert (fold.gone_at, set(fold.alive()), set(fold.shutting_down())) == (gone_at, alive, shutting)


def test_a_registration_change_that_changes_nothing_is_no_event() -> None:
    """A real 4.4 cluster (``fixtures/real-kafka/clean-failover-kraft-4.4.0``, offsets 53 and 72):
    broker 5, fenced by its controlled shutdown, is fenced again when its session times out
    ("Fencing broker 5 at epoch 23 because its session has timed out"), and every controller logs
    "Ignoring no-op registration change" (``BrokerRegistration.cloneWith`` returns the
    registration itself). No second ``fenced``, and ``gone_at`` keeps the first; the same for a
    second ``in_controlled_shutdown`` and for a fence or unfence of either record kind."""
    fold = _fold([_md(*_register(1, 10)[0::2], 1, version=3), _md(*_unfence(1)[0::2], 2)])
    assert list(timeline.apply_record(fold, _md(*_brcr(1, shutdown=1)[0::2], 3, version=1), False)) == [
        BrokerEvent(1, "controlled_shutdown", 3, T0 + 3, 10)]
    assert list(timeline.apply_record(fold, _md(*_brcr(1, shutdown=1)[0::2], 4, version=1), False)) == []
    assert list(timeline.apply_record(fold, _md(*_brcr(1, fenced=1)[0::2], 5, version=1), False)) == [
        BrokerEvent(1, "fenced", 5, T0 + 5, 10)]
    assert list(timeline.apply_record(fold, _md(*_brcr(1, fenced=1)[0::2], 6, version=1), False)) == []
    assert list(timeline.apply_record(fold, _md(*_fence(1)[0::2], 7), False)) == []
    assert (fold.gone_at, set(fold.alive()), set(fold.shutting_down())) == ({1: 5}, set(), {1})
    # counter-cases: an unfence of the fenced broker is one (and a second one is not); a fence
    # after it is one again, and moves gone_at
    assert list(timeline.apply_record(fold, _md(*_unfence(1)[0::2], 8), False)) == [
        BrokerEvent(1, "unfenced", 8, T0 + 8, 10)]
    assert list(timeline.apply_record(fold, _md(*_brcr(1, fenced=-1)[0::2], 9, version=1), False)) == []
    assert list(timeline.apply_record(fold, _md(*_brcr(1, fenced=1)[0::2], 10, version=1), False)) == [
        BrokerEvent(1, "fenced", 10, T0 + 10, 10)]
    assert fold.gone_at == {1: 10}


def test_a_broker_registered_fenced_and_fenced_again_makes_only_its_registration() -> None:
    """``RegisterBrokerRecord`` registers a broker fenced (``fenced: true``); a fence before its
    unfence changes nothing. Counter-case: a broker registered unfenced (a pre-3.3 image) is
    fenced by the same record."""
    fold = timeline.ImageFold()
    assert list(timeline.apply_record(fold, _md(*_register(1, 10)[0::2], 1, version=3), False)) == [
        BrokerEvent(1, "registered", 1, T0 + 1, 10)]
    assert list(timeline.apply_record(fold, _md(*_fence(1)[0::2], 2), False)) == []
    assert fold.gone_at == {}
    assert list(timeline.apply_record(fold, _md(*_register(2, 11, fenced=False)[0::2], 3, version=3), False)) == [
        BrokerEvent(2, "registered", 3, T0 + 3, 11)]
    assert list(timeline.apply_record(fold, _md(*_fence(2)[0::2], 4), False)) == [
        BrokerEvent(2, "fenced", 4, T0 + 4, 11)]
    assert fold.gone_at == {2: 4}


def test_quiet_yields_no_event_but_keeps_the_fold() -> None:
    fold = timeline.ImageFold()
    for r in (_md(*_register(1, 10)[0::2], 1, version=3), _md(*_unfence(1)[0::2], 2), _md(*_fence(1)[0::2], 3)):
        assert list(timeline.apply_record(fold, r, True)) == []
    assert (fold.gone_at, set(fold.alive())) == ({1: 3}, set())
    # counter-case: the same record, not quiet
    assert list(timeline.apply_record(fold, _md(*_unfence(1)[0::2], 4), False)) == [
        BrokerEvent(1, "unfenced", 4, T0 + 4, 10)]


def test_findings_follow_the_events_of_their_record_once_even_quiet() -> None:
    """A refused record (``ClusterDelta.getBrokerOrThrow``) is a finding, quiet or not; an
    ``UnregisterBrokerRecord`` of another epoch applies (a broker's image removes it) and is
    flagged after its event; a finding already yielded is not yielded again."""
    fold = _fold([_md(*_register(1, 10)[0::2], 1, version=3)])
    refused = list(timeline.apply_record(fold, _md(*_fence(9)[0::2], 2), True))
    assert [(f.kind, f.message, f.details) for f in refused] == [
        ("kraft_invalid_record", "FenceBrokerRecord at offset 2 tries to fence broker 9, which was not registered; "
         "Kafka's metadata loader refuses it", {"offset": 2, "broker_id": 9})]
    assert list(timeline.apply_record(fold, _md(*_unfence(1)[0::2], 3), False)) == [
        BrokerEvent(1, "unfenced", 3, T0 + 3, 10)]
    items = list(timeline.apply_record(fold, _md("UnregisterBrokerRecord", {"broker_id": 1, "broker_epoch": 7}, 4),
                                       False))
    assert items[0] == BrokerEvent(1, "unregistered", 4, T0 + 4, 7)
    assert [(f.kind, f.severity, f.details) for f in items[1:]] == [
        ("kraft_invalid_record", "warning", {"offset": 4, "broker_id": 1})]
    assert (fold.reported, fold.new_findings()) == (2, [])


@pytest.mark.parametrize("leader,event,controller", [
    pytest.param(3000, "elected", 3000, id="leader"),
    pytest.param(0, "elected", 0, id="node-0"),
    pytest.param(-1, "none", None, id="no-leader"),
])
def test_leader_change_makes_a_controller_event(leader, event, controller) -> None:
    fold = timeline.ImageFold()
    assert list(timeline.apply_record(fold, _leader_change(leader, 5, 7), False)) == [
        ControllerEvent(event, 5, T0 + 5, controller, 7)]
    # counter-case: another control record changes nothing
    assert list(timeline.apply_record(fold, _leader_change(leader, 6, 8, kraft.SNAPSHOT_HEADER), False)) == []
    assert (fold.image.controller, fold.image.controller_epoch) == (controller, 7)


# ---- apply_record: partitions -------------------------------------------------------------------

def _orders_fold(*, fenced_leader: bool = False) -> timeline.ImageFold:
    return _fold([_md(*_register(1, 10)[0::2], 1, version=3), _md(*_register(2, 11)[0::2], 2, version=3),
                  *([] if fenced_leader else [_md(*_unfence(1)[0::2], 3)]), _md(*_unfence(2)[0::2], 4),
                  _md("TopicRecord", {"name": "orders", "topic_id": ORDERS}, 5)])


@pytest.mark.parametrize("fenced_leader", [False, True], ids=["leader-live", "leader-fenced"])
def test_partition_record_is_created_then_snapshot(fenced_leader) -> None:
    fold = _orders_fold(fenced_leader=fenced_leader)
    first = list(timeline.apply_record(fold, _md(*_partition(0, (1, 2), 1)[0::2], 6), False))
    assert first == [PartitionEvent("orders", 0, 6, T0 + 6, None, None, _state(1, 0, (1, 2), 0), "created",
                                    "controller", "PartitionRecord: leader 1, ISR [1, 2]", (1, 2), fenced_leader)]
    assert fold.changed_at == {("orders", 0): 6}
    # a PartitionRecord for a partition already held replaces it: the state as the record holds it
    again = list(timeline.apply_record(fold, _md(*_partition(0, (2, 1), 2, leader_epoch=3)[0::2], 7), False))
    assert again == [PartitionEvent("orders", 0, 7, T0 + 7, None, None, _state(2, 3, (2, 1), 0), "snapshot",
                                    "controller", "PartitionRecord: leader 2, ISR [2, 1]", (2, 1), False)]
    assert fold.changed_at == {("orders", 0): 7}


def test_remove_topic_deletes_each_partition() -> None:
    fold = _orders_fold()
    for i, rec in enumerate((_partition(1, (2, 1), 2), _partition(0, (1, 2), 1, (1,)))):
        list(timeline.apply_record(fold, _md(*rec[0::2], 6 + i), True))
    assert list(timeline.apply_record(fold, _md("RemoveTopicRecord", {"topic_id": ORDERS}, 9), False)) == [
        PartitionEvent("orders", 0, 9, T0 + 9, None, _state(1, 0, (1,), 0), None, "deleted", "controller",
                       "RemoveTopicRecord", (1, 2)),
        PartitionEvent("orders", 1, 9, T0 + 9, None, _state(2, 0, (2, 1), 0), None, "deleted", "controller",
                       "RemoveTopicRecord", (2, 1))]
    assert fold.changed_at == {}


def test_change_event_fields() -> None:
    """An ISR shrink by the leader (AlterPartition; the removed replica still live): the whole
    event, partition epoch moved, leader epoch kept (``PartitionRegistration.merge``)."""
    fold = _orders_fold()
    list(timeline.apply_record(fold, _md(*_partition(0, (1, 2), 1)[0::2], 6), True))
    assert list(timeline.apply_record(fold, _md(*_change(0, isr=(1,))[0::2], 7), False)) == [
        PartitionEvent("orders", 0, 7, T0 + 7, None, _state(1, 0, (1, 2), 0), _state(1, 0, (1,), 1), "isr_shrink",
                       "leader", "leader 1 removed [2]", (1, 2), False)]
    assert fold.changed_at == {("orders", 0): 7}


def test_change_without_leader_epoch_or_isr_change_is_no_event() -> None:
    """No leader field: no leader epoch bump, so nothing to report and the partition's last event
    stays where it was; counter-case: naming the same leader bumps the epoch, an event."""
    fold = _orders_fold()
    list(timeline.apply_record(fold, _md(*_partition(0, (1, 2), 1)[0::2], 6), True))
    assert list(timeline.apply_record(fold, _md(*_change(0)[0::2], 7), False)) == []
    assert fold.changed_at == {("orders", 0): 6}
    assert fold.image.partition("orders", 0).version == 1
    assert list(timeline.apply_record(fold, _md(*_change(0, leader=1)[0::2], 8), False)) == [
        PartitionEvent("orders", 0, 8, T0 + 8, None, _state(1, 0, (1, 2), 1), _state(1, 1, (1, 2), 2), "unknown",
                       "controller", "epoch bumped to 1 with the leader and ISR unchanged", (1, 2), False)]
    assert fold.changed_at == {("orders", 0): 8}


@pytest.mark.parametrize("leaving,cause,evidence,offline", [
    pytest.param(NOBODY, "unknown", "leadership moved from live leader 1 to 2", False, id="nobody-leaving"),
    # the new leader's own fencing closes the run (not a batch Kafka writes: generateLeaderAndIsrUpdates
    # never elects brokerToRemove): the same brokers judge ``offline``, so the partition is offline
    pytest.param(frozenset({2}), "unknown", "leadership moved from live leader 1 to 2", True, id="new-leader-leaving"),
    pytest.param(frozenset({1}), "leader_election", "leader 1 lost its registration; 2 was in the ISR [1,2]", False,
                 id="old-leader-leaving"),
    # a broker outside the partition's ISR is not taken as gone (generateLeaderAndIsrUpdates only
    # touches the partitions whose ISR holds it)
    pytest.param(frozenset({3}), "unknown", "leadership moved from live leader 1 to 2", False, id="not-in-isr"),
])
def test_change_takes_the_leaving_brokers_in_its_isr_as_gone(leaving, cause, evidence, offline) -> None:
    fold = _orders_fold()
    list(timeline.apply_record(fold, _md(*_register(3, 12)[0::2], 5, version=3), True))
    list(timeline.apply_record(fold, _md(*_unfence(3)[0::2], 6), True))
    list(timeline.apply_record(fold, _md(*_partition(0, (1, 2, 3), 1, (1, 2))[0::2], 7), True))
    out = list(timeline.apply_record(fold, _md(*_change(0, leader=2, isr=(2,))[0::2], 8), False, leaving))
    assert out == [PartitionEvent("orders", 0, 8, T0 + 8, None, _state(1, 0, (1, 2), 0), _state(2, 1, (2,), 1), cause,
                                  "controller", evidence, (1, 2, 3), offline)]


def test_change_out_of_the_isr_by_a_live_leader_keeps_the_fold_alive() -> None:
    """``leaving`` changes the context of the one change only: the brokers stay alive in the fold."""
    fold = _orders_fold()
    list(timeline.apply_record(fold, _md(*_partition(0, (1, 2), 1)[0::2], 6), True))
    list(timeline.apply_record(fold, _md(*_change(0, isr=(1,))[0::2], 7), False, frozenset({2})))
    assert (set(fold.alive()), fold.gone_at) == ({1, 2}, {})


def _reassigning(replicas: tuple, isr: tuple, adding: tuple = (), removing: tuple = ()):
    return ("PartitionRecord", 0, {"partition_id": 0, "topic_id": ORDERS, "replicas": replicas, "isr": isr,
                                   "removing_replicas": removing, "adding_replicas": adding, "leader": 1,
                                   "leader_epoch": 0, "partition_epoch": 0})


@pytest.mark.parametrize("before,change,cause,evidence", [
    # ReplicationControlManager.alterPartitionReassignments / PartitionChangeBuilder (kafka-algorithms
    # §5.5): the leader moved off a replica being removed
    pytest.param(_reassigning((1, 2, 4), (1, 2, 4), adding=(4,), removing=(1,)), {"leader": 2}, "reassignment",
                 "leader 1 is being moved off by a reassignment; 2 takes over", id="off-a-removing-replica"),
    # the record that completes it sets the replicas (and clears adding/removing)
    pytest.param(_reassigning((1, 2), (1, 2)), {"leader": 2, "replicas": (2, 1)}, "reassignment",
                 "the record that moves the replicas makes 2 leader", id="record-moves-the-replicas"),
    # counter-case: replicas being added, the old leader not being removed
    pytest.param(_reassigning((1, 2, 4), (1, 2), adding=(4,)), {"leader": 2}, "unknown",
                 "leadership moved from live leader 1 to 2", id="adding-only"),
    pytest.param(_reassigning((1, 2, 4), (1, 2), adding=(4,)), {"leader": 1}, "reassignment",
                 "epoch bumped with the leader and ISR unchanged while the partition is being reassigned",
                 id="epoch-bump-while-adding"),
    pytest.param(_reassigning((1, 2), (1, 2), removing=(2,)), {"leader": 1}, "reassignment",
                 "epoch bumped with the leader and ISR unchanged while the partition is being reassigned",
                 id="epoch-bump-while-removing"),
    pytest.param(_reassigning((1, 2), (1, 2)), {"leader": 1}, "unknown",
                 "epoch bumped to 1 with the leader and ISR unchanged", id="epoch-bump-not-reassigning"),
])
def test_change_context_of_a_reassignment(before, change, cause, evidence) -> None:
    """The assignment in the context is the partition's before the change (``adding``,
    ``removing``), and whether the change record itself moves replicas."""
    fold = _orders_fold()
    list(timeline.apply_record(fold, _md(*before[0::2], 6), True))
    [event] = timeline.apply_record(fold, _md(*_change(0, **change)[0::2], 7), False)
    assert (event.cause, event.by, event.evidence, event.replicas) == (
        cause, "controller", evidence, change.get("replicas", before[2]["replicas"]))


# ---- the leaving broker through the timeline -------------------------------------------------------

SHRINK_BY_CONTROLLER = [(11, 0, "isr_shrink", "controller", "the controller removed [3] ([3] no longer live)"),
                        (12, 1, "isr_shrink", "controller", "the controller removed [3] ([3] no longer live)")]
SHRINK_BY_LEADER = [(11, 0, "isr_shrink", "leader", "leader 1 removed [3]"),
                    (12, 1, "isr_shrink", "leader", "leader 2 removed [3]")]


@pytest.mark.parametrize("closing,expected", [
    pytest.param(_fence(3), SHRINK_BY_CONTROLLER, id="fence-record"),
    pytest.param(_brcr(3, fenced=1), SHRINK_BY_CONTROLLER, id="registration-change-fences"),
    pytest.param(_brcr(3, fenced=1, shutdown=1), SHRINK_BY_CONTROLLER, id="registration-change-fences-shutting-down"),
    pytest.param(("UnregisterBrokerRecord", 0, {"broker_id": 3, "broker_epoch": 12}), SHRINK_BY_CONTROLLER,
                 id="unregister"),
    # counter-cases: records that do not take broker 3 away, so it was live when it left the ISRs
    pytest.param(_brcr(3, fenced=-1), SHRINK_BY_LEADER, id="registration-change-unfences"),
    pytest.param(_brcr(3, shutdown=1), SHRINK_BY_LEADER, id="registration-change-shutting-down-after"),
    pytest.param(_unfence(3), SHRINK_BY_LEADER, id="unfence-record"),
    pytest.param(CONFIG, SHRINK_BY_LEADER, id="config-record"),
])
def test_the_record_closing_a_run_of_changes(tmp_path, closing, expected) -> None:
    """``handleBrokerFenced``/``handleBrokerUnregistered``: broker 3 leaves both ISRs, then the
    record that fences or unregisters it, in one batch."""
    items = _timeline(_write_log(tmp_path, SETUP + [[_change(0, isr=(1, 2)), _change(1, isr=(2, 1)), closing]]))
    assert _changes(items) == expected


def test_the_fence_in_the_next_batch_does_not_close_the_run(tmp_path) -> None:
    items = _timeline(_write_log(tmp_path, SETUP + [[_change(0, isr=(1, 2)), _change(1, isr=(2, 1))], [_fence(3)]]))
    assert _changes(items) == SHRINK_BY_LEADER
    assert [(e.broker, e.event, e.position) for e in items if isinstance(e, BrokerEvent)][-1:] == [(3, "fenced", 13)]


def test_each_run_is_closed_by_its_own_fence(tmp_path) -> None:
    """Two fencings in one batch (the Raft accumulator joins appends): a record between ends a
    run, and each fence reaches back only over the changes after the previous non-change record."""
    batch = [_change(0, isr=(1, 2)), CONFIG, _change(1, isr=(2, 1)), _fence(3),
             _change(1, leader=1, isr=(1,)), _change(0, isr=(1,)), _fence(2)]
    items = _timeline(_write_log(tmp_path, SETUP + [batch]))
    assert _changes(items) == [
        (11, 0, "isr_shrink", "leader", "leader 1 removed [3]"),
        (13, 1, "isr_shrink", "controller", "the controller removed [3] ([3] no longer live)"),
        (15, 1, "leader_election", "controller", "leader 2 lost its registration; 1 was in the ISR [2,1]"),
        (16, 0, "isr_shrink", "controller", "the controller removed [2] ([2] no longer live)")]


@pytest.mark.parametrize("before,closing,expected", [
    # PartitionChangeBuilder keeps the last ISR member; the fencing that ends broker 3's controlled
    # shutdown bumps the leaderless partition's epoch, then fences it (handleBrokerFenced)
    pytest.param(_brcr(3, shutdown=1), _brcr(3, fenced=1),
                 ("controlled_shutdown", "no leader before or after: the controller took [3], shutting down, out of "
                                         "the ISR [3], which keeps its last member; epoch bumped to 1"),
                 id="end-of-controlled-shutdown"),
    pytest.param(CONFIG, _fence(3),
                 ("leader_election", "no leader could be elected: [3] of the ISR [3] no longer live; epoch bumped to "
                                     "1 with the leader still -1"), id="fenced-without-shutdown"),
    pytest.param(CONFIG, CONFIG, ("unknown", "epoch bumped to 1 with the leader and ISR unchanged"), id="not-fenced"),
])
def test_leaderless_bump_closed_by_a_fencing(tmp_path, before, closing, expected) -> None:
    items = _timeline(_write_log(tmp_path, SETUP + [[before], [_change(2, leader=-1), closing]]))
    events = [e for e in items if isinstance(e, PartitionEvent) and e.position == 12]
    assert events == [PartitionEvent("orders", 2, 12, T0 + 12, None, _state(-1, 0, (3,), 0), _state(-1, 1, (3,), 1),
                                     expected[0], "controller", expected[1], (3, 1, 2), True)]


@pytest.mark.parametrize("between,expected", [
    # broker 2 was fenced (11) and unfenced (12) after orders-1's last event (9): it lost its registration since
    pytest.param(CONFIG, (15, 1, "leader_election", "controller",
                          "leader 2 lost its registration; 3 was in the ISR [2,3,1]"), id="fenced-since"),
    # a change record (14) that changes no leader, epoch or ISR is no event: the last event stays at 9
    pytest.param(_change(1), (15, 1, "leader_election", "controller",
                              "leader 2 lost its registration; 3 was in the ISR [2,3,1]"), id="no-op-change-between"),
    # counter-case: an event (14) after the fencing, so broker 2 is not gone since the partition's last change
    pytest.param(_change(1, isr=(2, 3)), (15, 1, "unknown", "controller", "leadership moved from live leader 2 to 3"),
                 id="event-after-the-fencing"),
])
def test_gone_since_the_partitions_last_event(tmp_path, between, expected) -> None:
    items = _timeline(_write_log(tmp_path, SETUP + [[_fence(2)], [_unfence(2)], [CONFIG], [between],
                                                    [_change(1, leader=3)]]))
    assert _changes(items)[-1] == expected


@pytest.mark.xfail(strict=True, reason="handleDirectoriesOffline: the controller removes a broker whose log "
                                       "directory went offline from the ISRs, then writes a "
                                       "BrokerRegistrationChangeRecord with the remaining log_dirs; kreplica "
                                       "attributes the removal to the leader")
def test_isr_removal_closed_by_offline_log_dirs_is_the_controllers(tmp_path) -> None:
    """``ReplicationControlManager.processBrokerHeartbeat`` -> ``handleDirectoriesOffline`` (MV with
    directory assignment, KIP-858): ``generateLeaderAndIsrUpdates(brokerId, ...)`` for the
    partitions in the offline directory, then ``BrokerRegistrationChangeRecord`` (version 2) with
    ``log_dirs`` set to the directories still online, in one batch. Broker 3 stays unfenced."""
    online = ("BrokerRegistrationChangeRecord", 2, {"broker_id": 3, "broker_epoch": 12,
                                                    "log_dirs": ("i0R5fWe7xePgy_14PzXogQ",)})
    items = _timeline(_write_log(tmp_path, SETUP + [[_change(0, isr=(1, 2)), _change(1, isr=(2, 1)), online]]))
    assert [(e.partition, e.cause, e.by) for e in items if isinstance(e, PartitionEvent) and e.position >= 11] == [
        (0, "isr_shrink", "controller"), (1, "isr_shrink", "controller")]


# ---- _snapshot_events --------------------------------------------------------------------------

def test_snapshot_events_in_order() -> None:
    fold = _fold([_leader_change(3000, 0, 4), _md(*_register(2, 11)[0::2], 1, version=3),
                  _md(*_register(1, 10)[0::2], 2, version=3), _md(*_unfence(2)[0::2], 3),
                  _md("TopicRecord", {"name": "zeta", "topic_id": PAYMENTS}, 4),
                  _md("TopicRecord", {"name": "alpha", "topic_id": ORDERS}, 5),
                  _md(*_partition(1, (2, 1), 2, topic=PAYMENTS)[0::2], 6),
                  _md(*_partition(0, (1, 2), 1, topic=PAYMENTS)[0::2], 7),
                  _md(*_partition(0, (2,), 2)[0::2], 8)])
    assert timeline._snapshot_events(fold, 42, 7, "LABEL") == [
        BrokerEvent(1, "snapshot", 42, 7, 10), BrokerEvent(2, "snapshot", 42, 7, 11),
        ControllerEvent("snapshot", 42, 7, 3000, 4),
        PartitionEvent("alpha", 0, 42, 7, None, None, _state(2, 0, (2,), 0), "snapshot", None, "as LABEL holds it",
                       (2,), False),
        PartitionEvent("zeta", 0, 42, 7, None, None, _state(1, 0, (1, 2), 0), "snapshot", None, "as LABEL holds it",
                       (1, 2), True),
        PartitionEvent("zeta", 1, 42, 7, None, None, _state(2, 0, (2, 1), 0), "snapshot", None, "as LABEL holds it",
                       (2, 1), False)]
    # counter-case: without a controller, no controller event
    assert timeline._snapshot_events(_fold([_md(*_register(1, 10)[0::2], 1, version=3)]), 3, None, "x") == [
        BrokerEvent(1, "snapshot", 3, None, 10)]


# ---- _bridge -----------------------------------------------------------------------------------

SNAP_PATH = "/copy/__cluster_metadata-0/00000000000000000016-0000000001.checkpoint"
HELD = ("as 00000000000000000016-0000000001.checkpoint holds it "
        "(offsets 13..15 are missing from the copy)")


def _bridge_old() -> timeline.ImageFold:
    """Brokers 1, 2, 3, 5 registered and unfenced, 4 fenced (at offset 6, ``gone_at``); orders-0
    and -1 (last events at 9, 10), old-0 (11); controller 3000."""
    return _fold([_leader_change(3000, 0, 1), *(_md(*_register(b, 9 + b)[0::2], b, version=3) for b in (1, 2, 3, 4, 5)),
                  _md(*_unfence(1)[0::2], 6), _md(*_unfence(2)[0::2], 6), _md(*_unfence(3)[0::2], 6),
                  _md(*_unfence(5)[0::2], 6), _md(*_unfence(4)[0::2], 6), _md(*_fence(4)[0::2], 6),
                  _md("TopicRecord", {"name": "orders", "topic_id": ORDERS}, 7),
                  _md("TopicRecord", {"name": "old", "topic_id": PAYMENTS}, 8),
                  _md(*_partition(0, (1, 2), 1)[0::2], 9), _md(*_partition(1, (2, 1), 2)[0::2], 10),
                  _md(*_partition(0, (1, 2), 1, topic=PAYMENTS)[0::2], 11)])


def _snap(records) -> KraftStart:
    return KraftStart(SNAP_PATH, 16, T0 + 15, tuple(records))


def test_bridge_broker_differences() -> None:
    """Each broker that differs between the two images, at the snapshot's last offset and time:
    gone from the snapshot ``unregistered`` (the old epoch); a new epoch ``registered`` (or
    ``fenced`` if it is); the same epoch, fencing changed, ``fenced``/``unfenced``; the same,
    nothing."""
    snap = _snap([_md(*_register(1, 10, fenced=False)[0::2], version=3),    # unchanged
                  _md(*_register(2, 11, fenced=True)[0::2], version=3),     # fenced, same epoch
                  _md(*_register(4, 13, fenced=False)[0::2], version=3),    # unfenced, same epoch
                  _md(*_register(5, 25, fenced=False)[0::2], version=3),    # re-registered
                  _md(*_register(6, 26, fenced=True)[0::2], version=3),     # new, fenced
                  _md(*_register(7, 27, fenced=False)[0::2], version=3)])   # new, unfenced
    new, events = timeline._bridge(_bridge_old(), snap, (13, 15))
    brokers = [e for e in events if isinstance(e, BrokerEvent)]
    assert brokers == [BrokerEvent(2, "fenced", 15, T0 + 15, 11), BrokerEvent(3, "unregistered", 15, T0 + 15, 12),
                       BrokerEvent(4, "unfenced", 15, T0 + 15, 13), BrokerEvent(5, "registered", 15, T0 + 15, 25),
                       BrokerEvent(6, "fenced", 15, T0 + 15, 26), BrokerEvent(7, "registered", 15, T0 + 15, 27)]
    # fenced or unregistered at the bridge; broker 4's earlier fencing kept
    assert new.gone_at == {2: 15, 3: 15, 6: 15, 4: 6}
    assert set(new.alive()) == {1, 4, 5, 7}


def test_bridge_partition_differences() -> None:
    old = _bridge_old()
    snap = _snap([_md(*_register(1, 10, fenced=False)[0::2], version=3),
                  _md(*_register(2, 11, fenced=False)[0::2], version=3),
                  _md("TopicRecord", {"name": "orders", "topic_id": ORDERS}),
                  _md("TopicRecord", {"name": "new", "topic_id": CLUSTER}),
                  _md(*_partition(0, (1, 2), 1)[0::2]),                               # unchanged
                  _md(*_partition(1, (2, 1), 1, (1,))[0::2]),                         # leader and ISR
                  _md(*_partition(2, (1, 2), 1)[0::2]),                               # created in the gap
                  _md(*_partition(0, (3, 2), 3, topic=CLUSTER)[0::2])])               # a new topic, leader gone
    new, events = timeline._bridge(old, snap, (13, 15))
    assert [e for e in events if isinstance(e, PartitionEvent)] == [
        PartitionEvent("new", 0, 15, T0 + 15, None, None, _state(3, 0, (3, 2), 0), "created", None, HELD, (3, 2),
                       True),
        PartitionEvent("old", 0, 15, T0 + 15, None, _state(1, 0, (1, 2), 0), None, "deleted", None, HELD, (1, 2)),
        PartitionEvent("orders", 1, 15, T0 + 15, None, _state(2, 0, (2, 1), 0), _state(1, 0, (1,), 0), "unknown",
                       None, HELD, (2, 1), False),
        PartitionEvent("orders", 2, 15, T0 + 15, None, None, _state(1, 0, (1, 2), 0), "created", None, HELD, (1, 2),
                       False)]
    # an unchanged partition keeps its last event; a reported one moves to the bridge
    assert new.changed_at == {("new", 0): 15, ("orders", 0): 9, ("orders", 1): 15, ("orders", 2): 15}


def test_bridge_reports_a_move_of_the_replicas_alone() -> None:
    """Counter-case of "unchanged": the same leader, epochs and ISR, other replicas."""
    snap = _snap([_md(*_register(1, 10, fenced=False)[0::2], version=3),
                  _md("TopicRecord", {"name": "orders", "topic_id": ORDERS}),
                  _md(*_partition(0, (1, 2), 1)[0::2]), _md(*_partition(1, (2, 1, 3), 2, (2, 1))[0::2])])
    _new, events = timeline._bridge(_bridge_old(), snap, (13, 15))
    assert [(e.partition, e.cause, e.before, e.after, e.replicas, e.offline) for e in events
            if isinstance(e, PartitionEvent) and e.topic == "orders"] == [
        (1, "unknown", _state(2, 0, (2, 1), 0), _state(2, 0, (2, 1), 0), (2, 1, 3), True)]


def test_bridge_controller_and_refused_records() -> None:
    """A snapshot holds no ``LeaderChange``: the controller is not reported (nor kept); the
    findings of the snapshot's own records come after the events."""
    snap = _snap([_md(*_register(1, 10, fenced=False)[0::2], version=3), _md(*_fence(9)[0::2], 3)])
    new, events = timeline._bridge(_bridge_old(), snap, (13, 15))
    assert not [e for e in events if isinstance(e, ControllerEvent)]
    assert (new.image.controller, new.image.controller_epoch) == (None, None)
    assert [(f.kind, f.details) for f in events if isinstance(f, Finding)] == [
        ("kraft_invalid_record", {"offset": 3, "broker_id": 9})]
    assert isinstance(events[-1], Finding)
    # given the records of another controller epoch, the bridge reports it; the same one, not
    elected = _snap([_leader_change(3001, 0, 2)])
    assert [e for e in timeline._bridge(_bridge_old(), elected, (13, 15))[1] if isinstance(e, ControllerEvent)] == [
        ControllerEvent("elected", 15, T0 + 15, 3001, 2)]
    assert [e for e in timeline._bridge(_bridge_old(), _snap([_leader_change(3000, 0, 1)]), (13, 15))[1]
            if isinstance(e, ControllerEvent)] == []
    assert [e for e in timeline._bridge(_bridge_old(), _snap([_leader_change(-1, 0, 2)]), (13, 15))[1]
            if isinstance(e, ControllerEvent)] == [ControllerEvent("none", 15, T0 + 15, None, 2)]


# ---- iter_kraft_timeline: start, end, window -----------------------------------------------------

@pytest.mark.parametrize("with_snapshot,bounds,start,end,start_from", [
    pytest.param(False, {}, -1, 27, "log", id="log"),
    pytest.param(True, {}, 12, 27, "snapshot", id="snapshot"),
    pytest.param(False, {"from_offset": 20}, 20, 27, "replay", id="log-from-offset"),
    pytest.param(True, {"from_offset": 20}, 20, 27, "replay", id="snapshot-from-offset"),
    pytest.param(False, {"from_time": T0 + 20}, 20, 27, "replay", id="log-from-time"),
    pytest.param(False, {"to_offset": 15}, -1, 15, "log", id="to-offset"),
    pytest.param(False, {"to_time": T0 + 15}, -1, 15, "log", id="to-time"),
    pytest.param(False, {"to_time": T0 + 14}, -1, 14, "log", id="to-time-before-the-batch"),
])
def test_timeline_end(tmp_path, with_snapshot, bounds, start, end, start_from) -> None:
    files = find_kraft_files([write_metadata_dir(tmp_path, with_snapshot=with_snapshot)])
    last = list(iter_kraft_timeline(files, **bounds))[-1]
    assert last == TimelineEnd("kraft", files.source, start, end, start_from, [], "record")


def test_the_snapshot_a_history_starts_from(tmp_path) -> None:
    d = write_metadata_dir(tmp_path, with_snapshot=True)
    path = str(d / kraft.checkpoint_name(13, 1))
    items = _timeline(d)
    start = [e for e in items if not isinstance(e, TimelineEnd) and e.position == 12]
    assert start == [
        BrokerEvent(1, "snapshot", 12, 1, 10), BrokerEvent(2, "snapshot", 12, 1, 11),
        BrokerEvent(3, "snapshot", 12, 1, 12),
        PartitionEvent("orders", 0, 12, 1, None, None, _state(1, 0, (1, 2, 3), 0), "snapshot", None,
                       f"as {path} holds it", (1, 2, 3), False),
        PartitionEvent("orders", 1, 12, 1, None, None, _state(2, 0, (2, 3, 1), 0), "snapshot", None,
                       f"as {path} holds it", (2, 3, 1), False)]
    assert items[len(start)] == BrokerEvent(3, "fenced", 13, T0 + 13, 12)
    # counter-case: from the log, no snapshot events (and the snapshot beside it bridges nothing)
    (tmp_path / "log").mkdir()
    assert [e for e in _timeline(write_metadata_dir(tmp_path / "log")) if getattr(e, "event", None) == "snapshot"
            or getattr(e, "cause", None) == "snapshot"] == []


def test_a_window_before_the_first_record_starts_at_the_snapshot(tmp_path) -> None:
    """``--from 12`` on a history starting at the snapshot ending there: the state at 12, at the
    snapshot's time (nothing read yet), then every record."""
    items = _timeline(write_metadata_dir(tmp_path, with_snapshot=True), from_offset=12)
    assert [(e.position, e.time, e.evidence) for e in items if isinstance(e, PartitionEvent)][:2] == [
        (12, 1, "as the replay to offset 12 holds it"), (12, 1, "as the replay to offset 12 holds it")]
    assert items[5] == BrokerEvent(3, "fenced", 13, T0 + 13, 12)


def _controllers(items: list) -> list:
    return [tuple(e) for e in items if isinstance(e, ControllerEvent)]


@pytest.mark.parametrize("bounds,expected", [
    # record 16 is the LeaderChange of controller 3001, epoch 2 (its batch stamped T0 + 16)
    pytest.param({"from_offset": 15}, [("snapshot", 15, T0 + 15, 3000, 1), ("elected", 16, T0 + 16, 3001, 2)],
                 id="offset-before"),
    pytest.param({"from_offset": 16}, [("snapshot", 16, T0 + 16, 3001, 2)], id="offset-at"),
    pytest.param({"from_time": T0 + 15}, [("snapshot", 15, T0 + 15, 3000, 1), ("elected", 16, T0 + 16, 3001, 2)],
                 id="time-before"),
    pytest.param({"from_time": T0 + 16}, [("snapshot", 16, T0 + 16, 3001, 2)], id="time-at"),
    pytest.param({"from_offset": 16, "from_time": T0 + 15},
                 [("snapshot", 15, T0 + 15, 3000, 1), ("elected", 16, T0 + 16, 3001, 2)], id="time-first"),
    pytest.param({}, [("elected", 0, T0, 3000, 1), ("elected", 16, T0 + 16, 3001, 2)], id="unbounded"),
])
def test_window_boundaries(tmp_path, bounds, expected) -> None:
    """``--from``: records up to the point apply quietly; the first record past it (offset above
    ``from_offset`` or time above ``from_time``) starts the window with the state reached."""
    items = _timeline(write_metadata_dir(tmp_path), **bounds)
    assert _controllers(items) == expected
    if bounds:
        point = expected[0][1]
        assert {e.position for e in items if not isinstance(e, (Finding, TimelineEnd))} >= {point}
        assert not [e for e in items if not isinstance(e, (Finding, TimelineEnd)) and e.position < point]
        assert items[-1].start == point


@pytest.mark.parametrize("from_time,first", [
    # record 15 (its batch stamped T0 + 15) moves orders-1's leadership from 2 to 3
    pytest.param(T0 + 14, (15, "orders-1", "unknown"), id="before-the-batch"),
    # then the transaction creating payments (17..20, stamped T0 + 17)
    pytest.param(T0 + 15, (19, "payments-0", "created"), id="at-the-batch"),
])
def test_from_time_on_both_sides_of_a_batch(tmp_path, from_time, first) -> None:
    items = _timeline(write_metadata_dir(tmp_path), from_time=from_time)
    changes = [(e.position, e.name, e.cause) for e in items if isinstance(e, PartitionEvent) and e.cause != "snapshot"]
    assert changes[0] == first


def test_a_window_past_the_end_is_the_state_at_the_end(tmp_path) -> None:
    items = _timeline(write_metadata_dir(tmp_path), from_offset=100)
    assert [(type(e).__name__, e.position, getattr(e, "event", None) or e.cause) for e in items[:-1]] == [
        ("BrokerEvent", 27, "snapshot"), ("BrokerEvent", 27, "snapshot"), ("ControllerEvent", 27, "snapshot"),
        ("PartitionEvent", 27, "snapshot"), ("PartitionEvent", 27, "snapshot")]
    assert [(e.partition, e.after.isr, e.replicas, e.evidence) for e in items if isinstance(e, PartitionEvent)] == [
        (0, (1, 2), (1, 2, 3, 4), "as the replay to offset 27 holds it"),
        (1, (3,), (2, 3, 1), "as the replay to offset 27 holds it")]
    assert (items[-1].start, items[-1].end) == (27, 27)


@pytest.mark.parametrize("bounds,last", [
    pytest.param({"to_offset": 15}, 15, id="to-offset-at"),
    pytest.param({"to_offset": 14}, 14, id="to-offset-before"),
    pytest.param({"to_time": T0 + 15}, 15, id="to-time-at"),
    pytest.param({"to_time": T0 + 14}, 14, id="to-time-before"),
])
def test_to_is_inclusive(tmp_path, bounds, last) -> None:
    items = _timeline(write_metadata_dir(tmp_path), **bounds)
    assert max(e.position for e in items if not isinstance(e, (Finding, TimelineEnd))) == last


def test_watch_sees_every_offset_read(tmp_path) -> None:
    """At the start (one below it), then after each record read, a transaction's middle included."""
    seen: list = []
    files = find_kraft_files([write_metadata_dir(tmp_path)])
    list(iter_kraft_timeline(files, watch=lambda offset, image: seen.append(offset)))
    assert seen == list(range(-1, 28))
    seen.clear()
    (tmp_path / "s").mkdir()
    files = find_kraft_files([write_metadata_dir(tmp_path / "s", with_snapshot=True)])
    list(iter_kraft_timeline(files, to_offset=20, watch=lambda offset, image: seen.append(offset)))
    assert seen == list(range(12, 21))


def test_findings_of_records_go_into_the_end(tmp_path) -> None:
    # (broker 1 is unfenced already: fencing it is a change, unfencing it again none)
    items = _timeline(_write_log(tmp_path, SETUP + [[_fence(9)], [_fence(1)]]))
    found = [x for x in items if isinstance(x, Finding)]
    assert [(f.kind, f.details) for f in found] == [("kraft_invalid_record", {"offset": 11, "broker_id": 9})]
    assert items[-1].findings == found
    assert items[-2] == BrokerEvent(1, "fenced", 12, T0 + 12, 10)


def test_the_starts_findings_come_first(tmp_path) -> None:
    """A newer snapshot that cannot be read is passed over for an older one (``kraft_start``);
    its findings, then those of the start's own records, open the stream; those of the records
    the image refuses go into the end too."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / kraft.checkpoint_name(13, 1)).write_bytes(kraft.build_snapshot(SNAPSHOT_13 + [_fence(9)], epoch=1,
                                                                        timestamp=1))
    (d / kraft.checkpoint_name(14, 1)).write_bytes(b"junk")
    (d / "00000000000000000013.log").write_bytes(b"".join(history_batches(13)))
    items = _timeline(d, from_offset=20)
    unreadable = str(d / kraft.checkpoint_name(14, 1))
    assert [(f.kind, f.path) for f in items[:2]] == [("truncated_tail", unreadable),
                                                     ("kraft_incomplete_snapshot", unreadable)]
    refused = items[2]
    assert (refused.kind, refused.message) == (
        "kraft_invalid_record", "FenceBrokerRecord at offset 10 tries to fence broker 9, which was not registered; "
                                "Kafka's metadata loader refuses it")
    assert items[-1].findings == [refused]
    assert items[-1].start == 20


# ---- iter_kraft_timeline: gaps bridged ---------------------------------------------------------

def _gapped(root: Path, gap: tuple[int, int], snapshots: dict, *, extra: list | None = None) -> Path:
    """The builders' history with offsets ``gap`` (first, end) missing; ``snapshots``: end offset
    (or ``(end, epoch)``) -> records, stamped ``T0 + end - 1``; ``extra``: batches after it."""
    d = root / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (root / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={CLUSTER}\n")
    (d / "00000000000000000000.log").write_bytes(b"".join(history_batches(0, gap[0])))
    tail = b"".join(history_batches(gap[1]))
    if extra:
        tail += b"".join(kraft.build_metadata_batch(b, base_offset=28 + i, epoch=2, timestamp=T0 + 28 + i)
                         for i, b in enumerate(extra))
    (d / f"{gap[1]:020d}.log").write_bytes(tail)
    for key, records in snapshots.items():
        end, epoch = key if isinstance(key, tuple) else (key, 1)
        (d / kraft.checkpoint_name(end, epoch)).write_bytes(kraft.build_snapshot(records, epoch=epoch,
                                                                                 timestamp=T0 + end - 1))
    return d


#: the state below offset 14 (broker 3 fenced at 13, nothing else yet)
SNAPSHOT_14 = [*(r for r in SNAPSHOT_13 if r[0] != "RegisterBrokerRecord"),
               *(("RegisterBrokerRecord", 3, dict(broker_registration(b, r, 9 + b)[2], fenced=b == 3))
                 for b, r in ((1, "a"), (2, "b"), (3, None)))]


def _bridged(items: list) -> list:
    return [(type(e).__name__, e.position, getattr(e, "event", None) or e.cause) for e in items
            if not isinstance(e, (Finding, TimelineEnd)) and 13 <= e.position <= 16]


def test_the_snapshot_past_the_gap_and_the_records_it_holds(tmp_path) -> None:
    """Gap 13..14, snapshot ending at 16: bridged when record 15 is read, which it holds (so not
    replayed: orders-1's leader epoch stays 1); the log goes on at 16."""
    items = _timeline(_gapped(tmp_path, (13, 15), {16: SNAPSHOT_16}))
    assert _bridged(items) == [("BrokerEvent", 15, "fenced"), ("PartitionEvent", 15, "unknown"),
                               ("PartitionEvent", 15, "unknown"), ("ControllerEvent", 16, "elected")]
    held = [e.evidence for e in items if isinstance(e, PartitionEvent) and e.position == 15]
    assert held == ["as 00000000000000000016-0000000001.checkpoint holds it (offsets 13..14 are missing from "
                    "the copy)"] * 2
    assert [e.after.leader_epoch for e in items if isinstance(e, PartitionEvent) and e.partition == 1
            and e.position in (15, 24)] == [1]


def test_a_snapshot_inside_the_gap_bridges_part_of_it(tmp_path) -> None:
    """Snapshots at 14 (inside the gap 13..15) and 16: both bridge, the gap as found each time."""
    items = _timeline(_gapped(tmp_path, (13, 16), {14: SNAPSHOT_14, 16: SNAPSHOT_16}))
    assert _bridged(items) == [("BrokerEvent", 13, "fenced"), ("PartitionEvent", 15, "unknown"),
                               ("PartitionEvent", 15, "unknown"), ("ControllerEvent", 16, "elected")]
    assert {e.evidence for e in items if isinstance(e, PartitionEvent) and e.position == 15} == {
        "as 00000000000000000016-0000000001.checkpoint holds it (offsets 13..15 are missing from the copy)"}


def test_of_two_snapshots_ending_at_one_offset_the_highest_epoch_bridges(tmp_path) -> None:
    unregistered = [r for r in SNAPSHOT_16 if not (r[0] == "RegisterBrokerRecord" and r[2]["broker_id"] == 3)]
    items = _timeline(_gapped(tmp_path, (13, 16), {(16, 1): SNAPSHOT_16, (16, 2): unregistered}))
    assert [(e.broker, e.event) for e in items if isinstance(e, BrokerEvent) and e.position == 15] == [
        (3, "unregistered")]
    assert {e.evidence for e in items if isinstance(e, PartitionEvent) and e.position == 15} == {
        "as 00000000000000000016-0000000002.checkpoint holds it (offsets 13..15 are missing from the copy)"}


def test_records_failing_for_want_of_the_gap_are_not_findings(tmp_path) -> None:
    """Until a snapshot bridges a gap, what the records after it refuse is not reported (the
    gap's finding says why); counter-case: bridged, the same refused record is a finding."""
    extra = [[("FenceBrokerRecord", 0, {"id": 9, "epoch": 1})]]
    unbridged = _timeline(_gapped(tmp_path / "a", (13, 16), {}, extra=extra))
    assert [f.kind for f in unbridged if isinstance(f, Finding)] == ["kraft_offset_gap"]
    bridged = _timeline(_gapped(tmp_path / "b", (13, 16), {16: SNAPSHOT_16}, extra=extra))
    assert [(f.kind, f.details) for f in bridged if isinstance(f, Finding)] == [
        ("kraft_offset_gap", {"expected": 13, "actual": 16}), ("kraft_invalid_record", {"offset": 28, "broker_id": 9})]


@pytest.mark.parametrize("bounds,bridged,end", [
    pytest.param({"to_offset": 15}, True, 15, id="to-offset-at-the-snapshot"),
    pytest.param({"to_offset": 14}, False, 12, id="to-offset-before-the-snapshot"),
    pytest.param({"to_time": T0 + 15}, True, 15, id="to-time-at-the-snapshot"),
    pytest.param({"to_time": T0 + 14}, False, 12, id="to-time-before-the-snapshot"),
])
def test_a_bridge_past_the_end_is_not_taken(tmp_path, bounds, bridged, end) -> None:
    items = _timeline(_gapped(tmp_path, (13, 16), {16: SNAPSHOT_16}), **bounds)
    assert (bool([e for e in items if isinstance(e, PartitionEvent) and e.position == 15]), items[-1].end) == (
        bridged, end)


BEFORE_THE_BRIDGE = [(12, T0 + 8, "snapshot"), (12, T0 + 8, "snapshot"), (15, T0 + 15, "unknown"),
                     (15, T0 + 15, "unknown")]
AT_THE_BRIDGE = [(15, T0 + 15, "snapshot"), (15, T0 + 15, "snapshot")]


@pytest.mark.parametrize("bounds,shown", [
    # the window starts before the bridge: the state at 12 (its batch stamped T0 + 8), then the bridge's events
    pytest.param({"from_offset": 14}, BEFORE_THE_BRIDGE, id="from-offset-inside-the-gap"),
    pytest.param({"from_time": T0 + 14}, BEFORE_THE_BRIDGE, id="from-time-before-the-snapshot"),
    # the bridge is the state the window starts from, at the snapshot's time: no bridge events
    pytest.param({"from_offset": 15}, AT_THE_BRIDGE, id="from-offset-at-the-snapshot"),
    pytest.param({"from_time": T0 + 15}, AT_THE_BRIDGE, id="from-time-at-the-snapshot"),
])
def test_a_window_around_a_bridge(tmp_path, bounds, shown) -> None:
    items = _timeline(_gapped(tmp_path, (13, 16), {16: SNAPSHOT_16}), to_offset=16, **bounds)
    assert [(e.position, e.time, e.cause) for e in items if isinstance(e, PartitionEvent)] == shown
    assert items[-1].start == shown[0][0]


def test_watch_across_a_bridge(tmp_path) -> None:
    """Called at the bridge's last offset; a snapshot ending where the gap starts (13) holds
    nothing missing and is passed over."""
    seen: list = []
    files = find_kraft_files([_gapped(tmp_path, (13, 16), {13: SNAPSHOT_13, 16: SNAPSHOT_16})])
    list(iter_kraft_timeline(files, watch=lambda offset, image: seen.append(offset)))
    assert seen == [*range(-1, 13), *range(15, 28)]


def test_an_unreadable_snapshot_past_the_gap_bridges_nothing(tmp_path) -> None:
    d = _gapped(tmp_path, (13, 16), {})
    (d / kraft.checkpoint_name(16, 1)).write_bytes(b"junk")
    items = _timeline(d)
    found = [x for x in items if isinstance(x, Finding)]
    unreadable = str(d / kraft.checkpoint_name(16, 1))
    assert [(f.kind, f.path) for f in found[1:]] == [("truncated_tail", unreadable),
                                                     ("kraft_incomplete_snapshot", unreadable)]
    assert found[0].details == {"expected": 13, "actual": 16}
    assert items[-1].findings == found
    assert [e for e in items if not isinstance(e, (Finding, TimelineEnd)) and e.position == 15] == []
