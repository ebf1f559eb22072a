"""The assignment a reassignment JSON describes (``assignment_from_entries``, the ``--assignment``
input of the reassignment commands): the file is ``kafka-reassign-partitions.sh``'s version-1
format, which holds only each partition's replicas in order. As the function's docstring says,
the first replica (the preferred leader) is taken as the leader and every replica as in sync:
the file says nothing else. The brokers are the ones the user lists, all live, with the
racks known for any broker, listed or not (issue 27 §7)."""

from __future__ import annotations

from kreplica.formats.tools.reassignment_json import PartitionReassignment
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas, assignment_from_entries


def test_assignment_from_entries() -> None:
    entries = [PartitionReassignment("t", 1, (3, 1, 2)), PartitionReassignment("a", 0, (2, 3))]
    got = assignment_from_entries(entries, [3, 1, 3], {1: "r1", 5: "r5"}, source="plan.json")
    assert got == Assignment(
        "assignment", "plan.json", (1, 3),
        {1: "r1", 3: None, 5: "r5"},   # listed brokers and brokers with a known rack
        (PartitionReplicas("a", 0, (2, 3), leader=2, isr=(2, 3)),
         PartitionReplicas("t", 1, (3, 1, 2), leader=3, isr=(3, 1, 2))))
    assert list(got.racks) == [1, 3, 5]
