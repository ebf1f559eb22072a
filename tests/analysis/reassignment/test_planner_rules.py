"""The planner's choices on layouts small enough to work out by hand, each with the counter-case
that must choose otherwise: where a hole is filled (the rule of ``planner._fill`` as the module
docstring states it, step 2, and its tie-breaks), and how sizes decide between otherwise equal
moves (steps 2 and 3). These are kreplica's own rules, not Kafka's: the expected values follow
the documented order (below the even share first, then the fewest replicas — or, with sizes, the
larger of count and bytes each over its mean — then the broker id; partitions largest first; no
broker already holding the partition, no new rack violation)."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import (
    LeaderChange,
    Move,
    PlanError,
    generate_assignment,
    plan_from_proposal,
    plan_reassignment,
)
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas
from tests.builders.reassignment_shapes import assignment

REMOVED = 9


def layout(replicas: dict[str, tuple[int, ...]], brokers=(1, 2, 3, 4), racks=None) -> Assignment:
    """Partitions named ``topic-p`` with their replicas; the broker to remove (9) is live too."""
    parts = [PartitionReplicas(name.rsplit("-", 1)[0], int(name.rsplit("-", 1)[1]), reps)
             for name, reps in replicas.items()]
    return assignment([*brokers, REMOVED], parts, racks)


def decommission(a: Assignment, sizes=None, **kw):
    return plan_reassignment(a, build_request(a, "decommission", removed=(REMOVED,), **kw), sizes)


def destinations(plan) -> dict[str, int]:
    return {f"{m.topic}-{m.partition}": m.destination for m in plan.moves}


def pads(**counts: int) -> dict[str, tuple[int, ...]]:
    """Single-replica partitions ``pad<b>-k`` giving broker ``b`` that many replicas (and leaderships)."""
    return {f"pad{b[1:]}-{k}": (int(b[1:]),) for b, n in counts.items() for k in range(n)}


# -- where a hole goes ------------------------------------------------------------------------------
@pytest.mark.parametrize("replicas, expected", [
    # 8 replicas over 4 targets: every share is 2; brokers 2 and 3 hold 1, broker 2 has the lower id
    pytest.param({"x-0": (9,), **pads(b1=2, b2=1, b3=1, b4=3)}, 2, id="fewest-replicas-lowest-id"),
    pytest.param({"x-0": (9,), **pads(b1=2, b2=1, b3=0, b4=4)}, 3, id="fewest-replicas-wins-over-id"),
    pytest.param({"x-0": (9,), **pads(b1=1, b2=2, b3=2, b4=2)}, 1, id="fewest-is-broker-1"),
    # broker 1 has the fewest but already holds the partition
    pytest.param({"x-0": (9, 1), **pads(b2=2, b3=1, b4=2)}, 3, id="a-broker-holding-the-partition-is-skipped"),
])
def test_a_hole_goes_to_the_least_loaded_broker_without_the_partition(replicas, expected) -> None:
    plan = decommission(layout(replicas))
    assert destinations(plan) == {"x-0": expected}
    assert [m.reason for m in plan.moves] == ["broker_removed"]


RACKS = {1: "a", 2: "a", 3: "b", 4: "b", REMOVED: "b"}


@pytest.mark.parametrize("rack_aware, expected", [
    # x-0 keeps 1 in rack a; with rf 2 over 2 racks a rack may hold one: 2 (fewest) would make a violation
    pytest.param(True, 4, id="rack-aware-skips-the-full-rack"),
    pytest.param(False, 2, id="rack-unaware-takes-the-fewest"),
])
def test_a_hole_never_makes_a_rack_violation(rack_aware: bool, expected: int) -> None:
    a = layout({"x-0": (9, 1), **pads(b2=0, b3=2, b4=1)}, racks=RACKS)
    assert destinations(decommission(a, rack_aware=rack_aware)) == {"x-0": expected}


@pytest.mark.parametrize("sizes, expected", [
    # shares 2, 2; broker 1 holds 500 bytes, broker 2 holds 5: with sizes the first hole goes to 2
    pytest.param({("x", 0): 10, ("x", 1): 10, ("pad1", 0): 500, ("pad2", 0): 5}, {"x-0": 2, "x-1": 1},
                 id="sizes-break-the-count-tie"),
    # without sizes the tie between equal counts goes to the lower id
    pytest.param(None, {"x-0": 1, "x-1": 2}, id="no-sizes-lower-id"),
])
def test_bytes_decide_between_brokers_with_equal_counts(sizes, expected) -> None:
    a = layout({"x-0": (9,), "x-1": (9,), **pads(b1=1, b2=1)}, brokers=(1, 2))
    assert destinations(decommission(a, sizes)) == expected


@pytest.mark.parametrize("sizes, expected", [
    # the largest partition is placed first and takes the least loaded broker (1, which holds nothing)
    pytest.param({("x", 0): 100, ("x", 1): 10, ("pad2", 0): 50, ("pad3", 0): 50}, {"x-0": 1, "x-1": 2},
                 id="x-0-largest-first"),
    pytest.param({("x", 0): 10, ("x", 1): 100, ("pad2", 0): 50, ("pad3", 0): 50}, {"x-1": 1, "x-0": 2},
                 id="x-1-largest-first"),
])
def test_partitions_are_placed_largest_first(sizes, expected) -> None:
    a = layout({"x-0": (9,), "x-1": (9,), **pads(b2=1, b3=1)}, brokers=(1, 2, 3))
    assert destinations(decommission(a, sizes)) == expected


@pytest.mark.parametrize("follower_pad, after, leader", [
    # the replacement (broker 2, 2 leaderships with x-0) keeps the slot: broker 1 leads 1, not 2 fewer
    pytest.param((1, 3), (2, 1), 2, id="replacement-keeps-the-preferred-slot"),
    # broker 1 leads nothing: at least two fewer than broker 2, so it becomes the preferred leader
    pytest.param((3, 1), (1, 2), 1, id="replica-with-two-fewer-leaderships-takes-it"),
])
def test_a_replaced_preferred_leader(follower_pad, after, leader) -> None:
    a = layout({"x-0": (9, 1), "p-0": (2, 3), "p-1": follower_pad}, brokers=(1, 2, 3))
    plan = decommission(a)
    (change,) = [c for c in plan.changes if c.topic == "x"]
    assert change.after == after
    assert (change.leader_change.source, change.leader_change.destination, change.leader_change.reason) == \
        (9, leader, "leader_moved")


def test_a_follower_slot_keeps_the_preferred_leader() -> None:
    a = layout({"x-0": (1, 9), **pads(b2=0, b3=1)}, brokers=(1, 2, 3))
    (change,) = decommission(a).changes
    assert change.after == (1, 2) and change.leader_change is None


# -- balancing counts: which replica moves ----------------------------------------------------------
@pytest.mark.parametrize("sizes, moved", [
    # 3 replicas on broker 1, none on new broker 3: one moves. Bytes 10+20+100: moving the 100 leaves
    # 30 against 100, the smallest gap (|130 - 2*100| = 70 against 90 and 110)
    pytest.param({("p", 0): 10, ("p", 1): 20, ("p", 2): 100}, "p-2", id="sizes-pick-the-move-that-evens-bytes"),
    pytest.param({("p", 0): 100, ("p", 1): 20, ("p", 2): 10}, "p-0", id="sizes-reordered"),
    # without sizes every candidate is equal: the first partition by name
    pytest.param(None, "p-0", id="no-sizes-first-by-name"),
])
def test_balancing_counts_moves_the_replica_that_evens_bytes(sizes, moved: str) -> None:
    a = assignment([1, 3], [PartitionReplicas("p", i, (1,)) for i in range(3)])
    plan = plan_reassignment(a, build_request(a, "add-brokers"), sizes)
    assert [(f"{m.topic}-{m.partition}", m.source, m.destination, m.reason) for m in plan.moves] == \
        [(moved, 1, 3, "replica_balance")]


@pytest.mark.parametrize("parts, moved", [
    # broker 2 holds 3 (share 2) and leads 2 (share 1), new broker 3 leads none: a leader replica goes
    pytest.param({"p-0": (1, 2), "p-1": (2, 1), "q-0": (2,)}, "p-1", id="donor-above-its-leader-share-gives-a-leader"),
    # broker 2 holds 3 but leads only its share (1): a follower replica goes, the first by name
    pytest.param({"p-0": (1, 2), "p-1": (1, 2), "q-0": (2,)}, "p-0", id="donor-at-its-leader-share-gives-a-follower"),
])
def test_balancing_counts_moves_leaderships_only_from_a_broker_above_its_share(parts, moved: str) -> None:
    a = assignment([1, 2, 3], [PartitionReplicas(n.split("-")[0], int(n.split("-")[1]), r) for n, r in parts.items()])
    plan = plan_reassignment(a, build_request(a, "add-brokers"))
    assert [(f"{m.topic}-{m.partition}", m.source, m.destination, m.reason) for m in plan.moves] == \
        [(moved, 2, 3, "replica_balance")]


# -- a proposal as moves, and Kafka's --generate --------------------------------------------------
def _changes(plan) -> list[tuple]:
    return [(c.topic, c.partition, c.before, c.after, c.moves, c.leader_change) for c in plan.changes]


@pytest.mark.parametrize("sizes, size_of", [
    pytest.param({("t", 0): 10, ("t", 1): 20, ("t", 2): 30}, {0: 10, 1: 20, 2: 30}, id="sized"),
    # a partition missing from the sizes has no size; no sizes at all: no bytes anywhere
    pytest.param({("t", 0): 10}, {0: 10, 1: None, 2: None}, id="partly-sized"),
    pytest.param(None, {0: None, 1: None, 2: None}, id="unsized"),
])
def test_a_proposal_pairs_leaving_and_arriving_replicas_in_list_order(sizes, size_of) -> None:
    """plan_from_proposal: the k-th replica leaving pairs with the k-th arriving; a longer list
    creates (source None), a shorter one drops (destination None, no bytes); the preferred leader
    changes with reason ``leader_moved`` when the old one left the list, else the proposal's."""
    a = assignment([1, 2, 3, 4], [PartitionReplicas("t", 0, (1, 2)), PartitionReplicas("t", 1, (1, 2, 3)),
                                  PartitionReplicas("t", 2, (3, 4)), PartitionReplicas("t", 3, (1, 2))])
    proposal = {("t", 0): (2, 3), ("t", 1): (2, 1), ("t", 2): (3, 4, 1)}
    plan = plan_from_proposal(a, build_request(a, "rebalance"), proposal, "generate", sizes)
    assert _changes(plan) == [
        ("t", 0, (1, 2), (2, 3), (Move("t", 0, 1, 3, "generate", size_of[0]),),
         LeaderChange("t", 0, 1, 2, "leader_moved")),
        ("t", 1, (1, 2, 3), (2, 1), (Move("t", 1, 3, None, "generate", None),),
         LeaderChange("t", 1, 1, 2, "generate")),
        ("t", 2, (3, 4), (3, 4, 1), (Move("t", 2, None, 1, "generate", size_of[2]),), None),
    ]
    assert plan.after == {("t", 0): (2, 3), ("t", 1): (2, 1), ("t", 2): (3, 4, 1), ("t", 3): (1, 2)}


