"""``plan-reassign`` on evidence with no live broker says so, and never ends a message with an
empty broker list (real KRaft copies of a single broker, fenced at shutdown, are such evidence:
``tests/interop/test_wild_kraft.py``)."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import PlanError
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas

ORPHAN = PartitionReplicas("orders", 0, (1, 2), leader=-1, isr=(1,))


def _assignment(live=(), racks=None, partitions=()) -> Assignment:
    return Assignment("kraft", "src", tuple(live), dict(racks or {}), tuple(partitions))


@pytest.mark.parametrize(("assignment", "says"), [
    pytest.param(_assignment(partitions=[ORPHAN]), "no live broker in the evidence (known but not alive: 1-2)",
                 id="replicas-on-dead-brokers"),
    pytest.param(_assignment(racks={3: None}), "no live broker in the evidence (known but not alive: 3)",
                 id="registered-not-alive"),
    pytest.param(_assignment(), "the source knows no broker", id="no-broker-at-all"),
])
@pytest.mark.parametrize("action", ["rebalance", "generate"])
def test_no_live_broker_is_said(assignment, says, action) -> None:
    with pytest.raises(PlanError) as caught:
        build_request(assignment, action)
    assert says in str(caught.value) and "--brokers" in str(caught.value)
    assert "every broker would be removed" not in str(caught.value)


def test_an_unknown_broker_on_a_source_without_any_names_no_empty_list() -> None:
    with pytest.raises(PlanError) as caught:
        build_request(_assignment(), "decommission", removed=[7])
    assert str(caught.value) == ("unknown broker(s) [7]: the source knows no broker (none is registered, alive or "
                                 "holds a replica)")


def test_brokers_given_are_the_targets_even_with_none_live() -> None:
    request = build_request(_assignment(partitions=[ORPHAN]), "rebalance", brokers=[4, 5])
    assert request.targets == (4, 5)


def test_removing_every_live_broker_keeps_its_own_message() -> None:
    request = build_request(_assignment(live=[1]), "decommission", removed=[1])
    assert request.targets == ()
