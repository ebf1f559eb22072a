"""The lower bound on moves and a layout's balance figures (``reassignment/bounds.py``), each
rule with its counter-case, on layouts small enough to count by hand. The bound's two parts are
the module docstring's: per partition (replicas that must leave non-targets or an over-full rack;
``max(rf, rf') - kept`` under a new replication factor) and per broker (what a broker above its
even share must lose, the ``ceil`` shares going to the brokers holding the most)."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.bounds import (
    PlanSummary,
    count_lower_bound,
    layout_stats,
    leader_change_lower_bound,
    lower_bound,
    summarize_plan,
)
from kreplica.analysis.reassignment.planner import plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import PartitionReplicas
from tests.builders.reassignment_shapes import assignment


def parts(*replicas: tuple[int, ...]) -> list[PartitionReplicas]:
    return [PartitionReplicas("t", i, r) for i, r in enumerate(replicas)]


@pytest.mark.parametrize("counts, targets, total, expected", [
    pytest.param({1: 4, 2: 0}, (1, 2), 4, 2, id="one-broker-holds-all"),
    pytest.param({1: 2, 2: 2}, (1, 2), 4, 0, id="already-even"),
    pytest.param({1: 3, 2: 2}, (1, 2), 5, 0, id="within-one-is-even"),
    pytest.param({1: 2, 2: 2, 9: 2}, (1, 2), 6, 2, id="a-non-target-loses-everything"),
    # 5 over 3: shares 2, 2, 1, the 2s to the brokers holding most (1 with 3, then 2 by id): 1 loses 1
    pytest.param({1: 3, 2: 1, 3: 1}, (1, 2, 3), 5, 1, id="ceil-share-to-the-fullest"),
    pytest.param({1: 1, 2: 1, 3: 3}, (1, 2, 3), 5, 1, id="ceil-share-to-the-fullest-not-the-lowest-id"),
    # a new replication factor changes the total the shares divide
    pytest.param({1: 2, 2: 2}, (1, 2), 2, 2, id="smaller-total"),
])
def test_count_lower_bound(counts, targets, total, expected) -> None:
    assert count_lower_bound(counts, targets, total) == expected


RACKS = {1: "a", 2: "a", 3: "b", 4: "c"}


@pytest.mark.parametrize("replicas, action, kw, expected", [
    # decommission: every replica on the removed broker moves, nothing else
    pytest.param([(1, 3), (3, 2), (1, 2)], "decommission", {"removed": (3,)}, 2, id="decommission"),
    pytest.param([(1, 2), (2, 1)], "decommission", {"removed": (3,)}, 0, id="decommission-of-an-empty-broker"),
    # replication factor: max(rf, rf') - kept, kept <= min(rf', replicas on targets)
    pytest.param([(1, 2, 3)], "set-replication-factor", {"replication_factor": 1}, 2, id="rf-3-to-1"),
    pytest.param([(1, 2)], "set-replication-factor", {"replication_factor": 3}, 1, id="rf-2-to-3"),
    pytest.param([(1, 2)], "set-replication-factor", {"replication_factor": 2}, 0, id="rf-unchanged"),
    pytest.param([(1, 9)], "set-replication-factor", {"replication_factor": 3, "brokers": (1, 2, 3, 4)}, 2,
                 id="rf-up-with-a-replica-off-the-targets"),
    # replace: one move per replaced replica
    pytest.param([(1, 3), (2, 1)], "replace-broker", {"replace": {3: 4}}, 1, id="replace"),
    # rebalance with racks a:{1,2} b:{3} c:{4}: rf 3 over 3 racks allows one per rack
    pytest.param([(1, 3, 4), (2, 3, 4), (1, 2, 4)], "rebalance", {}, 1, id="rack-violation-must-move"),
    # counter-case: the same layout without racks has no violation (counts 2,2,2,3 are within one)
    pytest.param([(1, 3, 4), (2, 3, 4), (1, 2, 4)], "rebalance", {"rack_aware": False}, 0,
                 id="no-racks-no-violation"),
    # the per-broker bound wins when it is larger
    pytest.param([(1, 2), (1, 2), (1, 2)], "add-brokers", {"added": (3,)}, 2, id="count-bound"),
    pytest.param([(1, 2), (1, 2), (1, 2)], "decommission", {"added": (3,), "removed": ()}, 0,
                 id="count-bound-only-when-balancing"),
])
def test_lower_bound(replicas, action, kw, expected) -> None:
    a = assignment([1, 2, 3, 4], parts(*replicas), RACKS)
    assert lower_bound(a, build_request(a, action, **kw)) == expected


@pytest.mark.parametrize("replicas, action, kw, expected", [
    pytest.param([(3, 1), (1, 3), (2, 1)], "decommission", {"removed": (3,)}, 1, id="only-a-removed-leader-is-forced"),
    pytest.param([(3, 1), (1, 3)], "replace-broker", {"replace": {3: 4}}, 0, id="a-replaced-leader-keeps-its-slot"),
    # balancing leaders: 4 partitions led by 1 over 4 brokers
    pytest.param([(1, 2), (1, 2), (1, 3), (1, 4)], "rebalance", {}, 3, id="leader-count-bound"),
    pytest.param([(1, 2), (2, 1), (3, 4), (4, 3)], "rebalance", {}, 0, id="leaders-already-even"),
])
def test_leader_change_lower_bound(replicas, action, kw, expected) -> None:
    a = assignment([1, 2, 3, 4], parts(*replicas))
    assert leader_change_lower_bound(a, build_request(a, action, **kw)) == expected


@pytest.mark.parametrize("layout, n_racks, violations", [
    # racks a:{1,2} b:{3} c:{4}
    pytest.param({("t", 0): (1, 3, 4)}, 3, 0, id="one-per-rack"),
    pytest.param({("t", 0): (1, 2, 4)}, 3, 1, id="two-in-rack-a-of-three-racks"),
    # rf 3 over 2 racks: ceil(3/2) = 2 per rack is allowed
    pytest.param({("t", 0): (1, 2, 3)}, 2, 0, id="two-in-a-rack-is-the-cap-with-two-racks"),
    # brokers 5 and 6 have no rack: they are not one rack "None" holding two replicas
    pytest.param({("t", 0): (5, 6, 1)}, 3, 0, id="brokers-without-rack-not-counted"),
    pytest.param({("t", 0): (1, 2, 4)}, 0, 0, id="rack-unaware"),
])
def test_rack_violations(layout, n_racks, violations) -> None:
    assert layout_stats(layout, (1, 2, 3, 4, 5, 6), RACKS, n_racks, None).rack_violations == violations


def test_layout_stats_counts_replicas_leaders_and_bytes_per_broker() -> None:
    layout = {("t", 0): (1, 2), ("t", 1): (1, 3), ("u", 0): (9,)}
    s = layout_stats(layout, (1, 2, 3), {}, 0, {("t", 0): 10, ("t", 1): 30, ("u", 0): 5})
    assert s.replicas == {1: 2, 2: 1, 3: 1, 9: 1}          # a broker outside the list still shows
    assert s.leaders == {1: 2, 2: 0, 3: 0, 9: 1}
    assert s.bytes == {1: 40, 2: 10, 3: 30, 9: 5}
    assert (s.replica_spread, s.leader_spread) == (1, 2)    # over the brokers listed only
    assert s.disk_max_over_mean == 40 / (80 / 3)


@pytest.mark.parametrize("sizes, expected", [
    pytest.param(None, None, id="no-sizes"),
    pytest.param({("t", 0): 0}, None, id="nothing-stored"),
    pytest.param({("t", 0): 10}, 2.0, id="all-on-one-of-two"),
])
def test_disk_max_over_mean(sizes, expected) -> None:
    assert layout_stats({("t", 0): (1,)}, (1, 2), {}, 0, sizes).disk_max_over_mean == expected


@pytest.mark.parametrize("moves, bound, expected", [
    pytest.param(0, 0, 1.0, id="nothing-to-do-nothing-done"),
    pytest.param(3, 0, None, id="moves-where-none-were-needed"),
    pytest.param(3, 2, 1.5, id="ratio"),
])
def test_ratio_to_lower_bound(moves, bound, expected) -> None:
    s = PlanSummary(moves, None, 0, 0, bound, 0, (), None, None, None, None)
    assert s.ratio_to_lower_bound == expected


def test_summary_of_a_decommission() -> None:
    a = assignment([1, 2, 3], parts((1, 3), (3, 2), (1, 2)))
    sizes = {("t", 0): 10, ("t", 1): 20, ("t", 2): 40}
    plan = plan_reassignment(a, build_request(a, "decommission", removed=(3,)), sizes)
    s = summarize_plan(a, plan, sizes)
    # t-0 (10 bytes) and t-1 (20 bytes) lose their replica on 3; 1 and 2 each hold one of them
    assert (s.moves, s.bytes_moved, s.partitions_changed, s.lower_bound) == (2, 30, 2, 2)
    figures = {f.broker: f for f in s.brokers}
    assert (figures[3].target, figures[3].replicas_before, figures[3].replicas_after, figures[3].replicas_out,
            figures[3].bytes_out) == (False, 2, 0, 2, 30)
    assert sum(f.replicas_in for f in s.brokers) == 2 and sum(f.bytes_in for f in s.brokers) == 30
    # before: over every broker holding a replica; after: over the targets
    assert s.before.replicas == {1: 2, 2: 2, 3: 2} and s.after.replicas == {1: 3, 2: 3}
