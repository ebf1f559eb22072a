"""``rebalance`` fixes rack violations (more replicas of a partition in one rack than
``ceil(rf / racks)``) by moving the excess to brokers of racks with room; where no broker without a
replica has a rack with room, the violation stays, named in a warning, and the rest of the plan is
made (it used to refuse the whole plan: "every target already holds one")."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas


def rebalance(racks: dict[int, str], *parts: PartitionReplicas):
    a = Assignment("assignment", "x", tuple(racks), racks, parts)
    return plan_reassignment(a, build_request(a, "rebalance"))


def test_a_violation_no_move_can_fix_stays_and_is_named() -> None:
    # RF 4 on four brokers, three of them in rack a: every broker holds a replica already
    plan = rebalance({1: "a", 2: "a", 3: "a", 4: "b"}, PartitionReplicas("t", 0, (1, 2, 3, 4)))
    assert plan.after == {("t", 0): (1, 2, 3, 4)} and plan.moves == ()
    assert plan.warnings == ("t-0: rack a keeps 3 replicas (at most 2 allowed): no broker without a replica in a "
                             "rack with room can take one",)


@pytest.mark.parametrize("racks, replicas, after", [
    # a fifth broker in rack b has room: one of rack a's three moves there
    pytest.param({1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}, (1, 2, 3, 4), (1, 2, 5, 4), id="room-in-another-rack"),
    # RF 2 on two racks: one replica per rack
    pytest.param({1: "a", 2: "a", 3: "b"}, (1, 2), (1, 3), id="one-per-rack"),
])
def test_a_violation_a_move_can_fix_is_fixed(racks, replicas, after) -> None:
    plan = rebalance(racks, PartitionReplicas("t", 0, replicas))
    assert plan.after == {("t", 0): after}
    assert not any("keeps" in w and "allowed" in w for w in plan.warnings)


def test_the_excess_leaves_from_the_highest_broker_not_the_preferred_leader() -> None:
    # RF 5 on racks a:{1,2,3,4} b:{5,6}: cap 3, rack a holds 4; 6 (rack b, which holds 1) is the
    # only broker without a replica: one of rack a's moves there, broker 4 (equal loads: the
    # highest id goes, the preferred leader 1 stays), and the warning is not given
    plan = rebalance({1: "a", 2: "a", 3: "a", 4: "a", 5: "b", 6: "b"}, PartitionReplicas("t", 0, (1, 2, 3, 4, 5)))
    assert plan.after == {("t", 0): (1, 2, 3, 6, 5)}
    assert not any("allowed" in w for w in plan.warnings)
