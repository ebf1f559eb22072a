"""The causes of ``kreplica timeline`` on a hand-built KRaft metadata log (written with
``formats.kraft``'s writers), the records shaped as ``ReplicationControlManager`` writes them
(kafka-algorithms spec §4.6, §5.5): the same causes as from ZooKeeper, from PartitionRecord and
PartitionChangeRecord."""

from __future__ import annotations

from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import find_kraft_files

ORDERS = "8um0e5Bd9LwnM_Jm3NHOHA"
JUNK = "PO89kIAdqvyBxJUUcsQbKQ"


def _broker(i):
    return ("RegisterBrokerRecord", 3, {
        "broker_id": i, "incarnation_id": JUNK, "broker_epoch": 10 + i, "rack": None, "fenced": True,
        "end_points": ({"name": "PLAINTEXT", "host": f"b{i}", "port": 9092, "security_protocol": 0},),
        "features": (), "log_dirs": ()})


def _change(pid, **fields):
    return ("PartitionChangeRecord", 0, dict({"partition_id": pid, "topic_id": ORDERS}, **fields))


HISTORY = [
    [("ctl", kraft.LEADER_CHANGE, {"version": 0, "leader_id": 3000, "voters": (), "granting_voters": ()})],  # 0
    [_broker(1), _broker(2), _broker(3), _broker(4)],                                           # 1-4
    [("UnfenceBrokerRecord", 0, {"id": b, "epoch": 10 + b}) for b in (1, 2, 3, 4)],             # 5-8
    [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),                                # 9
     ("PartitionRecord", 0, {"partition_id": 0, "topic_id": ORDERS, "replicas": (1, 2, 3), "isr": (1, 2, 3),
                             "leader": 1, "leader_epoch": 0, "partition_epoch": 0}),            # 10
     ("PartitionRecord", 0, {"partition_id": 1, "topic_id": ORDERS, "replicas": (2, 3, 1), "isr": (2, 3, 1),
                             "leader": 2, "leader_epoch": 0, "partition_epoch": 0})],           # 11
    [_change(0, isr=(1, 2))],                                        # 12 AlterPartition from leader 1
    [_change(0, isr=(1, 2, 3))],                                     # 13 3 caught up again
    # 14-16: broker 1's controlled shutdown: marked, its leadership moved, then it is fenced
    [("BrokerRegistrationChangeRecord", 1, {"broker_id": 1, "broker_epoch": 11, "in_controlled_shutdown": 1}),
     _change(0, leader=2, isr=(2, 3)), _change(1, isr=(2, 3))],
    [("BrokerRegistrationChangeRecord", 0, {"broker_id": 1, "broker_epoch": 11, "fenced": 1})],   # 17
    # 18-19: broker 3 stops heartbeating: fenced, then removed from the ISRs
    [("FenceBrokerRecord", 0, {"id": 3, "epoch": 13}), _change(0, isr=(2,))],
    # 20: broker 2 fenced too; 21: orders-1 goes leaderless; 22: unclean election of 4
    [("FenceBrokerRecord", 0, {"id": 2, "epoch": 12})],
    [_change(1, leader=-1, isr=(2,))],
    [_change(1, leader=4, isr=(4,), leader_recovery_state=1)],
    # 23-27: reassignment of orders-0 to [4,2]: start, 4 joins, completion, then the preferred election
    [("UnfenceBrokerRecord", 0, {"id": 2, "epoch": 12}), _change(0, replicas=(4, 2, 3), adding_replicas=(4,),
                                                                 removing_replicas=(3,))],
    [_change(0, isr=(2, 4))],
    [_change(0, leader=2, replicas=(4, 2), adding_replicas=(), removing_replicas=())],   # completes: epoch bump
    [_change(0, leader=4)],                                          # back to the preferred replica
    [("RemoveTopicRecord", 0, {"topic_id": ORDERS})],
]


def write_log(root):
    d = root / "__cluster_metadata-0"
    d.mkdir()
    out, offset = [], 0
    for records in HISTORY:
        ts = 1_700_000_000_000 + offset * 1000
        if records[0][0] == "ctl":
            out.append(kraft.build_control_batch([(r[1], r[2]) for r in records], base_offset=offset, epoch=1,
                                                 timestamp=ts))
        else:
            out.append(kraft.build_metadata_batch(records, base_offset=offset, epoch=1, timestamp=ts))
        offset += len(records)
    (d / "00000000000000000000.log").write_bytes(b"".join(out))
    return d


def _events(tmp_path, **kw):
    items = list(iter_kraft_timeline(find_kraft_files([write_log(tmp_path)]), **kw))
    assert isinstance(items[-1], TimelineEnd)
    return items[:-1]


def test_causes_from_partition_change_records(tmp_path):
    parts = [(ev.position, ev.name, ev.cause, ev.by) for ev in _events(tmp_path) if isinstance(ev, PartitionEvent)]
    assert parts == [
        (10, "orders-0", "created", "controller"),
        (11, "orders-1", "created", "controller"),
        (12, "orders-0", "isr_shrink", "leader"),
        (13, "orders-0", "isr_expand", "leader"),
        (15, "orders-0", "controlled_shutdown", "controller"),
        (16, "orders-1", "controlled_shutdown", "controller"),
        (19, "orders-0", "isr_shrink", "controller"),
        (21, "orders-1", "leader_election", "controller"),
        (22, "orders-1", "unclean_leader_election", "controller"),
        (25, "orders-0", "isr_expand", "leader"),
        (26, "orders-0", "reassignment", "controller"),
        (27, "orders-0", "preferred_election", "controller"),
        (28, "orders-0", "deleted", "controller"),
        (28, "orders-1", "deleted", "controller"),
    ]


def test_epochs_follow_partition_registration_merge(tmp_path):
    ev = {(e.position, e.name): e for e in _events(tmp_path) if isinstance(e, PartitionEvent)}
    assert (ev[(12, "orders-0")].after.leader_epoch, ev[(12, "orders-0")].after.partition_epoch) == (0, 1)
    assert (ev[(15, "orders-0")].after.leader_epoch, ev[(15, "orders-0")].after.partition_epoch) == (1, 3)
    assert ev[(21, "orders-1")].offline and ev[(21, "orders-1")].after.leader == -1
    assert ev[(22, "orders-1")].after.leader_recovery_state == 1


def test_broker_and_controller_events(tmp_path):
    items = _events(tmp_path)
    brokers = [(b.position, b.broker, b.event) for b in items if isinstance(b, BrokerEvent)]
    assert brokers[:4] == [(1, 1, "registered"), (2, 2, "registered"), (3, 3, "registered"), (4, 4, "registered")]
    assert brokers[8:] == [(14, 1, "controlled_shutdown"), (17, 1, "fenced"), (18, 3, "fenced"), (20, 2, "fenced"),
                           (23, 2, "unfenced")]
    assert [(c.position, c.event, c.controller, c.controller_epoch) for c in items
            if isinstance(c, ControllerEvent)] == [(0, "elected", 3000, 1)]


def test_from_offset_starts_with_the_state_there(tmp_path):
    items = _events(tmp_path, from_offset=20, to_offset=22)
    parts = [(ev.position, ev.name, ev.cause) for ev in items if isinstance(ev, PartitionEvent)]
    assert parts == [(20, "orders-0", "snapshot"), (20, "orders-1", "snapshot"),
                     (21, "orders-1", "leader_election"), (22, "orders-1", "unclean_leader_election")]
