"""The reassignment planner: decommission moves exactly the replicas on the removed brokers,
rebalance reaches balance with the fewest moves among every plan a test can enumerate, no new rack
violation, determinism, and the quality targets of issue 11 on layouts of the measured shapes."""

from __future__ import annotations

import itertools
import random

import pytest

from kreplica.analysis.reassignment.bounds import layout_stats, lower_bound, summarize_plan
from kreplica.analysis.reassignment.planner import PlanError, plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas
from tests.builders import reassignment_shapes as shapes


def _request(a: Assignment, action: str, **kw):
    return build_request(a, action, **kw)


def _violations(layout, racks) -> int:
    n_racks = len(set(racks.values()))
    return layout_stats(layout, racks, racks, n_racks, None).rack_violations


# -- decommission ----------------------------------------------------------------------------------


@pytest.mark.parametrize("removed", [pytest.param((5,), id="one"), pytest.param((2, 9, 17), id="three")])
def test_decommission_moves_exactly_the_removed_brokers_replicas(removed) -> None:
    a, _sizes = shapes.racked_with_violations(n_brokers=30, n_racks=3, partitions=600, violations=0)
    plan = plan_reassignment(a, _request(a, "decommission", removed=removed))
    on_removed = sum(1 for p in a.partitions for b in p.replicas if b in removed)
    assert len(plan.moves) == on_removed
    assert all(m.source in removed and m.reason == "broker_removed" for m in plan.moves)
    before = {p.key: p.replicas for p in a.partitions}
    for key, reps in plan.after.items():
        assert len(reps) == len(before[key]) and len(set(reps)) == len(reps)
        assert not set(reps) & set(removed)
        kept = [b for b in before[key] if b not in removed]
        assert set(kept) <= set(reps)
        if before[key][0] not in removed:                       # the preferred leader stays
            assert reps[0] == before[key][0]
    racks = {b: r for b, r in a.racks.items() if b not in removed}
    assert _violations(plan.after, racks) == 0
    assert len(plan.moves) == lower_bound(a, plan.request)


@pytest.mark.parametrize("sized", [pytest.param(False, id="counts"), pytest.param(True, id="sizes")])
def test_decommission_is_no_worse_balanced_than_before(sized: bool) -> None:
    # without racks (with them, the removed broker's rack must absorb its replicas: see the test below)
    a, sizes = shapes.racked_with_violations(n_brokers=30, n_racks=3, partitions=900, violations=0)
    sizes = sizes if sized else None
    plan = plan_reassignment(a, _request(a, "decommission", removed=(4,), rack_aware=False), sizes)
    s = summarize_plan(a, plan, sizes)
    assert s.after.replica_spread <= s.before.replica_spread
    assert s.after.leader_spread <= s.before.leader_spread
    if sized:
        assert s.after.disk_max_over_mean <= s.before.disk_max_over_mean


def test_decommission_keeps_the_rack_of_the_removed_replicas() -> None:
    a, _ = shapes.racked_with_violations(n_brokers=30, n_racks=3, partitions=900, violations=0)
    plan = plan_reassignment(a, _request(a, "decommission", removed=(4,)))
    assert {a.racks[m.destination] for m in plan.moves} == {a.racks[4]}


def test_decommission_makes_no_new_rack_violation_when_racks_run_short() -> None:
    # racks a:{1,2} b:{3,4} c:{5}; removing 5 leaves two racks for RF 3: a violation is unavoidable
    # but each partition keeps at most two replicas per rack
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c"}
    parts = [PartitionReplicas("t", 0, (1, 3, 5)), PartitionReplicas("t", 1, (5, 2, 4))]
    a = Assignment("assignment", "x", (1, 2, 3, 4, 5), racks, tuple(parts))
    plan = plan_reassignment(a, _request(a, "decommission", removed=(5,)))
    for reps in plan.after.values():
        per_rack = [racks[b] for b in reps]
        assert max(per_rack.count(r) for r in set(per_rack)) == 2


# -- rebalance: the fewest moves among every plan -------------------------------------------------


def _fewest_moves_to_balance(a: Assignment, racks: dict[int, str] | None) -> int:
    """Enumerate every assignment of replica sets; the fewest moves of those with counts within
    one of even and no rack holding two replicas of a partition."""
    brokers = list(a.live)
    rf = len(a.partitions[0].replicas)
    options = list(itertools.combinations(brokers, rf))
    if racks:
        options = [o for o in options if len({racks[b] for b in o}) == len(o)]
    best = None
    for combo in itertools.product(options, repeat=len(a.partitions)):
        counts = {b: 0 for b in brokers}
        for o in combo:
            for b in o:
                counts[b] += 1
        if max(counts.values()) - min(counts.values()) > 1:
            continue
        moves = sum(len(set(p.replicas) - set(o)) for p, o in zip(a.partitions, combo))
        best = moves if best is None else min(best, moves)
    return best


