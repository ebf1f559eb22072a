"""The machine-output schema of ``kreplica cluster-state`` (version 1): one place defines it.

::

    {"type":"cluster_state","source":str,"source_kind":"zookeeper"|"kraft",
     "position":{"zxid":int}|{"offset":int},"cluster_id":str|null,
     "controller":{"broker_id":int|null,"epoch":int|null},
     "brokers":[{"id","alive","rack","endpoints","broker_epoch","log_dirs","cordoned_log_dirs"}],
     "topics":[{"name","topic_id","config",
                "partitions":[{"partition","replicas","adding_replicas","removing_replicas",
                               "leader","leader_epoch","isr","elr","last_known_elr",
                               "controller_epoch","leader_recovery_state","version",
                               "directories"}]}],
     "broker_configs":{entity:{key:value}},
     "pending":{"reassignments","preferred_elections","topic_deletions",
                "isr_change_notifications","log_dir_event_notifications"},
     "health":{"no_leader","leader_not_alive","offline","under_replicated","live_isr_empty",
               "under_min_isr","reassigning","preferred_leader_not_leader"},
     "features":{name:level},
     "controllers":[{"id","incarnation_id","zk_migration_ready","endpoints",
                     "features":{name:{"min_supported_version","max_supported_version"}}}],
     "acls":[{"id","resource_type","resource_name","pattern_type","principal","host",
              "operation","permission_type"}],
     "client_quotas":[{"entity":{entity_type:entity_name|null},"quotas":{key:float}}],
     "scram_users":[{"name","mechanisms":[{"mechanism","iterations"}]}],
     "delegation_tokens":[{"token_id","owner","requester","renewers","issue_timestamp",
                           "expiration_timestamp","max_timestamp"}],
     "producer_ids":{"next_producer_id"}|null}

The members after ``health`` are the rest of KRaft's metadata image, what ``kafka-metadata-shell``
shows under ``/features``, ``/cluster/controllers``, ``/acl``, ``/clientQuotas``,
``/scramCredentials``, ``/delegationToken`` and ``/producerIds`` (empty, or null, in ZooKeeper
mode, whose ACLs, quotas, SCRAM users and tokens kreplica does not read). ACL fields are Kafka's
enum names (``TOPIC``, ``LITERAL``, ``READ``, ``ALLOW``; a code Kafka does not define stays an
int); a client-quota entity's null name is the type's default entity; SCRAM mechanisms are
``SCRAM-SHA-256``/``SCRAM-SHA-512`` with their iterations only: salts and keys never reach the
output. A broker's ``log_dirs`` (KIP-858) and ``cordoned_log_dirs`` (KIP-1066) and a partition's
``directories`` (one per replica, in replica order; ``AAAAAAAAAAAAAAAAAAAAAA`` is Kafka's
``MIGRATING``, ``...AQ`` ``UNASSIGNED``, ``...Ag`` ``LOST``) are KRaft's, empty in ZooKeeper mode.

``elr`` and ``last_known_elr`` are KRaft's eligible leader replicas and last known ELR
(KIP-966, what ``describeTopics`` gives on 4.x; empty in ZooKeeper mode and before
PartitionRecord v2). Health lists name partitions ``topic-p``. Brokers are sorted by id, topics by name,
partitions by number. Findings are not part of this object; they are streamed as their own
``{"type":"finding"}`` objects by the command.
"""

from __future__ import annotations

from kreplica.model.cluster import HEALTH_LISTS, ClusterState
from kreplica.report.schemas.describe import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSION_TYPES,
    ACL_RESOURCE_TYPES,
    acl_field,
    scram_mechanism,
)


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
             "broker_epoch": b.broker_epoch, "log_dirs": list(b.log_dirs),
             "cordoned_log_dirs": list(b.cordoned_log_dirs)}
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
                     "leader_recovery_state": p.leader_recovery_state, "version": p.version,
                     "directories": list(p.directories)}
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
        "features": dict(sorted(state.features.items())),
        "controllers": [
            {"id": c.id, "incarnation_id": c.incarnation_id, "zk_migration_ready": c.zk_migration_ready,
             "endpoints": list(c.endpoints),
             "features": {name: {"min_supported_version": lo, "max_supported_version": hi}
                          for name, (lo, hi) in c.features.items()}}
            for c in state.controllers
        ],
        "acls": [
            {"id": a.id, "resource_type": acl_field(ACL_RESOURCE_TYPES, a.resource_type),
             "resource_name": a.resource_name, "pattern_type": acl_field(ACL_PATTERN_TYPES, a.pattern_type),
             "principal": a.principal, "host": a.host, "operation": acl_field(ACL_OPERATIONS, a.operation),
             "permission_type": acl_field(ACL_PERMISSION_TYPES, a.permission_type)}
            for a in state.acls
        ],
        "client_quotas": [{"entity": dict(q.entity), "quotas": dict(q.quotas)} for q in state.client_quotas],
        "scram_users": [
            {"name": u.name, "mechanisms": [{"mechanism": scram_mechanism(c.mechanism), "iterations": c.iterations}
                                            for c in u.credentials]}
            for u in state.scram_users
        ],
        "delegation_tokens": [
            {"token_id": t.token_id, "owner": t.owner, "requester": t.requester, "renewers": list(t.renewers),
             "issue_timestamp": t.issue_timestamp, "expiration_timestamp": t.expiration_timestamp,
             "max_timestamp": t.max_timestamp}
            for t in state.delegation_tokens
        ],
        "producer_ids": None if state.producer_ids is None else {
            "next_producer_id": state.producer_ids.next_producer_id},
    }
