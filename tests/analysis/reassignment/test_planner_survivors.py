"""The planner's documented rules on layouts small enough to work out by hand, each pinning a
choice the earlier planner tests left open (bench/mutation-killed-since/planner-sixth.txt): the
error messages a user reads, the order of the moves and warnings in a plan, the reasons recorded,
which broker a hole takes, which replicas a rack violation evicts and when it stays, and which
broker gives and takes while counts are balanced.

Where a test builds :class:`PlanRequest` itself it switches on one step of the module docstring
alone (``fix_racks``: step 1's rack evictions and step 2; ``balance_replicas``: step 3;
``balance_leaders``: step 4), so the expected plan follows from that step's rule only."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import LeaderChange, Move, PlanError, PlanRequest, plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas
from tests.builders.reassignment_shapes import assignment


def parts(**lists: tuple[int, ...]) -> list[PartitionReplicas]:
    """``p_0=(1, 2)`` → partition p-0 with replicas (1, 2)."""
    return [PartitionReplicas(name.rsplit("_", 1)[0], int(name.rsplit("_", 1)[1]), reps) for name, reps in lists.items()]


def request(targets, racks=None, **goals) -> PlanRequest:
    """A request for ``targets`` (rack-unaware unless ``racks``) pursuing only the ``goals`` given."""
    targets = tuple(targets)
    return PlanRequest(action="rebalance", targets=targets, racks=dict(racks) if racks else {b: None for b in targets},
                       **goals)


def moved(plan) -> list[tuple]:
    return [(f"{m.topic}-{m.partition}", m.source, m.destination, m.reason) for m in plan.moves]


# -- what a user is told when a request cannot be planned -------------------------------------------


def test_a_mix_of_brokers_with_and_without_racks_is_refused_with_the_fix() -> None:
    # rack_aware_racks: Kafka's --generate refuses a mix too (AdminUtils.getBrokerMetadatas:
    # "Not all brokers have rack information"); kreplica names the brokers and both ways out
    a = assignment([1, 2, 3], parts(t_0=(1, 2)), racks={1: "a", 2: "b", 3: None})
    with pytest.raises(PlanError) as exc:
        plan_reassignment(a, build_request(a, "decommission", removed=(2,)))
    assert str(exc.value) == ("brokers [3] have no rack while others do: give their racks with --racks "
                              "(e.g. --racks 7:use1-az1) or plan without racks (--disable-rack-aware)")


def test_removing_every_broker_leaves_no_target_and_says_so() -> None:
    a = assignment([1, 2], parts(t_0=(1, 2)))
    with pytest.raises(PlanError) as exc:
        plan_reassignment(a, build_request(a, "decommission", removed=(1, 2)))
    assert str(exc.value) == "no target brokers: every broker would be removed (give --brokers)"


# -- replace-broker: slot for slot ----------------------------------------------------------------


def test_a_replaced_broker_hands_every_replica_to_its_replacement_in_the_same_slot() -> None:
    """Step 1: ``broker_replaced`` moves are one for one, same slot, whatever the loads: 8 takes
    all three of 1's replicas though 2 and 3 hold fewer than 8 would by the fill's rule."""
    a = assignment([1, 2, 3], parts(p_0=(1, 2), p_1=(2, 1), p_2=(1, 3), q_0=(3,)))
    plan = plan_reassignment(a, build_request(a, "replace-broker", replace={1: 8}))
    assert plan.after == {("p", 0): (8, 2), ("p", 1): (2, 8), ("p", 2): (8, 3), ("q", 0): (3,)}
    assert moved(plan) == [("p-0", 1, 8, "broker_replaced"), ("p-1", 1, 8, "broker_replaced"),
                           ("p-2", 1, 8, "broker_replaced")]
    # the replacement takes the preferred leader's slot too: 8 leads where 1 led
    assert plan.leader_changes == (LeaderChange("p", 0, 1, 8, "leader_moved"), LeaderChange("p", 2, 1, 8, "leader_moved"))


def test_a_replaced_broker_whose_replacement_already_holds_the_partition_still_says_replaced() -> None:
    """x-0 (1, 8): 8 cannot take 1's slot (it would hold x-0 twice), so 1's replica is a hole
    filled like any other, by the least loaded target without x-0 (3: 2 holds a pad) — and its
    reason is still the replacement (REASONS["broker_replaced"]), not a decommission."""
    a = assignment([1, 2, 3, 8], parts(x_0=(1, 8), pad_0=(2,)))
    plan = plan_reassignment(a, build_request(a, "replace-broker", replace={1: 8}))
    assert plan.after[("x", 0)] == (3, 8)
    assert moved(plan) == [("x-0", 1, 3, "broker_replaced")]


# -- a higher replication factor ----------------------------------------------------------------------


def test_a_higher_replication_factor_appends_new_replicas() -> None:
    """Step 2: new replicas go last in the list, created (source None) for ``replication_factor``;
    the existing replica keeps its slot, so the preferred leader does not change."""
    a = assignment([1, 2], parts(t_0=(1,)))
    plan = plan_reassignment(a, build_request(a, "set-replication-factor", replication_factor=2, topics=["t"]))
    assert plan.after == {("t", 0): (1, 2)}
    assert plan.moves == (Move("t", 0, None, 2, "replication_factor", None),)
    assert plan.leader_changes == ()


# -- filling holes: order and choice ----------------------------------------------------------------


def test_a_partitions_holes_fill_in_slot_order_and_its_moves_are_listed_in_slot_order() -> None:
    """u-0 (8, 7, 2): 8 is removed (slot 0, ``broker_removed``), 7 is known but not live (slot 1,
    ``broker_not_live``). The leader's slot is filled first whatever the reasons' names: it takes
    1 (fewest replicas, below its share), which then leads two partitions while 2 leads none, so 2
    becomes u-0's preferred leader (``_choose_leader``) and 1 goes to slot 2; slot 1 then takes 3.
    The plan lists u-0's moves in the order of the final list (3 at index 1, 1 at index 2), not by
    broker id."""
    ps = parts(u_0=(8, 7, 2), pad_0=(1,), q_0=(3, 2), q_1=(3, 2), q_2=(3, 2))
    a = Assignment("assignment", "shape", (1, 2, 3), {1: None, 2: None, 3: None, 7: None, 8: None},
                   tuple(sorted(ps, key=lambda p: p.key)))
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(8,)))
    assert plan.after[("u", 0)] == (2, 3, 1)
    assert plan.moves == (Move("u", 0, 7, 3, "broker_not_live"), Move("u", 0, 8, 1, "broker_removed"))
    assert plan.leader_changes == (LeaderChange("u", 0, 8, 2, "leader_moved"),)


def test_a_hole_goes_to_the_broker_furthest_below_its_share() -> None:
    """Three replicas of the removed 9 over targets 1 and 2: shares 2 and 1 (the ceil to the lower
    id, both holding none). x-0: both are below their share with no replica; 1 is further below
    (0 of 2) and has the lower id, so 1. x-1: 2 has fewer replicas (0 against 1), so 2. x-2: only 1
    is still below its share, so 1."""
    a = assignment([1, 2, 9], parts(x_0=(9,), x_1=(9,), x_2=(9,)))
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(9,)))
    assert moved(plan) == [("x-0", 9, 1, "broker_removed"), ("x-1", 9, 2, "broker_removed"),
                           ("x-2", 9, 1, "broker_removed")]


# -- rack violations: which replicas go, and when one stays -----------------------------------------
A4B1 = {1: "a", 2: "a", 3: "a", 4: "a", 5: "b"}


@pytest.mark.parametrize("racks, after, moves, warnings", [
    # rf 4 over racks a and b: a rack may hold ceil(4/2) = 2. Rack a holds 4 (two too many) but
    # rack b has one broker without the partition: one replica can go, the follower on the highest
    # id (all at their share, none holds bytes); the other stays and the warning says how many stay
    pytest.param(A4B1, (1, 2, 3, 5), [("t-0", 4, 5, "rack_violation")],
                 ("t-0: rack a keeps 3 replicas (at most 2 allowed): no broker without a replica in a rack "
                  "with room can take one",), id="one-free-broker-in-the-other-rack"),
    # two free brokers in rack b: both extra replicas go, 3 and 4 (the highest ids), in slot order
    pytest.param({**A4B1, 6: "b"}, (1, 2, 5, 6), [("t-0", 3, 5, "rack_violation"), ("t-0", 4, 6, "rack_violation")],
                 (), id="two-free-brokers-in-the-other-rack"),
    # a free broker in the full rack itself (5, rack a) is no room: only 6 in rack b is
    pytest.param({**A4B1, 6: "b"} | {5: "a"}, (1, 2, 3, 6), [("t-0", 4, 6, "rack_violation")],
                 ("t-0: rack a keeps 3 replicas (at most 2 allowed): no broker without a replica in a rack "
                  "with room can take one",), id="a-free-broker-in-the-full-rack-is-no-room"),
])
def test_a_rack_violation_evicts_as_many_replicas_as_other_racks_have_room_for(racks, after, moves, warnings) -> None:
    a = assignment(sorted(racks), parts(t_0=(1, 2, 3, 4)), racks=racks)
    plan = plan_reassignment(a, request(sorted(racks), racks, fix_racks=True))
    assert plan.after == {("t", 0): after}
    assert moved(plan) == moves
    assert plan.warnings == warnings


def test_room_a_rack_violation_takes_is_gone_for_the_next_rack() -> None:
    """rf 7 over racks a:{1,2,3} b:{4,5,6} c:{7} d:{8}: a rack may hold ceil(7/4) = 2, so racks a
    and b each hold one too many. The free brokers 7 (c) and 8 (d) are two places, but the replica
    on 9 (not a target) needs one of them: room for one eviction. Rack a (first by name) takes it —
    3, the highest-id follower, goes to 7 (below its share, 8 is not) — and rack b keeps its three,
    as the warning says; 9's replica goes to 8."""
    racks = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "b", 7: "c", 8: "d"}
    a = Assignment("assignment", "shape", tuple(racks), {**racks, 9: "d"}, tuple(parts(t_0=(1, 2, 3, 4, 5, 6, 9))))
    plan = plan_reassignment(a, request(racks, racks, fix_racks=True))
    assert plan.after == {("t", 0): (1, 2, 7, 4, 5, 6, 8)}
    assert moved(plan) == [("t-0", 3, 7, "rack_violation"), ("t-0", 9, 8, "broker_not_live")]
    assert plan.warnings == ("t-0: rack b keeps 3 replicas (at most 2 allowed): no broker without a replica in a "
                             "rack with room can take one",)


