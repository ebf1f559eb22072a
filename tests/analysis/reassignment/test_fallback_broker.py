"""The planner's last resort: a replica to place where every free target broker's rack already
holds as many replicas of the partition as racks allow (``ceil(rf / racks)``). It goes to the
least-loaded broker of the fullest-allowed rack, and the warning says a rack violation is added
only when it is: a replica that leaves a removed broker for another broker of the same rack keeps
the partition's rack spread as it was."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import PlanError, plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas

# RF 4 on racks a:{1,2,3} b:{4} once 5 is gone: two racks, so at most two replicas per rack; 1, 2
# and 4 stay, and only broker 3 (rack a, already holding two) can take the replica of 5
REPLICAS = (1, 2, 4, 5)


def decommission_5(rack_of_5: str, replicas=REPLICAS):
    racks = {1: "a", 2: "a", 3: "a", 4: "b", 5: rack_of_5}
    a = Assignment("assignment", "x", (1, 2, 3, 4, 5), racks, (PartitionReplicas("t", 0, replicas),))
    return plan_reassignment(a, build_request(a, "decommission", removed=(5,)))


def test_a_replica_leaving_another_rack_adds_a_rack_violation_and_says_so() -> None:
    plan = decommission_5("c")
    assert plan.after == {("t", 0): (1, 2, 4, 3)}
    assert plan.warnings == ("t-0: no broker in a free rack can take a replica; broker 3 adds a rack violation",)


def test_a_replica_staying_in_its_own_rack_adds_no_violation() -> None:
    # before: 1, 2 and 5 in rack a (three); after: 1, 2 and 3 in rack a (three): no new violation
    plan = decommission_5("a")
    assert plan.after == {("t", 0): (1, 2, 4, 3)}
    assert plan.warnings == ()


@pytest.mark.parametrize("other, chosen", [
    pytest.param((), 3, id="equal-loads-lowest-id"),
    pytest.param((PartitionReplicas("t", 1, (3, 4, 1, 2)),), 7, id="3-holds-more"),
])
def test_the_least_loaded_of_the_full_racks_brokers_takes_it(other, chosen: int) -> None:
    # racks a:{1,2,3,7} b:{4}: both free brokers (3, 7) are in rack a, which holds two already
    racks = {1: "a", 2: "a", 3: "a", 4: "b", 5: "c", 7: "a"}
    parts = (PartitionReplicas("t", 0, REPLICAS), *other)
    a = Assignment("assignment", "x", (1, 2, 3, 4, 5, 7), racks, parts)
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(5,)))
    assert plan.after[("t", 0)] == (1, 2, 4, chosen)
    assert plan.warnings == (f"t-0: no broker in a free rack can take a replica; broker {chosen} adds a rack "
                             "violation",)


def test_fewer_targets_than_replicas_is_refused_before_any_placement() -> None:
    racks = {1: "a", 2: "a", 3: "a", 4: "b"}
    a = Assignment("assignment", "x", (1, 2, 3, 4), racks, (PartitionReplicas("t", 0, (1, 2, 3, 4)),))
    with pytest.raises(PlanError, match="^a partition has 4 replicas but only 3 target brokers remain"):
        plan_reassignment(a, build_request(a, "decommission", removed=(4,)))


def test_of_the_full_racks_the_one_holding_fewest_replicas_takes_it() -> None:
    # RF 9 on racks a:{1,2,3,8} b:{4,5,6,7,9} c:{10} (cap 3) once 11 is gone: a holds 3, b 4 and c,
    # which has room, no broker without a replica; of the free brokers 8 (a) and 7 (b), rack a's 8
    # makes the smaller violation although 7 has the lower id
    racks = {1: "a", 2: "a", 3: "a", 8: "a", 4: "b", 5: "b", 6: "b", 9: "b", 7: "b", 10: "c", 11: "d"}
    a = Assignment("assignment", "x", tuple(racks), racks, (PartitionReplicas("t", 0, (1, 2, 3, 4, 5, 6, 9, 10, 11)),))
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(11,)))
    assert plan.after == {("t", 0): (1, 2, 3, 4, 5, 6, 9, 10, 8)}
    assert plan.warnings == ("t-0: no broker in a free rack can take a replica; broker 8 adds a rack violation",)
