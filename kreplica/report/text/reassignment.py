"""The text report of ``kreplica plan-reassign``: a plan's verdict line, the brokers before and
after, the first moves (:data:`TEXT_MOVES`) and transition tables (:data:`TEXT_TRANSITIONS`), the
throttles, the files written and the warnings; or a verify's statuses; rendered from the objects
of :mod:`kreplica.report.schemas.reassignment`, fitted to the console's width."""

from __future__ import annotations

from collections.abc import Sequence

from kreplica.report.text.numbers import count, number


#: text output shows this many moves and transition tables; machine output has them all
TEXT_MOVES = 40
TEXT_TRANSITIONS = 2


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, div in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def render_plan(objs: Sequence[dict], console) -> None:
    """The plan for people: a verdict line, the brokers before and after, the first moves, the first
    transition tables, the throttles and the warnings, fitted to the console's width."""
    from rich.markup import escape

    from kreplica.report.text.layout import Column, print_table, print_wrapped

    plan = next((o for o in objs if o["type"] == "plan"), None)
    if plan is None:
        return render_verify(objs, console)
    ratio = plan["ratio_to_lower_bound"]
    print_wrapped(console,
        f"[bold]{plan['action']}[/]: {count(plan['moves'], 'move')} in {count(plan['partitions_changed'], 'partition')}"
        + (f", {_bytes(plan['bytes_moved'])}" if plan["bytes_moved"] is not None else "")
        + f"; lower bound {number(plan['lower_bound'])}"
        + (f" (ratio {ratio:.2f})" if ratio is not None else "")
        + f"; {count(plan['leader_changes'], 'preferred-leader change')}; Kafka's --generate would move "
        + (number(plan["kafka_generate"]["moves"]) if plan["kafka_generate"]["moves"] is not None else "-"))
    print_wrapped(console,
        f"replica spread {plan['replica_spread']['before']} -> {plan['replica_spread']['after']}, "
        f"leader spread {plan['leader_spread']['before']} -> {plan['leader_spread']['after']}, "
        f"rack violations {plan['rack_violations']['before']} -> {plan['rack_violations']['after']}"
        + (f", disk max/mean {plan['disk_max_over_mean']['before']} -> {plan['disk_max_over_mean']['after']}"
           if plan["disk_max_over_mean"]["after"] is not None else ""))
    rows = [[str(b["broker"]) + ("" if b["target"] else " (leaves)"), escape(b["rack"] or "-"),
             f"{number(b['replicas_before'])} -> {number(b['replicas_after'])}",
             f"{number(b['leaders_before'])} -> {number(b['leaders_after'])}",
             f"{_bytes(b['bytes_before'])} -> {_bytes(b['bytes_after'])}",
             number(b["replicas_in"]), number(b["replicas_out"])] for b in plan["brokers"]]
    print_table(console, [Column("broker", wrap=True), Column("rack", 3), Column("replicas", 6), Column("leaders", 5),
                          Column("bytes", 4), Column("in", 2), Column("out", 2)], rows,
                title="brokers (before -> after)")
    moves = [o for o in objs if o["type"] == "move"]
    if moves:
        rows = [[escape(f"{m['topic']}-{m['partition']}"), str(m["from"] if m["from"] is not None else "-"),
                 str(m["to"] if m["to"] is not None else "-"), m["reason"], _bytes(m["bytes"]), str(m["phase"])]
                for m in moves[:TEXT_MOVES]]
        print_table(console, [Column("partition"), Column("from", 5), Column("to", 5), Column("reason", 3),
                              Column("bytes", 2), Column("phase", 1)], rows, title=f"moves ({number(len(moves))})")
        if len(moves) > TEXT_MOVES:
            print_wrapped(console, f"... {count(len(moves) - TEXT_MOVES, 'more move')} (use --format ndjson for all)")
    tables = [o for o in objs if o["type"] == "transitions"]
    for t in tables[:TEXT_TRANSITIONS]:
        rows = [[r["step"], " / ".join(",".join(map(str, x)) or "-" for x in (r["replicas"], r["adding"], r["removing"])),
                 str(r["leader"]), ",".join(map(str, r["isr"])), _moved(r["leader_epoch"], r["leader_epoch_delta"]),
                 _moved(r["version"], r["version_delta"])]
                for r in t["rows"]]
        print_table(console, [Column("step"), Column("replicas / adding / removing", 5, wrap=True),
                              Column("leader", 4), Column("isr", 4), Column("leader epoch", 2, wrap=True),
                              Column("version", 1)], rows,
                    title=escape(f"{t['topic']}-{t['partition']}: the {t['controller']} controller's steps"))
        for r in t["rows"]:
            print_wrapped(console, f"  {escape(r['step'])}: {escape(r['note'])}", 4)
    if tables:
        print_wrapped(console, "leader epoch and version: the partition's, +N the writes since the start "
                               "(version: ZooKeeper's state znode version, KRaft's partition epoch)"
                      + (f"; the steps of {count(len(tables) - TEXT_TRANSITIONS, 'more partition')}: "
                         "--format ndjson" if len(tables) > TEXT_TRANSITIONS else ""))
    for th in [o for o in objs if o["type"] == "throttle"]:
        secs = th["estimated_seconds"]
        print_wrapped(console, f"phase {th['phase']} throttle {number(th['rate'])} B/s on brokers {','.join(th['brokers'])}"
                               + (f", at least {secs:,.0f} s" if secs is not None else ""))
    phased = len(plan["phases"]) > 1
    for p in plan["phases"]:
        if phased:
            print_wrapped(console, f"phase {p['phase']}: {count(p['partitions'], 'partition')}, "
                                   f"{count(p['moves'], 'move')}, {_bytes(p['bytes'])}"
                                   + (f" -> {escape(p['file'])}" if p["file"] else "") + _kafka_throttle(p["throttle"]))
    for f in plan["files"]:
        executed = not phased and f == plan["files"][0]   # proposal.json is the one phase's file
        print_wrapped(console, f"wrote {escape(f)}"
                               + (_kafka_throttle(plan["phases"][0]["throttle"]) if executed else ""))
    for w in plan["warnings"]:
        print_wrapped(console, f"[yellow]warning:[/] {escape(w)}")
    if not plan["moves"] and not plan["leader_changes"]:
        print_wrapped(console, "[green]nothing to move[/]: the assignment already meets the goal")
    elif not plan["files"]:
        print_wrapped(console, f"[bold]{count(plan['moves'], 'move')} planned, nothing written[/]: --output-dir DIR "
                               "writes the JSON kafka-reassign-partitions.sh --execute takes")


