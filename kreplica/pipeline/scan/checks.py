"""``fleet scan``, stage 3: the checks across segments. Offsets or epochs going backwards across
a segment boundary are found by :func:`~kreplica.model.log.batch_order.check_batch` only with the
context the segments before leave. From the stage 2 summaries alone the driver finds the segments
whose findings that context would change (damaged evidence, so none in a healthy fleet,
:func:`segments_to_recheck`), and only those are checked again, from their ``batches`` rows
(:func:`recheck_segments`); every other in-segment check finding is published as it stands
(:func:`publish_checks`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow.parquet as pq

from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log.batch_order import PartitionContext, check_batch
from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.tables.parquet import ROW_GROUP, PartWriters
from kreplica.pipeline.scan.work import SegmentWalk


def _unchanged_by(before: PartitionContext, walk: SegmentWalk) -> bool:
    """Whether checking the segment after ``before`` gives exactly the findings it gave alone:
    true when every batch starts above the offsets before it and no epoch is below theirs (then
    the first batch checked takes over the context either way, and every later one sees the same)."""
    return ((before.last_batch is None or walk.min_base_offset is None
             or walk.min_base_offset > before.last_batch.last_offset)
            and (walk.min_epoch is None or walk.min_epoch >= before.max_epoch))


def _after(before: PartitionContext, alone: PartitionContext) -> PartitionContext:
    """The context after a segment, from the one before it and the one it leaves alone: the first
    batch to reach the highest last offset, and the last to carry the highest epoch."""
    last = before.last_batch
    if alone.last_batch is not None and (last is None or alone.last_batch.last_offset > last.last_offset):
        last = alone.last_batch
    if alone.max_epoch_batch is not None and alone.max_epoch >= before.max_epoch:
        return PartitionContext(last, alone.max_epoch, alone.max_epoch_batch)
    return PartitionContext(last, before.max_epoch, before.max_epoch_batch)


def segments_to_recheck(walks: Iterable[SegmentWalk]) -> list[tuple[SegmentWalk, PartitionContext]]:
    """Each replica's segments in log order, with the context the segments before them leave:
    those whose findings the earlier segments would change (none in a healthy log), each with
    the context to check it under."""
    by_replica: dict[tuple, list[SegmentWalk]] = {}
    for w in walks:
        by_replica.setdefault(w.key, []).append(w)
    out = []
    for seq in by_replica.values():
        context = PartitionContext()
        for w in sorted(seq, key=lambda w: w.order):
            if not _unchanged_by(context, w):
                out.append((w, context))
            context = _after(context, w.context)
    return out


def recheck_segments(out: str, part: str, work: list[tuple[SegmentWalk, PartitionContext]]) -> Iterator[tuple]:
    """Stage 3 task, for one stage 2 part: its in-segment check findings kept except those of the
    segments to recheck, which are checked again from their batch rows under the context before
    them; yields ``((file, start), findings, errors)`` per rechecked segment or stretch."""
    root = Path(out)
    redo = {w.files.log for w, _ in work}
    writers = PartWriters(root, f"checks-{part}")
    try:
        checks = root / "_checks" / f"part-{part}.parquet"
        if checks.is_file():
            for rows in pq.ParquetFile(str(checks)).iter_batches(batch_size=ROW_GROUP):
                for row in rows.to_pylist():
                    if row["path"] not in redo:
                        writers["findings"].add(row)
        batches = pq.ParquetFile(str(root / "batches" / f"part-{part}.parquet"))
        for walk, before in work:
            context = PartitionContext(before.last_batch, before.max_epoch, before.max_epoch_batch)
            n = errors = 0
            for row in _row_range(batches, walk.first_row, walk.rows):
                batch = RecordBatch(**tables.batch_fields(row))
                for f in check_batch(batch, walk.files.base_offset, context):
                    writers["findings"].add(tables.finding_row(walk.key, f))
                    n += 1
                    errors += f.is_error
            yield ((walk.files.log, walk.start), n, errors)
    finally:
        writers.close()


def _row_range(parquet: pq.ParquetFile, first: int, count: int) -> Iterator[dict]:
    """Rows ``[first, first + count)`` of a Parquet file, one row group in memory at a time."""
    start = 0
    for i in range(parquet.num_row_groups):
        n = parquet.metadata.row_group(i).num_rows
        if start + n > first and start < first + count:
            group = parquet.read_row_group(i)
            lo = max(first - start, 0)
            yield from group.slice(lo, min(first + count - start, n) - lo).to_pylist()
        start += n


# -- the job -------------------------------------------------------------------------------------


def publish_checks(out: Path, rewritten: set[str]) -> None:
    """The in-segment check findings of every part stage 3 did not rewrite join ``findings``."""
    checks = out / "_checks"
    if checks.is_dir():
        (out / "findings").mkdir(exist_ok=True)
        for file in checks.glob("part-*.parquet"):
            part = file.name[len("part-"):-len(".parquet")]
            if part not in rewritten:
                file.rename(out / "findings" / f"part-checks-{part}.parquet")
        shutil.rmtree(checks)
