"""A KRaft metadata log with offsets missing from the copy, and a snapshot beyond them: the
timeline bridges the gap with the snapshot, as ``cluster-state --at`` does (it starts from the
newest snapshot at or before its point, ``kraft_start``): what differs between the image before
the gap and the snapshot's is reported at the snapshot's last offset, its cause ``unknown`` (the
records that say why are missing). Kafka itself never replays across missing offsets: a broker's
metadata loader starts from a snapshot and reads the log after it (``MetadataLoader``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.timeline.events import UNKNOWN, BrokerEvent, ControllerEvent, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import cluster_state_from_kraft, find_kraft_files
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.builders.kraft_metadata import CLUSTER, ORDERS, SNAPSHOT_13, broker_registration, history_batches


def _orders(pid: int, replicas: tuple, leader: int, isr: tuple, leader_epoch: int, partition_epoch: int):
    return ("PartitionRecord", 0, {"partition_id": pid, "topic_id": ORDERS, "replicas": replicas, "isr": isr,
                                   "leader": leader, "leader_epoch": leader_epoch, "partition_epoch": partition_epoch})


#: the state below offset 16 (broker 3 fenced at 13, orders-0's ISR shrunk to 1,2 at 14,
#: orders-1 led by 3 alone at 15), as a controller would write it into a snapshot
SNAPSHOT_16 = [
    *(r for r in SNAPSHOT_13 if r[0] not in ("PartitionRecord", "RegisterBrokerRecord")),
    ("RegisterBrokerRecord", 3, dict(broker_registration(1, "a", 10)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(broker_registration(2, "b", 11)[2], fenced=False)),
    ("RegisterBrokerRecord", 3, dict(broker_registration(3, None, 12)[2], fenced=True)),
    _orders(0, (1, 2, 3), 1, (1, 2), 0, 1),
    _orders(1, (2, 3, 1), 3, (3,), 1, 1),
]


def _gapped_dir(root: Path, *, with_snapshot: bool) -> Path:
    """``__cluster_metadata-0``: offsets 0..12 in one segment, 13..15 missing, 16.. in the next;
    the snapshot at end offset 16 when asked."""
    (root / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={CLUSTER}\n")
    d = root / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"".join(history_batches(0, 13)))
    (d / "00000000000000000016.log").write_bytes(b"".join(history_batches(16)))
    if with_snapshot:
        (d / kraft.checkpoint_name(16, 1)).write_bytes(kraft.build_snapshot(SNAPSHOT_16, epoch=1, timestamp=99))
    (d / "quorum-state").write_text("{}")
    return d


def _timeline(root: Path, **bounds) -> list:
    return list(iter_kraft_timeline(find_kraft_files([str(root)]), **bounds))


def _at(events: list, position: int) -> list:
    return [e for e in events if not isinstance(e, (Finding, TimelineEnd)) and e.position == position]


def test_a_snapshot_past_the_gap_bridges_it(tmp_path: Path) -> None:
    events = _timeline(_gapped_dir(tmp_path, with_snapshot=True))
    gap = [e for e in events if isinstance(e, Finding) and e.kind == "kraft_offset_gap"]
    assert [g.details for g in gap] == [{"expected": 13, "actual": 16}]
    bridged = _at(events, 15)
    assert [(e.broker, e.event, e.time) for e in bridged if isinstance(e, BrokerEvent)] == [(3, "fenced", 99)]
    parts = [e for e in bridged if isinstance(e, PartitionEvent)]
    assert [(e.partition, e.cause, e.before.leader, e.after.leader, e.after.isr) for e in parts] == [
        (0, UNKNOWN, 1, 1, (1, 2)), (1, UNKNOWN, 2, 3, (3,))]
    assert all("offsets 13..15 are missing from the copy" in e.evidence for e in parts)
    # after the bridge the records apply again: offset 24 adds replica 4, 25 removes payments
    # (created at 19), 26 unregisters broker 3 — nothing refused for want of the gap's records
    assert [e.position for e in events if isinstance(e, PartitionEvent) and e.topic == "payments"] == [19, 25]
    assert (26, "unregistered") in [(e.position, e.event) for e in events if isinstance(e, BrokerEvent)]
    assert [e.kind for e in events if isinstance(e, Finding)] == ["kraft_offset_gap"]
    end = events[-1]
    assert isinstance(end, TimelineEnd) and end.end == 27


def test_without_the_snapshot_the_gap_stays_and_nothing_is_invented(tmp_path: Path) -> None:
    """Counter-case: no snapshot beyond the gap, so nothing is reported at 15 and broker 3 is
    never seen fenced (the record is missing); the change records after it still apply."""
    events = _timeline(_gapped_dir(tmp_path, with_snapshot=False))
    assert _at(events, 15) == []
    assert "fenced" not in [e.event for e in events if isinstance(e, BrokerEvent)]


@pytest.mark.parametrize("snapshot", [True, False], ids=["bridged", "not-bridged"])
def test_cluster_state_at_every_offset_is_the_fold(tmp_path: Path, snapshot: bool) -> None:
    """``cluster-state --at X`` (the newest snapshot at or before X, then the log) equals the
    timeline's image at X on both sides of the gap."""
    root = _gapped_dir(tmp_path, with_snapshot=snapshot)
    files = find_kraft_files([str(root)])
    folded = {}

    def watch(offset, image):
        doc = cluster_state_to_dict(image.state(files.source, {"offset": offset}, cluster_id=files.cluster_id))
        folded[offset] = {k: v for k, v in doc.items() if k not in ("source", "controller")}

    list(iter_kraft_timeline(files, watch=watch))
    assert 15 in folded if snapshot else 15 not in folded
    for offset, expected in folded.items():
        if offset < 0:
            continue
        doc = cluster_state_to_dict(cluster_state_from_kraft(files, at_offset=offset))
        assert {k: v for k, v in doc.items() if k not in ("source", "controller")} == expected, offset


def test_a_window_after_the_bridge_starts_from_the_snapshot(tmp_path: Path) -> None:
    """``--from 20``: the state at 20 (bridged at 15) is the start, no bridge events shown."""
    events = _timeline(_gapped_dir(tmp_path, with_snapshot=True), from_offset=20)
    starts = [e for e in events if isinstance(e, PartitionEvent) and e.topic == "orders"]
    assert {(e.partition, e.after.leader, e.after.isr) for e in starts if e.position == 20} == {
        (0, 1, (1, 2)), (1, 3, (3,))}
    assert _at(events, 15) == []
    assert not any(isinstance(e, ControllerEvent) and e.position < 20 for e in events)