# -- balancing replica counts -------------------------------------------------------------------------


def _blocked_warning(broker: int, excess: int) -> str:
    return (f"broker {broker} keeps {excess} replica(s) above its even share: no replica of it can move to an "
            "underloaded broker without a rack violation or a duplicate")


def _two_rack_layout(on_a: list[int], on_b: list[int]) -> list[PartitionReplicas]:
    """Partitions t-k with one replica in rack a (``on_a[k]``) and one in rack b (``on_b[k]``)."""
    return [PartitionReplicas("t", k, (x, y)) for k, (x, y) in enumerate(zip(on_a, on_b))]


RACKS_2_3 = {1: "a", 2: "a", 3: "b", 4: "b", 5: "b"}


@pytest.mark.parametrize("on_a, on_b, sizes, warnings", [
    # 36 replicas over 5 brokers: shares 7, the ceil (8) to 1 (1 and 2 hold 9 each, the lower id).
    # 5 holds 4 of 7, but every partition has its one rack-b replica already (rf 2 over 2 racks:
    # one per rack), so neither 1 nor 2 can give. Step 3 takes donors furthest above their share
    # first: 2 (2 above) before 1 (1 above), each warned about once
    pytest.param([1] * 9 + [2] * 9, [3] * 7 + [4] * 7 + [5] * 4, None,
                 (_blocked_warning(2, 2), _blocked_warning(1, 1)), id="furthest-above-first"),
    # 20 replicas, shares 4: 1 and 2 are both one above; with sizes the donor holding more bytes
    # first (2: 5 x 10 against 1: 5 x 1), though 1 has the lower id
    pytest.param([1] * 5 + [2] * 5, [3] * 4 + [4] * 4 + [5] * 2, {("t", k): 1 if k < 5 else 10 for k in range(10)},
                 (_blocked_warning(2, 1), _blocked_warning(1, 1)), id="equal-excess-more-bytes-first"),
])
def test_donors_that_cannot_give_are_each_named_most_loaded_first(on_a, on_b, sizes, warnings) -> None:
    a = assignment([1, 2, 3, 4, 5], _two_rack_layout(on_a, on_b), racks=RACKS_2_3)
    plan = plan_reassignment(a, request([1, 2, 3, 4, 5], RACKS_2_3, balance_replicas=True), sizes)
    assert plan.moves == ()
    assert plan.warnings == warnings


