"""What a broker does with one replica's log on its own: recovery of a segment, loading a
partition at start-up, and the replica (log end offset, epoch cache) it then holds.

* ``recovery``: recovering one segment after an unclean shutdown (``LogSegment.recover``);
* ``log_loading``: start-up: which segments are recovered, what is deleted (``LogLoader``);
* ``replica_state``: the replica after loading: log end offset and epoch cache, per Kafka version;
* ``epoch_reconciliation``: the ``leader-epoch-checkpoint`` against the lineage the batches show;
* ``log_findings``: which findings of a log bear on the replication commands' answers;
* ``index_verification``: index files checked against their segment (``--verify-index-only``);
* ``open_transactions``: the transactions open at the end of the log and its last stable offset
  (``ProducerStateManager``);
* ``remote_index_cache``: what a starting broker does with a log directory's
  ``remote-log-index-cache`` (``RemoteIndexCache.init``, tiered storage).
"""
