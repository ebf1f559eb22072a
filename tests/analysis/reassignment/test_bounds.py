"""The lower bound on moves and a layout's balance figures (``reassignment/bounds.py``), each
rule with its counter-case, on layouts small enough to count by hand. The bound's two parts are
the module docstring's: per partition (replicas that must leave non-targets or an over-full rack;
``max(rf, rf') - kept`` under a new replication factor) and per broker (what a broker above its
even share must lose, the ``ceil`` shares going to the brokers holding the most)."""

from __future__ import annotations

import dataclasses

import pytest

from kreplica.analysis.reassignment.bounds import (
    LayoutStats,
    PlanSummary,
    count_lower_bound,
    layout_stats,
    leader_change_lower_bound,
    lower_bound,
    summarize_plan,
)
from kreplica.analysis.reassignment.planner import plan_from_proposal, plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas
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


def test_without_sizes_there_are_no_bytes_per_broker_not_zero_bytes() -> None:
    """Sizes are what brokers report in ``DescribeLogDirs`` (``UnifiedLog.size``, read with
    ``kafka-log-dirs.sh --describe``); without them the bytes per broker are unknown, ``None``,
    not a count of zeros (counter-case: with sizes, zero for a broker holding nothing)."""
    layout = {("t", 0): (1,)}
    assert layout_stats(layout, (1, 2), {}, 0, None).bytes is None
    assert layout_stats(layout, (1, 2), {}, 0, {("t", 0): 7}).bytes == {1: 7, 2: 0}


@pytest.mark.parametrize("replicas, leaders, spreads", [
    # broker 2 has no entry: it holds nothing, as disk_max_over_mean's bytes.get(b, 0) reads it
    pytest.param({1: 3}, {1: 1}, (3, 1), id="a-broker-without-an-entry-holds-none"),
    pytest.param({1: 3, 2: 1}, {1: 1, 2: 1}, (2, 0), id="counter-both-listed"),
])
def test_spreads_count_a_broker_without_an_entry_as_zero(replicas, leaders, spreads) -> None:
    s = LayoutStats((1, 2), replicas, leaders, None, 0)
    assert (s.replica_spread, s.leader_spread) == spreads


def test_a_layout_over_no_brokers_has_no_spread() -> None:
    """max − min over an empty broker list is 0 (nothing to balance), not an error (counter-case:
    test_layout_stats_counts_replicas_leaders_and_bytes_per_broker)."""
    s = layout_stats({}, (), {}, 0, None)
    assert (s.replica_spread, s.leader_spread, s.disk_max_over_mean) == (0, 0, None)


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


# -- the summary, figure by figure ---------------------------------------------------------------
# Layout for the summaries below: live brokers 1-3; broker 9 is dead but still holds two replicas
# (rack "a" in the source); broker 4 is a target given with --brokers that holds nothing yet.
# Broker 2 has no rack in the source and gets "b" from --racks, so the targets' racks are
# 1:a 2:b 3:a 4:b (two racks: rf 2 allows one replica per rack).
SUMMARY_PARTS = [PartitionReplicas("t", 0, (1, 9)), PartitionReplicas("t", 1, (9, 2)),
                 PartitionReplicas("t", 2, (3, 1)), PartitionReplicas("t", 3, (2, 3)),
                 PartitionReplicas("t", 4, (1, 3))]
# t-2 has no size: its bytes count as 0, never as 1
SUMMARY_SIZES = {("t", 0): 10, ("t", 1): 20, ("t", 3): 40, ("t", 4): 5}
# the plan's lists (t-4 keeps its own): 9→4 twice, 1→2 (t-2), 2→1 (t-3)
SUMMARY_PROPOSAL = {("t", 0): (1, 4), ("t", 1): (2, 4), ("t", 2): (3, 2), ("t", 3): (1, 3)}


def _summary_source() -> Assignment:
    return Assignment("assignment", "shape", (1, 2, 3), {1: "a", 2: None, 3: "a", 9: "a"},
                      tuple(SUMMARY_PARTS))


def _figures(s) -> dict[int, tuple]:
    return {f.broker: (f.rack, f.target, f.replicas_before, f.replicas_after, f.leaders_before, f.leaders_after,
                       f.bytes_before, f.bytes_after, f.replicas_in, f.replicas_out, f.bytes_in, f.bytes_out)
            for f in s.brokers}