def test_a_broker_at_its_share_takes_no_replica() -> None:
    """Racks a:{1,2} b:{3,4}; t-0..t-2 (1, 4) and two single-replica pads on 2: 8 replicas, shares
    2. 1 and 4 are one above, 3 is two below. 1 (the lower id) cannot give to 3 — each of its
    partitions has its one rack-b replica (on 4) — and 2 is at its share, so 1 keeps its extra
    replica (warned); 4 gives t-0 (the first by name) to 3, in its own rack. The plan does not
    route 1's replica through 2, which would make two moves where the even share needs none of 2."""
    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    a = assignment([1, 2, 3, 4], parts(t_0=(1, 4), t_1=(1, 4), t_2=(1, 4), pad_0=(2,), pad_1=(2,)), racks=racks)
    plan = plan_reassignment(a, request([1, 2, 3, 4], racks, balance_replicas=True))
    assert moved(plan) == [("t-0", 4, 3, "replica_balance")]
    assert plan.warnings == (_blocked_warning(1, 1),)


@pytest.mark.parametrize("pad_2, moves", [
    # 1 holds p-0..p-4, 2 holds q-0, 3 is new: 6 replicas, shares 2. 3 (two below) takes the first
    # replica, then 2 and 3 are each one below: the lower id, 2; then 3
    pytest.param(True, [("p-0", 1, 3, "replica_balance"), ("p-1", 1, 2, "replica_balance"),
                        ("p-2", 1, 3, "replica_balance")], id="the-receiver-furthest-below-first"),
    # without q-0: 5 replicas, shares 2, 2, 1 (the ceil to 1, which holds them, then to 2, the lower
    # id of the two empty brokers). 2 is two below its share, 3 one: 2 takes p-0 and p-1, 3 p-2
    pytest.param(False, [("p-0", 1, 2, "replica_balance"), ("p-1", 1, 2, "replica_balance"),
                         ("p-2", 1, 3, "replica_balance")], id="equal-counts-the-larger-share-first"),
])
def test_balancing_counts_fills_the_broker_furthest_below_its_share_first(pad_2, moves) -> None:
    ps = [PartitionReplicas("p", k, (1,)) for k in range(5)] + ([PartitionReplicas("q", 0, (2,))] if pad_2 else [])
    a = assignment([1, 2, 3], ps)
    plan = plan_reassignment(a, build_request(a, "add-brokers", added=(3,)))
    assert moved(plan) == moves


