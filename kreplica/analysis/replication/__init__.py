"""How replicas of one partition meet: the leader's OffsetForLeaderEpoch answer, the truncation a
follower does against it, and where their logs differ.

* ``offset_for_epoch``: OffsetForLeaderEpoch (API key 23), fencing included, per version;
* ``truncation``: follower truncation against a chosen leader, per protocol generation;
* ``divergence``: where replicas differ over their whole logs, batch by batch, then record by record
  where the batches differ;
* ``ranges``: offset ranges in offset order and the one rule for merging them.
"""