def test_a_proposal_moving_two_replicas() -> None:
    a = assignment([1, 2, 3, 4], [PartitionReplicas("t", 0, (1, 2))])
    plan = plan_from_proposal(a, build_request(a, "rebalance"), {("t", 0): (3, 4)}, "generate", {("t", 0): 5})
    assert plan.moves == (Move("t", 0, 1, 3, "generate", 5), Move("t", 0, 2, 4, "generate", 5))
    assert plan.leader_changes == (LeaderChange("t", 0, 1, 3, "leader_moved"),)


# AdminUtils.assignReplicasToBrokers with startIndex = shift = 0 (--generate's fixed start):
# rack-unaware on 1,2,3,4: (1,2) (2,3); rack-aware on a:{1,2} b:{3,4} walks the rack-alternated
# list 1,3,2,4 (getRackAlternatedBrokerList): (1,3) (3,2)
@pytest.mark.parametrize("racks, after", [
    pytest.param({1: "a", 2: "a", 3: "b", 4: "b"}, {("t", 0): (1, 3), ("t", 1): (3, 2)}, id="rack-aware"),
    pytest.param(None, {("t", 0): (1, 2), ("t", 1): (2, 3)}, id="rack-unaware"),
])
def test_generate_is_kafkas_placement_with_the_targets_racks(racks, after) -> None:
    a = assignment([1, 2, 3, 4], [PartitionReplicas("t", 0, (4, 1)), PartitionReplicas("t", 1, (1, 4))], racks)
    sizes = {("t", 0): 10, ("t", 1): 20}
    plan = plan_reassignment(a, build_request(a, "generate", start_index=0), sizes)
    assert plan.after == after
    assert all(m.reason == "generate" and m.bytes == sizes[(m.topic, m.partition)] for m in plan.moves)
    assert len(plan.moves) == 3          # t-0 keeps 1, t-1 keeps nothing
    assert plan.leader_changes[0] == LeaderChange("t", 0, 4, 1, "leader_moved")
    if racks:
        assert plan.moves[0] == Move("t", 0, 4, 3, "generate", 10)


