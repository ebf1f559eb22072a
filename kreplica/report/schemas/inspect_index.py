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

from kreplica.analysis.inspect.inspect_index import IndexSummary
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import OffsetIndexEntry
from kreplica.formats.log.time_index import TimeIndexEntry
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.findings import finding_object


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
