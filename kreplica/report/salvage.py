"""Output files of ``truncate-plan --export``: what a truncation would discard, so it can be
re-produced — the batches' exact bytes as a valid segment file (CRCs intact; ``kreplica
inspect-log`` reads it back) and the records as ndjson with payloads."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from kreplica.formats import default_records, legacy_records
from kreplica.formats.errors import FormatError
from kreplica.formats.naming import segment_file_name
from kreplica.formats.segment import iter_segment
from kreplica.formats.batch import RecordBatch
from kreplica.formats.mapped import open_buffer
from kreplica.model.replica import BatchRef


def export_batches(batches: list[BatchRef], directory: Path, partition: str,
                   write_record: Callable[[object, str], None]) -> tuple[Path, int]:
    """Copy ``batches`` (in offset order) into ``directory/partition/<first offset>.log`` and
    pass every record to ``write_record(record, segment_path)``; returns (segment path, records)."""
    ordered = sorted(batches, key=lambda b: (b.base_offset, b.position))
    out_dir = directory / partition
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / segment_file_name(ordered[0].base_offset)
    count = 0
    by_segment: dict[str, set[int]] = {}
    for b in ordered:
        by_segment.setdefault(b.segment, set()).add(b.position)
    with open(out, "wb") as fh:
        for seg in sorted(by_segment, key=lambda s: min(b.base_offset for b in ordered if b.segment == s)):
            wanted = by_segment[seg]
            with open_buffer(seg) as buf:
                for ev in iter_segment(buf, path=seg):
                    if not isinstance(ev, RecordBatch) or ev.position not in wanted:
                        continue
                    fh.write(bytes(buf[ev.position:ev.end]))
                    reader = legacy_records.iter_records if ev.magic < 2 else default_records.iter_records
                    try:
                        for record in reader(buf, ev):
                            write_record(record, str(out))
                            count += 1
                    except FormatError:
                        pass
    os.chmod(out, 0o644)
    return out, count
