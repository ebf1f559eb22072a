"""Throttle configs as Kafka's tool computes them (the spec's ``ReassignPartitionsUnitTest.testMoveMap``
vector, kafka-algorithms §5.4, quoted), phases, and duration estimates."""

from __future__ import annotations

from kreplica.analysis.reassignment.phases import (
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_REPLICAS,
    phase_seconds,
    split_phases,
    throttle_configs,
)
from kreplica.analysis.reassignment.planner import Move, PartitionChange
from kreplica.model.cluster.assignment import PartitionReplicas as P


def test_move_map_vector() -> None:
    in_flight = [P("foo", 0, (1, 2, 3, 4), adding=(4,), removing=(3,)),
                 P("foo", 1, (4, 5, 6, 7, 8), adding=(7, 8), removing=(4, 5))]
    in_flight += [P("foo", i, (1, 2, 3, 4), adding=(3, 4), removing=(1, 2)) for i in range(2, 6)]
    current = {p.key: p for p in in_flight} | {("bar", 0): P("bar", 0, (2, 3, 4))}
    proposal = {("foo", 0): (1, 2, 5), ("foo", 2): (3, 4), ("foo", 3): (5, 6), ("foo", 4): (3,),
                ("foo", 5): (3, 4, 5, 6), ("bar", 0): (1, 2, 3)}
    t = throttle_configs(proposal, current, 1000, in_flight=in_flight)
    assert t.topics["foo"][LEADER_THROTTLED_REPLICAS] == "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2"
    assert t.topics["foo"][FOLLOWER_THROTTLED_REPLICAS] == "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6"
    assert t.topics["bar"] == {LEADER_THROTTLED_REPLICAS: "0:2,0:3,0:4", FOLLOWER_THROTTLED_REPLICAS: "0:1"}
    assert sorted(t.brokers) == list(range(1, 9))


def test_lists_sort_as_strings() -> None:
    current = {("t", p): P("t", p, (1, 2)) for p in (1, 10)}
    t = throttle_configs({("t", 1): (1, 3), ("t", 10): (1, 3)}, current, 1)
    assert t.topics["t"][LEADER_THROTTLED_REPLICAS] == "10:1,10:2,1:1,1:2"


def test_zookeeper_tool_rule() -> None:
    current = {("t", 0): P("t", 0, (1, 2)), ("t", 1): P("t", 1, (2, 3)), ("u", 0): P("u", 0, (7,))}
    t = throttle_configs({("t", 0): (1, 4), ("t", 1): (3, 2)}, current, 5, admin_api=False)
    assert t.topics["t"] == {LEADER_THROTTLED_REPLICAS: "0:1,0:2", FOLLOWER_THROTTLED_REPLICAS: "0:4"}
    assert sorted(t.brokers) == [1, 2, 3, 4]


def _change(p: int, moves: int, size: int = 10, reason: str = "replica_balance") -> PartitionChange:
    ms = tuple(Move("t", p, 1, 2 + k, reason, size) for k in range(moves))
    return PartitionChange("t", p, (1,), tuple(2 + k for k in range(moves)), ms, None)


def test_phases_keep_partitions_whole_and_respect_caps() -> None:
    changes = [_change(p, 1 + p % 2) for p in range(6)] + [_change(9, 1, reason="broker_removed")]
    phases = split_phases(changes, max_moves=3)
    assert all(ph.moves <= 3 for ph in phases)
    assert phases[0].changes[0].partition == 9          # demanded moves first
    assert sum(ph.moves for ph in phases) == sum(len(c.moves) for c in changes)
    assert len(split_phases(changes, phases=3)) == 3
    assert all(ph.bytes <= 20 for ph in split_phases(changes, max_bytes=20))
    assert len(split_phases(changes)) == 1


def test_phase_duration_is_the_busiest_broker_over_the_rate() -> None:
    changes = [_change(0, 2, size=100)]            # broker 1 leads and sends 200 bytes
    (phase,) = split_phases(changes)
    assert phase_seconds(phase, {("t", 0): P("t", 0, (1,))}, 50) == 4.0
