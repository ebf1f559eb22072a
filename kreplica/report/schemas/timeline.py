"""The output of ``kreplica timeline`` (schema version 1): one place defines it.

::

    {"type":"partition_event","partition":"t-0","topic":str,"partition_id":int,
     "position":"0x1b2"|int,"time":int|null,"controller_epoch":int|null,
     "before":{"leader","leader_epoch","isr","leader_recovery_state","partition_epoch"}|null,
     "after":{...same...}|null,"cause":str,"by":"controller"|"leader"|null,"unclean":bool,
     "offline":bool,"replicas":[int],"writer":int|null,"evidence":str}
    {"type":"broker_event","broker":int,"event":str,"position","time","broker_epoch":int|null,
     "session":"0x..."|null}
    {"type":"controller_event","event":str,"controller":int|null,"controller_epoch":int|null,
     "position","time"}
    {"type":"config_event","resource":"topic"|"broker","entity":str,"key":str,
     "before":str|null,"after":str|null,"notable":bool,"position","time","epoch":int|null,
     "writer":int|null,"session":"0x..."|null}
    {"type":"epoch_evidence","partition","epoch","leader":int|null,"position"|null,"time"|null,
     "in_metadata":bool,"start_offset":int|null,"end_offset":int|null,
     "replicas":[{"broker","start_offset","end_offset"}]}
    {"type":"election_loss","partition","position","time","leader_epoch","old_leader","new_leader",
     "first_lost_offset","end_offset","lost_offsets","below_high_watermark","old_high_watermark","note"}
    {"type":"timeline_summary","source","source_kind","start","end",
     "resolution":"transaction"|"record"|"snapshot","events":{"partition","broker",
     "controller","config"},"unclean_elections":[{"partition","position","time"}],
     "notable_config_changes":[{"resource","entity","key","before","after","position","time",
                                "writer","session"}],
     "offline_periods":[{"partition","from","from_time","to","to_time"}],
     "epochs_without_data":[{"partition","epoch","leader"}],"zombie_epochs":[{"partition","epoch","replicas"}]}

``position`` is a zxid as a hex string (ZooKeeper) or a metadata-log offset (KRaft), in every
object; ``after`` is null for ``deleted``, ``before`` null for ``created`` and ``snapshot``.
A ``config_event`` is a config set, changed or deleted (``after`` null) on a topic, a broker or
the cluster default (``entity`` ``<default>``); ``notable`` for ``min.insync.replicas`` and
``unclean.leader.election.enable``. Who: KRaft records carry no principal, so ``writer`` is the
active controller that wrote the record (the Raft leader of its batch ``epoch``; null when the
history does not show who led it); ZooKeeper's ``session`` is the session of the write
(``writer``: the broker whose session it is, if any). End offsets are exclusive. Findings are their own ``{"type":"finding"}`` objects where they
arise; the summary comes last. ``resolution`` says what the history saw: every ZooKeeper
transaction, every KRaft record, or (a ZooKeeper data directory without transaction logs) only
what changed from one snapshot to the next, each change at the zxid that last wrote it.
"""

from __future__ import annotations

from kreplica.analysis.timeline.events import (
    BrokerEvent,
    ConfigEvent,
    LeaderIsr,
    PartitionEvent,
    TimelineEnd,
    TimelineSummary,
)
from kreplica.analysis.timeline.evidence import ElectionLoss, EpochEvidence, PartitionEvidence


def position(value: int | None, kind: str):
    """A zxid as ``0x..`` text (ZooKeeper), an offset as an int (KRaft)."""
    if value is None:
        return None
    return f"{value:#x}" if kind == "zookeeper" else value


def _state(s: LeaderIsr | None) -> dict | None:
    if s is None:
        return None
    return {"leader": s.leader, "leader_epoch": s.leader_epoch, "isr": s.isr,
            "leader_recovery_state": s.leader_recovery_state, "partition_epoch": s.partition_epoch}


