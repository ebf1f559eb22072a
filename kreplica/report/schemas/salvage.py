"""Output files of ``truncate-plan --output-dir``: what a truncation would discard, so it can be
re-produced — the batches' exact bytes as a valid segment file (CRCs intact; ``kreplica
inspect-log`` reads it back) and the records as ndjson with payloads, each record's ``path`` and
``batch_position`` naming its batch in that exported segment (not in the evidence it came from).

Layout, per follower that discards anything::

    DIR/<follower>/<partition>.records.ndjson
    DIR/<follower>/<partition>/<first offset, 20 digits>.log

The batches' bytes come from the partition model (:func:`~kreplica.model.log.partition_log.
iter_batch_contents`, read by position); this module only lays out and writes the output files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.logdir.naming import segment_base_offset, segment_file_name
from kreplica.model.log.partition_log import iter_batch_contents
from kreplica.report.output.encoding import dumps
from kreplica.report.output.formats import Payload
from kreplica.report.output.payload import encoder
from kreplica.report.schemas.inspect_log import record_object


def export_batches(batches: list[RecordBatch], directory: Path, partition: str,
                   write_record: Callable[[object, str], None]) -> tuple[Path, int]:
    """Copy ``batches`` into ``directory/partition/<first offset>.log`` (segments in offset order,
    batches in file order within each) and pass every record to ``write_record(record,
    segment_path)``, its ``batch_position`` moved to where its batch lies in that file; returns
    (segment path, records)."""
    first_of = {}
    for b in batches:
        first_of[b.path] = min(first_of.get(b.path, b.base_offset), b.base_offset)
    ordered = sorted(batches, key=lambda b: (first_of[b.path], b.path, b.position))
    out_dir = directory / partition
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / segment_file_name(min(b.base_offset for b in batches))
    count = 0
    with open(out, "wb") as fh:
        for batch, raw, records in iter_batch_contents(ordered):
            shift = fh.tell() - batch.position
            fh.write(raw)
            for record in records:
                write_record(record._replace(batch_position=record.batch_position + shift), str(out))
                count += 1
    os.chmod(out, 0o644)
    return out, count


def _follower_dir(directory: Path, follower: str) -> Path:
    return directory / follower.replace("/", "_")


def _records_file(directory: Path, follower: str, partition: str) -> Path:
    return _follower_dir(directory, follower) / f"{partition}.records.ndjson"


def earlier_export_files(directory: Path, followers: Iterable[str], partition: str) -> list[Path]:
    """What an earlier ``--output-dir`` into ``directory`` left for ``partition`` of these
    ``followers``: their records file and the segment files beside it (by name; a new export
    whose first offset differs would not replace them)."""
    found: list[Path] = []
    for follower in followers:
        records = _records_file(directory, follower, partition)
        segments = _follower_dir(directory, follower) / partition
        if records.exists() or records.is_symlink():
            found.append(records)
        if segments.is_dir():
            found += sorted(p for p in segments.iterdir() if segment_base_offset(p.name) is not None)
    return found


def write_truncation_export(plans, directory: Path, partition: str) -> dict[str, tuple[str, ...]]:
    """``--output-dir DIR``: per follower that discards anything, ``DIR/<follower>/<partition>.records.ndjson``
    (payloads base64) and the discarded batches as a segment under ``DIR/<follower>/<partition>/``.
    Returns each follower's files written (none for a follower that discards nothing)."""
    enc = encoder(Payload.base64)

    def record_line(record, segment: str) -> str:
        return dumps(record_object(record, segment, enc))

    written: dict[str, tuple[str, ...]] = {}
    for plan in plans:
        if not plan.discarded:
            written[plan.follower] = ()
            continue
        records_file = _records_file(directory, plan.follower, partition)
        records_file.parent.mkdir(parents=True, exist_ok=True)
        with open(records_file, "w", encoding="utf-8") as out:
            segment, _ = export_batches(plan.discarded, records_file.parent, partition,
                                        lambda rec, seg: out.write(record_line(rec, seg) + "\n"))
        written[plan.follower] = (str(records_file), str(segment))
    return written
