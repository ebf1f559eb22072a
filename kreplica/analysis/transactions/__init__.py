"""Producers' transactions across the evidence: which are open, which hang, whom they hold back.

* ``hanging``: open transactions judged against the transaction coordinator's state, the way
  ``kafka-transactions.sh find-hanging`` judges them on a live cluster, offline; the last stable
  offset a hanging one pins and the committed offsets of the groups it stalls;
* ``analysis``: ``kreplica transactions`` as one call: the coordinator partitions replayed,
  every data partition's open transactions (``analysis.log.open_transactions``), the verdicts.

Sub-layer: beside ``consumers`` and ``groups``, above ``replication`` and ``log``.
"""