def _random_layout(seed: int, n_brokers: int, n_parts: int, racks: dict[int, str] | None) -> Assignment:
    rng = random.Random(seed)
    brokers = list(range(1, n_brokers + 1))
    heavy = brokers[: max(2, n_brokers // 2)]   # skewed: replicas on the first half only
    parts = [PartitionReplicas("t", i, tuple(rng.sample(heavy, 2))) for i in range(n_parts)]
    return Assignment("assignment", "x", tuple(brokers), dict(racks or {b: None for b in brokers}), tuple(parts))


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in range(6)])
@pytest.mark.parametrize("racked", [pytest.param(False, id="no-racks"), pytest.param(True, id="two-racks")])
def test_rebalance_moves_are_the_fewest_possible(seed: int, racked: bool) -> None:
    racks = {1: "a", 2: "b", 3: "a", 4: "b", 5: "a", 6: "b"} if racked else None
    a = _random_layout(seed, 6, 5, racks)
    plan = plan_reassignment(a, _request(a, "rebalance"))
    counts = layout_stats(plan.after, a.live, {}, 0, None)
    assert counts.replica_spread <= 1 and counts.leader_spread <= 1
    if racks:
        assert _violations(plan.after, racks) == 0
    assert len(plan.moves) == _fewest_moves_to_balance(a, racks)


def test_rebalance_of_a_balanced_cluster_moves_nothing() -> None:
    a = shapes.balanced()
    plan = plan_reassignment(a, _request(a, "rebalance"))
    assert plan.changes == ()


def test_add_brokers_reaches_the_lower_bound_and_even_counts() -> None:
    a = shapes.skewed_after_adding()
    request = _request(a, "add-brokers", added=())
    plan = plan_reassignment(a, request)
    s = summarize_plan(a, plan, None)
    assert s.moves == s.lower_bound == 1800
    assert s.after.replica_spread <= 1 and s.after.leader_spread <= 1
    assert s.kafka_generate_moves > s.moves


def test_racked_rebalance_within_5_percent_of_the_bound() -> None:
    a, sizes = shapes.racked_with_violations()
    plan = plan_reassignment(a, _request(a, "rebalance"), sizes)
    s = summarize_plan(a, plan, sizes)
    assert s.before.rack_violations == 12 and s.after.rack_violations == 0
    assert s.moves <= 1.05 * s.lower_bound
    assert s.after.replica_spread <= 1 and s.after.leader_spread <= 1
    assert s.after.disk_max_over_mean < s.before.disk_max_over_mean
    assert s.kafka_generate_moves > 9 * s.moves


def test_plans_are_identical_on_every_run() -> None:
    a, sizes = shapes.racked_with_violations(n_brokers=20, partitions=1000)
    first = plan_reassignment(a, _request(a, "rebalance"), sizes)
    again = plan_reassignment(a, _request(a, "rebalance"), sizes)
    assert first == again


# -- replace, replication factor, errors --------------------------------------------------------------


def test_replace_broker_keeps_the_slot() -> None:
    a = shapes.balanced(n_brokers=6, partitions=60)
    plan = plan_reassignment(a, _request(a, "replace-broker", replace={3: 7}))
    for c in plan.changes:
        assert c.after == tuple(7 if b == 3 else b for b in c.before)
        assert [(m.source, m.destination, m.reason) for m in c.moves] == [(3, 7, "broker_replaced")]
    assert len(plan.moves) == lower_bound(a, plan.request)


@pytest.mark.parametrize("rf", [pytest.param(1, id="down-to-1"), pytest.param(2, id="down"),
                                pytest.param(4, id="up"), pytest.param(6, id="up-to-all")])
def test_set_replication_factor(rf: int) -> None:
    a = shapes.balanced(n_brokers=6, partitions=60)
    plan = plan_reassignment(a, _request(a, "set-replication-factor", replication_factor=rf))
    assert all(len(r) == rf and len(set(r)) == rf for r in plan.after.values())
    assert len(plan.moves) == lower_bound(a, plan.request) == 60 * abs(rf - 3)
    for c in plan.changes:   # what stays keeps its order, the preferred leader first
        kept = [b for b in c.before if b in c.after]
        assert [b for b in c.after if b in kept] == kept
        if rf < 3:
            assert c.after[0] == c.before[0]


def test_set_replication_factor_on_named_topics_only() -> None:
    a = shapes.balanced(n_brokers=6, partitions=120)
    plan = plan_reassignment(a, _request(a, "set-replication-factor", replication_factor=2, topics=["topic-0000"]))
    assert {c.topic for c in plan.changes} == {"topic-0000"}


@pytest.mark.parametrize(("action", "kw"), [
    pytest.param("decommission", {"removed": (99,)}, id="unknown-broker"),
    pytest.param("set-replication-factor", {"replication_factor": 7}, id="rf-above-brokers"),
    pytest.param("set-replication-factor", {"replication_factor": 2, "topics": ["nope"]}, id="unknown-topic"),
    pytest.param("replace-broker", {"replace": {1: 1}}, id="replace-itself"),
])
def test_requests_that_cannot_be_planned(action, kw) -> None:
    a = shapes.balanced(n_brokers=6, partitions=60)
    with pytest.raises(PlanError):
        plan_reassignment(a, _request(a, action, **kw))
