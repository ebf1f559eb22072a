"""Kafka's decisions, reproduced as functions of model values; version-dependent behaviour is an
explicit parameter (a Kafka version or protocol generation), never a hidden global.

Each package answers one kind of question, and the tree says where a rule lives:

* ``log``: one replica on its own: segment recovery, start-up loading (``LogLoader``), the
  replica a restart leaves (log end offset, epoch cache), checkpoint against lineage, indexes;
* ``replication``: replicas against each other: OffsetForLeaderEpoch, follower truncation per
  protocol generation, divergence;
* ``election``: who leads, per controller and version: ZooKeeper (``Election.scala``; the
  preferred, offline, reassignment and controlled-shutdown rules live in ``election.zk``), the
  0.8 – 1.0 selectors, KRaft's ``PartitionChangeBuilder`` with ELR; what-if scenarios and sweeps;
* ``reassignment``: Kafka's replica placement, minimal-movement plans, bounds, phases and
  throttles, the controller's transitions, ``--verify``;
* ``timeline``: what happened in a cluster, with causes, from ZooKeeper or KRaft history;
* ``consumers``: what a replication event does to consumer groups (their committed offsets
  against the new leader's log, per client generation);
* ``transactions``: open and hanging transactions against the transaction coordinator's state,
  and the consumers they stall;
* ``groups``: consumer groups against the evidence: replicas of ``__consumer_offsets`` compared,
  committed offsets against the data partitions;
* ``inspect``: the inspection commands (``inspect-log``, ``inspect-dir``, ``inspect-index``).

Sub-layers (import-linter checks them): ``inspect`` above ``election`` | ``reassignment`` |
``timeline`` (which do not know each other) above ``consumers`` | ``groups`` | ``transactions``
(which do not know each other either) above ``replication`` above ``log``.
"""
