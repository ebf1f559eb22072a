"""Replaying a KRaft ``__cluster_metadata-0`` directory to several offsets. The evidence is written
by kreplica's KRaft writer (:func:`write_metadata_dir`); every expectation below is worked by
hand from the record list and Kafka's replay rules (``PartitionRegistration.merge``: a change
bumps the partition epoch, and the leader epoch when it names a leader)."""

from __future__ import annotations

import json

import pytest

from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import find_kraft_files, load_kraft_state
from kreplica.report.cluster_state import cluster_state_to_dict

ORDERS = "8um0e5Bd9LwnM_Jm3NHOHA"
PAYMENTS = "i0R5fWe7xePgy_14PzXogQ"
JUNK = "PO89kIAdqvyBxJUUcsQbKQ"
CLUSTER = "148NWzG57-5oSfaEocvimA"


def _broker(i, rack, epoch):
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
         _broker(1, "a", 10), _broker(2, "b", 11), _broker(3, None, 12)]),   # 2-4
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
    ("RegisterBrokerRecord", 3, dict(_broker(1, "a", 10)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(_broker(2, "b", 11)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(_broker(3, None, 12)[2], fenced=False)),
    ("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),
    _partition(ORDERS, 0, (1, 2, 3), 1),
    _partition(ORDERS, 1, (2, 3, 1), 2),
    ("ConfigRecord", 0, {"resource_type": 2, "resource_name": "orders", "name": "min.insync.replicas", "value": "2"}),
    ("ConfigRecord", 0, {"resource_type": 4, "resource_name": "", "name": "min.insync.replicas", "value": "1"}),
]


def _batches(first_offset: int = 0):
    offset = 0
    for epoch, records in HISTORY:
        if offset >= first_offset:
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
        (d / "00000000000000000013.log").write_bytes(b"".join(_batches(13)))
    else:
        (d / "00000000000000000000.log").write_bytes(b"".join(_batches()))
    (d / "quorum-state").write_text("{}")
    (d / "00000000000000000000-0000000000-x.checkpoint.part").write_bytes(b"junk")
    return d


def _parts(state):
    return {f"{t.name}-{p.partition}": (p.replicas, p.adding_replicas, p.leader, p.leader_epoch, p.isr, p.version,
                                        p.leader_recovery_state)
            for t in state.topics for p in t.partitions}


@pytest.fixture(params=[pytest.param(False, id="log-only"), pytest.param(True, id="snapshot+log")])
def metadata_dir(request, tmp_path):
    return write_metadata_dir(tmp_path, with_snapshot=request.param)


def test_at_offset_4_brokers_registered_but_fenced(tmp_path):
    s = load_kraft_state([write_metadata_dir(tmp_path)], at_offset=4)
    assert s.position == {"offset": 4} and s.cluster_id == CLUSTER
    assert (s.controller.broker_id, s.controller.epoch) == (3000, 1)
    assert [(b.id, b.alive, b.fenced, b.rack, b.broker_epoch) for b in s.brokers] == [
        (1, False, True, "a", 10), (2, False, True, "b", 11), (3, False, True, None, 12)]
    assert s.brokers[0].endpoints == ("PLAINTEXT://b1:9092",) and s.topics == ()


def test_at_offset_12_healthy(metadata_dir):
    s = load_kraft_state([metadata_dir], at_offset=12)
    assert [b.id for b in s.brokers if b.alive] == [1, 2, 3]
    assert _parts(s) == {"orders-0": ((1, 2, 3), (), 1, 0, (1, 2, 3), 0, 0),
                         "orders-1": ((2, 3, 1), (), 2, 0, (2, 3, 1), 0, 0)}
    assert s.topic("orders").topic_id == ORDERS and s.topic("orders").config == {"min.insync.replicas": "2"}
    assert s.broker_configs == {"<default>": {"min.insync.replicas": "1"}}
    assert all(getattr(s.health, h) == () for h in ("offline", "under_replicated", "under_min_isr"))


def test_at_offset_15_fenced_leader(metadata_dir):
    s = load_kraft_state([metadata_dir], at_offset=15)
    assert [b.id for b in s.brokers if b.alive] == [1, 2]
    # isr-only change: partition epoch +1, leader epoch unchanged; leader change: both +1
    assert _parts(s) == {"orders-0": ((1, 2, 3), (), 1, 0, (1, 2), 1, 0),
                         "orders-1": ((2, 3, 1), (), 3, 1, (3,), 1, 0)}
    h = s.health
    assert h.no_leader == () and h.leader_not_alive == ("orders-1",) and h.offline == ("orders-1",)
    assert h.under_replicated == ("orders-0", "orders-1") and h.live_isr_empty == ("orders-1",)
    assert h.under_min_isr == ("orders-1",) and h.preferred_leader_not_leader == ("orders-1",)
    assert s.has_problems


@pytest.mark.parametrize("offset, topics", [
    pytest.param(19, ["orders"], id="inside-open-transaction"),
    pytest.param(20, ["orders", "payments"], id="transaction-committed"),
    pytest.param(23, ["orders", "payments"], id="aborted-transaction-dropped"),
])
def test_transactions_apply_atomically(metadata_dir, offset, topics):
    s = load_kraft_state([metadata_dir], at_offset=offset)
    assert [t.name for t in s.topics] == topics
    assert (s.controller.broker_id, s.controller.epoch) == (3001, 2)


def test_end_of_log(metadata_dir):
    s = load_kraft_state([metadata_dir])
    assert s.position == {"offset": 27} and s.findings == ()
    assert [b.id for b in s.brokers] == [1, 2]
    assert _parts(s) == {"orders-0": ((1, 2, 3, 4), (4,), 1, 0, (1, 2), 2, 0),
                         "orders-1": ((2, 3, 1), (), 3, 1, (3,), 1, 0)}
    assert s.topic("orders").config == {}
    assert s.health.reassigning == ("orders-0",)
    assert s.pending.reassignments == ({"topic": "orders", "partition": 0, "replicas": [1, 2, 3, 4]},)
    # broker 3 is gone entirely: orders-1's leader is not a live broker; min ISR now the default 1
    assert s.health.under_min_isr == ("orders-1",) and s.health.offline == ("orders-1",)
    doc = cluster_state_to_dict(s)
    assert json.loads(json.dumps(doc)) == doc and doc["source_kind"] == "kraft"
    assert doc["topics"][0]["partitions"][0]["controller_epoch"] is None
    assert doc["topics"][0]["partitions"][0]["version"] == 2


def test_snapshot_is_used_when_it_covers_the_target(tmp_path):
    d = write_metadata_dir(tmp_path, with_snapshot=True)
    files = find_kraft_files([d])
    assert [s[:2] for s in files.snapshots] == [(13, 1)] and [s[0] for s in files.segments] == [13]
    s = load_kraft_state([d], at_offset=12)
    assert s.position == {"offset": 12} and [b.id for b in s.brokers if b.alive] == [1, 2, 3]
    # below the snapshot's end offset and no log to rebuild from: nothing is known
    early = load_kraft_state([d], at_offset=10)
    assert early.brokers == () and early.position == {"offset": -1}


def test_damaged_snapshot_is_skipped(tmp_path):
    d = write_metadata_dir(tmp_path, with_snapshot=True)
    snap = d / kraft.checkpoint_name(13, 1)
    raw = bytearray(snap.read_bytes())
    raw[-10] ^= 0xFF
    snap.chmod(0o644)
    snap.write_bytes(bytes(raw))
    s = load_kraft_state([d])
    assert "crc_mismatch" in [f.kind for f in s.findings]
    # without the snapshot, the log from offset 13 alone: brokers were never registered
    assert s.brokers == ()


def test_stop_at_time(tmp_path):
    d = write_metadata_dir(tmp_path)
    s = load_kraft_state([d], at_time=1_700_000_000_000 + 12)
    assert s.position == {"offset": 12}


@pytest.mark.parametrize("with_snapshot", [pytest.param(False, id="log"), pytest.param(True, id="snapshot")])
def test_load_cluster_state_detects_kraft(tmp_path, with_snapshot):
    from kreplica.model.cluster import load_cluster_state
    write_metadata_dir(tmp_path, with_snapshot=with_snapshot)
    s = load_cluster_state([tmp_path], at_offset=15)       # the log dir holding __cluster_metadata-0
    assert s.source_kind == "kraft" and s.position == {"offset": 15}
    with pytest.raises(ValueError):
        load_cluster_state([tmp_path], at_zxid=3)


def test_load_cluster_state_refuses_unknown_sources(tmp_path):
    from kreplica.formats.errors import FormatError
    from kreplica.model.cluster import load_cluster_state
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(FormatError):
        load_cluster_state([tmp_path])


def test_broker_changes_need_the_registered_epoch(tmp_path):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    batches = [
        kraft.build_metadata_batch([_broker(1, "a", 10)], base_offset=0, epoch=1, timestamp=1),
        kraft.build_metadata_batch([("UnfenceBrokerRecord", 0, {"id": 1, "epoch": 9}),      # stale epoch
                                    ("UnfenceBrokerRecord", 0, {"id": 2, "epoch": 10}),     # unknown broker
                                    ("UnfenceBrokerRecord", 0, {"id": 1, "epoch": 10})],
                                   base_offset=1, epoch=1, timestamp=1),
    ]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    at2 = load_kraft_state([d], at_offset=2)
    assert at2.brokers[0].fenced is True
    assert [f.details["broker_id"] for f in at2.findings] == [1, 2]
    assert load_kraft_state([d]).brokers[0].alive is True


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LOG = b"".join(_batches())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_LOG) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(_LOG)))
def test_damaged_metadata_log_never_crashes_replay(patches, cut):
    import tempfile
    from pathlib import Path
    data = bytearray(_LOG)
    for at, value in patches:
        data[at] = value
    with tempfile.TemporaryDirectory() as d:
        Path(d, "00000000000000000000.log").write_bytes(bytes(data[:cut]))
        state = load_kraft_state([d])
        cluster_state_to_dict(state)
