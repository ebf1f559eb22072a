"""The machine-output schema of ``kreplica cluster-state`` (version 1): one place defines it.

::

    {"type":"cluster_state","source":str,"source_kind":"zookeeper"|"kraft",
     "position":{"zxid":int}|{"offset":int},"cluster_id":str|null,
     "controller":{"broker_id":int|null,"epoch":int|null},
     "brokers":[{"id","alive","rack","endpoints","broker_epoch"}],
     "topics":[{"name","topic_id","config",
                "partitions":[{"partition","replicas","adding_replicas","removing_replicas",
                               "leader","leader_epoch","isr","elr","last_known_elr",
                               "controller_epoch","leader_recovery_state","version"}]}],
     "broker_configs":{entity:{key:value}},
     "pending":{"reassignments","preferred_elections","topic_deletions",
                "isr_change_notifications","log_dir_event_notifications"},
     "health":{"no_leader","leader_not_alive","offline","under_replicated","live_isr_empty",
               "under_min_isr","reassigning","preferred_leader_not_leader"}}

``elr`` and ``last_known_elr`` are KRaft's eligible leader replicas and last known ELR
(KIP-966, what ``describeTopics`` gives on 4.x; empty in ZooKeeper mode and before
PartitionRecord v2). Health lists name partitions ``topic-p``. Brokers are sorted by id, topics by name,
partitions by number. Findings are not part of this object; they are streamed as their own
``{"type":"finding"}`` objects by the command.
"""

from __future__ import annotations

from kreplica.model.cluster import HEALTH_LISTS, ClusterState


def cluster_state_to_dict(state: ClusterState) -> dict:
    """The ``{"type":"cluster_state", ...}`` object for ``state`` (JSON-ready: ints, strs, lists)."""
    return {
        "type": "cluster_state",
        "source": state.source,
        "source_kind": state.source_kind,
        "position": dict(state.position),
        "cluster_id": state.cluster_id,
        "controller": {"broker_id": state.controller.broker_id, "epoch": state.controller.epoch},
        "brokers": [
            {"id": b.id, "alive": b.alive, "rack": b.rack, "endpoints": list(b.endpoints),
             "broker_epoch": b.broker_epoch}
            for b in sorted(state.brokers, key=lambda b: b.id)
        ],
        "topics": [
            {
                "name": t.name,
                "topic_id": t.topic_id,
                "config": dict(t.config),
                "partitions": [
                    {"partition": p.partition, "replicas": list(p.replicas),
                     "adding_replicas": list(p.adding_replicas),
                     "removing_replicas": list(p.removing_replicas), "leader": p.leader,
                     "leader_epoch": p.leader_epoch, "isr": list(p.isr), "elr": list(p.elr),
                     "last_known_elr": list(p.last_known_elr), "controller_epoch": p.controller_epoch,
                     "leader_recovery_state": p.leader_recovery_state, "version": p.version}
                    for p in sorted(t.partitions, key=lambda p: p.partition)
                ],
            }
            for t in sorted(state.topics, key=lambda t: t.name)
        ],
        "broker_configs": {k: dict(v) for k, v in sorted(state.broker_configs.items())},
        "pending": {
            "reassignments": [dict(x) for x in state.pending.reassignments],
            "preferred_elections": [dict(x) for x in state.pending.preferred_elections],
            "topic_deletions": list(state.pending.topic_deletions),
            "isr_change_notifications": [dict(x) for x in state.pending.isr_change_notifications],
            "log_dir_event_notifications": [dict(x) for x in state.pending.log_dir_event_notifications],
        },
        "health": {name: list(getattr(state.health, name)) for name in HEALTH_LISTS},
    }
