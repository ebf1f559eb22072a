"""Output of ``plan-reassign``: one place defines its schema (version 1); its text is
:mod:`kreplica.report.text.reassignment`.

Machine objects, in this order (a plan)::

    move          {type, topic, partition, from: int|null, to: int|null, reason, bytes: int|null, phase}
    leader_change {type, topic, partition, from, to, reason, phase}
    transitions   {type, topic, partition, controller, leader_epoch: int|null, version: int|null,
                   rows: [{step, replicas, adding, removing, leader, isr, leader_epoch: int|null,
                           leader_epoch_delta, version: int|null, version_delta, note}]}
    throttle      {type, phase, rate, estimated_seconds: float|null,
                   topics: {topic: {config: str}}, brokers: {id: {config: int}}}
    plan          {type, action, source, source_kind, kafka_version, controller, targets, rack_aware,
                   moves, bytes_moved, partitions_changed, leader_changes, lower_bound,
                   ratio_to_lower_bound, leader_change_lower_bound,
                   replica_spread: {before, after}, leader_spread: {before, after},
                   rack_violations: {before, after}, disk_max_over_mean: {before, after},
                   kafka_generate: {moves, bytes, seed},
                   brokers: [{broker, rack, target, replicas_before, replicas_after, leaders_before,
                              leaders_after, bytes_before, bytes_after, replicas_in, replicas_out,
                              bytes_in, bytes_out}],
                   phases: [{phase, partitions, moves, bytes, estimated_seconds, file, throttle: int|null}],
                   files: [path], warnings: [str]}

``verify`` writes ``reassignment_status`` objects {type, topic, partition, status, replicas, adding,
removing, target, leader, isr, caught_up, lagging}, ``throttle_left`` objects {type, entity_type,
entity, config, value} and one ``verify`` summary {type, in_progress, completed, differs,
throttles_left}. ``from``/``to`` null: a replica created or dropped (replication factor change).
Bytes are null without ``--sizes``/``--sizes-from``. A phase's ``throttle`` is the value to give
``kafka-reassign-partitions.sh --throttle`` (bytes/s, where kreplica's ``--throttle`` is MB/s) when
executing its ``file`` (``proposal.json`` when there is one phase); null without ``--throttle``.

Files (``--output-dir``): ``proposal.json`` and ``rollback.json`` (Kafka's version-1 reassignment
JSON, what ``kafka-reassign-partitions.sh --execute`` takes) and, with several phases,
``phase-N.json``; the command writes them (``kreplica.cli.options.reassignment_files``) and the ``plan``
object lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kreplica.analysis.reassignment.bounds import PlanSummary
from kreplica.analysis.reassignment.phases import Phase, Throttle
from kreplica.analysis.reassignment.plan import PlannedReassignment
from kreplica.analysis.reassignment.planner import LeaderChange, Move, ReassignmentPlan
from kreplica.analysis.reassignment.transitions import TransitionTable
from kreplica.analysis.reassignment.verify import VerifyResult


def move_object(m: Move, phase: int) -> dict:
    return {"type": "move", "topic": m.topic, "partition": m.partition, "from": m.source, "to": m.destination,
            "reason": m.reason, "bytes": m.bytes, "phase": phase}


def leader_change_object(c: LeaderChange, phase: int) -> dict:
    return {"type": "leader_change", "topic": c.topic, "partition": c.partition, "from": c.source,
            "to": c.destination, "reason": c.reason, "phase": phase}


def transitions_object(t: TransitionTable) -> dict:
    def absolute(base, delta):
        return None if base is None else base + delta

    return {"type": "transitions", "topic": t.topic, "partition": t.partition, "controller": t.controller,
            "leader_epoch": t.leader_epoch, "version": t.version,
            "rows": [{"step": r.step, "replicas": list(r.replicas), "adding": list(r.adding),
                      "removing": list(r.removing), "leader": r.leader, "isr": list(r.isr),
                      "leader_epoch": absolute(t.leader_epoch, r.leader_epoch_delta),
                      "leader_epoch_delta": r.leader_epoch_delta,
                      "version": absolute(t.version, r.version_delta), "version_delta": r.version_delta,
                      "note": r.note} for r in t.rows]}


def throttle_object(phase: int, rate: int, throttle: Throttle, seconds: float | None) -> dict:
    return {"type": "throttle", "phase": phase, "rate": rate, "estimated_seconds": _round(seconds),
            "topics": {t: dict(cfg) for t, cfg in throttle.topics.items()},
            "brokers": {str(b): dict(cfg) for b, cfg in throttle.brokers.items()}}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def plan_object(plan: ReassignmentPlan, summary: PlanSummary, *, source: str, source_kind: str,
                kafka_version: str, controller: str, phases: Sequence[Phase],
                phase_seconds: Mapping[int, float | None], phase_files: Mapping[int, str],
                phase_rates: Mapping[int, int], files: Sequence[str], warnings: Sequence[str]) -> dict:
    req = plan.request
    b, a = summary.before, summary.after
    return {
        "type": "plan", "action": req.action, "source": source, "source_kind": source_kind,
        "kafka_version": kafka_version, "controller": controller, "targets": list(req.targets),
        "rack_aware": any(r is not None for r in req.racks.values()),
        "moves": summary.moves, "bytes_moved": summary.bytes_moved, "partitions_changed": summary.partitions_changed,
        "leader_changes": summary.leader_changes, "lower_bound": summary.lower_bound,
        "ratio_to_lower_bound": _round(summary.ratio_to_lower_bound),
        "leader_change_lower_bound": summary.leader_change_lower_bound,
        "replica_spread": {"before": b.replica_spread, "after": a.replica_spread},
        "leader_spread": {"before": b.leader_spread, "after": a.leader_spread},
        "rack_violations": {"before": b.rack_violations, "after": a.rack_violations},
        "disk_max_over_mean": {"before": _round(b.disk_max_over_mean), "after": _round(a.disk_max_over_mean)},
        "kafka_generate": {"moves": summary.kafka_generate_moves, "bytes": summary.kafka_generate_bytes,
                           "seed": req.seed if req.start is None else None},
        "brokers": [{"broker": f.broker, "rack": f.rack, "target": f.target,
                     "replicas_before": f.replicas_before, "replicas_after": f.replicas_after,
                     "leaders_before": f.leaders_before, "leaders_after": f.leaders_after,
                     "bytes_before": f.bytes_before, "bytes_after": f.bytes_after,
                     "replicas_in": f.replicas_in, "replicas_out": f.replicas_out,
                     "bytes_in": f.bytes_in, "bytes_out": f.bytes_out} for f in summary.brokers],
        "phases": [{"phase": p.number, "partitions": len(p.changes), "moves": p.moves,
                    "bytes": p.bytes if summary.bytes_moved is not None else None,
                    "estimated_seconds": _round(phase_seconds.get(p.number)), "file": phase_files.get(p.number),
                    "throttle": phase_rates.get(p.number)}
                   for p in phases],
        "files": list(files), "warnings": list(warnings),
    }


def plan_objects(planned: PlannedReassignment, files: Sequence[str] = (),
                 phase_files: Mapping[int, str] | None = None) -> list[dict]:
    """Every object of a plan, in the schema's order: per phase its moves and leader changes,
    then the transition tables, the throttles, and the ``plan`` summary naming ``files``."""
    objs: list[dict] = []
    for p in planned.phases:
        for c in p.changes:
            objs.extend(move_object(m, p.number) for m in c.moves)
            if c.leader_change is not None:
                objs.append(leader_change_object(c.leader_change, p.number))
    objs.extend(transitions_object(t) for t in planned.transitions)
    objs.extend(throttle_object(t.phase, t.rate, t.throttle, t.seconds) for t in planned.throttles)
    objs.append(plan_object(planned.plan, planned.summary, source=planned.source, source_kind=planned.source_kind,
                            kafka_version=str(planned.kafka_version), controller=planned.controller,
                            phases=planned.phases, phase_seconds=planned.phase_seconds,
                            phase_files=phase_files or {}, phase_rates={t.phase: t.rate for t in planned.throttles},
                            files=files, warnings=planned.plan.warnings))
    return objs


def verify_objects(result: VerifyResult) -> list[dict]:
    objs = [{"type": "reassignment_status", "topic": s.topic, "partition": s.partition, "status": s.status,
             "replicas": list(s.replicas), "adding": list(s.adding), "removing": list(s.removing),
             "target": list(s.target), "leader": s.leader, "isr": None if s.isr is None else list(s.isr),
             "caught_up": list(s.caught_up), "lagging": list(s.lagging)} for s in result.statuses]
    objs += [{"type": "throttle_left", "entity_type": t.entity_type, "entity": t.entity, "config": t.config,
              "value": t.value} for t in result.throttles]
    count = {k: sum(1 for s in result.statuses if s.status == k) for k in ("in_progress", "completed", "differs")}
    objs.append({"type": "verify", **count, "throttles_left": len(result.throttles)})
    return objs
