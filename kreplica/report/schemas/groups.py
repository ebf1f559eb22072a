"""The machine-output schema of ``kreplica groups`` (version 1): one place defines it.

Per ``__consumer_offsets`` partition, in partition order::

    {"type":"group_partition","coordinator_partition":int,"label":str,"path":str,"broker_id":int|null,
     "coordinator":"old"|"new","log_start_offset":int,"log_end_offset":int,"replayed_to":int|null,
     "records":int,"at_offset":int|null,"at_time":int|null,"expiry_time":int|null,
     "offsets_retention_minutes":int,"groups":int,"offsets":int,
     "replicas":[{"label","path","broker_id","log_end_offset","replayed_to","chosen":bool}]}
    {"type":"group","group":str,"coordinator_partition":int,
     "protocol":"classic"|"consumer"|"share"|"streams"|null,"protocol_type":str|null,
     "generation":int|null,"assignment_epoch":int|null,"assignor":str|null,"leader":str|null,"state":str,
     "current_state_timestamp":int|null,"subscribed_topics":[str]|null,"offsets":int,"pending_offsets":int,
     "members":[{"member_id","group_instance_id","client_id","client_host","session_timeout_ms",
                 "rebalance_timeout_ms","member_epoch","subscribed_topics":[str],
                 "assignment":[{"topic","partitions":[int]}],"process_id":str|null,"topology_epoch":int|null,
                 "tasks":{"active"|"standby"|"warmup":[{"subtopology","partitions":[int]}]}|null}],
     "topology":{"epoch":int,"validated":bool,"subtopologies":[{"subtopology_id","source_topics":[str],
                 "source_topic_regex":[str],"state_changelog_topics":[str],"repartition_sink_topics":[str],
                 "repartition_source_topics":[str]}]}|null,"label":str,"source":str}
    {"type":"group_offset","group":str,"topic":str,"partition":int,"offset":int,"leader_epoch":int|null,
     "metadata":str,"commit_timestamp":int,"expire_timestamp":int|null,"expired":bool,"pending":bool,
     "transactional":bool,"producer_id":int|null,"record_offset":int,"value_version":int,
     "coordinator_partition":int,"label":str,"source":str,"path":str,"position":int}
    {"type":"group_replica_disagreement","coordinator_partition":int,"group":str,"topic":str|null,
     "partition":int|null,"field":"group"|"offset"|"pending_offset","chosen":str,
     "replicas":[{"label","path","log_end_offset","value":object|null}]}
    {"type":"finding",...}     (the replicas' findings, then the offsets' against the data)

The ``group_partition`` object describes the answering replica (``chosen``: the highest log end
offset). A group's ``group_offset`` objects follow it: committed offsets (``pending`` false),
then transactional commits still waiting for their marker (``pending`` true, not the group's
position). ``assignment_epoch`` is a consumer, share or streams group's target assignment epoch; a
streams group (KIP-1071) has its ``topology`` and its members their ``tasks`` (``null`` for the
other protocols), by subtopology. A disagreement's ``value`` is what that replica holds (``null``: absent): for a group
``{"protocol","state","generation","members":[member_id]}``, for an offset ``{"offset",
"leader_epoch","metadata","record_offset"}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kreplica.analysis.groups.replicas import GroupDisagreement
from kreplica.analysis.groups.state import PartitionGroups
from kreplica.model.coordinator.groups import CommittedOffset, Group, GroupMember, StreamsTopology
from kreplica.model.coordinator.replay import ReplayPoint
from kreplica.report.output.findings import finding_object


def partition_object(p: PartitionGroups, point: ReplayPoint) -> dict:
    s = p.chosen
    return {
        "type": "group_partition", "coordinator_partition": s.coordinator_partition, "label": s.label,
        "path": s.path, "broker_id": s.broker_id, "coordinator": s.coordinator,
        "log_start_offset": s.log_start_offset, "log_end_offset": s.log_end_offset, "replayed_to": s.replayed_to,
        "records": s.records, "at_offset": point.at_offset, "at_time": point.at_time, "expiry_time": p.expiry_time,
        "offsets_retention_minutes": p.retention_minutes, "groups": len(s.groups),
        "offsets": sum(len(g.offsets) for g in s.groups),
        "replicas": [{"label": r.label, "path": r.path, "broker_id": r.broker_id, "log_end_offset": r.log_end_offset,
                      "replayed_to": r.replayed_to, "chosen": r.path == s.path} for r in p.replicas],
    }


def _member_object(m: GroupMember) -> dict:
    return {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
            "client_host": m.client_host, "session_timeout_ms": m.session_timeout_ms,
            "rebalance_timeout_ms": m.rebalance_timeout_ms, "member_epoch": m.member_epoch,
            "subscribed_topics": list(m.subscribed_topics),
            "assignment": [{"topic": t, "partitions": list(ps)} for t, ps in m.assignment],
            "process_id": m.process_id, "topology_epoch": m.topology_epoch,
            "tasks": None if m.tasks is None else {
                kind: [{"subtopology": s, "partitions": list(ps)} for s, ps in getattr(m.tasks, kind)]
                for kind in ("active", "standby", "warmup")}}


def _topology_object(t: StreamsTopology | None) -> dict | None:
    if t is None:
        return None
    return {"epoch": t.epoch, "validated": t.validated, "subtopologies": [
        {"subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
         "source_topic_regex": list(s.source_topic_regex), "state_changelog_topics": list(s.state_changelog_topics),
         "repartition_sink_topics": list(s.repartition_sink_topics),
         "repartition_source_topics": list(s.repartition_source_topics)} for s in t.subtopologies]}


def group_object(g: Group, label: str) -> dict:
    return {
        "type": "group", "group": g.group, "coordinator_partition": g.coordinator_partition, "protocol": g.protocol,
        "protocol_type": g.protocol_type, "generation": g.generation, "assignment_epoch": g.assignment_epoch,
        "assignor": g.assignor, "leader": g.leader,
        "state": g.state, "current_state_timestamp": g.current_state_timestamp,
        "subscribed_topics": None if g.subscribed_topics is None else list(g.subscribed_topics),
        "offsets": len(g.offsets), "pending_offsets": len(g.pending_offsets),
        "members": [_member_object(m) for m in g.members], "topology": _topology_object(g.topology),
        "label": label, "source": g.source,
    }


def offset_object(o: CommittedOffset, label: str, *, pending: bool = False) -> dict:
    return {
        "type": "group_offset", "group": o.group, "topic": o.topic, "partition": o.partition, "offset": o.offset,
        "leader_epoch": o.leader_epoch, "metadata": o.metadata, "commit_timestamp": o.commit_timestamp,
        "expire_timestamp": o.expire_timestamp, "expired": o.expired, "pending": pending,
        "transactional": o.transactional, "producer_id": o.producer_id, "record_offset": o.record_offset,
        "value_version": o.value_version, "coordinator_partition": o.coordinator_partition, "label": label,
        "source": o.source, "path": o.path, "position": o.position,
    }


def disagreement_object(d: GroupDisagreement, p: PartitionGroups) -> dict:
    replicas = {r.label: r for r in p.replicas}
    return {
        "type": "group_replica_disagreement", "coordinator_partition": d.coordinator_partition, "group": d.group,
        "topic": d.topic, "partition": d.partition, "field": d.field, "chosen": d.chosen,
        "replicas": [{"label": label, "path": replicas[label].path, "log_end_offset": replicas[label].log_end_offset,
                      "value": value} for label, value in d.values],
    }


def iter_objects(results: Iterable[PartitionGroups], point: ReplayPoint) -> Iterator[dict]:
    """Every object of the output, in the order the schema gives."""
    for p in results:
        label = p.chosen.label
        yield partition_object(p, point)
        for g in p.chosen.groups:
            yield group_object(g, label)
            yield from (offset_object(o, label) for o in g.offsets)
            yield from (offset_object(o, label, pending=True) for o in g.pending_offsets)
        yield from (disagreement_object(d, p) for d in p.disagreements)
        yield from (finding_object(f) for f in p.findings)
