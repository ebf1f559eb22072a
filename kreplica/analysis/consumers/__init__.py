"""What the evidence says about the clients of a partition: what replication events do to
consumer groups, and producers' transactions and the consumers they hold back.

* ``impact``: what a consumer group resuming from its committed offset does on its next fetch
  after a truncation or an unclean election, per client generation (before KIP-320, KIP-320) and
  ``auto.offset.reset``: records re-read, skipped, and consumed but lost;
* ``truncation_impact``: that impact for each follower a ``truncate-plan`` truncates (election
  and timeline events are joined in their own packages, which use ``impact``);
* ``hanging``: open transactions judged against the transaction coordinator's state, the way
  ``kafka-transactions.sh find-hanging`` judges them on a live cluster, offline; the last stable
  offset a hanging one pins and the committed offsets of the groups it stalls;
* ``transactions``: ``kreplica transactions`` as one call: the coordinator partitions replayed,
  every data partition's open transactions, and the verdicts.

Sub-layer: below ``election``, ``reassignment`` and ``timeline`` (which may use it), beside
``groups``, above ``replication`` and ``log``.
"""
