"""Moving replicas: Kafka's replica placement, minimal-movement plans, their bounds and phases,
and what the controller does while a reassignment runs.

* ``placement``: Kafka's replica placement (``AdminUtils.assignReplicasToBrokers``), rack-aware or
  not;
* ``request``: from what a user asked to a ``PlanRequest``: targets, racks, goals;
* ``planner``: the minimal-movement planner and Kafka's own ``--generate``;
* ``bounds``: the lower bound on moves and a layout's balance figures;
* ``phases``: phases of a plan, the throttles Kafka's tool sets, durations;
* ``transitions``: the controller's steps for one partition under reassignment;
* ``verify``: in-flight reassignments as ``kafka-reassign-partitions.sh --verify`` judges them;
* ``plan``: ``plan-reassign`` as one analysis (``plan_reassign``): verify or plan, the partitions the
  proposal, rollback and phase files cover, phases, throttles, transition tables, and whether the
  result is a problem.
"""
