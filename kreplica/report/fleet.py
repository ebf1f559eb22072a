"""Output of ``fleet scan`` and ``fleet analyze``.

Per partition, ``fleet analyze`` prints the objects the single-partition commands print for the
same replicas — the ``finding`` objects of their segments that bear on the answers (the
log-directory checkpoint findings a single-partition command adds are kept in the scan's
``findings`` table, not joined to each partition), ``epochs`` (with its findings),
``truncation``, ``divergence``, and ``consumer_impact`` (each group with a committed offset in a
partition whose truncation loses records, from the scan's ``group_offsets``, as ``truncate-plan``
prints it) — then one ``fleet_partition`` object; the run ends with a
``fleet_summary``::

    fleet_partition  {type, partition, replicas, leader, leader_source, committed_loss_records,
                      followers_losing_committed, divergent_pairs, offline, under_min_isr, notes}
    fleet_summary    {type, partitions, committed_loss_partitions, committed_loss_records,
                      divergent_partitions, damaged_partitions}

``damaged_partitions`` counts the partitions with an error finding in a replica's log.
    fleet_scan       {type, out, replicas, segments, bytes, batches, records, findings, errors}
"""

from __future__ import annotations

from rich.console import Console

from kreplica.report.inspect_log import finding_object
from kreplica.report.numbers import count, number
from kreplica.report.consumer_impact import consumer_impact_object
from kreplica.report.replication import divergence_object, epochs_object, truncation_object
from kreplica.report.safe_text import escape
from kreplica.report.text_layout import Column, Units, print_table, print_wrapped


def partition_objects(analysis, kafka_version) -> tuple[dict, ...]:
    """The objects of one partition, in the order ``epochs``, ``truncate-plan`` and ``diverge``
    print them (the replicas' log findings first, as those commands begin), the consumer impact of
    its truncations, then its ``fleet_partition`` object."""
    out: list[dict] = [finding_object(f) for f in analysis.log_findings]
    for verdict in analysis.epochs:
        out.append(epochs_object(verdict.state, verdict.checkpoint, kafka_version))
        out.extend(finding_object(f) for f in verdict.findings)
    out.extend(truncation_object(p) for p in analysis.plans)
    out.extend(divergence_object(d) for d in analysis.divergences)
    out.extend(consumer_impact_object(i) for i in analysis.consumer_impacts)
    facts = analysis.facts
    out.append({
        "type": "fleet_partition", "partition": analysis.name, "replicas": list(analysis.replicas),
        "leader": analysis.leader, "leader_source": analysis.leader_source,
        "committed_loss_records": analysis.committed_loss_records,
        "followers_losing_committed": list(analysis.followers_losing_committed),
        "divergent_pairs": analysis.divergent_pairs,
        "offline": facts.offline if facts else None, "under_min_isr": facts.under_min_isr if facts else None,
        "notes": list(analysis.notes),
    })
    return tuple(out)


def scan_object(out: str, totals) -> dict:
    return {"type": "fleet_scan", "out": out, "replicas": totals.replicas, "segments": totals.segments,
            "bytes": totals.bytes, "batches": totals.batches, "records": totals.records,
            "findings": totals.findings, "errors": totals.errors}


def risk_key(row: dict) -> tuple:
    """Worst first: committed records lost, then offline, divergence, under min ISR."""
    return (-row["committed_loss_records"], not row["offline"], -row["divergent_pairs"], not row["under_min_isr"],
            row["partition"])


def render_ranking(worst: list[dict], summary: dict, console: Console) -> None:
    """The partitions with committed data at risk, worst first, and the totals, fitted to the
    console's width (the leader's source and the lesser columns go first on a narrow one)."""
    print_wrapped(console, f"[bold]{count(summary['partitions'], 'partition')}[/] analysed: "
                           f"{number(summary['committed_loss_partitions'])} would lose committed data "
                           f"({count(summary['committed_loss_records'], 'record')}), "
                           f"{number(summary['divergent_partitions'])} "
                           f"{'has' if summary['divergent_partitions'] == 1 else 'have'} divergent replicas")
    if not worst:
        return
    rows = []
    for r in worst:
        lost = r["committed_loss_records"]
        rows.append([escape(r["partition"]), "-" if r["leader"] is None else str(r["leader"]),
                     escape(r["leader_source"] or "-"),
                     f"[bold red]{number(lost)}[/]" if lost else "0",
                     Units(tuple(escape(f) for f in r["followers_losing_committed"]), ", "),
                     number(r["divergent_pairs"]), _yes_no(r["offline"]), _yes_no(r["under_min_isr"])])
    print_table(console, [Column("partition"), Column("leader", 6), Column("leader from", 1, wrap=True),
                          Column("committed records lost", 7, wrap=True), Column("followers losing committed", 5, wrap=True),
                          Column("divergent pairs", 4, wrap=True), Column("offline", 3), Column("under min ISR", 2, wrap=True)],
                rows, title="partitions at risk, worst first", header_style="bold")


def render_scan(obj: dict, console: Console) -> None:
    print_wrapped(console, f"scanned {count(obj['replicas'], 'replica')}, {count(obj['segments'], 'segment')} "
                           f"({count(obj['bytes'], 'byte')}), {count(obj['batches'], 'batch')}, "
                           f"{count(obj['records'], 'record')} into {escape(obj['out'])}: "
                           f"{count(obj['findings'], 'finding')} ({count(obj['errors'], 'error')})")


def _yes_no(value: bool | None) -> str:
    return "?" if value is None else ("[red]yes[/]" if value else "no")


def emit_analysis(results, fmt, *, top: int, leading: tuple[dict, ...] = ()) -> tuple[dict, list[dict]]:
    """Stream every partition's objects (machine formats), after ``leading`` (``fleet run``'s
    ``fleet_scan``), then a ``fleet_summary``; returns the summary and the ``top`` worst
    ``fleet_partition`` objects (all that is kept in memory)."""
    from kreplica.report.output import Emitter, OutputFormat

    emitter = Emitter(fmt) if fmt is not OutputFormat.text else None
    for o in leading if emitter is not None else ():
        emitter.emit(o)
    worst: list[dict] = []
    rows = {"partitions": 0, "committed_loss_partitions": 0, "committed_loss_records": 0, "divergent_partitions": 0,
            "damaged_partitions": 0}
    for objs in results:
        rows["damaged_partitions"] += any(o["type"] == "finding" and o["severity"] == "error" for o in objs)
        for o in objs:
            if emitter is not None:
                emitter.emit(o)
            if o["type"] != "fleet_partition":
                continue
            rows["partitions"] += 1
            rows["committed_loss_partitions"] += o["committed_loss_records"] > 0
            rows["committed_loss_records"] += o["committed_loss_records"]
            rows["divergent_partitions"] += o["divergent_pairs"] > 0
            if o["committed_loss_records"] or o["divergent_pairs"] or o["offline"] or o["under_min_isr"]:
                worst.append(o)
                if len(worst) > 4 * top:
                    worst = sorted(worst, key=risk_key)[:top]
    summary = {"type": "fleet_summary", **rows}
    if emitter is not None:
        emitter.emit(summary)
        emitter.close()
    return summary, sorted(worst, key=risk_key)[:top]