def test_summary_figures_of_every_broker_with_sizes() -> None:
    """Every broker holding a replica or live (9 dead but holding, 4 a target holding nothing) gets
    a row; missing counts are 0, never None; bytes of an unsized partition count 0."""
    a = _summary_source()
    req = build_request(a, "rebalance", brokers=(1, 2, 3, 4), racks={2: "b", 4: "b"}, start_index=0)
    plan = plan_from_proposal(a, req, SUMMARY_PROPOSAL, "generate", SUMMARY_SIZES)
    s = summarize_plan(a, plan, SUMMARY_SIZES)
    #                   rack tgt  r-before/after l-b/a  bytes b/a  r-in/out bytes in/out
    assert _figures(s) == {
        1: ("a", True, 3, 3, 2, 3, 15, 55, 1, 1, 40, 0),
        2: ("b", True, 2, 2, 1, 1, 60, 20, 1, 1, 0, 40),     # rack from --racks, not the source's None
        3: ("a", True, 3, 3, 1, 1, 45, 45, 0, 0, 0, 0),
        4: ("b", True, 0, 2, 0, 0, 0, 30, 2, 0, 30, 0),
        9: ("a", False, 2, 0, 1, 0, 30, 0, 0, 2, 0, 30),
    }
    assert (s.moves, s.bytes_moved, s.partitions_changed, s.leader_changes) == (4, 70, 4, 2)
    assert s.before.replicas == {1: 3, 2: 2, 3: 3, 9: 2}
    # racks of every broker with one count, the dead broker 9 (rack a) included: t-0 (1,9),
    # t-2 (3,1), t-4 (1,3) put two replicas in rack a; after: t-1 (2,4) in b, t-3 and t-4 in a
    assert (s.before.rack_violations, s.after.rack_violations) == (3, 3)
    # per partition: t-0, t-1 lose the replica on 9, t-2 and t-4 one of their two in rack a
    assert (s.lower_bound, s.leader_change_lower_bound) == (4, 1)
    # Kafka's --generate (AdminUtils.assignReplicasToBrokers, rack-aware, startIndex=shift=0) on
    # 1:a 2:b 3:a 4:b: the rack-alternated list is 1,2,3,4, giving t-0..t-4 (1,2) (2,3) (3,4)
    # (4,1) (1,4) (the shift grows at partition 4): 6 new replicas, 10+20+0+2*40+5 bytes
    assert (s.kafka_generate_moves, s.kafka_generate_bytes) == (6, 115)


def test_summary_figures_without_sizes_or_racks() -> None:
    """Without sizes every byte figure is None; planning without racks still shows each broker's
    rack from the source; a seeded --generate draws (start, shift) from the seed given."""
    a = _summary_source()
    req = build_request(a, "rebalance", brokers=(1, 2, 3, 4), rack_aware=False, seed=5)
    plan = plan_from_proposal(a, req, SUMMARY_PROPOSAL, "generate")
    s = summarize_plan(a, plan, None)
    assert _figures(s) == {
        1: ("a", True, 3, 3, 2, 3, None, None, 1, 1, None, None),
        2: (None, True, 2, 2, 1, 1, None, None, 1, 1, None, None),
        3: ("a", True, 3, 3, 1, 1, None, None, 0, 0, None, None),
        4: (None, True, 0, 2, 0, 0, None, None, 2, 0, None, None),
        9: ("a", False, 2, 0, 1, 0, None, None, 0, 2, None, None),
    }
    assert (s.bytes_moved, s.before.rack_violations, s.after.rack_violations) == (None, 0, 0)
    # seed 5 draws (startIndex, shift) = (2, 2) (random.Random(5), two randrange(4) calls):
    # t-0..t-4 (3,2) (4,3) (1,4) (2,1) (3,4), so 2+2+1+1+1 new replicas (seed 0 would draw (3, 3): 6)
    assert (s.kafka_generate_moves, s.kafka_generate_bytes) == (7, None)


