"""``assignment_from_cluster_state``: what reassignment planning is given of a cluster state, field
by field. The znode version of each partition's state (ZkData's ``TopicPartitionStateZNode``
version, which the controller's conditional ``setData`` checks) is what a transition table
starts from; ``/admin/reassign_partitions`` is what ``verify`` compares a plan with; the source
is what the plan names."""

from __future__ import annotations

from kreplica.model.cluster import Pending
from kreplica.model.cluster.assignment import assignment_from_cluster_state
from tests.builders.cluster import cluster, part


def test_every_partition_keeps_its_state_and_the_cluster_its_pending_reassignments() -> None:
    pending = Pending(reassignments=({"topic": "t", "partition": 1, "replicas": [3, 1]},))
    state = cluster({"t": [part(0, [1, 2], 2, [2, 1], epoch=4, version=9),
                           part(1, [1, 2, 3], 1, [1, 2, 3], adding=[3], removing=[2], epoch=0, version=0)]},
                    alive=(1, 2, 3), pending=pending)
    a = assignment_from_cluster_state(state)
    assert (a.source_kind, a.source) == ("zookeeper", "test")
    assert a.live == (1, 2, 3)
    first, second = a.partitions
    assert (first.replicas, first.leader, first.leader_epoch, first.isr, first.version) == ((1, 2), 2, 4, (2, 1), 9)
    # a partition whose state znode is at version 0 is not one without state (None): the counter-case
    assert second.version == 0 and second.adding == (3,) and second.removing == (2,)
    assert second.target == (1, 3)
    assert a.pending_reassignments == ({"topic": "t", "partition": 1, "replicas": [3, 1]},)


def test_a_partition_without_a_state_znode_has_no_version() -> None:
    # a topic whose partitions/N/state znode was never written (NewPartition): version None
    state = cluster({"t": [part(0, [1, 2], -1, [], version=None)]}, alive=(1, 2))
    (p,) = assignment_from_cluster_state(state).partitions
    assert p.version is None and p.leader == -1 and p.isr == ()
