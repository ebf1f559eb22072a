"""One replica's partition log: what its segments, checkpoints and batch headers describe.

* ``walk``: the one walk over a segment's batches (checks across batches, control markers, header
  totals, progress) that every reader of segments iterates;
* ``partition_log``: a replica's partition log, read once by one walk (or rebuilt from table
  rows) and shared by every command;
* ``batch_order``: the checks across batches and segments (offsets and epochs must increase);
* ``lineage`` and ``epoch_cache``: a replica's leader-epoch lineage from batch headers, and
  Kafka's ``LeaderEpochFileCache``;
* ``log_cut``: a partition log up to ``--at-offset``/``--at-time``, and the span of its evidence;
* ``replica``: the replicas a user named (partition directories, or log directories plus a
  partition name), their labels and ``--hw`` overrides, loaded;
* ``broker_replicas``: each broker's copied log directory (``--log-dirs BROKER=DIR``), its
  partitions listed and their replicas read, labelled ``broker-N``.
"""
