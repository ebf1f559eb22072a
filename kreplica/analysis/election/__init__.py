"""Who leads: Kafka's leader election rules per controller and version, and what-if scenarios.

* ``common``: the controller's view while it elects (``ControllerView``) and one election's result;
* ``zk``: the ZooKeeper controller of 1.1 – 3.9 (``Election.scala``): offline, preferred,
  reassignment and controlled-shutdown leaders;
* ``legacy``: the ZooKeeper controller of 0.8 – 1.0 (the ``PartitionLeaderSelector`` classes);
* ``kraft``: the KRaft controller (``PartitionChangeBuilder``), eligible leader replicas included;
* ``scenarios``: ``plan-elect``: a what-if scenario under the rule set of a version;
* ``sweep``: every combination of up to N failed brokers or racks, ranked by impact;
* ``recovery_order``: KIP-966's unclean-recovery order of the surviving replicas (also the fleet's);
* ``loss``: every candidate leader ranked by the records choosing it would cost;
* ``analysis``: ``plan-elect`` as one call: the plan (or the sweep), each elected partition's
  candidates ranked from the replicas, and what the elections do to the consumer groups.
"""
