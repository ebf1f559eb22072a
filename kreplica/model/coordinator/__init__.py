"""Kafka's coordinators as they load their topics: consumer groups from ``__consumer_offsets``,
transactional ids from ``__transaction_state``.

* ``groups``: the values every group question shares (groups, members, committed offsets);
* ``replay``: a ``__consumer_offsets`` partition replayed record by record as the group
  coordinator loads it (old and new coordinators);
* ``fold``: the same state from one streamed walk that folds records by key first;
* ``expiry``: which committed offsets the coordinator's offset cleanup removes at a given time;
* ``sources``: the ``__consumer_offsets`` replicas and data partitions a ``groups`` SOURCE holds;
* ``transactions``: the transaction coordinator's state, replayed from ``__transaction_state``.
"""
