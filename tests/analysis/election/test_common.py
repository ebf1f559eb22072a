"""The controller's view shared by every election rule set, on hand-built cluster states; each
expected value comes from the Kafka controller code named in the test's docstring."""

from __future__ import annotations

from kreplica.analysis.election.common import ControllerView
from kreplica.model.cluster import Pending
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

V39 = parse_kafka_version("3.9")


def test_reassignment_target_of_an_expansion_or_a_shrink_alone() -> None:
    """``ReplicaAssignment.isBeingReassigned`` (KIP-455): adding or removing replicas non-empty;
    ``targetReplicas`` is the replicas minus the removing ones. An expansion (adding [3] only) and
    a shrink (removing [3] only) are both reassignments; without either, the ≤ 2.3
    ``/admin/reassign_partitions`` entry gives the target (t-3), and a partition with neither is
    not being reassigned (t-2)."""
    pending = Pending(reassignments=({"topic": "t", "partition": 3, "replicas": [2, 1]},))
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2], adding=[3]), part(1, [1, 2, 3], 1, [1, 2, 3], removing=[3]),
                       part(2, [1, 2], 1, [1, 2]), part(3, [1, 2], 1, [1, 2])]}, pending=pending)
    view = ControllerView(s, V39)
    assert [view.reassignment_target(("t", i)) for i in range(4)] == [(1, 2, 3), (1, 2), None, (2, 1)]
