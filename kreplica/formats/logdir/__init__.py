"""The small files of a broker's log directory and its partition directories, and their names.

* ``naming``: file and directory names: segment base offsets, ``topic-partition``,
  ``-delete``/``-future``/``-stray``;
* ``checkpoint_file``: the generic ``*-checkpoint`` text file: version, count, entry lines;
* ``offset_checkpoint``: ``replication-offset``, ``recovery-point-offset``, ``log-start-offset``,
  ``cleaner-offset`` checkpoints;
* ``leader_epoch_checkpoint``: ``leader-epoch-checkpoint``: a replica's epoch lineage;
* ``partition_metadata``: ``partition.metadata``: a partition directory's topic id;
* ``meta_properties``: ``meta.properties``: the cluster and node a log directory belongs to;
* ``clean_shutdown``: ``.kafka_cleanshutdown``: the marker of a clean shutdown.
"""