# -- balancing preferred leaders -----------------------------------------------------------------------


def test_a_reorder_for_leader_balance_says_so() -> None:
    """Step 4: 1 leads both partitions, 2 none (two fewer): p-0 (the first by name) is reordered so
    2 leads it. No replica moves; the leader change's reason is ``leader_balance``
    (REASONS["leader_balance"]), not ``leader_moved`` — 1's replica is still there."""
    a = assignment([1, 2], parts(p_0=(1, 2), p_1=(1, 2)))
    plan = plan_reassignment(a, build_request(a, "rebalance"))
    assert plan.moves == ()
    assert plan.after == {("p", 0): (2, 1), ("p", 1): (1, 2)}
    assert plan.leader_changes == (LeaderChange("p", 0, 1, 2, "leader_balance"),)


def test_leaders_left_uneven_are_named_with_the_counts() -> None:
    """Step 4 alone: 1 leads p-0 and p-1 (followers 2), 2 leads p-2 (follower 1), 3 leads nothing.
    1 has two more than 3, but no chain reaches 3 (it holds no replica; 2, one fewer than 1, leads
    only a partition 1 already holds), so leadership stays 2, 1, 0 and the warning gives the range."""
    a = assignment([1, 2, 3], parts(p_0=(1, 2), p_1=(1, 2), p_2=(2, 1)))
    plan = plan_reassignment(a, request([1, 2, 3], balance_leaders=True))
    assert plan.changes == ()
    assert plan.warnings == ("preferred leaders stay uneven (0..2 per broker): no chain of partitions links the "
                             "busiest brokers to the idlest",)


