"""A partition's log files as Kafka writes them: segments (record batches of every magic; their
codecs are ``formats.codecs``) and the index and snapshot files beside them.

* ``batch``: the values every segment reader yields (``RecordBatch``, ``Record``), whatever the
  magic;
* ``segment``: a ``*.log`` file's framing (``iter_segment``) and the walk past damage;
* ``default_records``: record batch v2: ``DefaultRecordBatch`` and ``DefaultRecord``; its compiled
  twin is ``_crecords.c``;
* ``legacy_records``: message sets of magic 0 and 1 (``LegacyRecord``), wrapper messages included;
* ``control_marker``: the one record of a control batch: a transaction's COMMIT or ABORT marker;
* ``key_fold``: the last record of each key of a records section (a compacted topic's state),
  matched against flat layouts; its compiled twin is ``_crecords.c``'s ``fold`` and ``KeyTable``;
* ``offset_index``: ``.index``: offset → position entries;
* ``time_index``: ``.timeindex``: timestamp → offset entries;
* ``_index_walk``: where an offset or time index's real entries end (private);
* ``txn_index``: ``.txnindex``: one entry per aborted transaction;
* ``producer_snapshot``: ``.snapshot``: idempotent and transactional producer state.
"""