@pytest.mark.parametrize("topics, brokers, message", [
    pytest.param(["nope"], [1, 2], "topic 'nope' is not in the source", id="unknown-topic"),
    # AdminUtils refuses (InvalidReplicationFactorException); the topic is named first
    pytest.param(["t"], [1], "t: replication factor: 2 larger than available brokers: 1", id="rf-above-brokers"),
])
def test_generate_refuses(topics, brokers, message) -> None:
    a = assignment([1, 2], [PartitionReplicas("t", 0, (1, 2))])
    with pytest.raises(PlanError) as exc:
        generate_assignment(a, topics, brokers, None, seed=0)
    assert str(exc.value) == message


# -- which replica a lower replication factor drops (planner._drop_replicas) -----------------------
def set_rf(a: Assignment, rf: int, sizes=None, topics=("t",)):
    return plan_reassignment(a, build_request(a, "set-replication-factor", replication_factor=rf,
                                              topics=list(topics)), sizes)


RACKS_AB = {1: "a", 2: "a", 3: "b", 4: "b", REMOVED: "b"}


@pytest.mark.parametrize("replicas, racks, sizes, after", [
    # the rack holding most of the partition loses one first: rack a holds 1 and 2, so 2 goes,
    # though broker 3 holds more replicas
    pytest.param({"t-0": (1, 2, 3), **pads(b3=2)}, RACKS_AB, None, (1, 3), id="the-fullest-rack-first"),
    pytest.param({"t-0": (1, 2, 3), **pads(b3=2)}, None, None, (1, 2), id="without-racks-the-most-loaded"),
    pytest.param({"t-0": (1, 2, 3), **pads(b2=1)}, None, None, (1, 3), id="the-most-loaded-broker"),
    # equal counts: the most bytes, then the highest id
    pytest.param({"t-0": (1, 2, 3), **pads(b2=1, b3=1)}, None, {("pad2", 0): 100, ("pad3", 0): 5}, (1, 3),
                 id="the-most-bytes"),
    pytest.param({"t-0": (1, 2, 3), **pads(b2=1, b3=1)}, None, {("pad2", 0): 5, ("pad3", 0): 100}, (1, 2),
                 id="the-most-bytes-counter-case"),
    pytest.param({"t-0": (1, 2, 3)}, None, None, (1, 2), id="the-highest-id"),
])
def test_a_lower_replication_factor_drops(replicas, racks, sizes, after) -> None:
    """Module docstring, step 1 / ``_drop_replicas``: a follower goes, the one whose rack holds
    most of the partition, then on the most loaded broker (replicas, then bytes), then the
    highest id; the preferred leader stays."""
    plan = set_rf(layout(replicas, racks=racks), 2, sizes)
    assert plan.after[("t", 0)] == after
    assert plan.moves == (Move("t", 0, ({1, 2, 3} - set(after)).pop(), None, "replication_factor", None),)


