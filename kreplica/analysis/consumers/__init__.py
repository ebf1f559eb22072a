"""What replication events do to the clients of a partition: the consumer groups reading it.

* ``impact``: what a consumer group resuming from its committed offset does on its next fetch
  after a truncation or an unclean election, per client generation (before KIP-320, KIP-320) and
  ``auto.offset.reset``: records re-read, skipped, and consumed but lost;
* ``truncation``: that impact for each follower a ``truncate-plan`` truncates (and what a
  truncation loses, which the elections use too);
* ``elections``: that impact of a leader change: an election ``plan-elect`` plans, an unclean
  election a timeline finds (the elections are joined with the replicas in their own packages,
  which call these).

Sub-layer: below ``election``, ``reassignment`` and ``timeline`` (which may use it), beside
``groups`` and ``transactions``, above ``replication`` and ``log``.
"""
