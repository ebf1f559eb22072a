"""The text of ``fleet scan`` (one line: what was scanned, and its findings) and of ``fleet
analyze`` (the partitions at risk, worst first, and the totals), rendered from the objects of
:mod:`kreplica.report.schemas.fleet`."""

from __future__ import annotations

from rich.console import Console

from kreplica.report.text.layout import Column, Units, print_table, print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


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
