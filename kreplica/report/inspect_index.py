"""The ``inspect-index`` output.

    index_entry    {type, path, index: "offset", slot, offset, position}
                   {type, path, index: "time", slot, timestamp, offset}
                   {type, path, index: "txn", position, version, producer_id, first_offset, last_offset,
                    last_stable_offset}
    finding        as for inspect-log
    index_summary  {type, path, index, segment, entries, slots, padding_slots, sanity_check, verified, problems}

``sanity_check`` is null when Kafka's own ``sanityCheck`` passes, else its message.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.inspect.inspect_index import IndexSummary
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import OffsetIndexEntry
from kreplica.formats.log.time_index import TimeIndexEntry
from kreplica.formats.log.txn_index import AbortedTxn
from kreplica.report.inspect_log import finding_object
from kreplica.report.numbers import count, number
from kreplica.report.output import Emitter
from kreplica.report.safe_text import escape
from kreplica.report.text_layout import print_wrapped


def entry_object(item, path: str) -> dict:
    if isinstance(item, OffsetIndexEntry):
        return {"type": "index_entry", "path": path, "index": "offset", "slot": item.slot, "offset": item.offset,
                "position": item.position}
    if isinstance(item, TimeIndexEntry):
        return {"type": "index_entry", "path": path, "index": "time", "slot": item.slot, "timestamp": item.timestamp,
                "offset": item.offset}
    return {"type": "index_entry", "path": path, "index": "txn", "position": item.position, "version": item.version,
            "producer_id": item.producer_id, "first_offset": item.first_offset, "last_offset": item.last_offset,
            "last_stable_offset": item.last_stable_offset}


def summary_object(s: IndexSummary) -> dict:
    return {"type": "index_summary", "path": s.path, "index": s.index, "segment": s.segment, "entries": s.entries,
            "slots": s.slots, "padding_slots": s.padding_slots,
            "sanity_check": None if s.sanity is None else s.sanity.error, "verified": s.verified,
            "problems": s.problems}


def emit(items: Iterable[tuple[str, object]], emitter: Emitter, *, entries: bool) -> int:
    errors = 0
    for path, item in items:
        if isinstance(item, Finding):
            errors += item.is_error
            emitter.emit(finding_object(item))
        elif isinstance(item, IndexSummary):
            emitter.emit(summary_object(item))
        elif entries:
            emitter.emit(entry_object(item, path))
    return errors


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