def test_a_lower_replication_factor_drops_the_replica_off_the_targets_first() -> None:
    """A replica on a broker that is not a target is dropped rather than moved: (1,2,8) → (1,2)
    with 8 dead is one drop, no copy."""
    a = Assignment("assignment", "shape", (1, 2, 3), {1: None, 2: None, 3: None, 8: None},
                   (PartitionReplicas("t", 0, (1, 2, 8)),))
    plan = set_rf(a, 2)
    assert plan.after == {("t", 0): (1, 2)}
    assert plan.moves == (Move("t", 0, 8, None, "replication_factor", None),)


@pytest.mark.parametrize("pad_1, pad_2, u_after", [
    # leaderships when u-0's new leader is chosen: 1 has its pad and t-0's (2), 2 has its pad (1):
    # 2 leads u-0
    pytest.param(1, 1, (2, 1, 3), id="the-dropped-leaders-successor-counts-as-leader"),
    # 1 (t-0's only) and 2 (its pad) tie: the first replica in the list, 1, leads
    pytest.param(0, 1, (1, 3, 2), id="a-dropped-follower-was-no-leader"),
])
def test_leaderships_after_dropping_a_replica(pad_1, pad_2, u_after) -> None:
    """t-0 (8,1) → rf 1 drops 8 (dead), so 1 becomes t-0's preferred leader; t-1 (3,2) → rf 1 drops
    the follower 2, which takes no leadership from 2. u-0 (8,1,2) keeps rf 3: its leader's hole
    goes to 3 (the only broker without u-0), which already leads 3 pads, so u-0's preferred
    leadership goes to the replica with the fewest (``_choose_leader``, step 2)."""
    parts = [PartitionReplicas("t", 0, (8, 1)), PartitionReplicas("t", 1, (3, 2)),
             PartitionReplicas("u", 0, (8, 1, 2))]
    parts += [PartitionReplicas("pad", k, (b,)) for k, b in enumerate([1] * pad_1 + [2] * pad_2 + [3] * 3)]
    a = Assignment("assignment", "shape", (1, 2, 3), {1: None, 2: None, 3: None, 8: None}, tuple(parts))
    plan = set_rf(a, 1)
    assert (plan.after[("t", 0)], plan.after[("t", 1)], plan.after[("u", 0)]) == ((1,), (3,), u_after)
    u = next(c for c in plan.changes if c.key == ("u", 0))
    assert u.leader_change == LeaderChange("u", 0, 8, u_after[0], "leader_moved")


