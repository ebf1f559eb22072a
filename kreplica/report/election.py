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
    {"type":"summary","rules","kafka_version","scenario":{...},"elr_enabled","elections",
     "elected","offline","unclean","under_min_isr","by_kind":{kind:n},"isr_updates",
     "offline_after":[p],"under_min_isr_after":[p],"notes":[str]}

``after.leader`` is -1 when the partition stays offline; ``version`` is the state znode's
version (ZooKeeper) or the partition epoch (KRaft). The text report is a table, offline rows
first, then unclean ones, then the rest in the controller's order.
"""

from __future__ import annotations

from collections import Counter

from kreplica.analysis.election.common import KINDS, Election
from kreplica.analysis.election.loss import LossRanking
from kreplica.analysis.election.scenarios import ElectionPlan
from kreplica.report.numbers import count, number


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
        "type": "summary", "rules": plan.rules, "kafka_version": str(plan.kafka_version),
        "scenario": {"fail": list(s.fail), "shutdown": list(s.shutdown),
                     "preferred": None if s.preferred is None else [f"{t}-{p}" for t, p in s.preferred],
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


def _ids(values) -> str:
    return ",".join(str(v) for v in values) if values else "-"


def _sorted_rows(objs: list[dict]) -> list[dict]:
    """Offline rows first, then unclean rows, then the rest, each group in the controller's order."""
    return sorted(objs, key=lambda o: (not o["offline"], not o["unclean"]))


def render_text(elections: list[dict], rankings: list[dict], summary: dict, console) -> None:
    """The plan for people: one verdict line, the election table, each candidate ranking, fitted
    to the console's width."""
    from rich import box
    from rich.markup import escape

    from kreplica.report.text_layout import Column, print_table, print_wrapped

    n_off, n_unclean = summary["offline"], summary["unclean"]
    head = (f"{summary['rules']} controller rules, Kafka {summary['kafka_version']}: "
            f"{count(summary['elections'], 'election')}, {number(summary['elected'])} "
            f"{'elects' if summary['elected'] == 1 else 'elect'} a leader")
    if n_off or n_unclean:
        print_wrapped(console, f"[bold red]{escape(head)}; {number(n_off)} "
                               f"{'leaves its' if n_off == 1 else 'leave their'} partition offline, "
                               f"{number(n_unclean)} unclean[/]")
    else:
        print_wrapped(console, f"[bold green]{escape(head)}; none offline, none unclean[/]")
    if elections:
        rows, styles = [], []
        for o in _sorted_rows(elections):
            b, a = o["before"], o["after"]
            health = "OFFLINE" if o["offline"] else ("MIN-ISR" if o["under_min_isr"] else "ok")
            styles.append("red" if o["offline"] or o["unclean"] else ("yellow" if o["under_min_isr"] else ""))
            rows.append([escape(o["partition"]), o["kind"], f"{b['leader']} → {a['leader']}",
                         f"{b['leader_epoch']} → {a['leader_epoch']}", f"{_ids(b['isr'])} → {_ids(a['isr'])}",
                         "UNCLEAN" if o["unclean"] else "", health])
        print_table(console, [Column("partition"), Column("kind", 5), Column("leader", 6), Column("epoch", 2),
                              Column("isr", 4), Column("unclean", 3), Column("health", 5)],
                    rows, styles, box=box.SIMPLE_HEAD, show_header=True, header_style="bold")
        for o in _sorted_rows(elections):
            print_wrapped(console, f"  {escape(o['partition'])} ({o['kind']}): {escape(o['reason'])}", 4)
    for r in rankings:
        print_wrapped(console, f"[bold]{escape(r['partition'])}[/]: candidates by KIP-966 recovery order "
                               f"(last epoch, log end offset); best [bold]{r['best']}[/]"
                               + (f", the plan elects {r['planned_leader']}" if r['planned_leader'] != r['best'] else ""))
        rows = [[str(c["rank"]), str(c["broker"]), str(c["last_epoch"]), str(c["log_end_offset"]),
                 str(c["high_watermark"]), "yes" if c["electable"] else "no", number(c["records_lost"]),
                 "YES" if c["committed_loss"] else "no"] for c in r["candidates"]]
        print_table(console, [Column("rank"), Column("broker", 7), Column("epoch", 5), Column("log end", 4, wrap=True),
                              Column("hw", 3), Column("can lead", 6, wrap=True), Column("others lose", 2, wrap=True),
                              Column("committed", 6)],
                    rows, ["red" if c["committed_loss"] else "" for c in r["candidates"]],
                    box=box.SIMPLE_HEAD, show_header=True, header_style="bold")
        for c in r["candidates"]:
            lost = [f"{x['broker']} loses " + ", ".join(f"{f}-{l}" for f, l in x["ranges"])
                    + f" ({number(x['records'])}{', committed' if x['committed'] else ''})"
                    for x in c["losses"] if x["records"]]
            print_wrapped(console, f"  if {c['broker']} leads: " + (escape("; ".join(lost)) if lost
                                                                      else "nobody loses anything"), 4)
        for s in r["steps"]:
            print_wrapped(console, f"  → {escape(s)}", 4)
    for n in summary["notes"]:
        print_wrapped(console, f"[dim]{escape(n)}[/]")
    if summary["offline_after"]:
        print_wrapped(console, f"offline afterwards: {escape(', '.join(summary['offline_after']))}")
    if summary["under_min_isr_after"]:
        print_wrapped(console, f"under min ISR afterwards: {escape(', '.join(summary['under_min_isr_after']))}")


def render_sweep(objs: list[dict], summary: dict, console) -> None:
    """The what-if sweep for people: combinations by impact."""
    from rich import box
    from rich.markup import escape

    from kreplica.report.text_layout import Column, Units, print_table, print_wrapped

    print_wrapped(console, f"[bold]{count(summary['combinations'], 'combination')} of up to "
                           f"{summary['max_failures']} failed {'racks' if summary['by_rack'] else 'brokers'}[/] "
                           f"({summary['rules']} rules, Kafka {summary['kafka_version']}); "
                           f"{number(summary['harmful'])} {'causes' if summary['harmful'] == 1 else 'cause'} offline, "
                           "unclean or under-min-ISR partitions")
    rows = []
    for o in objs:
        names = [*o["offline"], *o["unclean"]] or o["under_min_isr"]
        more = [f"… ({number(len(names) - 8)} more)"] if len(names) > 8 else []
        rows.append([Units(tuple(escape(str(u)) for u in o.get("racks", o.get("failed"))), ","),
                     number(len(o["offline"])), number(len(o["unclean"])), number(len(o["under_min_isr"])),
                     Units(tuple(escape(n) for n in names[:8]) + tuple(more), ", ")])
    print_table(console, [Column("failed"), Column("offline", 4), Column("unclean", 3),
                          Column("under min isr", 2, wrap=True), Column("partitions", 5)],
                rows, ["red" if o["offline"] or o["unclean"] else "yellow" for o in objs],
                box=box.SIMPLE_HEAD, show_header=True, header_style="bold")


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
    """The sweep's ``summary`` (:class:`~kreplica.analysis.election.sweep.Sweep`)."""
    return {"type": "summary", "rules": s.rules, "kafka_version": str(s.kafka_version),
            "max_failures": s.max_failures, "by_rack": s.by_rack, "combinations": s.combinations,
            "harmful": len(s.results), "baseline_offline": list(s.baseline_offline),
            "baseline_under_min_isr": list(s.baseline_under_min_isr)}
