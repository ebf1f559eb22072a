"""The text report of ``kreplica timeline``: the events as a time-ordered table (or one table per
partition), unclean elections in red, events that leave a partition offline in yellow, then the
data joined per leader epoch and what each unclean election lost.

Rendered from the very objects :mod:`kreplica.report.timeline` builds, so the text can never say
something the JSON does not.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rich import box
from rich.console import Console
from rich.table import Table

from kreplica.report.safe_text import escape


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _leader(s: dict | None) -> str:
    return "-" if s is None else ("none" if s["leader"] == -1 else str(s["leader"]))


def _isr(s: dict | None) -> str:
    return "-" if s is None else (",".join(str(i) for i in s["isr"]) or "[]")


def _arrow(before: str, after: str) -> str:
    return after if before == after or before == "-" else f"{before}→{after}"


def _row(obj: dict) -> tuple[list[str], str]:
    t = obj["type"]
    pos = str(obj["position"])
    if t == "partition_event":
        b, a = obj["before"], obj["after"]
        epoch = "-" if a is None else str(a["leader_epoch"])
        what = obj["cause"] + (f" ({obj['by']})" if obj["by"] and obj["cause"].startswith("isr_") else "")
        if obj["offline"]:
            what += " OFFLINE"
        style = "bold red" if obj["unclean"] else ("yellow" if obj["offline"] else "")
        return [_when(obj["time"]), pos, escape(obj["partition"]), what, _arrow(_leader(b), _leader(a)), epoch,
                _arrow(_isr(b), _isr(a)), escape(obj["evidence"])], style
    if t == "broker_event":
        return [_when(obj["time"]), pos, f"broker {obj['broker']}", obj["event"], "", "", "",
                f"broker epoch {obj['broker_epoch']}" if obj["broker_epoch"] is not None else ""], "dim"
    return [_when(obj["time"]), pos, "controller", obj["event"], str(obj["controller"] if obj["controller"] is not None
                                                                     else "none"),
            str(obj["controller_epoch"] if obj["controller_epoch"] is not None else "-"), "", ""], "dim"


def _table(title: str | None, rows: list[dict]) -> Table:
    table = Table(box=box.SIMPLE, title=title, title_justify="left", pad_edge=False)
    for col in ("time (UTC)", "position", "what", "cause / event", "leader", "epoch", "isr"):
        table.add_column(col, no_wrap=True)
    table.add_column("evidence", overflow="fold")
    for obj in rows:
        cells, style = _row(obj)
        table.add_row(*cells, style=style)
    return table


def render_text(objs: list[dict], summary: dict, findings, console: Console, *, per_partition: bool) -> None:
    """The timeline for people: a verdict line, then one time-ordered table (or, with
    ``per_partition``, a table per partition), unclean elections in red and events that leave a
    partition offline in yellow; then the data joined per epoch, the losses, and findings."""
    unclean, offline = summary["unclean_elections"], summary["offline_periods"]
    zombies = summary["zombie_epochs"]
    lost = [o for o in objs if o["type"] == "election_loss" and o["lost_offsets"]]
    problems = bool(unclean or offline or zombies or lost)
    verdict = "[red]PROBLEMS[/red]" if problems else "[green]OK[/green]"
    ev = summary["events"]
    console.print(f"{verdict} {summary['source_kind']} history {summary['start']} .. {summary['end']}: "
                  f"{ev['partition']} partition, {ev['broker']} broker, {ev['controller']} controller events; "
                  f"{len(unclean)} unclean elections, {len(offline)} offline periods")
    events = [o for o in objs if o["type"].endswith("_event")]
    if per_partition:
        names = sorted({o["partition"] for o in events if o["type"] == "partition_event"})
        for name in names:
            console.print(_table(escape(name), [o for o in events if o.get("partition") == name]))
        others = [o for o in events if o["type"] != "partition_event"]
        if others:
            console.print(_table("brokers and controller", others))
    else:
        console.print(_table(None, events))
    if offline:
        console.print()
        for p in offline:
            until = f"until {p['to']} ({_when(p['to_time'])})" if p["to"] is not None else "until the end of the history"
            console.print(f"[yellow]offline[/yellow] {escape(p['partition'])} from {p['from']} "
                          f"({_when(p['from_time'])}) {until}")
    epochs = [o for o in objs if o["type"] == "epoch_evidence"]
    if epochs:
        table = Table(box=box.SIMPLE, title="leader epochs and the data they wrote", title_justify="left",
                      pad_edge=False)
        for col in ("partition", "epoch", "leader", "granted at", "offsets", "held by"):
            table.add_column(col, no_wrap=col != "held by")
        zombie = {(z["partition"], z["epoch"]) for z in zombies}
        for o in epochs:
            held = " ".join(f"{h['broker']}:{h['start_offset']}-{h['end_offset'] - 1}" for h in o["replicas"]) or "-"
            offsets = "-" if o["start_offset"] is None else f"{o['start_offset']}-{o['end_offset'] - 1}"
            style = "bold red" if (o["partition"], o["epoch"]) in zombie else ("dim" if not o["replicas"] else "")
            table.add_row(escape(o["partition"]), str(o["epoch"]),
                          "not recorded" if not o["in_metadata"] else ("none" if o["leader"] == -1 else str(o["leader"])),
                          str(o["position"] if o["position"] is not None else "-"), offsets, held, style=style)
        console.print(table)
    for o in objs:
        if o["type"] == "election_loss":
            style = "red" if o["lost_offsets"] else "green"
            count = "unknown" if o["lost_offsets"] is None else str(o["lost_offsets"])
            below = "" if o["below_high_watermark"] is None else f", {o['below_high_watermark']} below the old high watermark"
            console.print(f"[{style}]unclean election[/{style}] {escape(o['partition'])} at {o['position']} "
                          f"(epoch {o['leader_epoch']}, {o['old_leader']}→{o['new_leader']}): {count} offsets lost"
                          f"{below}. {escape(o['note'])}")
    for z in zombies:
        console.print(f"[red]zombie epoch[/red] {escape(z['partition'])} epoch {z['epoch']} held by "
                      f"{', '.join(str(b) for b in z['replicas'])} but the metadata never granted it to a leader")
    if findings:
        console.print()
        for f in findings:
            style = "red" if f.is_error else "yellow"
            console.print(f"[{style}]{f.severity}[/{style}] {escape(f.kind)} {escape(f.path)}:{f.position}: "
                          f"{escape(f.message)}")