def _moved(absolute: int | None, delta: int) -> str:
    """A leader epoch or version after a step: its value and the writes since the start."""
    return f"+{delta}" if absolute is None else f"{absolute} (+{delta})"


def _kafka_throttle(rate: int | None) -> str:
    """What to give Kafka's tool with a phase's file: its ``--throttle`` is in bytes/s."""
    return "" if rate is None else f" (kafka-reassign-partitions.sh --execute --throttle {rate})"


def render_verify(objs: Sequence[dict], console) -> None:
    from rich.markup import escape

    from kreplica.report.text.layout import Column, Units, print_table, print_wrapped

    summary = next(o for o in objs if o["type"] == "verify")
    print_wrapped(console, f"[bold]verify[/]: {number(summary['in_progress'])} in progress, "
                           f"{number(summary['completed'])} completed, {number(summary['differs'])} differ, "
                           f"{count(summary['throttles_left'], 'throttle config')} still set")
    statuses = [o for o in objs if o["type"] == "reassignment_status"]
    if statuses:
        rows = [[escape(f"{s['topic']}-{s['partition']}"), s["status"],
                 *(Units(tuple(map(str, s[k] or [])), ",")
                   for k in ("replicas", "adding", "removing", "target", "isr", "lagging"))] for s in statuses]
        # replicas are target and removing together: the first to go on a narrow terminal
        print_table(console, [Column("partition"), Column("status", 7), Column("replicas", 2), Column("adding", 5),
                              Column("removing", 5), Column("target", 3), Column("isr", 4), Column("lagging", 6)],
                    rows)
    for t in (o for o in objs if o["type"] == "throttle_left"):
        print_wrapped(console, escape(f"{t['entity_type']} {t['entity']}: {t['config']}={t['value']}"))
