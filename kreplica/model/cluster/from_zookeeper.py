"""Kafka's ZooKeeper-mode metadata in a replayed ZooKeeper tree: the one cluster image built from
the tree (:meth:`~kreplica.model.cluster.zookeeper_image.ZkImage.from_tree`, where the znodes
read and the rules are), at the tree's zxid. The tree comes from :mod:`kreplica.model.zookeeper`.
"""

from __future__ import annotations

from kreplica.model.cluster.state import ClusterState
from kreplica.model.cluster.zookeeper_image import ZkImage
from kreplica.model.zookeeper import ZkState


def cluster_state_from_zk(state: ZkState, *, chroot: str = "") -> ClusterState:
    """Kafka's ZooKeeper-mode metadata in a replayed tree (``chroot`` = Kafka's root, e.g. ``/kafka``).

    A topic's partitions are those of its assignment (``/brokers/topics/<t>``), as
    ``KafkaController.initializeControllerContext`` reads them (``getFullReplicaAssignmentForTopics``),
    each with the state its state znode holds (``updateLeaderAndIsrCache``); a partition whose
    state znode is absent or unreadable has no leader (``NewPartition``), and a state znode of a
    partition the assignment does not list is not read. Unparseable payloads are findings
    (``kafka_invalid_znode``) and the object is skipped or left with defaults; nothing raises.
    """
    image = ZkImage.from_tree(state.nodes, state.sessions, chroot)
    return image.state(state.source, {"zxid": state.zxid}, findings=state.findings, where=state.snapshot)
