"""What happened, in order: leadership, ISR, broker and controller changes with their causes.

* ``events``: the event values and the cause rules (``classify``) both sources share;
* ``zookeeper``: the timeline of a ZooKeeper cluster, transaction by transaction;
* ``kraft``: the timeline of a KRaft cluster, metadata record by record;
* ``evidence``: the timeline joined with the replicas' data: what each leader epoch wrote;
* ``analysis``: ``timeline`` as one call: the events selected, summarised and joined with the
  replicas' data, and what each unclean election did to the consumer groups of its partition.
"""
