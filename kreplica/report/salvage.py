"""Output files of ``truncate-plan --export``: what a truncation would discard, so it can be
re-produced — the batches' exact bytes as a valid segment file (CRCs intact; ``kreplica
inspect-log`` reads it back) and the records as ndjson with payloads.

The batches' bytes come from the partition model (:func:`~kreplica.model.partition_log.
iter_batch_contents`, read by position); this module only lays out and writes the output files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.logdir.naming import segment_file_name
from kreplica.model.partition_log import iter_batch_contents
from kreplica.report.inspect_log import record_object
from kreplica.report.output import Payload, dumps
from kreplica.report.payload import encoder


def export_batches(batches: list[RecordBatch], directory: Path, partition: str,
                   write_record: Callable[[object, str], None]) -> tuple[Path, int]:
    """Copy ``batches`` into ``directory/partition/<first offset>.log`` (segments in offset order,
    batches in file order within each) and pass every record to ``write_record(record,
    segment_path)``; returns (segment path, records)."""
    first_of = {}
    for b in batches:
        first_of[b.path] = min(first_of.get(b.path, b.base_offset), b.base_offset)
    ordered = sorted(batches, key=lambda b: (first_of[b.path], b.path, b.position))
    out_dir = directory / partition
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / segment_file_name(min(b.base_offset for b in batches))
    count = 0
    with open(out, "wb") as fh:
        for _, raw, records in iter_batch_contents(ordered):
            fh.write(raw)
            for record in records:
                write_record(record, str(out))
                count += 1
    os.chmod(out, 0o644)
    return out, count


def write_truncation_export(plans, directory: Path, partition: str) -> None:
    """``--export DIR``: per follower that discards anything, ``DIR/<follower>/<partition>.records.ndjson``
    (payloads base64) and the discarded batches as a segment under ``DIR/<follower>/<partition>/``."""
    enc = encoder(Payload.base64)

    def record_line(record, segment: str) -> str:
        return dumps(record_object(record, segment, enc))

    for plan in plans:
        if not plan.discarded:
            continue
        target = directory / plan.follower.replace("/", "_")
        target.mkdir(parents=True, exist_ok=True)
        with open(target / f"{partition}.records.ndjson", "w", encoding="utf-8") as out:
            export_batches(plan.discarded, target, partition, lambda rec, seg: out.write(record_line(rec, seg) + "\n"))
