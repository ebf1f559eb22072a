"""Every ``type`` of kreplica's machine output, listed once, with the module that defines its
schema (ARCHITECTURE.md: "each schema has its own ``type`` name").

A name belongs to one schema: ``summary`` is ``inspect-log``'s segment summary, the plan of
``plan-elect`` ends with an ``election_summary`` and its ``--sweep`` with a ``sweep_summary``.
``tests/report/schemas/test_types.py`` checks that each module here builds the objects listed for
it and that every object every command writes on the fixtures has its type in this table.
"""

from __future__ import annotations

#: type -> the module (under ``kreplica.report``) whose docstring gives its fields
TYPES: dict[str, str] = {
    "finding": "output.findings",
    # inspect-log
    "segment": "schemas.inspect_log",
    "batch": "schemas.inspect_log",
    "record": "schemas.inspect_log",
    "summary": "schemas.inspect_log",
    # inspect-index
    "index_entry": "schemas.inspect_index",
    "index_summary": "schemas.inspect_index",
    # inspect-dir
    "log_dir": "schemas.inspect_dir",
    "partition": "schemas.inspect_dir",
    # epochs, offset-for-epoch, truncate-plan, diverge
    "epochs": "schemas.replication",
    "offset_for_leader_epoch": "schemas.replication",
    "truncation": "schemas.replication",
    "divergence": "schemas.replication",
    "consumer_impact": "schemas.consumer_impact",
    # groups
    "group_partition": "schemas.groups",
    "group": "schemas.groups",
    "group_offset": "schemas.groups",
    "group_replica_disagreement": "schemas.groups",
    # transactions
    "hanging_transaction": "schemas.transactions",
    "transaction_log": "schemas.transactions",
    "transaction": "schemas.transactions",
    "open_transaction": "schemas.transactions",
    # zk dump, zk log
    "znode": "schemas.zk",
    "zk_summary": "schemas.zk",
    "zk_log_file": "schemas.zk",
    "zk_txn": "schemas.zk",
    "zk_log_end": "schemas.zk",
    # cluster-state
    "cluster_state": "schemas.cluster_state",
    # plan-elect
    "election": "schemas.election",
    "election_candidates": "schemas.election",
    "election_summary": "schemas.election",
    "sweep": "schemas.election",
    "sweep_summary": "schemas.election",
    # timeline
    "partition_event": "schemas.timeline",
    "broker_event": "schemas.timeline",
    "controller_event": "schemas.timeline",
    "config_event": "schemas.timeline",
    "epoch_evidence": "schemas.timeline",
    "election_loss": "schemas.timeline",
    "timeline_summary": "schemas.timeline",
    # plan-reassign
    "move": "schemas.reassignment",
    "leader_change": "schemas.reassignment",
    "transitions": "schemas.reassignment",
    "throttle": "schemas.reassignment",
    "plan": "schemas.reassignment",
    "reassignment_status": "schemas.reassignment",
    "throttle_left": "schemas.reassignment",
    "verify": "schemas.reassignment",
    # fleet scan, fleet analyze, fleet run
    "fleet_scan": "schemas.fleet",
    "fleet_partition": "schemas.fleet",
    "fleet_summary": "schemas.fleet",
}
