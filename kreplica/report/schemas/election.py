"""The output of ``kreplica plan-elect`` (schema version 1): one place defines it.

::

    {"type":"election","partition":"topic-p","kind":"offline|preferred|controlled_shutdown|reassign",
     "before":{"leader","leader_epoch","isr","version"},
     "after":{"leader","leader_epoch","isr","version","leader_recovery_state"},
     "elected":bool,"unclean":bool,"offline":bool,"under_min_isr":bool,"reason":str,"rule":str}
    {"type":"election_candidates","partition","planned_leader","best","recovery_choice",
     "election_type":"preferred"|"unclean"|null,"steps":[str],"protocol","no_evidence":[broker],
     "candidates":[{"broker","rank","last_epoch","log_end_offset","high_watermark","electable",
                    "in_isr","records_lost","committed_loss",
                    "losses":[{"broker","records","ranges":[[first,last]],"committed"}]}]}
    {"type":"sweep","failed":[broker]|"racks":[rack],"brokers":[broker],"impact":[int,int,int],
     "offline":[p],"unclean":[p],"under_min_isr":[p]}
    {"type":"election_summary","rules","kafka_version","scenario":{...},"elr_enabled","elections",
     "elected","offline","unclean","under_min_isr","by_kind":{kind:n},"isr_updates",
     "offline_after":[p],"under_min_isr_after":[p],"notes":[str]}
    {"type":"sweep_summary","rules","kafka_version","max_failures","by_rack","combinations",
     "harmful","baseline_offline":[p],"baseline_under_min_isr":[p]}

A plan ends with its ``election_summary``, a ``--sweep`` with its ``sweep_summary``: each schema
has its own type name (:mod:`kreplica.report.schemas.types`). ``after.leader`` is -1 when the partition stays offline; ``version`` is the state znode's
version (ZooKeeper) or the partition epoch (KRaft). The text report is
:mod:`kreplica.report.text.election`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from kreplica.analysis.election.common import KINDS, Election
from kreplica.analysis.election.loss import LossRanking, election_json
from kreplica.analysis.election.scenarios import ElectionPlan


def _record(p, *, recovery: bool = False) -> dict:
    out = {"leader": p.leader, "leader_epoch": p.leader_epoch, "isr": list(p.isr), "version": p.version}
    if recovery:
        out["leader_recovery_state"] = p.leader_recovery_state
    if p.elr or p.last_known_elr:
        out["elr"] = list(p.elr)
        out["last_known_elr"] = list(p.last_known_elr)
    return out


def election_object(e: Election) -> dict:
    return {"type": "election", "partition": e.partition, "kind": e.kind, "before": _record(e.before),
            "after": _record(e.after, recovery=True), "elected": e.elected, "unclean": e.unclean,
            "offline": e.offline, "under_min_isr": e.under_min_isr, "reason": e.reason, "rule": e.rule}


def ranking_object(r: LossRanking) -> dict:
    return {
        "type": "election_candidates", "partition": r.partition, "planned_leader": r.planned_leader,
        "best": r.best, "recovery_choice": r.recovery_choice, "election_type": r.election_type,
        "steps": list(r.steps), "protocol": r.protocol, "no_evidence": list(r.no_evidence),
        "candidates": [
            {"broker": c.broker, "rank": c.rank, "last_epoch": c.last_epoch, "log_end_offset": c.log_end_offset,
             "high_watermark": c.high_watermark, "electable": c.electable, "in_isr": c.in_isr,
             "records_lost": c.records_lost, "committed_loss": c.committed_loss,
             "losses": [{"broker": x.broker, "records": x.records, "ranges": [list(g) for g in x.ranges],
                         "committed": x.committed} for x in c.losses]}
            for c in r.candidates],
    }


def summary_object(plan: ElectionPlan) -> dict:
    s = plan.scenario
    kinds = Counter(e.kind for e in plan.elections)
    return {
        "type": "election_summary", "rules": plan.rules, "kafka_version": str(plan.kafka_version),
        "scenario": {"fail": list(s.fail), "shutdown": list(s.shutdown),
                     "preferred": None if s.preferred is None else [f"{t}-{p}" for t, p in s.preferred],
                     "unclean_election": None if s.unclean_election is None
                     else [f"{t}-{p}" for t, p in s.unclean_election],
                     "reassign_complete": s.reassign_complete, "unclean_allowed": s.unclean},
        "elr_enabled": plan.elr_enabled,
        "elections": len(plan.elections),
        "elected": sum(1 for e in plan.elections if e.elected),
        "offline": sum(1 for e in plan.elections if e.offline),
        "unclean": sum(1 for e in plan.elections if e.unclean),
        "under_min_isr": sum(1 for e in plan.elections if e.under_min_isr),
        "by_kind": {k: kinds.get(k, 0) for k in KINDS},
        "isr_updates": len(plan.isr_updates),
        "offline_after": list(plan.offline_after),
        "under_min_isr_after": list(plan.under_min_isr_after),
        "notes": list(plan.notes),
    }


def sweep_object(r, by_rack: bool) -> dict:
    """One harmful combination of the sweep (:class:`~kreplica.analysis.election.sweep.SweepResult`)."""
    out: dict = {"type": "sweep"}
    if by_rack:
        out["racks"] = list(r.units)
    else:
        out["failed"] = list(r.units)
    out.update({"brokers": list(r.brokers), "impact": list(r.impact), "offline": list(r.offline),
                "unclean": list(r.unclean), "under_min_isr": list(r.under_min_isr)})
    return out


def sweep_summary(s) -> dict:
    """The sweep's ``sweep_summary`` (:class:`~kreplica.analysis.election.sweep.Sweep`)."""
    return {"type": "sweep_summary", "rules": s.rules, "kafka_version": str(s.kafka_version),
            "max_failures": s.max_failures, "by_rack": s.by_rack, "combinations": s.combinations,
            "harmful": len(s.results), "baseline_offline": list(s.baseline_offline),
            "baseline_under_min_isr": list(s.baseline_under_min_isr)}


def write_election_json(path: Path, rankings: Sequence[LossRanking]) -> None:
    """``--output-file FILE``: ``kafka-leader-election.sh --path-to-json-file`` input for the
    partitions whose best candidate needs an election run by hand
    (:func:`~kreplica.analysis.election.loss.election_json`)."""
    path.write_text(json.dumps(election_json(list(rankings)), indent=2) + "\n", encoding="utf-8")
