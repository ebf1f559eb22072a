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
    # racks a:{0,1} b:{2} c:{3}, alternated 0,2,3,1. Partition 2 (leader 3, rack c): 1 (a) is
    # taken, 0 is skipped because rack a is used and not every rack is yet, then 2 (b)
    pytest.param({0: "a", 1: "a", 2: "b", 3: "c"}, 4, 3, "0:[0,2,3] 1:[2,3,1] 2:[3,1,2] 3:[1,2,3]",
                 id="a-used-rack-is-skipped"),
    # rf 4: once every rack is used any rack will do, but never a broker already chosen: partition
    # 2 walks 1, (0 skipped), 2, then 1 again (skipped: already a replica), then 0
    pytest.param({0: "a", 1: "a", 2: "b", 3: "c"}, 4, 4, "0:[0,2,3,1] 1:[2,3,1,0] 2:[3,1,2,0] 3:[1,2,3,0]",
                 id="a-used-broker-is-skipped"),
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


@pytest.mark.parametrize(("brokers", "n", "rf", "racks", "message"), [
    # AdminUtils.assignReplicasToBrokers' checks ("Number of partitions must be larger than 0.",
    # "Replication factor must be larger than 0.", "Replication factor: 3 larger than available
    # brokers: 2."; "Not all brokers have rack information ..."), in kreplica's wording
    pytest.param([1, 2], 0, 1, None, "number of partitions must be larger than 0", id="no-partitions"),
    pytest.param([1, 2], 3, 0, None, "replication factor must be larger than 0", id="rf-0"),
    pytest.param([1, 2], 3, 3, None, "replication factor: 3 larger than available brokers: 2", id="rf-above-brokers"),
    pytest.param([1, 2, 3], 3, 2, {1: "a", 2: "b"},
                 "not all brokers have rack information (no rack: [3]); give every broker a rack or plan without racks",
                 id="some-without-rack"),
])
def test_kafkas_refusals_say_why(brokers, n, rf, racks, message) -> None:
    with pytest.raises(PlacementError) as exc:
        assign_replicas_to_brokers(brokers, n, rf, racks=racks, start=StartDraw(0, 0))
    assert str(exc.value) == message


def test_a_placement_needs_a_start_or_a_generator() -> None:
    with pytest.raises(ValueError) as exc:
        assign_replicas_to_brokers([1, 2], 1, 1)
    assert str(exc.value) == "give a fixed start draw or a random generator"


@pytest.mark.parametrize(("brokers", "rf", "expected"), [
    # the boundaries Kafka accepts: one replica, and as many replicas as brokers
    pytest.param([1, 2, 3], 1, {0: [1], 1: [2], 2: [3]}, id="rf-1"),
    pytest.param([1, 2, 3], 3, {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}, id="rf-equals-brokers"),
])
def test_kafka_accepts(brokers, rf, expected) -> None:
    assert assign_replicas_to_brokers(brokers, 3, rf, start=StartDraw(0, 0)) == expected
