"""Throttle configs as Kafka's tool computes them (the spec's ``ReassignPartitionsUnitTest.testMoveMap``
vector, kafka-algorithms §5.4, quoted), phases, and duration estimates."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.phases import (
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_REPLICAS,
    Phase,
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


def test_move_map_takes_every_in_flight_reassignment() -> None:
    """``ReassignPartitionsCommand.calculateCurrentMoveMap``: every partition of
    ``listPartitionReassignments`` (KIP-455 ``isBeingReassigned``: adding or removing) is in the
    move map with sources = replicas - adding and destinations = adding, a pure expansion and a
    pure shrink included, although the file does not name them."""
    grow = P("foo", 1, (1, 2, 3), adding=(3,))
    shrink = P("foo", 2, (4, 5, 6), removing=(6,))
    current = {("foo", 0): P("foo", 0, (1, 2)), grow.key: grow, shrink.key: shrink}
    t = throttle_configs({("foo", 0): (1, 2)}, current, 7, in_flight=[grow, shrink])
    assert t.topics["foo"] == {LEADER_THROTTLED_REPLICAS: "0:1,0:2,1:1,1:2,2:4,2:5,2:6",
                               FOLLOWER_THROTTLED_REPLICAS: "1:3"}
    assert sorted(t.brokers) == [1, 2, 3, 4, 5, 6]


def test_zookeeper_tool_writes_both_lists_for_a_topic_that_gains_nothing() -> None:
    """The <= 2.5 ``ReassignPartitionsCommand.assignThrottledReplicas`` puts both configs on every
    topic of the proposal, an empty list when no partition of it gains a broker (counter-case:
    topic t, which gains 4)."""
    current = {("t", 0): P("t", 0, (1, 2)), ("u", 0): P("u", 0, (1, 2, 3))}
    t = throttle_configs({("t", 0): (1, 4), ("u", 0): (2, 1)}, current, 5, admin_api=False)
    assert t.topics == {"t": {LEADER_THROTTLED_REPLICAS: "0:1,0:2", FOLLOWER_THROTTLED_REPLICAS: "0:4"},
                        "u": {LEADER_THROTTLED_REPLICAS: "", FOLLOWER_THROTTLED_REPLICAS: ""}}


def _sized(p: int, leader_replicas: tuple[int, ...], *moves: tuple[int, int | None, int | None]) -> PartitionChange:
    ms = tuple(Move("t", p, s, d, "replica_balance", b) for s, d, b in moves)
    return PartitionChange("t", p, leader_replicas, leader_replicas, ms, None)


def test_phase_duration_per_broker_in_and_out() -> None:
    """Kafka's throttles are per broker (``ReplicationQuotaManager``): a follower's fetches are
    capped by ``follower.replication.throttled.rate``, the leader's responses by
    ``leader.replication.throttled.rate``, so the busiest single broker bounds the phase. Two
    partitions led by 1 and 2 both send 100 bytes to broker 5: 5 receives 200 (2 s at 100 B/s),
    each leader sends only 100."""
    changes = (_sized(0, (1, 3), (3, 5, 100)), _sized(1, (2, 3), (3, 5, 100)))
    current = {("t", 0): P("t", 0, (1, 3), leader=1), ("t", 1): P("t", 1, (2, 3), leader=2)}
    assert phase_seconds(Phase(1, changes), current, 100) == 2.0


@pytest.mark.parametrize("current, seconds", [
    pytest.param({("t", 0): P("t", 0, (1, 3), leader=3), ("t", 1): P("t", 1, (1, 4), leader=4)}, 1.0,
                 id="source-leaders-not-first"),
    pytest.param({("t", 0): P("t", 0, (1, 3)), ("t", 1): P("t", 1, (4, 1))}, 1.0, id="no-leader-first-replica"),
    pytest.param({("t", 0): P("t", 0, (1, 0), leader=0), ("t", 1): P("t", 1, (1, 4), leader=1)}, 1.0,
                 id="broker-0-leads"),
    pytest.param({("t", 0): P("t", 0, (1, 3), leader=1), ("t", 1): P("t", 1, (1, 4), leader=1)}, 2.0,
                 id="one-leader-sends-both"),
])
def test_phase_duration_follows_the_leader_that_sends(current, seconds) -> None:
    """Followers fetch from the partition leader, so the leader's outbound is what the leader
    throttle caps: the source's leader (broker 0 included: Kafka's NoLeader is -1), else the
    preferred (first) replica. 100 bytes each to brokers 5 and 6 at 100 B/s."""
    changes = (_sized(0, current[("t", 0)].replicas, (3, 5, 100)), _sized(1, current[("t", 1)].replicas, (4, 6, 100)))
    assert phase_seconds(Phase(1, changes), current, 100) == seconds


def test_phase_duration_skips_dropped_replicas_only() -> None:
    """A dropped replica (replication-factor decrease) copies nothing; a later sized move of the
    same partition still counts. At 1 B/s the phase lasts as many seconds as bytes; at 0 B/s
    (nothing would ever copy) there is no estimate."""
    change = _sized(0, (1, 2, 3), (3, None, None), (2, 4, 30))
    current = {("t", 0): P("t", 0, (1, 2, 3), leader=1)}
    assert phase_seconds(Phase(1, (change,)), current, 1) == 30.0
    assert phase_seconds(Phase(1, (change,)), current, 0) is None
    assert phase_seconds(Phase(1, (_sized(0, (1, 2, 3), (3, None, None)),)), current, 1) is None


# The phases are kreplica's, not Kafka's: each phase is one file for
# ``kafka-reassign-partitions.sh --execute`` (ReassignPartitionsCommand.executeAssignment), and a
# file names a partition once (parseExecuteAssignmentArgs refuses duplicates), so a partition
# stays whole. The cut points below are the module docstring's rules.

def _partitions(phases) -> list[list[int]]:
    return [[c.partition for c in ph.changes] for ph in phases]


def test_phases_n_cuts_the_moves_at_every_nth_of_the_total() -> None:
    """``phases=3`` over three one-move partitions: the cut before each partition is at its
    running move count times 3 over the total, so one partition a phase, in plan order
    (counter-case: ``phases=1`` keeps them in one)."""
    changes = [_change(p, 1) for p in range(3)]
    assert _partitions(split_phases(changes, phases=3)) == [[0], [1], [2]]
    assert _partitions(split_phases(changes, phases=1)) == [[0, 1, 2]]


@pytest.mark.parametrize("cap, expected", [
    pytest.param(2, [[0, 1]], id="exactly-the-cap-fits"),
    pytest.param(1, [[0], [1]], id="one-over-closes-the-phase"),
])
def test_a_phase_closes_only_before_it_would_exceed_max_moves(cap, expected) -> None:
    assert _partitions(split_phases([_change(0, 1), _change(1, 1)], max_moves=cap)) == expected


def test_a_new_phase_counts_moves_from_zero() -> None:
    """Moves 2, 1, 1 under ``max_moves=2``: the first partition fills phase 1; phase 2 starts
    empty and takes both one-move partitions (1 + 1 is not over 2)."""
    changes = [_change(0, 2), _change(1, 1), _change(2, 1)]
    assert _partitions(split_phases(changes, max_moves=2)) == [[0], [1, 2]]


def test_max_bytes_counts_every_partition_of_the_phase() -> None:
    """Three partitions of 10 bytes under ``max_bytes=20``: the phase holds 10 + 10; a third
    would make 30, so it opens phase 2."""
    changes = [_change(p, 1, size=10) for p in range(3)]
    assert _partitions(split_phases(changes, max_bytes=20)) == [[0, 1], [2]]


def test_a_plan_without_changes_is_one_empty_phase() -> None:
    """No caps and no ``phases`` is one phase (``split_phases``' docstring), even with nothing in
    it: the report's phase 1 is the one ``proposal.json`` names (counter-case: a change fills it)."""
    assert split_phases([]) == (Phase(1, ()),)
    assert split_phases([], max_moves=1, phases=2) == (Phase(1, ()),)
    assert _partitions(split_phases([_change(0, 1)])) == [[0]]
