"""What replication events do to the clients of a partition: the consumer groups reading it.

* ``impact``: what a consumer group resuming from its committed offset does on its next fetch
  after a truncation or an unclean election, per client generation (before KIP-320, KIP-320) and
  ``auto.offset.reset``: records re-read, skipped, and consumed but lost;
* ``truncation_impact``: that impact for each follower a ``truncate-plan`` truncates (election
  and timeline events are joined in their own packages, which use ``impact``).

Sub-layer: below ``election``, ``reassignment`` and ``timeline`` (which may use it), beside
``groups`` and ``transactions``, above ``replication`` and ``log``.
"""