def test_summary_when_kafkas_generate_refuses() -> None:
    """--generate keeps each topic's replication factor (3 here), which 2 target brokers cannot
    hold (AdminUtils: "replication factor: 3 larger than available brokers: 2"): no comparison."""
    a = assignment([1, 2, 3], parts((1, 2, 3), (2, 3, 1)))
    plan = plan_reassignment(a, build_request(a, "set-replication-factor", brokers=(1, 2), replication_factor=2))
    s = summarize_plan(a, plan, {("t", 0): 1, ("t", 1): 1})
    assert (s.kafka_generate_moves, s.kafka_generate_bytes) == (None, None)


def test_summary_counts_generate_moves_when_a_partition_has_another_replication_factor() -> None:
    """ReassignPartitionsCommand.calculateAssignment places a topic with the replication factor of
    its first partition: t-1 (1,3,4) gets (2,3) (startIndex=shift=0 on 1-4), one replica created
    and two dropped, which pair into 2 changes."""
    a = assignment([1, 2, 3, 4], parts((1, 2), (1, 3, 4)))
    plan = plan_reassignment(a, build_request(a, "generate", start_index=0))
    assert plan.after == {("t", 0): (1, 2), ("t", 1): (2, 3)}
    s = summarize_plan(a, plan, {("t", 0): 7, ("t", 1): 100})
    assert (s.kafka_generate_moves, s.kafka_generate_bytes) == (2, 100)


def test_summary_and_bound_of_a_generate_request_with_a_rack_mix() -> None:
    """Racks play no part in the bound of ``generate`` (replicas off the targets), so a mix of
    brokers with and without racks is no error there, and the summary compares with Kafka's
    rack-unaware placement: t-1 (9,1) → (2,3) is two new replicas."""
    a = Assignment("assignment", "shape", (1, 2, 3), {1: "a", 2: None, 3: None},
                   tuple(parts((1, 2), (9, 1))))
    req = build_request(a, "generate", start_index=0)
    assert lower_bound(a, req) == 1
    s = summarize_plan(a, plan_from_proposal(a, req, {}, "generate"), None)
    assert (s.moves, s.lower_bound, s.kafka_generate_moves, s.kafka_generate_bytes) == (0, 1, 2, None)
    assert (s.before.rack_violations, s.after.rack_violations) == (0, 0)


RACKS_2 = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}


@pytest.mark.parametrize("replicas, action, kw, expected", [
    # only the named topic changes its replication factor: t-0 (1,2,3) → 1 is 2 drops, u-0 keeps 2
    pytest.param({"t": (1, 2, 3), "u": (1, 2)}, "set-replication-factor",
                 {"replication_factor": 1, "topics": ["t"]}, 2, id="rf-on-the-named-topic-only"),
    pytest.param({"t": (1, 2, 3), "u": (1, 2)}, "set-replication-factor",
                 {"replication_factor": 1}, 3, id="rf-on-every-topic"),
    # rf 4 over racks a:{1,2,3} b:{4,5}: ceil(4/2) = 2 per rack, (1,2,3,4) keeps 2 of a and 4
    pytest.param({"t": (1, 2, 3, 4)}, "rebalance", {}, 1, id="rack-a-holds-one-over-the-cap-of-two"),
    pytest.param({"t": (1, 2, 4, 5)}, "rebalance", {}, 0, id="two-per-rack-is-the-cap"),
    # rf 3 over 2 racks: cap 2, (1,2,4) is within it
    pytest.param({"t": (1, 2, 4)}, "rebalance", {}, 0, id="two-in-rack-a-of-rf-3"),
])
def test_lower_bound_per_topic_and_per_rack(replicas, action, kw, expected) -> None:
    a = assignment([1, 2, 3, 4, 5], [PartitionReplicas(t, 0, r) for t, r in replicas.items()], RACKS_2)
    assert lower_bound(a, build_request(a, action, **kw)) == expected


def test_lower_bound_counts_a_replaced_replica_in_its_new_rack() -> None:
    """A replaced replica is kept in its replacement's rack: (1,3) with 3 → 4 keeps a (1) and
    b (4), so only the replacement itself moves."""
    a = assignment([1, 2, 3, 4], parts((1, 3)), {1: "a", 2: "b", 3: "a", 4: "b"})
    req = dataclasses.replace(build_request(a, "rebalance", brokers=(1, 2, 4)), replace={3: 4})
    assert lower_bound(a, req) == 1
