"""``build_request``'s refusals say what the source knows (``reassignment/request.py``): the
known broker ids as ranges, ``1-3,5``, as ``plan-reassign`` prints them on stderr."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.planner import PlanError
from kreplica.analysis.reassignment.request import build_request
from kreplica.model.cluster.assignment import PartitionReplicas
from tests.builders.reassignment_shapes import assignment


@pytest.mark.parametrize("brokers, message", [
    pytest.param([1, 2, 3, 5], "unknown broker(s) [9]: the source knows brokers 1-3,5", id="a-run-and-a-single"),
    pytest.param([2, 4, 6], "unknown broker(s) [9]: the source knows brokers 2,4,6", id="singles"),
    pytest.param([1, 2, 3], "unknown broker(s) [9]: the source knows brokers 1-3", id="one-run"),
])
def test_an_unknown_broker_is_refused_with_the_known_ones_as_ranges(brokers, message) -> None:
    a = assignment(brokers, [PartitionReplicas("t", 0, (brokers[0],))])
    with pytest.raises(PlanError) as exc:
        build_request(a, "decommission", removed=(9,))
    assert str(exc.value) == message
