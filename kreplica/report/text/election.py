"""The text report of ``kreplica plan-elect``: a verdict line, the election table (offline rows
first, then unclean ones, then the rest in the controller's order), each candidate ranking, and
the what-if sweep's combinations by impact; rendered from :mod:`kreplica.report.schemas.election`'s
objects."""

from __future__ import annotations

from kreplica.report.text.numbers import count, number


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

    from kreplica.report.text.layout import Column, print_table, print_wrapped

    n_off, n_unclean, n_elected = summary["offline"], summary["unclean"], summary["elected"]
    elected = ("none elects a leader" if n_elected == 0 else
               f"{number(n_elected)} {'elects' if n_elected == 1 else 'elect'} a leader")
    head = (f"{summary['rules']} controller rules, Kafka {summary['kafka_version']}: "
            f"{count(summary['elections'], 'election')}, {elected}")
    if n_off or n_unclean:
        offline = ("none leaves its partition offline" if n_off == 0 else
                   f"{number(n_off)} {'leaves its' if n_off == 1 else 'leave their'} partition offline")
        unclean = "none unclean" if n_unclean == 0 else f"{number(n_unclean)} unclean"
        print_wrapped(console, f"[bold red]{escape(head)}; {offline}, {unclean}[/]")
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
                               f"(last epoch, log end offset); best candidate: "
                               + (f"[bold]broker {r['best']}[/]" if r["best"] is not None else "none")
                               + ("" if r['planned_leader'] == r['best'] else
                                  ", the plan elects no leader" if r['planned_leader'] < 0 else
                                  f", the plan elects broker {r['planned_leader']}"))
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

    from kreplica.report.text.layout import Column, Units, print_table, print_wrapped

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
