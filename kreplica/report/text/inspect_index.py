"""The text report of ``inspect-index``: a verdict line per index file, its findings and (unless
``--verify-only``) its entries."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.inspect.inspect_index import IndexSummary
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import OffsetIndexEntry
from kreplica.formats.log.time_index import TimeIndexEntry
from kreplica.formats.log.txn_index import AbortedTxn
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


def render_text(items: Iterable[tuple[str, object]], console: Console, *, entries: bool) -> int:
    errors = 0
    for path, item in items:
        if isinstance(item, Finding):
            errors += item.is_error
            style = "bold red" if item.is_error else ("dim" if item.is_info else "yellow")
            print_wrapped(console, f"  [{style}]{item.severity.upper()} {item.kind}[/] {escape(item.message)}", 4)
        elif isinstance(item, IndexSummary):
            sanity = "" if item.sanity is None else (
                "; Kafka's sanityCheck passes" if item.sanity.error is None else f"; Kafka's sanityCheck: {item.sanity.error}")
            pad = f", {count(item.padding_slots, 'zero slot')} of preallocation" if item.padding_slots else ""
            status = "[bold red]PROBLEMS[/]" if item.problems else "[green]OK[/]"
            checked = "checked against " + escape(item.segment) if item.verified else "not verified (no segment)"
            print_wrapped(console, f"{status} {escape(item.path)}: {count(item.entries, f'{item.index}-index entry')}"
                                   f"{pad}; {checked}{escape(sanity)}")
        elif entries:
            if isinstance(item, OffsetIndexEntry):
                console.print(f"  [{item.slot}] offset {item.offset} → byte {number(item.position)}", highlight=False)
            elif isinstance(item, TimeIndexEntry):
                console.print(f"  [{item.slot}] timestamp {item.timestamp} → offset {item.offset}", highlight=False)
            elif isinstance(item, AbortedTxn):
                console.print(f"  producer {item.producer_id}: aborted {item.first_offset}-{item.last_offset} "
                              f"(LSO {item.last_stable_offset})", highlight=False)
    return errors
