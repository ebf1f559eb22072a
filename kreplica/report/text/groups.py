"""The text report of ``kreplica groups``: per ``__consumer_offsets`` partition, what was replayed
and from which replica, the problems first, then each group: a header line and its offsets table.
Partitions holding no group (a broker's 50 partitions are mostly empty) share one line at the end.

Laid out for 80 columns and more (:mod:`kreplica.report.text.layout`): the offsets table leaves out
its least telling columns on a narrow terminal; machine output (``-f json``) has everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from rich.console import Console

from kreplica.analysis.groups.state import PartitionGroups
from kreplica.formats.findings import Finding
from kreplica.model.coordinator.groups import CommittedOffset, Group, StreamsTasks
from kreplica.model.coordinator.replay import ReplayPoint
from kreplica.report.text.layout import Column, Units, print_table, print_wrapped
from kreplica.report.text.numbers import count
from kreplica.report.text.safe_text import escape

#: indent of the lines under a group's header
INDENT = 2
#: the fit findings' note in the offsets table
_FIT_NOTES = {"group_offset_beyond_log_end": "[red]beyond log end[/red]",
              "group_offset_below_log_start": "below log start"}
OFFSET_COLUMNS = (Column("partition"), Column("offset", 6, justify="right"), Column("epoch", 3, justify="right"),
                  Column("committed", 2), Column("note", 5, wrap=True))


def utc(ms: int | None) -> str:
    """Epoch milliseconds as ``2023-11-14 22:13:20`` (UTC), ``-`` for none."""
    if ms is None:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _finding_line(f: Finding) -> str:
    style = "bold red" if f.is_error else "dim" if f.is_info else "yellow"
    return f"{' ' * INDENT}[{style}]{f.severity.upper()} {f.kind}[/] {escape(f.message)}"


def _describe(g: Group) -> str:
    if g.state == "Dead":
        return "no group: its record was deleted, its offsets stay (new coordinator)"
    kind = g.protocol or "standalone"
    if g.protocol == "classic" and g.protocol_type:
        kind += f" ({escape(g.protocol_type)})"
    parts = [kind, g.state]
    if g.generation is not None and g.protocol is not None:
        parts.append(f"{'generation' if g.protocol == 'classic' else 'epoch'} {g.generation}")
    if g.topology is not None:
        parts.append(f"topology epoch {g.topology.epoch}" + ("" if g.topology.validated else " (not validated)"))
    if g.assignor:
        parts.append(escape(g.assignor))
    if g.protocol is not None:
        parts.append(count(len(g.members), "member"))
    return ", ".join(parts)


def _note(o: CommittedOffset, pending: bool, fit: dict) -> Units:
    notes = []
    if pending:
        notes.append(f"pending txn {o.producer_id}")
    elif o.transactional:
        notes.append(f"txn {o.producer_id}")
    if o.expired:
        notes.append("[yellow]expired[/yellow]")
    if o.expire_timestamp is not None and not o.expired:
        notes.append(f"expires {utc(o.expire_timestamp)}")
    if o.metadata:
        notes.append(f"metadata {escape(o.metadata)!r}")
    fitted = fit.get((o.group, o.topic, o.partition))
    if fitted and not pending:
        notes.append(fitted)
    return Units(tuple(notes), ", ", "")


def _group(console: Console, g: Group, fit: dict) -> None:
    console.print()
    print_wrapped(console, f"[bold]{escape(g.group)}[/bold]  {_describe(g)}", INDENT * 2)
    rows = [[escape(f"{o.topic}-{o.partition}"), str(o.offset), "-" if o.leader_epoch is None else str(o.leader_epoch),
             utc(o.commit_timestamp), _note(o, pending, fit)]
            for offsets, pending in ((g.offsets, False), (g.pending_offsets, True)) for o in offsets]
    if rows:
        print_table(console, OFFSET_COLUMNS, rows, box=None, pad_edge=False, padding=(0, 2, 0, 0),
                    header_style="bold")
    if g.members:
        members = [f"{escape(m.member_id)} ({escape(m.client_id)}, {escape(m.client_host)}"
                   + (f": {escape(', '.join(f'{t}-{p}' for t, ps in m.assignment for p in ps))}" if m.assignment else "")
                   + (f": {escape(_tasks(m.tasks))}" if m.tasks is not None and _tasks(m.tasks) else "")
                   + ")" for m in g.members]
        print_wrapped(console, f"{' ' * INDENT}members: " + "; ".join(members), INDENT * 2)


def _tasks(tasks: StreamsTasks) -> str:
    """A streams member's tasks as Kafka Streams names them (``<subtopology>_<partition>``),
    standby and warm-up ones marked."""
    return ", ".join(f"{s}_{p}{mark}" for kind, mark in (("active", ""), ("standby", " standby"), ("warmup", " warmup"))
                     for s, ps in getattr(tasks, kind) for p in ps)


def _disagreement(d) -> str:
    where = escape(d.group) + (f" {escape(d.topic)}-{d.partition}" if d.topic is not None else "")
    what = {"group": "group", "offset": "offset", "pending_offset": "pending offset"}[d.field]
    shown = []
    for label, value in d.values:
        if value is None:
            shown.append(f"{escape(label)} none")
        elif d.field == "group":
            shown.append(f"{escape(label)} {value['state']} generation {value['generation']}, "
                         f"{count(len(value['members']), 'member')}")
        else:
            epoch = "" if value["leader_epoch"] is None else f" epoch {value['leader_epoch']}"
            shown.append(f"{escape(label)} {value['offset']}{epoch}")
    return f"{' ' * INDENT}[yellow]replicas differ[/yellow] on {what} {where}: {'; '.join(shown)}"


def _partition(console: Console, p: PartitionGroups, point: ReplayPoint) -> None:
    s = p.chosen
    offsets = sum(len(g.offsets) for g in s.groups)
    at = "the end of the log" if s.replayed_to is None else f"offset {s.replayed_to}"
    if point.at_offset is not None or point.at_time is not None:
        asked = [f"offset {point.at_offset}"] * (point.at_offset is not None) + \
                [utc(point.at_time)] * (point.at_time is not None)
        at += f" (asked: {', '.join(asked)})"
    console.print()
    print_wrapped(console, f"[bold]__consumer_offsets-{s.coordinator_partition}[/bold] on {escape(s.label)}: "
                           f"{count(len(s.groups), 'group')}, {count(offsets, 'committed offset')}; "
                           f"replayed to {at}, {s.coordinator} coordinator; log end {s.log_end_offset}",
                  INDENT * 2)
    expiry = ("no record replayed, no expiry" if p.expiry_time is None else
              f"expiry evaluated at {utc(p.expiry_time)} UTC, offsets.retention.minutes {p.retention_minutes}")
    print_wrapped(console, f"{' ' * INDENT}{expiry}", INDENT * 2)
    if len(p.replicas) > 1:
        reps = ", ".join(f"{escape(r.label)} (log end {r.log_end_offset}"
                         + (", answers)" if r.path == s.path else ")") for r in p.replicas)
        print_wrapped(console, f"{' ' * INDENT}replicas: {reps}; {count(len(p.disagreements), 'disagreement')}",
                      INDENT * 2)
    for f in sorted(p.findings, key=lambda f: (not f.is_error, f.is_info)):
        print_wrapped(console, _finding_line(f), INDENT * 2)
    for d in p.disagreements:
        print_wrapped(console, _disagreement(d), INDENT * 2)
    fit = {(f.details["group"], f.details["topic"], f.details["partition"]): _FIT_NOTES[f.kind] for f in p.fit}
    for g in s.groups:
        _group(console, g, fit)


def _ranges(numbers: list[int]) -> str:
    """``0-12, 14, 16-49``."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def _quiet(p: PartitionGroups) -> bool:
    """A partition with nothing to show: no group (asked for), finding or disagreement."""
    return not p.chosen.groups and not p.findings and not p.disagreements


def render_text(results: Sequence[PartitionGroups], point: ReplayPoint, console: Console) -> None:
    """A verdict line, then each partition with something to show (module docstring); the others
    on one line at the end."""
    errors = sum(f.is_error for p in results for f in p.findings)
    warnings = sum(not f.is_error and not f.is_info for p in results for f in p.findings)
    groups = sum(len(p.chosen.groups) for p in results)
    verdict = "[red]PROBLEMS[/red]" if errors else "[green]OK[/green]"
    counts = [count(n, noun) for n, noun in ((errors, "error"), (warnings, "warning")) if n] or ["no problem found"]
    print_wrapped(console, f"{verdict} {count(groups, 'group')} in {count(len(results), 'partition')} of "
                           f"__consumer_offsets: {', '.join(counts)}")
    quiet = [p.chosen.coordinator_partition for p in results if _quiet(p)]
    for p in results:
        if not _quiet(p):
            _partition(console, p, point)
    if quiet:
        console.print()
        print_wrapped(console, f"no group in {count(len(quiet), 'partition')} of __consumer_offsets: "
                               f"{_ranges(quiet)}", INDENT * 2)
