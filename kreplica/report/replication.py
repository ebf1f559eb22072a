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

from kreplica.analysis.replication.divergence import BATCHES_DIFFER, SAME_RECORDS, Divergence
from kreplica.analysis.replication.offset_for_epoch import OffsetForLeaderEpochAnswer
from kreplica.analysis.replication.truncation import TruncationPlan
from kreplica.model.log.lineage import LineageEntry
from kreplica.model.log.partition_log import PartitionLog
from kreplica.report.inspect_log import finding_object
from kreplica.report.log_findings import begin_output
from kreplica.report.numbers import count
from kreplica.report.output import Emitter, OutputFormat
from kreplica.report.safe_text import escape
from kreplica.report.text_layout import Column, Units, fit_table, print_table, print_wrapped


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
    """Several replicas side by side, one column per replica; when they do not all fit the
    console's width, as many as fit per table, the row names repeated."""
    epochs = sorted({e["epoch"] for o in objs for e in o["lineage"]} |
                    {e for o in objs for e, _ in (o["checkpoint"] or [])})

    def cell(o: dict, epoch: int) -> Units:
        parts = [f"{r['start_offset']}-{r['last_offset']} ({count(r['batches'], 'batch')})"
                 for r in o["lineage"] if r["epoch"] == epoch]
        ck = [s for e, s in (o["checkpoint"] or []) if e == epoch]
        if ck:
            parts.append(f"ckpt {ck[0]}")
        return Units(tuple(parts), "; ")

    rows = [("log start / end", lambda o: f"{o['log_start_offset']} / {o['log_end_offset']}"),
            ("high watermark", lambda o: str(o["high_watermark"])),
            *[(f"epoch {epoch}", lambda o, epoch=epoch: cell(o, epoch)) for epoch in epochs],
            ("broker loads", lambda o: Units(tuple(f"{e}@{s}" for e, s in o["loaded_cache"]), ", ", "empty"))]

    def table(group: list[dict]):
        columns = [Column(""), *[Column(escape(o["replica"]), wrap=True) for o in group]]
        return fit_table(console, columns, [[name, *[fn(o) for o in group]] for name, fn in rows],
                         title="leader epochs", show_lines=False)

    per_table = len(objs)
    while per_table > 1 and table(objs[:per_table]).hidden:
        per_table -= 1
    for first in range(0, len(objs), per_table):
        console.print(table(objs[first:first + per_table]).table)
    for label, fs in findings.items():
        for f in fs:
            style = "bold red" if f.is_error else "yellow"
            print_wrapped(console, f"[{style}]{escape(label)}: {f.kind}[/] {escape(f.message)}")


def write_epochs(objs: list[dict], findings: dict[str, list], fmt: OutputFormat,
                 replicas: Sequence[PartitionLog]) -> None:
    """``epochs`` output, after the replicas' log findings: a side-by-side table for people; for
    programs each replica's object followed by its findings."""
    out = begin_output(fmt, replicas)
    if not isinstance(out, Emitter):
        render_epochs(objs, findings, out)
        return
    emitter = out
    for o in objs:
        emitter.emit(o)
        for f in findings[o["replica"]]:
            emitter.emit(finding_object(f))
    emitter.close()


def write_offset_for_epoch(replica: PartitionLog, answers, kafka_version, fmt: OutputFormat) -> int:
    """After the replica's log findings, one line per answer (text) or one
    ``offset_for_leader_epoch`` object each; returns how many carry an error."""
    failed = 0
    out = begin_output(fmt, [replica])
    label = replica.label
    if not isinstance(out, Emitter):
        console = out
        for a in answers:
            failed += a.error != "NONE"
            cur = a.current_leader_epoch
            print_wrapped(console, f"{escape(label)}: epoch {a.requested_epoch}"
                          + (f" (current leader epoch {cur})" if cur is not None else "")
                          + f" → leader_epoch {a.leader_epoch}, end_offset {a.end_offset}, error {a.error}")
        return failed
    for a in answers:
        failed += a.error != "NONE"
        out.emit(offset_for_epoch_object(label, a, kafka_version))
    out.close()
    return failed


