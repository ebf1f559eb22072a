"""The text report of ``kreplica cluster-state``: a cluster overview for people, problems first.

Rendered from the very object :func:`~kreplica.report.cluster_state.cluster_state_to_dict`
builds, so the text can never say something the JSON does not. Order: a verdict line, the
non-empty health lists (offline and under-min-ISR first, in red: they decide the exit status),
pending admin work, findings, then the controller, the brokers and one table row per partition
(partitions with a problem marked).
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from kreplica.formats.findings import Finding
from kreplica.report.safe_text import escape

#: Health lists in the order a reader should see them; the first two set the exit status.
HEALTH_ORDER = ("offline", "under_min_isr", "no_leader", "leader_not_alive", "live_isr_empty",
                "under_replicated", "reassigning", "preferred_leader_not_leader")
SEVERE = frozenset({"offline", "under_min_isr"})
#: Short names for the partitions table (the lists above it use the full names).
SHORT = {"offline": "OFFLINE", "under_min_isr": "MIN-ISR", "no_leader": "no-leader",
         "leader_not_alive": "leader-dead", "live_isr_empty": "isr-empty", "under_replicated": "urp",
         "reassigning": "moving", "preferred_leader_not_leader": "not-preferred"}


def _ids(values) -> str:
    return ",".join(str(v) for v in values) if values else "-"


def _names(values: list[str], limit: int = 20) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", … ({len(values) - limit} more)" if len(values) > limit else "")


def render_text(obj: dict, findings: tuple[Finding, ...] | list[Finding], console: Console) -> None:
    """Print the ``cluster_state`` object ``obj`` and the findings for people."""
    health = obj["health"]
    position = ", ".join(f"{k} {v:#x}" if k == "zxid" else f"{k} {v}" for k, v in obj["position"].items())
    partitions = sum(len(t["partitions"]) for t in obj["topics"])
    problems = bool(health["offline"] or health["under_min_isr"])
    verdict = "[red]PROBLEMS[/red]" if problems else "[green]OK[/green]"
    cluster = "cluster" if obj["cluster_id"] is None else f"cluster {escape(str(obj['cluster_id']))}"
    console.print(f"{verdict} {cluster} ({obj['source_kind']}, {position}): "
                  f"{len(obj['brokers'])} brokers, {len(obj['topics'])} topics, {partitions} partitions; "
                  f"{len(health['offline'])} offline, {len(health['under_min_isr'])} under min ISR")

    listed = [name for name in HEALTH_ORDER if health.get(name)]
    listed += [name for name in health if name not in HEALTH_ORDER and health[name]]
    if listed:
        console.print()
        for name in listed:
            style = "red" if name in SEVERE else "yellow"
            console.print(f"[{style}]{name}[/{style}] ({len(health[name])}): {escape(_names(health[name]))}")

    pending = {k: v for k, v in obj["pending"].items() if v}
    if pending:
        console.print()
        for name, items in pending.items():
            shown = [i if isinstance(i, str) else ", ".join(f"{k}={v}" for k, v in i.items()) for i in items]
            console.print(f"pending {name} ({len(items)}): {escape('; '.join(shown[:10]))}"
                          + (" …" if len(shown) > 10 else ""))

    if findings:
        console.print()
        for f in findings:
            style = "red" if f.is_error else "yellow"
            console.print(f"[{style}]{f.severity}[/{style}] {escape(f.kind)} {escape(f.path)}:{f.position}: "
                          f"{escape(f.message)}")

    console.print()
    c = obj["controller"]
    console.print(f"controller: broker {c['broker_id'] if c['broker_id'] is not None else '-'}, "
                  f"epoch {c['epoch'] if c['epoch'] is not None else '-'}")

    brokers = Table(box=box.SIMPLE, title="brokers", title_justify="left", pad_edge=False)
    for col in ("id", "alive", "rack", "broker epoch"):
        brokers.add_column(col, no_wrap=True)
    brokers.add_column("endpoints", overflow="fold")
    for b in obj["brokers"]:
        alive = "yes" if b["alive"] else "[red]no[/red]"
        brokers.add_row(str(b["id"]), alive, escape(b["rack"] or "-"), str(b["broker_epoch"]),
                        escape(" ".join(b["endpoints"])))
    console.print(brokers)

    flagged: dict[str, list[str]] = {}
    for name in HEALTH_ORDER:
        for p in health.get(name, ()):
            flagged.setdefault(p, []).append(name)
    parts = Table(box=box.SIMPLE, title="partitions", title_justify="left", pad_edge=False)
    for col in ("partition", "leader", "epoch", "replicas", "isr", "reassign", "version"):
        parts.add_column(col, no_wrap=True)
    parts.add_column("problems", overflow="fold", min_width=14)
    for t in obj["topics"]:
        for p in t["partitions"]:
            name = f"{t['name']}-{p['partition']}"
            issues = flagged.get(name, [])
            style = "red" if SEVERE.intersection(issues) else ("yellow" if issues else "")
            moving = " ".join([f"+{_ids(p['adding_replicas'])}"] * bool(p["adding_replicas"])
                              + [f"-{_ids(p['removing_replicas'])}"] * bool(p["removing_replicas"])) or "-"
            parts.add_row(escape(name), str(p["leader"]), str(p["leader_epoch"]), _ids(p["replicas"]),
                          _ids(p["isr"]), moving, "-" if p["version"] is None else str(p["version"]),
                          " ".join(SHORT.get(i, i) for i in issues) or "-", style=style)
    console.print(parts)
