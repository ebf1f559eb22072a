"""What the evidence describes, built from formats/; prints nothing.

* ``partition_log``: a replica's partition log, read once by one walk (or rebuilt from table rows)
  and shared by every command;
* ``segments``: a partition directory's segments, mapped for the walk;
* ``batch_order``: the checks across batches and segments (offsets and epochs must increase);
* ``lineage`` and ``epoch_cache``: a replica's leader-epoch lineage and Kafka's ``LeaderEpochFileCache``;
* ``log_dir``: a broker's log directory and its partition directories;
* ``index_files``: which index files a path stands for;
* ``replica``: the replicas a user named, their labels and ``--hw`` overrides;
* ``versions``: every Kafka version switch (``Feature``) and truncation protocol generation;
* ``assignment``, ``replica_sizes``: where replicas are and how big they are;
* ``groups``: consumer groups and their committed offsets as the group coordinator holds them;
* ``transaction_replay``: the transaction coordinator's state, replayed from ``__transaction_state``;
* ``log_cut``: a partition log up to ``--at-offset``/``--at-time``, and the span of its evidence;
* ``group_replay``: a ``__consumer_offsets`` partition replayed as the group coordinator loads it
  (old and new coordinators), record by record; ``group_fold``: the same state from one streamed
  walk that folds records by key first; ``group_expiry``: which offsets the coordinator's cleanup
  expires; ``group_sources``: the replicas and data partitions a ``groups`` SOURCE holds;
* ``cluster``: the cluster state a controller believed in, from ZooKeeper or KRaft;
* ``zookeeper``: ZooKeeper's data tree, its files and their replay.
"""