def render_truncation(o: dict, console: Console) -> None:
    print_wrapped(console, f"[bold]{escape(o['follower'])}[/] follows [bold]{escape(o['leader'])}[/] "
                           f"({o['protocol']}, Kafka {o['kafka_version']}), log end {o['follower_log_end_before']}:")
    for r in o["rounds"]:
        print_wrapped(console, f"  asks for epoch {r['requested_epoch']} → leader answers epoch {r['leader_epoch']}, "
                               f"end offset {r['end_offset']}", 4)
    for n in o["notes"]:
        print_wrapped(console, f"  [dim]{escape(n)}[/]", 4)
    d = o["discarded"]
    if not d["batches"]:
        print_wrapped(console, f"  truncates to {o['truncate_to']}: [green]nothing is discarded[/]", 4)
        _render_after(o["after"], console)
        return
    loss = "[bold red]COMMITTED DATA LOST[/]" if o["committed_loss"] else "nothing committed is lost"
    print_wrapped(console, f"  truncates to {o['truncate_to']}: discards {count(d['records'], 'record')} in "
                           f"{count(d['batches'], 'batch')} ({count(d['bytes'], 'byte')}), offsets "
                           f"{d['first_offset']}-{d['last_offset']}; {loss}", 4)
    rows = [[f"{h['first']}-{h['last']}", Units(tuple(escape(r) for r in h["replicas"]), ", ", "[red]no other replica[/]")]
            for h in o["held_elsewhere"]]
    print_table(console, [Column("offsets"), Column("held identically by")], rows, show_header=True,
                header_style="bold")
    _render_after(o["after"], console)
    for tx in o["reopened_transactions"]:
        print_wrapped(console, f"  [yellow]the {tx['marker'].upper()} marker of producer {tx['producer_id']} at "
                               f"offset {tx['marker_offset']} goes: that transaction is open again[/]", 4)
    for path in o["exported"]:
        print_wrapped(console, f"  wrote {escape(path)}", 4)


def _render_after(after: dict, console: Console) -> None:
    """What remains once the follower has truncated and refetched: healed, or still different."""
    refetch = count(after["refetch_records"], "offset")
    if after["heals"]:
        print_wrapped(console, f"  then refetches {refetch} up to the leader's log end "
                               f"{after['leader_log_end']}: [green]the replicas end identical[/]", 4)
        return
    problems = []
    if after["still_divergent"]:
        problems.append(f"[bold red]offsets {_offset_ranges(after['still_divergent'])} stay different from the "
                        "leader[/] (truncation does not heal them)")
    if after["never_refetched"]:
        problems.append(f"[bold red]offsets {_offset_ranges(after['never_refetched'])} are never fetched "
                        "again[/] (the cut went inside a batch, below the new log end)")
    print_wrapped(console, f"  then refetches {refetch} up to {after['leader_log_end']}, but "
                           + "; ".join(problems), 4)


def _offset_ranges(ranges: list[list[int]]) -> str:
    return ", ".join(f"{a}-{b}" for a, b in ranges)


def render_divergence(o: dict, console: Console) -> None:
    a, b = o["replicas"]
    if not o["ranges"]:
        print_wrapped(console, f"[green]{escape(a)} and {escape(b)} hold identical batches[/]")
        return
    kinds = {r["kind"] for r in o["ranges"]}
    if kinds == {SAME_RECORDS}:
        print_wrapped(console, f"[green]{escape(a)} and {escape(b)} hold the same records[/], in other batches at "
                               f"offsets {_offset_ranges([[r['first'], r['last']] for r in o['ranges']])} (not "
                               "divergence of data)")
        return
    first = o["first_divergent_offset"]
    if first is not None:
        verdict = f"first divergent offset {first}"
    elif BATCHES_DIFFER in kinds:
        verdict = "the batches differ where the records could not be compared"
    else:
        verdict = "no conflicting offsets"
    print_wrapped(console, f"[bold]{escape(a)} vs {escape(b)}[/]: identical up to offset {o['common_prefix_end']}; "
                           f"{verdict}")
    columns = [Column("offsets", 2), Column("kind", 1), *[Column(escape(f"below HW of {x}"), wrap=True) for x in (a, b)]]
    rows = [[f"{r['first']}-{r['last']}", r["kind"], *["yes" if r["below_high_watermark"].get(x) else "no"
                                                       for x in (a, b)]] for r in o["ranges"]]
    print_table(console, columns, rows, show_header=True, header_style="bold")
    if o["records_unread"]:
        print_wrapped(console, f"[yellow]records not compared: {escape(o['records_unread'])}[/]")
