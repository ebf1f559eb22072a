"""The text report of ``kreplica cluster-state``: a cluster overview for people, problems first.

Rendered from the very object :func:`~kreplica.report.schemas.cluster_state.cluster_state_to_dict`
builds, so the text can never say something the JSON does not. Order: a verdict line, the
non-empty health lists (offline and under-min-ISR first, in red: they decide the exit status),
pending admin work, findings, then the controller, the rest of KRaft's metadata image in a few
lines (each only when it holds something: features, registered controllers, then ACLs, SCRAM
users, delegation tokens and client quotas counted, with what stands out named: DENY ACLs and
ACLs for every principal, the users, the tokens' owners; the next producer id), the brokers and
one table row per partition (partitions with a problem marked; the reassign column only while
something is being reassigned).
"""

from __future__ import annotations

from rich import box
from rich.console import Console

from kreplica.formats.findings import Finding
from kreplica.report.text.findings import print_findings
from kreplica.report.text.layout import Column, Units, print_table, print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape

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
    return shown + (f", … ({number(len(values) - limit)} more)" if len(values) > limit else "")


def render_text(obj: dict, findings: tuple[Finding, ...] | list[Finding], console: Console) -> None:
    """Print the ``cluster_state`` object ``obj`` and the findings for people, fitted to the
    console's width (the partitions table leaves out its least telling columns on a narrow one)."""
    health = obj["health"]
    position = ", ".join(f"{k} {v:#x}" if k == "zxid" else f"{k} {v}" for k, v in obj["position"].items())
    partitions = sum(len(t["partitions"]) for t in obj["topics"])
    problems = bool(health["offline"] or health["under_min_isr"])
    verdict = "[red]PROBLEMS[/red]" if problems else "[green]OK[/green]"
    cluster = "cluster" if obj["cluster_id"] is None else f"cluster {escape(str(obj['cluster_id']))}"
    print_wrapped(console, f"{verdict} {cluster} ({obj['source_kind']}, {position}): "
                           f"{count(len(obj['brokers']), 'broker')}, {count(len(obj['topics']), 'topic')}, "
                           f"{count(partitions, 'partition')}; {number(len(health['offline']))} offline, "
                           f"{number(len(health['under_min_isr']))} under min ISR")

    listed = [name for name in HEALTH_ORDER if health.get(name)]
    listed += [name for name in health if name not in HEALTH_ORDER and health[name]]
    if listed:
        console.print()
        for name in listed:
            style = "red" if name in SEVERE else "yellow"
            print_wrapped(console, f"[{style}]{name}[/{style}] ({number(len(health[name]))}): "
                                   f"{escape(_names(health[name]))}")

    pending = {k: v for k, v in obj["pending"].items() if v}
    if pending:
        console.print()
        for name, items in pending.items():
            shown = [i if isinstance(i, str) else ", ".join(f"{k}={v}" for k, v in i.items()) for i in items]
            print_wrapped(console, f"pending {name} ({number(len(items))}): {escape('; '.join(shown[:10]))}"
                                   + (" …" if len(shown) > 10 else ""))

    print_findings(findings, console)

    console.print()
    c = obj["controller"]
    console.print(f"controller: broker {c['broker_id'] if c['broker_id'] is not None else '-'}, "
                  f"epoch {c['epoch'] if c['epoch'] is not None else '-'}")

    _print_metadata(obj, console)

    brokers = [[str(b["id"]), "yes" if b["alive"] else "[red]no[/red]", escape(b["rack"] or "-"),
                str(b["broker_epoch"]), Units(tuple(escape(e) for e in b["endpoints"]), " ")]
               for b in obj["brokers"]]
    print_table(console, [Column("id"), Column("alive", 3), Column("rack", 2), Column("broker epoch", 1, wrap=True),
                          Column("endpoints", 4)],
                brokers, box=box.SIMPLE, title="brokers", title_justify="left", pad_edge=False)

    flagged: dict[str, list[str]] = {}
    for name in HEALTH_ORDER:
        for p in health.get(name, ()):
            flagged.setdefault(p, []).append(name)
    rows, styles = [], []
    for t in obj["topics"]:
        for p in t["partitions"]:
            name = f"{t['name']}-{p['partition']}"
            issues = flagged.get(name, [])
            moving = " ".join([f"+{_ids(p['adding_replicas'])}"] * bool(p["adding_replicas"])
                              + [f"-{_ids(p['removing_replicas'])}"] * bool(p["removing_replicas"])) or "-"
            rows.append([escape(name), str(p["leader"]), str(p["leader_epoch"]), _ids(p["replicas"]), _ids(p["isr"]),
                         moving, "-" if p["version"] is None else str(p["version"]),
                         Units(tuple(SHORT.get(i, i) for i in issues), " ")])
            styles.append("red" if SEVERE.intersection(issues) else ("yellow" if issues else ""))
    columns = [Column("partition"), Column("leader", 6), Column("epoch", 3), Column("replicas", 5), Column("isr", 4),
               Column("reassign", 2), Column("version", 1), Column("problems", 7)]
    if all(row[5] == "-" for row in rows):   # nothing is being reassigned: the column says nothing
        columns.pop(5)
        rows = [row[:5] + row[6:] for row in rows]
    print_table(console, columns, rows, styles, box=box.SIMPLE, title="partitions", title_justify="left",
                pad_edge=False)


def _print_metadata(obj: dict, console: Console) -> None:
    """The lines of KRaft's other images (module docstring); nothing for an empty part."""
    lines = []
    if obj.get("features"):
        lines.append("features: " + ", ".join(f"{k}={v}" for k, v in obj["features"].items()))
    if obj.get("controllers"):
        lines.append(f"registered controllers ({number(len(obj['controllers']))}): "
                     + ", ".join(str(c["id"]) for c in obj["controllers"]))
    acls = obj.get("acls") or []
    if acls:
        deny = sum(a["permission_type"] == "DENY" for a in acls)
        anyone = sum(a["principal"] == "User:*" for a in acls)
        notes = [f"{number(deny)} DENY"] * bool(deny) + [f"{number(anyone)} for User:*"] * bool(anyone)
        lines.append(count(len(acls), "ACL") + (f" ({', '.join(notes)})" if notes else ""))
    users = obj.get("scram_users") or []
    if users:
        lines.append(f"SCRAM users ({number(len(users))}): " + _names([u["name"] for u in users], 10))
    tokens = obj.get("delegation_tokens") or []
    if tokens:
        owners = sorted({t["owner"] for t in tokens})
        lines.append(count(len(tokens), "delegation token") + " owned by " + _names(owners, 10))
    quotas = obj.get("client_quotas") or []
    if quotas:
        lines.append(count(len(quotas), "client quota entity", "client quota entities"))
    if obj.get("producer_ids") is not None:
        p = obj["producer_ids"]
        lines.append(f"next producer id {p['next_producer_id']}")
    for line in lines:
        print_wrapped(console, escape(line))
