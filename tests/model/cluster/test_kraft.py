"""Replaying a KRaft ``__cluster_metadata-0`` directory to several offsets. The evidence is written
by kreplica's KRaft writer (:func:`write_metadata_dir`); every expectation below is worked by
hand from the record list and Kafka's replay rules (``PartitionRegistration.merge``: a change
bumps the partition epoch, and the leader epoch when it names a leader)."""

from __future__ import annotations

import json

import pytest

from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import find_kraft_files, load_kraft_state
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.builders.kraft_metadata import CLUSTER, ORDERS, broker_registration, history_batches, write_metadata_dir


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
        kraft.build_metadata_batch([broker_registration(1, "a", 10)], base_offset=0, epoch=1, timestamp=1),
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

_LOG = b"".join(history_batches())


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