# -- which replica a rack violation evicts (planner._evict_rack_excess) ----------------------------
RACKS_ABC = {1: "a", 2: "a", 3: "b", 4: "c", REMOVED: "c"}


@pytest.mark.parametrize("replicas, sizes, evicted", [
    # every broker at its even share: the follower goes, the preferred leader stays
    pytest.param({"t-0": (1, 2, 3), **pads(b4=1)}, None, 2, id="the-preferred-leader-last"),
    pytest.param({"t-0": (2, 1, 3), **pads(b4=1)}, None, 1, id="the-preferred-leader-last-counter-case"),
    # two followers in rack a at their share: the one with more bytes, then the higher id
    pytest.param({"t-0": (3, 1, 2), **pads(b1=1, b2=1, b3=1, b4=2)}, {("pad1", 0): 100, ("pad2", 0): 5}, 1,
                 id="the-most-bytes"),
    pytest.param({"t-0": (3, 1, 2), **pads(b1=1, b2=1, b3=1, b4=2)}, {("pad1", 0): 5, ("pad2", 0): 100}, 2,
                 id="the-most-bytes-counter-case"),
    pytest.param({"t-0": (3, 1, 2), **pads(b1=1, b2=1, b3=1, b4=2)}, None, 2, id="the-highest-id"),
])
def test_a_rack_violation_evicts(replicas, sizes, evicted) -> None:
    """Module docstring, step 1: rf 3 over racks a:{1,2} b:{3} c:{4} allows one replica per rack,
    so one of t-0's two in rack a moves to rack c (broker 4), the preferred leader last."""
    a = layout(replicas, racks=RACKS_ABC)
    plan = plan_reassignment(a, build_request(a, "rebalance", brokers=(1, 2, 3, 4)), sizes)
    assert [(m.topic, m.partition, m.source, m.destination, m.reason) for m in plan.moves
            if m.reason == "rack_violation"] == [("t", 0, evicted, 4, "rack_violation")]


def test_a_new_preferred_leader_is_chosen_before_the_other_holes_are_filled() -> None:
    """u-0 (8,7,2) loses both 8 and 7: its leader slot is filled first, by 1 (fewest replicas),
    which already leads a pad; 2 leads nothing, so 2 becomes the preferred leader at once
    (``_choose_leader``, even while slot 1 still waits for its broker), then 3 takes slot 1."""
    parts = [PartitionReplicas("u", 0, (8, 7, 2)), PartitionReplicas("pad", 0, (1,))]
    parts += [PartitionReplicas("q", k, (3, 2)) for k in range(3)]
    a = Assignment("assignment", "shape", (1, 2, 3), {1: None, 2: None, 3: None, 7: None, 8: None}, tuple(parts))
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(7, 8)))
    assert plan.after[("u", 0)] == (2, 3, 1)
    assert plan.leader_changes == (LeaderChange("u", 0, 8, 2, "leader_moved"),)


def test_a_leader_evicted_then_returned_as_a_follower_still_counts_as_moved() -> None:
    """p-0..p-2 (1,2,3) each hold two replicas in rack a (1:a 2:a 3:b 4:c, one per rack allowed):
    1, furthest above its share, loses all three, and p-0's leadership goes elsewhere
    (``leader_moved``); balancing counts later brings 1 back into p-0 as a follower. The change of
    p-0's preferred leader is still the one its leader's move caused (REASONS["leader_moved"]),
    recorded when it happened, not a later reorder's."""
    parts = [PartitionReplicas("p", k, (1, 2, 3)) for k in range(3)]
    parts += [PartitionReplicas("q1", k, (1,)) for k in range(3)] + [PartitionReplicas("q2", k, (2,)) for k in range(2)]
    parts += [PartitionReplicas("q4", 0, (4,))]
    a = Assignment("assignment", "shape", (1, 2, 3, 4), {1: "a", 2: "a", 3: "b", 4: "c"}, tuple(parts))
    plan = plan_reassignment(a, build_request(a, "rebalance"))
    p0 = next(c for c in plan.changes if c.key == ("p", 0))
    assert (p0.after, p0.leader_change) == ((4, 1, 3), LeaderChange("p", 0, 1, 4, "leader_moved"))