def event_to_dict(ev, kind: str) -> dict:
    """The object of one partition, broker or controller event. Lists are the events' own tuples
    (every encoder writes them as arrays; no copy per event)."""
    if isinstance(ev, PartitionEvent):
        return {"type": "partition_event", "partition": ev.name, "topic": ev.topic, "partition_id": ev.partition,
                "position": position(ev.position, kind), "time": ev.time, "controller_epoch": ev.controller_epoch,
                "before": _state(ev.before), "after": _state(ev.after), "cause": ev.cause, "by": ev.by,
                "unclean": ev.unclean, "offline": ev.offline, "replicas": ev.replicas, "writer": ev.writer,
                "evidence": ev.evidence}
    if isinstance(ev, BrokerEvent):
        return {"type": "broker_event", "broker": ev.broker, "event": ev.event, "position": position(ev.position, kind),
                "time": ev.time, "broker_epoch": ev.broker_epoch,
                "session": f"{ev.session:#x}" if ev.session is not None else None}
    if isinstance(ev, ConfigEvent):
        return {"type": "config_event", "resource": ev.resource, "entity": ev.entity, "key": ev.key,
                "before": ev.before, "after": ev.after, "notable": ev.notable, "position": position(ev.position, kind),
                "time": ev.time, "epoch": ev.epoch, "writer": ev.writer,
                "session": f"{ev.session:#x}" if ev.session is not None else None}
    return {"type": "controller_event", "event": ev.event, "controller": ev.controller,
            "controller_epoch": ev.controller_epoch, "position": position(ev.position, kind), "time": ev.time}


def evidence_to_dicts(pe: PartitionEvidence, kind: str) -> list[dict]:
    """``epoch_evidence`` objects (one per epoch) then ``election_loss`` objects of one partition."""
    name = f"{pe.topic}-{pe.partition}"
    out: list[dict] = []
    for e in pe.epochs:
        out.append(_epoch(name, e, kind))
    for loss in pe.losses:
        out.append(_loss(name, loss, kind))
    return out


def _epoch(name: str, e: EpochEvidence, kind: str) -> dict:
    return {"type": "epoch_evidence", "partition": name, "epoch": e.epoch, "leader": e.leader,
            "position": position(e.position, kind), "time": e.time, "in_metadata": e.in_metadata,
            "start_offset": e.start_offset, "end_offset": e.end_offset,
            "replicas": [{"broker": h.broker, "start_offset": h.start_offset, "end_offset": h.end_offset}
                         for h in e.holdings]}


def _loss(name: str, loss: ElectionLoss, kind: str) -> dict:
    return {"type": "election_loss", "partition": name, "position": position(loss.position, kind),
            "time": loss.time, "leader_epoch": loss.leader_epoch, "old_leader": loss.old_leader,
            "new_leader": loss.new_leader, "first_lost_offset": loss.first_lost_offset,
            "end_offset": loss.end_offset, "lost_offsets": loss.lost_offsets,
            "below_high_watermark": loss.below_high_watermark, "old_high_watermark": loss.old_high_watermark,
            "note": loss.note}


def summary_to_dict(end: TimelineEnd, summary: TimelineSummary, evidence: list[PartitionEvidence]) -> dict:
    kind = end.source_kind
    return {
        "type": "timeline_summary", "source": end.source, "source_kind": kind,
        "start": position(end.start, kind), "end": position(end.end, kind), "resolution": end.resolution,
        "events": dict(summary.counts),
        "unclean_elections": [{"partition": ev.name, "position": position(ev.position, kind), "time": ev.time}
                              for ev in summary.unclean],
        "notable_config_changes": [
            {"resource": ev.resource, "entity": ev.entity, "key": ev.key, "before": ev.before, "after": ev.after,
             "position": position(ev.position, kind), "time": ev.time, "writer": ev.writer,
             "session": f"{ev.session:#x}" if ev.session is not None else None}
            for ev in summary.notable_configs],
        "offline_periods": [{"partition": f"{p.topic}-{p.partition}", "from": position(p.start, kind),
                             "from_time": p.start_time, "to": position(p.end, kind), "to_time": p.end_time,
                             "since_after": p.since_after}
                            for p in summary.periods()],
        "epochs_without_data": [{"partition": f"{pe.topic}-{pe.partition}", "epoch": e.epoch, "leader": e.leader}
                                for pe in evidence for e in pe.epochs if e.epoch in pe.epochs_without_data],
        "zombie_epochs": [{"partition": f"{pe.topic}-{pe.partition}", "epoch": e.epoch,
                           "replicas": [h.broker for h in e.holdings]}
                          for pe in evidence for e in pe.epochs if e.epoch in pe.zombie_epochs],
    }
