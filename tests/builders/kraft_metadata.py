"""A KRaft metadata directory written by kreplica's KRaft writer: a history of 28 records (brokers,
topics, partition changes, a metadata transaction committed and one aborted), with or without a
snapshot at end offset 13 (:func:`write_metadata_dir`)."""

from __future__ import annotations

from kreplica.formats.kraft import records as kraft


ORDERS = "8um0e5Bd9LwnM_Jm3NHOHA"
PAYMENTS = "i0R5fWe7xePgy_14PzXogQ"
JUNK = "PO89kIAdqvyBxJUUcsQbKQ"
CLUSTER = "148NWzG57-5oSfaEocvimA"


def broker_registration(i, rack, epoch):
    return ("RegisterBrokerRecord", 3, {
        "broker_id": i, "incarnation_id": JUNK, "broker_epoch": epoch, "rack": rack, "fenced": True,
        "end_points": ({"name": "PLAINTEXT", "host": f"b{i}", "port": 9092, "security_protocol": 0},),
        "features": (), "log_dirs": ()})


def _leader(leader, epoch):
    return ("ctl", kraft.LEADER_CHANGE, {"version": 0, "leader_id": leader,
                                         "voters": ({"voter_id": leader},), "granting_voters": ()}, epoch)


def _partition(topic, pid, replicas, leader):
    return ("PartitionRecord", 0, {"partition_id": pid, "topic_id": topic, "replicas": replicas,
                                   "isr": replicas, "leader": leader, "leader_epoch": 0, "partition_epoch": 0})


def _change(topic, pid, **fields):
    return ("PartitionChangeRecord", 0, dict({"partition_id": pid, "topic_id": topic}, **fields))


# batches in log order: (epoch, [records]); offsets are assigned consecutively from 0
HISTORY = [
    (1, [_leader(3000, 1)]),                                                     # 0
    (1, [("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 20}),  # 1
         broker_registration(1, "a", 10), broker_registration(2, "b", 11), broker_registration(3, None, 12)]),   # 2-4
    (1, [("UnfenceBrokerRecord", 0, {"id": 1, "epoch": 10}),                 # 5
         ("UnfenceBrokerRecord", 0, {"id": 2, "epoch": 11}),                 # 6
         ("BrokerRegistrationChangeRecord", 0, {"broker_id": 3, "broker_epoch": 12, "fenced": -1})]),  # 7
    (1, [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),         # 8
         _partition(ORDERS, 0, (1, 2, 3), 1),                                # 9
         _partition(ORDERS, 1, (2, 3, 1), 2),                                # 10
         ("ConfigRecord", 0, {"resource_type": 2, "resource_name": "orders", "name": "min.insync.replicas",
                              "value": "2"}),                                # 11
         ("ConfigRecord", 0, {"resource_type": 4, "resource_name": "", "name": "min.insync.replicas",
                              "value": "1"})]),                              # 12
    (1, [("FenceBrokerRecord", 0, {"id": 3, "epoch": 12}),                   # 13
         _change(ORDERS, 0, isr=(1, 2))]),                                   # 14
    (1, [_change(ORDERS, 1, leader=3, isr=(3,))]),                           # 15
    (2, [_leader(3001, 2)]),                                                 # 16
    (2, [("BeginTransactionRecord", 0, {"name": "create payments"}),         # 17
         ("TopicRecord", 0, {"name": "payments", "topic_id": PAYMENTS}),     # 18
         _partition(PAYMENTS, 0, (1, 2), 1),                                 # 19
         ("EndTransactionRecord", 0, {})]),                                  # 20
    (2, [("BeginTransactionRecord", 0, {}),                                  # 21
         ("TopicRecord", 0, {"name": "junk", "topic_id": JUNK}),             # 22
         ("AbortTransactionRecord", 0, {"reason": "test"})]),                # 23
    (2, [_change(ORDERS, 0, replicas=(1, 2, 3, 4), adding_replicas=(4,)),    # 24
         ("RemoveTopicRecord", 0, {"topic_id": PAYMENTS}),                   # 25
         ("UnregisterBrokerRecord", 0, {"broker_id": 3, "broker_epoch": 12}),  # 26
         ("ConfigRecord", 0, {"resource_type": 2, "resource_name": "orders", "name": "min.insync.replicas",
                              "value": None})]),                             # 27
]

# the state below offset 13, as a controller would write it into a snapshot
SNAPSHOT_13 = [
    ("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 20}),
    ("RegisterBrokerRecord", 3, dict(broker_registration(1, "a", 10)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(broker_registration(2, "b", 11)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(broker_registration(3, None, 12)[2], fenced=False)),
    ("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),
    _partition(ORDERS, 0, (1, 2, 3), 1),
    _partition(ORDERS, 1, (2, 3, 1), 2),
    ("ConfigRecord", 0, {"resource_type": 2, "resource_name": "orders", "name": "min.insync.replicas", "value": "2"}),
    ("ConfigRecord", 0, {"resource_type": 4, "resource_name": "", "name": "min.insync.replicas", "value": "1"}),
]


def history_batches(first_offset: int = 0, end_offset: int | None = None):
    """The batches of :data:`HISTORY` whose base offset is at least ``first_offset`` and below
    ``end_offset``."""
    offset = 0
    for epoch, records in HISTORY:
        if offset >= first_offset and (end_offset is None or offset < end_offset):
            if records[0][0] == "ctl":
                yield kraft.build_control_batch([(r[1], r[2]) for r in records], base_offset=offset,
                                                epoch=epoch, timestamp=1_700_000_000_000 + offset)
            else:
                yield kraft.build_metadata_batch(records, base_offset=offset, epoch=epoch,
                                                 timestamp=1_700_000_000_000 + offset)
        offset += len(records)


def write_metadata_dir(root, *, with_snapshot: bool = False):
    """A log dir with ``meta.properties`` and ``__cluster_metadata-0``: the whole history in one
    segment, or a snapshot at end offset 13 and a segment starting there."""
    (root / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={CLUSTER}\n")
    d = root / "__cluster_metadata-0"
    d.mkdir()
    if with_snapshot:
        (d / kraft.checkpoint_name(13, 1)).write_bytes(kraft.build_snapshot(SNAPSHOT_13, epoch=1, timestamp=1))
        (d / "00000000000000000013.log").write_bytes(b"".join(history_batches(13)))
    else:
        (d / "00000000000000000000.log").write_bytes(b"".join(history_batches()))
    (d / "quorum-state").write_text("{}")
    (d / "00000000000000000000-0000000000-x.checkpoint.part").write_bytes(b"junk")
    return d
