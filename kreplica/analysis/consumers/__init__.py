"""What the evidence says about the clients of a partition: producers' transactions and the
consumers they hold back.

* ``hanging``: open transactions judged against the transaction coordinator's state, the way
  ``kafka-transactions.sh find-hanging`` judges them on a live cluster, offline; the last stable
  offset a hanging one pins and the committed offsets of the groups it stalls;
* ``transactions``: ``kreplica transactions`` as one call: the coordinator partitions replayed,
  every data partition's open transactions, and the verdicts.

Sub-layer: beside ``election``, ``reassignment`` and ``timeline`` (none of which it knows), above
``replication`` and ``log``.
"""
