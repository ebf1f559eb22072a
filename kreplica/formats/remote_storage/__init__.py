"""Tiered storage (KIP-405): what a broker keeps about the segments it copied to remote storage.

* ``metadata_records``: the records of ``__remote_log_metadata`` (segment metadata, its updates,
  partition-delete metadata, the segment snapshot record), their frame and states;
* ``metadata_snapshot``: the ``remote_log_snapshot`` file 3.1 to 3.7 kept in a partition directory.

Every schema is read by the one generic reader, :mod:`kreplica.formats.generated_messages`. The
names of the ``remote-log-index-cache`` directory's files are in :mod:`kreplica.formats.logdir.naming`.
"""