def test_a_chain_of_reorders_through_a_replaced_leader_keeps_leader_moved() -> None:
    """9 (not live) led p-0 (9, 1): its slot goes to 2 (below its share; 3 is at its own), and 2
    keeps the leadership (1 leads r-0, one fewer than 2, not two). Leaders are then 2 (p-0, q-0),
    1 (r-0), 3 (none): step 4's chain runs 2 → 1 → 3, p-0 reordered so 1 leads it and r-0 so 3
    does. p-0's leader change still says ``leader_moved``: its old leader 9 left the list
    (REASONS["leader_moved"]), whatever reordered it afterwards; r-0's is ``leader_balance``."""
    ps = parts(p_0=(9, 1), q_0=(2,), r_0=(1, 3))
    a = Assignment("assignment", "shape", (1, 2, 3), {1: None, 2: None, 3: None, 9: None}, tuple(ps))
    plan = plan_reassignment(a, build_request(a, "rebalance"))
    assert plan.after == {("p", 0): (1, 2), ("q", 0): (2,), ("r", 0): (3, 1)}
    assert moved(plan) == [("p-0", 9, 2, "broker_not_live")]
    assert plan.leader_changes == (LeaderChange("p", 0, 9, 1, "leader_moved"),
                                   LeaderChange("r", 0, 1, 3, "leader_balance"))


def test_a_leader_chain_reorders_toward_the_broker_two_fewer_not_the_first_follower() -> None:
    """Step 4: 2 leads a-0 and b-0, 1 leads c-0, 3 none. From 2, a-0's followers are 1 (one
    fewer: not a target of the chain) and 3 (two fewer): the shortest chain is a-0 alone, reordered
    so 3 leads it (3 moves to the front, 2 takes its slot). 1's c-0 stays as it is."""
    a = assignment([1, 2, 3], parts(a_0=(2, 1, 3), b_0=(2,), c_0=(1, 3)))
    plan = plan_reassignment(a, build_request(a, "rebalance"))
    assert plan.moves == ()
    assert plan.after == {("a", 0): (3, 1, 2), ("b", 0): (2,), ("c", 0): (1, 3)}
    assert plan.leader_changes == (LeaderChange("a", 0, 2, 3, "leader_balance"),)


# -- even shares: who keeps the ceil -------------------------------------------------------------


def test_the_ceil_share_stays_with_the_broker_holding_the_most() -> None:
    """4 replicas over 1, 2 and the new 3: shares 2, 1, 1 with the ceil on 2, which holds 3 of
    them (even_targets: "the ceil given to the brokers holding the most now"). So one move, 2 → 3,
    the lower bound; giving the ceil to 1 would take two replicas off 2."""
    a = assignment([1, 2, 3], parts(p_0=(1,), q_0=(2,), q_1=(2,), q_2=(2,)))
    plan = plan_reassignment(a, build_request(a, "add-brokers", added=(3,)))
    assert moved(plan) == [("q-0", 2, 3, "replica_balance")]


def test_between_equal_counts_the_ceil_share_stays_with_the_broker_holding_more_bytes() -> None:
    """1 and 2 hold two replicas each, 3 is new: shares 2, 1, 1 over 4 replicas, the ceil to the
    broker with more bytes (even_targets' tie, the sizes when known): 2 (q-0, q-1: 10 each) keeps
    both, 1 (p-0, p-1: 1 each) gives one to 3 — though 1 has the lower id."""
    a = assignment([1, 2, 3], parts(p_0=(1,), p_1=(1,), q_0=(2,), q_1=(2,)))
    sizes = {("p", 0): 1, ("p", 1): 1, ("q", 0): 10, ("q", 1): 10}
    plan = plan_reassignment(a, build_request(a, "add-brokers", added=(3,)), sizes)
    assert moved(plan) == [("p-0", 1, 3, "replica_balance")]


def test_a_partition_the_sizes_leave_out_moves_no_known_bytes() -> None:
    """With sizes given, a partition missing from them counts as empty: its new replica copies 0
    bytes (the plan's totals add 0), not a made-up size."""
    a = assignment([1, 2, 9], parts(x_0=(9,), pad_0=(1,)))
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(9,)), {("pad", 0): 7})
    assert plan.moves == (Move("x", 0, 9, 2, "broker_removed", 0),)
    assert plan.changes[0].bytes == 0


# -- balancing replica counts: which replica a donor gives ------------------------------------------


