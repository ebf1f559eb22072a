"""``AdminUtils.assignReplicasToBrokers`` reproduced: the spec's vectors (kafka-algorithms §5.1,
§5.2; row 1 of each table is Kafka's own unit-test expectation, ``AdminRackAwareTest``), quoted."""

from __future__ import annotations

import random

import pytest

from kreplica.analysis.reassignment.placement import (
    PlacementError,
    StartDraw,
    assign_replicas_to_brokers,
    draw_start,
    rack_alternated_brokers,
)


def _parse(text: str) -> dict[int, list[int]]:
    """``0:[0,1,2] 1:[1,2,3]`` as the spec writes results."""
    out = {}
    for item in text.split():
        pid, reps = item.split(":")
        out[int(pid)] = [int(x) for x in reps.strip("[]").split(",")]
    return out


@pytest.mark.parametrize(("brokers", "n", "rf", "start", "shift", "expected"), [
    pytest.param([0, 1, 2, 3, 4], 10, 3, 0, 0, "0:[0,1,2] 1:[1,2,3] 2:[2,3,4] 3:[3,4,0] 4:[4,0,1] 5:[0,2,3] "
                 "6:[1,3,4] 7:[2,4,0] 8:[3,0,1] 9:[4,1,2]", id="testReplicaAssignment"),
    pytest.param([0, 1, 2, 3, 4], 10, 3, 2, 3, "0:[2,1,3] 1:[3,2,4] 2:[4,3,0] 3:[0,4,1] 4:[1,0,2] 5:[2,3,4] "
                 "6:[3,4,0] 7:[4,0,1] 8:[0,1,2] 9:[1,2,3]", id="random-draws-2-3"),
    pytest.param([1, 2, 3], 6, 2, 1, 0, "0:[2,3] 1:[3,1] 2:[1,2] 3:[2,1] 4:[3,2] 5:[1,3]", id="start-1-shift-0"),
])
def test_rack_unaware_vectors(brokers, n, rf, start, shift, expected) -> None:
    assert assign_replicas_to_brokers(brokers, n, rf, start=StartDraw(start, shift)) == _parse(expected)


RACKS_6 = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}
RACKS_4 = {0: "a", 1: "a", 2: "b", 3: "b"}


def test_rack_alternated_list() -> None:
    assert rack_alternated_brokers(RACKS_6) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({b: r for b, r in RACKS_6.items() if b != 5}) == [0, 3, 1, 4, 2]
    assert rack_alternated_brokers(RACKS_4) == [0, 2, 1, 3]


@pytest.mark.parametrize(("racks", "n", "rf", "expected"), [
    pytest.param(RACKS_6, 7, 3, "0:[0,3,1] 1:[3,1,5] 2:[1,5,4] 3:[5,4,2] 4:[4,2,0] 5:[2,0,3] 6:[0,4,2]",
                 id="testGetRackAlternatedBrokerListAndAssignReplicasToBrokers"),
    pytest.param(RACKS_4, 4, 2, "0:[0,2] 1:[2,1] 2:[1,3] 3:[3,0]", id="4x2"),
    pytest.param(RACKS_4, 4, 3, "0:[0,2,1] 1:[2,1,3] 2:[1,3,0] 3:[3,0,2]", id="4x3"),
])
def test_rack_aware_vectors(racks, n, rf, expected) -> None:
    assert assign_replicas_to_brokers(sorted(racks), n, rf, racks=racks, start=StartDraw(0, 0)) == _parse(expected)


def test_added_partitions_start_from_the_absolute_id() -> None:
    # AdminZkClient.createNewPartitionsAssignment: startPartitionId = the current count; partition 10 of
    # 5 brokers crosses a multiple of n, so the shift is already one more than the start value
    added = assign_replicas_to_brokers([0, 1, 2, 3, 4], 2, 3, start=StartDraw(1, 1), start_partition_id=10)
    assert added == {10: [1, 4, 0], 11: [2, 0, 1]}


def test_seeded_draws_are_reproducible() -> None:
    a = assign_replicas_to_brokers(list(range(7)), 20, 3, rng=random.Random(42))
    b = assign_replicas_to_brokers(list(range(7)), 20, 3, rng=random.Random(42))
    assert a == b
    draw = draw_start(random.Random(42), 7)
    assert a == assign_replicas_to_brokers(list(range(7)), 20, 3, start=draw)


@pytest.mark.parametrize(("brokers", "n", "rf", "racks"), [
    pytest.param([1, 2], 3, 3, None, id="rf-above-brokers"),
    pytest.param([1, 2], 0, 1, None, id="no-partitions"),
    pytest.param([1, 2], 3, 0, None, id="rf-0"),
    pytest.param([1, 2, 3], 3, 2, {1: "a", 2: "b"}, id="some-without-rack"),
])
def test_kafka_refuses(brokers, n, rf, racks) -> None:
    with pytest.raises(PlacementError):
        assign_replicas_to_brokers(brokers, n, rf, racks=racks, start=StartDraw(0, 0))
