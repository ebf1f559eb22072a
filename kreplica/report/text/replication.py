"""The text reports of the replication commands: ``epochs`` (replicas side by side),
``offset-for-epoch`` (a line per answer), ``truncate-plan`` (per follower, what it discards and
what remains) and ``diverge`` (per pair, the divergent ranges), rendered from the objects of
:mod:`kreplica.report.schemas.replication`."""

from __future__ import annotations

from rich.console import Console

from kreplica.analysis.replication.divergence import BATCHES_DIFFER, SAME_RECORDS
from kreplica.report.text.layout import Column, Units, fit_table, print_table, print_wrapped
from kreplica.report.text.numbers import count
from kreplica.report.text.safe_text import escape


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


def render_offset_for_epoch(objs: list[dict], console: Console) -> None:
    """One line per answer."""
    for o in objs:
        cur = o["current_leader_epoch"]
        print_wrapped(console, f"{escape(o['replica'])}: epoch {o['requested_epoch']}"
                      + (f" (current leader epoch {cur})" if cur is not None else "")
                      + f" → leader_epoch {o['leader_epoch']}, end_offset {o['end_offset']}, error {o['error']}")


def render_truncation(o: dict, console: Console) -> None:
    print_wrapped(console, f"[bold]{escape(o['follower'])}[/] follows [bold]{escape(o['leader'])}[/] "
                           f"({o['protocol']}, Kafka {o['kafka_version']}), log end {o['follower_log_end_before']}:")
    if o["elected"] is not None:
        print_wrapped(console, f"  [yellow]{escape(o['elected']['reason'])}[/]", 4)
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
