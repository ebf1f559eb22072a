"""Output of the replication commands: ``epochs``, ``offset-for-epoch``, ``truncate-plan``,
``diverge``. Machine objects::

    epochs                   {type, replica, path, partition, kafka_version, log_start_offset,
                              log_end_offset, high_watermark, lineage: [{epoch, start_offset,
                              last_offset, batches, first_timestamp, last_timestamp}],
                              checkpoint: [[epoch, start_offset]] | null, loaded_cache: [[epoch, start_offset]]}
    offset_for_leader_epoch  {type, replica, requested_epoch, current_leader_epoch, leader_epoch,
                              end_offset, error, kafka_version}
    truncation               {type, partition, leader, follower, protocol, kafka_version, rounds:
                              [{requested_epoch, leader_epoch, end_offset}], follower_log_end_before,
                              truncate_to, out_of_range, discarded: {records, batches, bytes,
                              first_offset, last_offset, ranges: [[first, last]]}, segments_cut:
                              [{file, position}], committed_loss, held_elsewhere: [{first, last,
                              replicas}], reopened_transactions: [{producer_id, marker_offset,
                              marker}], notes, epoch_cache_after, after: {leader_log_end,
                              follower_log_end, refetch_records, still_divergent: [[first, last]],
                              never_refetched: [[first, last]], heals}, exported: [path]}
    divergence               {type, partition, replicas: [a, b], first_divergent_offset,
                              common_prefix_end, ranges: [{first, last, kind, below_high_watermark}],
                              high_watermarks, records_unread}

A truncation's ``exported`` lists the files ``--export`` wrote for that follower (its records as
ndjson, then its segment), empty without ``--export`` or when it discards nothing.

A divergence range's ``kind`` is ``divergent`` (other records), ``same_records`` (other batches, the
same records: not divergence of data), ``batches_differ`` (other batches whose records could not be
read; ``records_unread`` says why) or ``only_<label>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from kreplica.analysis.replication.divergence import BATCHES_DIFFER, SAME_RECORDS, Divergence
from kreplica.analysis.replication.offset_for_epoch import OffsetForLeaderEpochAnswer
from kreplica.analysis.replication.truncation import TruncationPlan
from kreplica.model.lineage import LineageEntry
from kreplica.report.inspect_log import finding_object
from kreplica.report.output import Emitter, OutputFormat, text_console
from kreplica.report.safe_text import escape


def lineage_objects(lineage: tuple[LineageEntry, ...]) -> list[dict]:
    return [{"epoch": e.epoch, "start_offset": e.start_offset, "last_offset": e.last_offset, "batches": e.batches,
             "first_timestamp": e.first_timestamp, "last_timestamp": e.last_timestamp} for e in lineage]


def epochs_object(state, checkpoint, kafka_version) -> dict:
    r = state.replica
    return {
        "type": "epochs", "replica": r.label, "path": r.path, "partition": r.name, "kafka_version": str(kafka_version),
        "log_start_offset": state.log_start_offset, "log_end_offset": state.log_end_offset,
        "high_watermark": r.high_watermark, "lineage": lineage_objects(r.lineage),
        "checkpoint": None if checkpoint is None else [list(e) for e in checkpoint],
        "loaded_cache": [] if state.cache is None else [[e.epoch, e.start_offset] for e in state.cache.entries],
    }


def offset_for_epoch_object(replica: str, a: OffsetForLeaderEpochAnswer, kafka_version) -> dict:
    return {"type": "offset_for_leader_epoch", "replica": replica, "requested_epoch": a.requested_epoch,
            "current_leader_epoch": a.current_leader_epoch, "leader_epoch": a.leader_epoch,
            "end_offset": a.end_offset, "error": a.error, "kafka_version": str(kafka_version)}


def truncation_object(p: TruncationPlan, exported: Sequence[str] = ()) -> dict:
    d = p.discarded
    return {
        "type": "truncation", "partition": p.partition, "leader": p.leader, "follower": p.follower,
        "protocol": p.protocol, "kafka_version": p.kafka_version,
        "rounds": [{"requested_epoch": r.requested_epoch, "leader_epoch": r.leader_epoch, "end_offset": r.end_offset}
                   for r in p.rounds],
        "follower_log_end_before": p.follower_log_end_before, "truncate_to": p.truncate_to,
        "out_of_range": p.out_of_range,
        "discarded": {
            "records": p.discarded_records, "batches": len(d), "bytes": sum(b.size for b in d),
            "first_offset": min((b.base_offset for b in d), default=None),
            "last_offset": max((b.last_offset for b in d), default=None),
            "ranges": [[r.first, r.last] for r in p.ranges],
        },
        "segments_cut": [{"file": f, "position": pos} for f, pos in p.segments_cut],
        "committed_loss": p.committed_loss,
        "held_elsewhere": [{"first": r.first, "last": r.last, "replicas": list(holders)}
                           for r, holders in p.held_elsewhere],
        "reopened_transactions": [{"producer_id": pid, "marker_offset": off, "marker": kind}
                                  for pid, off, kind in p.reopened_transactions],
        "notes": list(p.notes),
        "epoch_cache_after": [list(e) for e in p.cache_after],
        "after": {"leader_log_end": p.leader_log_end, "follower_log_end": p.follower_log_end_after,
                  "refetch_records": p.refetch_records, "still_divergent": [[r.first, r.last] for r in p.still_divergent],
                  "never_refetched": [[r.first, r.last] for r in p.never_refetched], "heals": p.heals},
        "exported": list(exported),
    }


def divergence_object(d: Divergence) -> dict:
    return {"type": "divergence", "partition": d.partition, "replicas": list(d.replicas),
            "first_divergent_offset": d.first_divergent_offset, "common_prefix_end": d.common_prefix_end,
            "ranges": [{"first": r.first, "last": r.last, "kind": r.kind,
                        "below_high_watermark": r.below_high_watermark} for r in d.ranges],
            "high_watermarks": d.high_watermarks, "records_unread": d.records_unread}


# -- text ----------------------------------------------------------------------------------------

def render_epochs(objs: list[dict], findings: dict[str, list], console: Console) -> None:
    """Several replicas side by side: one column per replica."""
    table = Table(title="leader epochs", show_lines=False)
    table.add_column("")
    for o in objs:
        table.add_column(escape(o["replica"]))

    def row(name, fn):
        table.add_row(name, *[fn(o) for o in objs])

    row("log start / end", lambda o: f"{o['log_start_offset']} / {o['log_end_offset']}")
    row("high watermark", lambda o: str(o["high_watermark"]))
    epochs = sorted({e["epoch"] for o in objs for e in o["lineage"]} |
                    {e for o in objs for e, _ in (o["checkpoint"] or [])})
    for epoch in epochs:
        def cell(o, epoch=epoch):
            runs = [e for e in o["lineage"] if e["epoch"] == epoch]
            ck = [s for e, s in (o["checkpoint"] or []) if e == epoch]
            parts = [f"{r['start_offset']}-{r['last_offset']} ({r['batches']} b)" for r in runs]
            if ck:
                parts.append(f"ckpt {ck[0]}")
            return "; ".join(parts) or "-"
        row(f"epoch {epoch}", cell)
    row("broker loads", lambda o: ", ".join(f"{e}@{s}" for e, s in o["loaded_cache"]) or "empty")
    console.print(table)
    for label, fs in findings.items():
        for f in fs:
            style = "bold red" if f.is_error else "yellow"
            console.print(f"[{style}]{escape(label)}: {f.kind}[/] {escape(f.message)}", highlight=False)


def write_epochs(objs: list[dict], findings: dict[str, list], fmt: OutputFormat) -> None:
    """``epochs`` output: a side-by-side table for people; for programs each replica's object
    followed by its findings."""
    if fmt is OutputFormat.text:
        render_epochs(objs, findings, text_console())
        return
    emitter = Emitter(fmt)
    for o in objs:
        emitter.emit(o)
        for f in findings[o["replica"]]:
            emitter.emit(finding_object(f))
    emitter.close()


def write_offset_for_epoch(replica: str, answers, kafka_version, fmt: OutputFormat) -> int:
    """One line per answer (text) or one ``offset_for_leader_epoch`` object each; returns how many
    carry an error."""
    failed = 0
    if fmt is OutputFormat.text:
        console = text_console(soft_wrap=False)
        for a in answers:
            failed += a.error != "NONE"
            cur = a.current_leader_epoch
            console.print(f"{replica}: epoch {a.requested_epoch}" + (f" (current leader epoch {cur})" if cur is not None else "")
                          + f" → leader_epoch {a.leader_epoch}, end_offset {a.end_offset}, error {a.error}")
        return failed
    emitter = Emitter(fmt)
    for a in answers:
        failed += a.error != "NONE"
        emitter.emit(offset_for_epoch_object(replica, a, kafka_version))
    emitter.close()
    return failed


def render_truncation(o: dict, console: Console) -> None:
    console.print(f"[bold]{escape(o['follower'])}[/] follows [bold]{escape(o['leader'])}[/] "
                  f"({o['protocol']}, Kafka {o['kafka_version']}), log end {o['follower_log_end_before']}:")
    for r in o["rounds"]:
        console.print(f"  asks for epoch {r['requested_epoch']} → leader answers epoch {r['leader_epoch']}, "
                      f"end offset {r['end_offset']}", highlight=False)
    for n in o["notes"]:
        console.print(f"  [dim]{escape(n)}[/]")
    d = o["discarded"]
    if not d["batches"]:
        console.print(f"  truncates to {o['truncate_to']}: [green]nothing is discarded[/]")
        _render_after(o["after"], console)
        return
    loss = "[bold red]COMMITTED DATA LOST[/]" if o["committed_loss"] else "nothing committed is lost"
    console.print(f"  truncates to {o['truncate_to']}: discards {d['records']} records in {d['batches']} batches "
                  f"({d['bytes']:,} bytes), offsets {d['first_offset']}-{d['last_offset']}; {loss}")
    t = Table(show_header=True, header_style="bold")
    for c in ("offsets", "held identically by"):
        t.add_column(c)
    for h in o["held_elsewhere"]:
        t.add_row(f"{h['first']}-{h['last']}", ", ".join(h["replicas"]) or "[red]no other replica[/]")
    console.print(t)
    _render_after(o["after"], console)
    for tx in o["reopened_transactions"]:
        console.print(f"  [yellow]the {tx['marker'].upper()} marker of producer {tx['producer_id']} at offset "
                      f"{tx['marker_offset']} goes: that transaction is open again[/]")
    for path in o["exported"]:
        console.print(f"  wrote {escape(path)}", highlight=False)


def _render_after(after: dict, console: Console) -> None:
    """What remains once the follower has truncated and refetched: healed, or still different."""
    if after["heals"]:
        console.print(f"  then refetches {after['refetch_records']} offsets up to the leader's log end "
                      f"{after['leader_log_end']}: [green]the replicas end identical[/]")
        return
    problems = []
    if after["still_divergent"]:
        problems.append(f"[bold red]offsets {_offset_ranges(after['still_divergent'])} stay different from the "
                        "leader[/] (truncation does not heal them)")
    if after["never_refetched"]:
        problems.append(f"[bold red]offsets {_offset_ranges(after['never_refetched'])} are never fetched "
                        "again[/] (the cut went inside a batch, below the new log end)")
    console.print(f"  then refetches {after['refetch_records']} offsets up to {after['leader_log_end']}, but "
                  + "; ".join(problems))


def _offset_ranges(ranges: list[list[int]]) -> str:
    return ", ".join(f"{a}-{b}" for a, b in ranges)


def render_divergence(o: dict, console: Console) -> None:
    a, b = o["replicas"]
    if not o["ranges"]:
        console.print(f"[green]{escape(a)} and {escape(b)} hold identical batches[/]")
        return
    kinds = {r["kind"] for r in o["ranges"]}
    if kinds == {SAME_RECORDS}:
        console.print(f"[green]{escape(a)} and {escape(b)} hold the same records[/], in other batches at offsets "
                      f"{_offset_ranges([[r['first'], r['last']] for r in o['ranges']])} (not divergence of data)",
                      highlight=False)
        return
    first = o["first_divergent_offset"]
    if first is not None:
        verdict = f"first divergent offset {first}"
    elif BATCHES_DIFFER in kinds:
        verdict = "the batches differ where the records could not be compared"
    else:
        verdict = "no conflicting offsets"
    console.print(f"[bold]{escape(a)} vs {escape(b)}[/]: identical up to offset {o['common_prefix_end']}; {verdict}")
    t = Table(show_header=True, header_style="bold")
    for c in ("offsets", "kind", *[f"below HW of {x}" for x in (a, b)]):
        t.add_column(escape(c))
    for r in o["ranges"]:
        t.add_row(f"{r['first']}-{r['last']}", r["kind"], *["yes" if r["below_high_watermark"].get(x) else "no"
                                                              for x in (a, b)])
    console.print(t)
    if o["records_unread"]:
        console.print(f"[yellow]records not compared: {escape(o['records_unread'])}[/]", highlight=False)
