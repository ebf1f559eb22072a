"""The machine-output schemas: one module per command (or family), where its objects are built
and nowhere else, its schema in the module docstring; every ``type`` is listed once in ``types``.

* ``types``: every machine-output ``type`` and the module that defines it;
* ``inspect_log`` (and ``internal_records``, the ``decoded`` member of the records of Kafka's
  internal topics), ``inspect_index``, ``inspect_dir``;
* ``replication``: ``epochs``, ``offset-for-epoch``, ``truncate-plan``, ``diverge``;
  ``consumer_impact``: what a replication event does to consumer groups;
* ``groups``, ``transactions``, ``zk``, ``cluster_state``, ``election``, ``timeline``,
  ``reassignment``, ``fleet``;
* ``salvage``: the files ``truncate-plan --output-dir`` writes (a segment and its records as ndjson);
* ``describe``: words for the raw codes the formats layer yields.
"""
