"""The controller's steps per partition: the spec's worked example ORS={1,2,3} -> TRS={4,5,6}
(kafka-algorithms §5.5), row for row, for the KIP-455 and the <= 2.3 ZooKeeper controllers, and
KRaft's rules."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.transitions import controller_for, transition_table
from kreplica.model.cluster.assignment import PartitionReplicas
from kreplica.model.versions import parse_kafka_version

START = PartitionReplicas("t", 0, (1, 2, 3), leader=1, leader_epoch=10, isr=(1, 2, 3), version=20)


def _rows(table):
    return [(r.step, list(r.replicas), list(r.adding), list(r.removing), r.leader, sorted(r.isr),
             r.leader_epoch_delta, r.version_delta) for r in table.rows]


def test_kip455_worked_example_row_for_row() -> None:
    # | Step | replicas / adding / removing | Leader | ISR | leader_epoch | state zkVersion |
    assert _rows(transition_table(START, (4, 5, 6), "zookeeper-kip455")) == [
        ("initial", [1, 2, 3], [], [], 1, [1, 2, 3], 0, 0),
        ("U1", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 0, 0),
        ("A1-A2", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 1, 1),
        ("catch-up", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3, 4, 5, 6], 1, 4),
        ("B3", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 4, [1, 2, 3, 4, 5, 6], 2, 5),
        ("B4", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 4, [4, 5, 6], 5, 8),
        ("B6", [4, 5, 6], [], [], 4, [4, 5, 6], 5, 8),
    ]


def test_legacy_worked_example_same_leader_isr_epochs() -> None:
    rows = _rows(transition_table(START, (4, 5, 6), "zookeeper-legacy"))
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in rows] == [
        ("initial", [1, 2, 3], 1, [1, 2, 3], 0),
        ("1", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3], 0),
        ("2", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3], 1),
        ("4", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3, 4, 5, 6], 1),
        ("7", [1, 2, 3, 4, 5, 6], 4, [1, 2, 3, 4, 5, 6], 2),
        ("8", [1, 2, 3, 4, 5, 6], 4, [4, 5, 6], 5),
        ("10", [4, 5, 6], 4, [4, 5, 6], 5),
    ]


def test_kraft_start_then_one_record_per_isr_expansion_completing_in_the_last() -> None:
    rows = _rows(transition_table(START, (4, 5, 6), "kraft"))
    assert rows[1] == ("start", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 0, 1)
    assert rows[-1] == ("catch-up", [4, 5, 6], [], [], 4, [4, 5, 6], 1, 4)
    assert len(rows) == 5


def test_kraft_removal_covered_by_isr_completes_at_once() -> None:
    rows = _rows(transition_table(START, (1, 2), "kraft"))
    assert rows[1:] == [("start", [1, 2], [], [], 1, [1, 2], 1, 1)]


def test_kip455_leader_in_target_is_bumped_not_elected() -> None:
    rows = _rows(transition_table(START, (1, 2, 4), "zookeeper-kip455"))
    b3 = next(r for r in rows if r[0] == "B3")
    assert b3[4] == 1 and b3[6] == 2
    assert rows[-1] == ("B6", [1, 2, 4], [], [], 1, [1, 2, 4], 3, 4)


def test_absolute_epochs_from_the_source() -> None:
    table = transition_table(START, (4, 5, 6), "zookeeper-kip455")
    assert (table.leader_epoch, table.version) == (10, 20)


@pytest.mark.parametrize(("version", "kind", "expected"), [
    pytest.param("2.3", "zookeeper", "zookeeper-legacy", id="zk-2.3"),
    pytest.param("2.4", "zookeeper", "zookeeper-kip455", id="zk-2.4"),
    pytest.param("4.0", "zookeeper", "zookeeper-kip455", id="zk-source-stays-zk"),
    pytest.param("3.9", "kraft", "kraft", id="kraft-source"),
    pytest.param("4.0", "assignment", "kraft", id="file-4.0"),
    pytest.param("3.6", "assignment", "zookeeper-kip455", id="file-3.6"),
])
def test_controller_per_version(version, kind, expected) -> None:
    assert controller_for(parse_kafka_version(version), kind) == expected
