"""``fleet scan``, stage 2: one task per group of segment files (or stretches of a large one,
:class:`~kreplica.pipeline.scan.work.Stretch`), each walked once over mmap
(:class:`~kreplica.model.log.walk.BatchWalk`): batch headers, control markers, the
walker's findings, the checks across batches within the segment and, with ``--records``, one row per record → ``batches``, ``markers``,
``findings``, ``records``, and a :class:`~kreplica.pipeline.scan.work.SegmentWalk` summary per
segment to the driver. The in-segment check findings go to a table of their own (``_checks``),
which stage 3 completes into ``findings``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from contextlib import nullcontext
from pathlib import Path

import xxhash

from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.log.segment import find_next_batch, records_finding
from kreplica.formats.mapped import Buffer, open_buffer
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.log.walk import BatchWalk, WalkedBatch
from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.tables.parquet import ROW_GROUP, PartWriters
from kreplica.pipeline.scan.work import ScanTotals, SegmentWalk, Stretch


def scan_segments(out: str, records: bool, payloads: bool, index: int,
                  stretches: Iterable[Stretch | tuple[Stretch, Buffer]]) -> Iterator[SegmentWalk]:
    """Stage 2 task: walk each segment or stretch once, write its rows, yield its summary. A
    stretch of a split segment writes part files of its own, dropped if the split fails. A
    ``(stretch, buffer)`` pair is a whole segment already in memory (fetched through Spark).

    The part files are named after the task's first stretch, so the names differ between tasks
    and jobs (the walk again of a segment whose split failed) and a task run again (a retry,
    Spark recomputing lost work) writes the same files."""
    items = iter(stretches)
    first = next(items, None)
    if first is None:
        return
    part = f"segments-{index:05d}-{_part_tag(first[0] if isinstance(first, tuple) else first)}"
    writers = PartWriters(Path(out), part)
    try:
        for n, item in enumerate(chain((first,), items)):
            stretch, buf = item if isinstance(item, tuple) else (item, None)
            if stretch.chunks == 1:
                yield _scan_segment(writers, part, stretch, records, payloads, buf)
                continue
            own_part = f"{part}-s{n:05d}"
            own = PartWriters(Path(out), own_part)
            try:
                yield _scan_segment(own, own_part, stretch, records, payloads)
            finally:
                own.close()
    finally:
        writers.close()


def _part_tag(stretch: Stretch) -> str:
    """Eight hex digits naming a stretch (a path that is not UTF-8 hashes as its bytes)."""
    name = f"{stretch.files.log}\0{stretch.chunk}\0{stretch.chunks}"
    return xxhash.xxh64_hexdigest(name.encode("utf-8", "surrogateescape"))[:8]


def _scan_segment(writers: PartWriters, part: str, stretch: Stretch, records: bool, payloads: bool,
                  fetched: Buffer | None = None) -> SegmentWalk:
    key, files = stretch.key, stretch.files
    batches, checks = writers["batches"], writers["_checks"]
    first_row = batches.rows_added
    n_batches = n_records = n_findings = n_errors = n_checks = n_check_errors = 0
    first_valid = first_epoch = None  # the first batch check_batch reads, and the first with an epoch
    min_base = min_epoch = None       # below those only where check_batch found a regression
    context = PartitionContext()
    base = files.base_offset
    run: list[RecordBatch] = []
    with open_buffer(files.log) if fetched is None else nullcontext(fetched) as buf:
        start = stop = None
        # the search skips the holes of a sparse segment and hands back the pages it passed (``buf``
        # as the mapping), as the walk does
        if stretch.chunk == 0:
            start = 0
        elif stretch.begin < len(buf):
            start = find_next_batch(buf, stretch.begin, len(buf), buf)
        if stretch.until is not None and stretch.until < len(buf):
            stop = find_next_batch(buf, stretch.until, len(buf), buf)
        # NOTE: the per-batch path of a fleet scan; bench/bench_fleet.py has the figures
        walk = BatchWalk(buf, files.log, base, context, start=len(buf) if start is None else start, stop=stop)
        for item in walk:
            if type(item) is WalkedBatch:
                ev, found, marker = item
                run.append(ev)
                if len(run) >= ROW_GROUP:
                    batches.add_run(key, run)
                    n_batches += len(run)
                    run = []
                if ev.crc_valid is not False:
                    if first_valid is None:
                        first_valid = ev
                    if first_epoch is None and ev.magic >= 2 and ev.partition_leader_epoch >= 0:
                        first_epoch = ev
                    if found:  # offsets or epochs going backwards: the only way below the first
                        min_base = ev.base_offset if min_base is None else min(min_base, ev.base_offset)
                        if ev.magic >= 2 and ev.partition_leader_epoch >= 0:
                            epoch = ev.partition_leader_epoch
                            min_epoch = epoch if min_epoch is None else min(min_epoch, epoch)
                        for f in found:
                            checks.add(tables.finding_row(key, f))
                            n_checks += 1
                            n_check_errors += f.is_error
                if marker is not None:
                    writers["markers"].add(tables.marker_row(key, files.log, marker))
                if records:
                    for row in _records(key, buf, ev, payloads):
                        if isinstance(row, Finding):
                            writers["findings"].add(tables.finding_row(key, row))
                            n_findings += 1
                            n_errors += row.is_error
                        else:
                            writers["records"].add(row)
                            n_records += 1
            else:
                writers["findings"].add(tables.finding_row(key, item))
                n_findings += 1
                n_errors += item.is_error
    end = walk.end
    if not records:
        n_records = walk.records
    if run:
        batches.add_run(key, run)
        n_batches += len(run)
    if first_valid is not None:
        min_base = first_valid.base_offset if min_base is None else min(min_base, first_valid.base_offset)
    if first_epoch is not None:
        epoch = first_epoch.partition_leader_epoch
        min_epoch = epoch if min_epoch is None else min(min_epoch, epoch)
    first = stretch.chunk == 0
    totals = ScanTotals(segments=int(first), bytes=end.file_size if first else 0, batches=n_batches,
                        records=n_records, findings=n_findings + n_checks, errors=n_errors + n_check_errors)
    return SegmentWalk(stretch, start, stop, end.file_size, end.scanned_bytes, end.valid_bytes, end.stopped_by,
                       stretch.txn_index_below_base if first else False, n_findings, n_checks, n_check_errors,
                       part, first_row, batches.rows_added - first_row, min_base, min_epoch, context, totals)


def _records(key: tuple, buf, batch: RecordBatch, payloads: bool) -> Iterator[tuple | Finding]:
    """Record rows of one batch (offset, timestamp, sizes and XXH64 of key and value), then a
    finding where Kafka's reader would throw — as ``inspect-log --records`` reports it."""
    reader = legacy_records.iter_records if batch.magic < 2 else default_records.iter_records
    digest = xxhash.xxh64_intdigest
    try:
        for r in reader(buf, batch):
            k, v = r.key, r.value
            yield (*key, batch.path, r.batch_position, r.offset, r.timestamp,
                   -1 if k is None else len(k), -1 if v is None else len(v),
                   None if k is None else digest(k), None if v is None else digest(v),
                   bytes(k) if payloads and k is not None else None, bytes(v) if payloads and v is not None else None)
    except FormatError as exc:
        yield records_finding(batch, exc)