def test_a_donor_passes_over_a_replica_the_receivers_rack_cannot_take() -> None:
    """Step 3 alone, racks 1:a 2:b 3:b: 1 holds a-0 (1, 2), b-0 and b-1, 4 replicas in all, so
    shares 2, 1, 1 with the ceil on 1, and 1 gives one to 3. a-0 cannot go (rack b already holds
    its one allowed replica, on 2); b-0, the next by name, can."""
    racks = {1: "a", 2: "b", 3: "b"}
    a = assignment([1, 2, 3], parts(a_0=(1, 2), b_0=(1,), b_1=(1,)), racks=racks)
    plan = plan_reassignment(a, request([1, 2, 3], racks, balance_replicas=True))
    assert moved(plan) == [("b-0", 1, 3, "replica_balance")]
    assert plan.warnings == ()


def test_a_donor_may_give_into_a_rack_below_its_cap() -> None:
    """Step 3 alone, racks 1:a 2:a 3:b 4:b: x-0 (2, 1, 3) has rf 3 over 2 racks, so a rack may
    hold ceil(3/2) = 2 and moving 1's replica to 4 leaves (2, 4, 3), two in rack b: allowed. 1 and
    2 lead one partition each, 2 leaderships over 4 brokers with the ceil to those two: 1 is at its
    leader share, so its follower replica (x-0) is the better gift than its leadership (pad-0)."""
    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    a = assignment([1, 2, 3, 4], parts(x_0=(2, 1, 3), pad_0=(1,)), racks=racks)
    plan = plan_reassignment(a, request([1, 2, 3, 4], racks, balance_replicas=True))
    assert plan.after[("x", 0)] == (2, 4, 3)
    assert moved(plan) == [("x-0", 1, 4, "replica_balance")]


def test_a_receiver_at_its_leader_share_gets_a_follower_replica() -> None:
    """Step 3 alone: 1 holds a-0, a-1 (leading both) and b-0's follower; 5 replicas over 4 brokers,
    shares 2, 1, 1, 1, so 1 gives one to the new 4. Leaderships: 3 over 4 brokers, the ceil to 1
    and 2 (who lead) and to 3 (the lower id of the two leading none): 4's leader share is 0. So 1,
    above its own leader share, still gives a follower replica — b-0's — not a leadership that
    would put 4 above its share."""
    a = assignment([1, 2, 3, 4], parts(a_0=(1,), a_1=(1,), b_0=(2, 1, 3)))
    plan = plan_reassignment(a, request([1, 2, 3, 4], balance_replicas=True))
    assert moved(plan) == [("b-0", 1, 4, "replica_balance")]


def test_the_donors_bytes_after_a_move_decide_its_next_gift() -> None:
    """1 holds p-0 (5 bytes), p-1 (size unknown: 0) and p-2 (10); 2 and the new 8 hold nothing:
    shares 1 each, 1 gives two. To 2 first (the lower id): moving p-0 or p-2 leaves bytes 10/5 or
    5/10 apart (|15 - 2*size| = 5), p-0 first by name. 1 then holds 10 bytes: giving p-1 to 8
    leaves 10 against 0, giving p-2 leaves 0 against 10 — equal, so p-1, the first by name."""
    a = assignment([1, 2, 8], parts(p_0=(1,), p_1=(1,), p_2=(1,)))
    plan = plan_reassignment(a, build_request(a, "add-brokers", added=(8,)), {("p", 0): 5, ("p", 2): 10})
    assert moved(plan) == [("p-0", 1, 2, "replica_balance"), ("p-1", 1, 8, "replica_balance")]


def test_a_higher_replication_factor_shares_out_the_replicas_it_will_have() -> None:
    """t-0 (3,) and t-1 (2,) to rf 2 on brokers 1-3: the shares are of the 4 replicas after the
    change (``_Layout.share``), 2, 1, 1 with the ceil to 2 (2 and 3 hold one each, the lower id).
    t-0's new replica goes to 1, below its share of one. For t-1's, 1 and 3 (2 holds t-1) each
    hold one, their share: the lower id, 1. Shared out over today's 2 replicas instead, 1's share
    would be 0 and t-1's replica would go to 3."""
    a = assignment([1, 2, 3], parts(t_0=(3,), t_1=(2,)))
    plan = plan_reassignment(a, build_request(a, "set-replication-factor", replication_factor=2, topics=["t"]))
    assert plan.after == {("t", 0): (3, 1), ("t", 1): (2, 1)}
    assert moved(plan) == [("t-0", None, 1, "replication_factor"), ("t-1", None, 1, "replication_factor")]
