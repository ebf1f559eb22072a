"""The cluster state a controller believed in: one model, built from ZooKeeper or from KRaft.

The public entry point is :func:`load_cluster_state` (SOURCE → :class:`ClusterState` at a zxid,
offset or time); the names exported here are what ``cluster-state`` and the reports use.
Where each part lives:

* :mod:`~kreplica.model.cluster.state`: the model (``ClusterState``, ``Broker``, ``Topic``,
  ``PartitionState``, ``Controller``, ``Pending``, ``Health``) and the health lists
  (``compute_health``, ``is_offline``);
* :mod:`~kreplica.model.cluster.configs`: a topic's effective config as the controller resolves it
  (``effective_topic_config``, ``min_insync_replicas``);
* :mod:`~kreplica.model.cluster.zookeeper_image`: a znode change applied to the image
  (``ZkImage.apply``; ``ZkImage.from_tree``, every Kafka znode of a tree applied);
* :mod:`~kreplica.model.cluster.from_zookeeper`: the ZooKeeper image of a replayed tree
  (``cluster_state_from_zk``; the tree itself is :mod:`kreplica.model.zookeeper`);
* :mod:`~kreplica.model.cluster.image`: the one cluster image (``ClusterImage``: brokers, topics,
  partitions, configs, controller, features, pending work) that every command reads, and its
  frozen ``ClusterState`` at a point;
* :mod:`~kreplica.model.cluster.kraft_image`: a KRaft metadata record applied to the image
  (``KraftImage.apply``, returning what changed), and metadata transactions
  (``MetadataTransaction``);
* :mod:`~kreplica.model.cluster.kraft_files`: the snapshots and segments of a KRaft SOURCE
  (``find_kraft_files``, ``KraftFiles``) and the finding for offsets missing between them;
* :mod:`~kreplica.model.cluster.from_kraft`: the KRaft image at a point (``cluster_state_from_kraft``,
  ``load_kraft_state``: the snapshot to start from, the records after it, the controller);
* :mod:`~kreplica.model.cluster.partition_change`: a KRaft partition registration from a
  ``PartitionRecord`` and ``PartitionRegistration.merge`` of a ``PartitionChangeRecord``
  (``PartitionChange``, ``merge_partition_change``, the ``NO_LEADER_CHANGE`` sentinel), shared
  by the replay, the KRaft timeline and the KRaft election rules;
* :mod:`~kreplica.model.cluster.kraft_history`: a KRaft metadata history record by record (where
  it starts, the records after it with what each applies), for ``cluster-state`` and the timeline;
* :mod:`~kreplica.model.cluster.sources`: telling the two apart (``detect_source_kind``) and
  loading either (``load_cluster_state``), refusing evidence of no cluster (``refuse_empty``);
* :mod:`~kreplica.model.cluster.span`: how far either's evidence reaches (``evidence_span``: the
  first and last zxid or offset, and time), which a point asked for must lie within;
* :mod:`~kreplica.model.cluster.zk_chroot`: where Kafka's znodes are in a ZooKeeper tree (the
  root or a chroot: ``resolve_chroot``, ``kafka_roots``);
* :mod:`~kreplica.model.cluster.racks`: the live brokers and racks of a cluster state;
* :mod:`~kreplica.model.cluster.assignment`: where replicas are, from any evidence (the input of
  placement and reassignment planning).
"""

from __future__ import annotations

from kreplica.model.cluster.from_kraft import cluster_state_from_kraft, load_kraft_state
from kreplica.model.cluster.image import ClusterImage
from kreplica.model.cluster.kraft_files import KraftFiles, find_kraft_files
from kreplica.model.cluster.kraft_image import KraftImage
from kreplica.model.cluster.zookeeper_image import ZkImage
from kreplica.model.cluster.from_zookeeper import cluster_state_from_zk
from kreplica.model.cluster.partition_change import (
    NO_LEADER_CHANGE,
    NO_RECOVERY_STATE_CHANGE,
    PartitionChange,
    merge_partition_change,
    partition_from_record,
)
from kreplica.model.cluster.sources import METADATA_DIR, detect_source_kind, load_cluster_state
from kreplica.model.cluster.state import (
    DEFAULT_BROKER_ENTITY,
    DIRECTORY_LOST,
    DIRECTORY_MIGRATING,
    DIRECTORY_UNASSIGNED,
    HEALTH_LISTS,
    MIN_INSYNC_REPLICAS,
    NO_LEADER,
    RECOVERED,
    RECOVERING,
    Broker,
    ClusterState,
    Controller,
    Health,
    PartitionState,
    Pending,
    Topic,
    compute_health,
)

__all__ = [
    "DEFAULT_BROKER_ENTITY", "DIRECTORY_LOST", "DIRECTORY_MIGRATING", "DIRECTORY_UNASSIGNED", "HEALTH_LISTS", "METADATA_DIR", "MIN_INSYNC_REPLICAS", "NO_LEADER",
    "NO_LEADER_CHANGE", "NO_RECOVERY_STATE_CHANGE", "RECOVERED", "RECOVERING",
    "Broker", "ClusterImage", "ClusterState", "Controller", "Health", "KraftFiles", "KraftImage", "PartitionChange", "PartitionState", "Pending",
    "Topic", "cluster_state_from_kraft", "cluster_state_from_zk", "compute_health", "detect_source_kind",
    "find_kraft_files", "load_cluster_state", "load_kraft_state", "merge_partition_change",
    "partition_from_record", "ZkImage",
]
