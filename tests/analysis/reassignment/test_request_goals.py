"""``build_request`` (``reassignment/request.py``): the target brokers, the racks that count and
the goals of each action, as its module docstring's table gives them, and each refusal in its
words (``plan-reassign`` prints them on stderr, exit 2)."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.placement import StartDraw
from kreplica.analysis.reassignment.planner import PlanError
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas
from tests.builders.reassignment_shapes import assignment

RACKS = {1: "a", 2: "b", 3: "a", 4: "b", 6: "c"}   # 6: known by its rack only, not live
SOURCE = assignment([1, 2, 3, 4], [PartitionReplicas("t", 0, (1, 2, 3)), PartitionReplicas("u", 0, (4, 5))], RACKS)


@pytest.mark.parametrize("kw, targets", [
    pytest.param({}, (1, 2, 3, 4), id="the-live-brokers"),
    pytest.param({"removed": (2,)}, (1, 3, 4), id="less-the-removed"),
    pytest.param({"added": (7,)}, (1, 2, 3, 4, 7), id="plus-the-added"),
    pytest.param({"replace": {3: 8}}, (1, 2, 4, 8), id="the-replaced-swapped"),
    pytest.param({"brokers": (2, 3, 9), "added": (10,), "removed": (3,)}, (2, 9, 10), id="brokers-replace-the-live-list"),
])
def test_targets(kw, targets) -> None:
    assert build_request(SOURCE, "decommission", **kw).targets == targets


def test_racks_come_from_the_source_for_each_target_and_the_given_ones_add_or_override() -> None:
    req = build_request(SOURCE, "rebalance", added=(7,), racks={7: "c", 1: "z", 6: "d"})
    assert req.racks == {1: "z", 2: "b", 3: "a", 4: "b", 7: "c", 6: "d"}
    assert build_request(SOURCE, "rebalance", rack_aware=False, racks={1: "z"}).racks == dict.fromkeys((1, 2, 3, 4))


@pytest.mark.parametrize("action, fix_racks, balance", [
    ("decommission", False, False), ("replace-broker", False, False), ("set-replication-factor", False, False),
    ("add-brokers", False, True), ("rebalance", True, True), ("generate", False, False),
])
def test_the_goals_of_each_action(action, fix_racks, balance) -> None:
    req = build_request(SOURCE, action)
    assert (req.action, req.fix_racks, req.balance_replicas, req.balance_leaders) == (action, fix_racks, balance,
                                                                                      balance)


def test_the_rest_of_the_request_is_passed_as_given() -> None:
    req = build_request(SOURCE, "generate", removed=(4,), replace={1: 9}, replication_factor=2,
                        topics=["u", "t", "u"], seed=5, start_index=3)
    assert (req.removed, req.replace, req.replication_factor, req.topics, req.seed, req.start) == (
        frozenset({4}), {1: 9}, 2, ("u", "t"), 5, StartDraw(3, 3))
    plain = build_request(SOURCE, "generate")
    assert (plain.removed, plain.replace, plain.replication_factor, plain.topics, plain.seed, plain.start) == (
        frozenset(), {}, None, None, 0, None)
    assert build_request(SOURCE, "generate", replication_factor=1).replication_factor == 1


@pytest.mark.parametrize("kw, message", [
    pytest.param({"removed": (2,), "added": (2, 7)}, "broker(s) [2] both added and removed", id="added-and-removed"),
    pytest.param({"replace": {3: 3}}, "replace-broker 3=3: a broker cannot replace itself", id="replace-itself"),
    pytest.param({"replication_factor": 0}, "replication factor must be at least 1, got 0", id="rf-0"),
    pytest.param({"replace": {9: 1}}, "unknown broker(s) [9]: the source knows brokers 1-6", id="replace-unknown"),
    pytest.param({"topics": ["t", "x", "y"]}, "unknown topic(s) ['x', 'y']: the source has 2 topics (t, u)",
                 id="unknown-topics"),
])
def test_refusals(kw, message) -> None:
    with pytest.raises(PlanError) as refused:
        build_request(SOURCE, "decommission", **kw)
    assert str(refused.value) == message


def test_unknown_topics_name_the_first_five_of_the_sources() -> None:
    many = assignment([1], [PartitionReplicas(f"t{i}", 0, (1,)) for i in range(7)])
    with pytest.raises(PlanError) as refused:
        build_request(many, "generate", topics=["x"])
    assert str(refused.value) == "unknown topic(s) ['x']: the source has 7 topics (t0, t1, t2, t3, t4, ...)"
    five = assignment([1], [PartitionReplicas(f"t{i}", 0, (1,)) for i in range(5)])
    with pytest.raises(PlanError) as refused:
        build_request(five, "generate", topics=["x"])
    assert str(refused.value) == "unknown topic(s) ['x']: the source has 5 topics (t0, t1, t2, t3, t4)"


def test_no_live_broker_says_which_brokers_are_known() -> None:
    down = Assignment("assignment", "s", (), {1: None, 2: None}, (PartitionReplicas("t", 0, (1, 2, 4)),))
    with pytest.raises(PlanError) as refused:
        build_request(down, "rebalance")
    assert str(refused.value) == ("no live broker in the evidence (known but not alive: 1-2,4): give the target "
                                  "brokers with --brokers")
    nothing = Assignment("assignment", "s", (), {}, ())
    with pytest.raises(PlanError) as refused:
        build_request(nothing, "rebalance")
    assert str(refused.value) == ("the source knows no broker (none is registered, alive or holds a replica): give "
                                  "the target brokers with --brokers")
    with pytest.raises(PlanError) as refused:
        build_request(nothing, "decommission", removed=(1,))
    assert str(refused.value) == ("unknown broker(s) [1]: the source knows no broker (none is registered, alive or "
                                  "holds a replica)")
    # the counter-case: targets given with --brokers are planned onto
    assert build_request(down, "rebalance", brokers=(1, 2)).targets == (1, 2)


def test_removing_every_live_broker_is_not_the_no_broker_refusal() -> None:
    # the request itself removes them: the planner says what cannot be placed, not "no live broker"
    assert build_request(SOURCE, "decommission", removed=(1, 2, 3, 4)).targets == ()
