"""The ZooKeeper data tree a snapshot and its txn logs describe, replayed as ZooKeeper replays it.

The public entry point is :func:`load_zk_state` (files of a SOURCE → the tree at a zxid or
time); ``zk dump``, ``zk log`` and ``cluster-state`` use the names exported here. Where each
part lives:

* :mod:`~kreplica.model.zookeeper.tree`: the tree itself (``ZkNode``, the mutable ``ZkTree``
  with ``DataTree``'s operations and the incremental digest, the read-only ``ZkState``),
  and walking it (``iter_tree``);
* :mod:`~kreplica.model.zookeeper.files`: which snapshot and log files a SOURCE holds
  (``find_zk_files``), which logs follow a snapshot (``log_files_for``), and their entries
  in zxid order (``iter_log_entries``, ``iter_zk_log``);
* :mod:`~kreplica.model.zookeeper.replay`: choosing the snapshot ZooKeeper would load and
  applying the logs after it (``replay``, ``load_zk_state``);
* :mod:`~kreplica.model.zookeeper.history`: a history step by step, for the timeline (where it
  starts, ``start_state``; each logged transaction with the znodes it changed, ``iter_zk_steps``);
* :mod:`~kreplica.model.zookeeper.snapshot_steps`: a history from snapshots alone, when there is
  no transaction log (``iter_snapshot_steps``: each snapshot's writes since the one before).
"""

from __future__ import annotations

from kreplica.model.zookeeper.files import (
    VERSION_DIR,
    ZkFile,
    ZkFiles,
    find_zk_files,
    iter_log_entries,
    iter_zk_log,
    log_files_for,
)
from kreplica.model.zookeeper.replay import MAX_SNAPSHOTS_TRIED, load_zk_state, parse_zxid, replay, time_to_zxid
from kreplica.model.zookeeper.tree import ZkNode, ZkState, ZkTree, iter_tree, snapshot_nodes

__all__ = [
    "MAX_SNAPSHOTS_TRIED", "VERSION_DIR", "ZkFile", "ZkFiles", "ZkNode", "ZkState", "ZkTree",
    "find_zk_files", "iter_log_entries", "iter_tree", "iter_zk_log", "load_zk_state", "log_files_for",
    "parse_zxid", "replay", "snapshot_nodes", "time_to_zxid",
]
