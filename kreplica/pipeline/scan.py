"""``fleet scan``: every segment of every replica of a fleet, walked once, into Parquet tables.

Three Spark stages, each task running the same readers a single-partition command runs:

1. one task per log directory: its checkpoints, partition directories and small files
   (``leader-epoch-checkpoint``, ``partition.metadata``) → ``replicas`` rows and the list of
   segment files (a few hundred bytes per file reach the driver; nothing per batch does);
2. one task per group of segment files, balanced by size: each segment walked once over mmap
   (:func:`~kreplica.formats.segment.iter_segment`), batch headers, control markers, the
   walker's findings and, with ``--records``, one row per record → ``batches``, ``markers``,
   ``findings``, ``records`` and per-segment totals;
3. the checks that span batches and segments (:func:`~kreplica.model.batch_order.check_batch`),
   streamed over each replica's batch headers in log order → more ``findings``; then the
   ``segments`` table with its finding counts.

Tasks write their rows straight to Parquet files under the output directory with Arrow, in
bounded row groups, so memory does not grow with segment size and no row passes through the
driver. The output directory must be on a file system the driver and every executor share.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from kreplica.formats import default_records, legacy_records
from kreplica.formats.batch import RecordBatch
from kreplica.formats.control_marker import has_marker, read_control_marker
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import EvidenceError, open_buffer
from kreplica.formats.segment import iter_segment
from kreplica.model.batch_order import PartitionContext, check_batch
from kreplica.model.log_dir import LogDir, SegmentFiles, read_checkpoints, scan_log_dir
from kreplica.model.partition_log import read_partition_files, txn_index_below_base
from kreplica.pipeline import tables
from kreplica.pipeline.layout import FleetLogDir, discover, local_path

ROW_GROUP = 1 << 16
#: The published tables, and the per-segment totals stage 3 completes into ``segments``.
_SCHEMAS = {**tables.TABLES, "_segments_walk": tables.SEGMENTS}


@dataclass(frozen=True, slots=True)
class ScanTotals:
    """What a scan found, summed over tasks (small: one value each)."""

    replicas: int = 0
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    findings: int = 0
    errors: int = 0

    def __add__(self, other: ScanTotals) -> ScanTotals:
        return ScanTotals(*(a + b for a, b in zip(self._values(), other._values())))

    def _values(self) -> tuple[int, ...]:
        return (self.replicas, self.segments, self.bytes, self.batches, self.records, self.findings, self.errors)


class TableWriter:
    """Rows of one table, written as one Parquet file in row groups of :data:`ROW_GROUP` rows."""

    def __init__(self, out: Path, table: str, part: str) -> None:
        self.schema = _SCHEMAS[table]
        self.path = out / table / f"part-{part}.parquet"
        self._rows: list[tuple] = []
        self._writer: pq.ParquetWriter | None = None

    def add(self, row: tuple | dict) -> None:
        if isinstance(row, dict):
            row = tuple(row[name] for name in self.schema.names)
        self._rows.append(row)
        if len(self._rows) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        columns = [pa.array(col, type=field.type) for col, field in zip(zip(*self._rows), self.schema)]
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(str(self.path), self.schema)
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self.schema))
        self._rows.clear()

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()


class _Writers(dict):
    def __init__(self, out: Path, part: str) -> None:
        super().__init__()
        self._out, self._part = out, part

    def __missing__(self, table: str) -> TableWriter:
        writer = self[table] = TableWriter(self._out, table, self._part)
        return writer

    def close(self) -> None:
        for w in self.values():
            w.close()


# -- stage 1: log directories ----------------------------------------------------------------------


def _key(log_dir: FleetLogDir, partition) -> tuple:
    parsed = partition.parsed
    return (log_dir.broker, log_dir.path, parsed.topic if parsed else partition.name,
            parsed.partition if parsed else -1)


def scan_log_dirs(out: str, index: int, log_dirs: Iterable[FleetLogDir]) -> Iterator[tuple]:
    """Stage 1 task: ``replicas`` rows and log-directory findings written; yields one
    ``(key, SegmentFiles, size)`` per segment for stage 2, then the task's totals."""
    writers = _Writers(Path(out), f"logdirs-{index:05d}")
    totals = ScanTotals()
    try:
        for fleet_dir in log_dirs:
            log_dir: LogDir = scan_log_dir(fleet_dir.path)
            cps = read_checkpoints(log_dir)
            dir_key = (fleet_dir.broker, fleet_dir.path, None, None)
            for f in cps.findings:
                writers["findings"].add(tables.finding_row(dir_key, f))
                totals += ScanTotals(findings=1, errors=int(f.is_error))
            for partition in log_dir.partitions:
                key = _key(fleet_dir, partition)
                log = read_partition_files(partition, log_dir, cps)
                writers["replicas"].add(tables.replica_row(key, fleet_dir.broker_source, log))
                for f in log.producer_state.findings:
                    writers["findings"].add(tables.finding_row(key, f))
                    totals += ScanTotals(findings=1, errors=int(f.is_error))
                totals += ScanTotals(replicas=1)
                for files in partition.segments:
                    yield ("segment", key, files, os.path.getsize(files.log))
    finally:
        writers.close()
    yield ("totals", totals)


# -- stage 2: segments ---------------------------------------------------------------------------


def scan_segments(out: str, records: bool, payloads: bool, index: int,
                  segments: Iterable[tuple]) -> Iterator[ScanTotals]:
    """Stage 2 task: walk each ``(key, SegmentFiles, size)`` once and write its rows."""
    writers = _Writers(Path(out), f"segments-{index:05d}-{uuid.uuid4().hex[:8]}")
    totals = ScanTotals()
    try:
        for key, files, _ in segments:
            totals += _scan_segment(writers, key, files, records, payloads)
    finally:
        writers.close()
    yield totals


def _scan_segment(writers: _Writers, key: tuple, files: SegmentFiles, records: bool, payloads: bool) -> ScanTotals:
    batches = writers["batches"]
    n_batches = n_records = n_findings = n_errors = 0
    end = None
    with open_buffer(files.log) as buf:
        # NOTE: the per-batch path of a fleet scan; bench/bench_fleet.py has the figures
        for ev in iter_segment(buf, path=files.log):
            if type(ev) is RecordBatch:
                n_batches += 1
                batches.add(tables.batch_row(key, ev))
                if has_marker(ev):
                    writers["markers"].add(tables.marker_row(key, files.log, read_control_marker(buf, ev)))
                if records:
                    for item in _records(key, buf, ev, payloads):
                        if isinstance(item, Finding):
                            writers["findings"].add(tables.finding_row(key, item))
                            n_findings += 1
                            n_errors += item.is_error
                        else:
                            writers["records"].add(item)
                            n_records += 1
                else:
                    n_records += ev.count if ev.count is not None and ev.count > 0 else (
                        max(ev.last_offset - ev.base_offset + 1, 1) if ev.count is None else 0)
            elif isinstance(ev, Finding):
                writers["findings"].add(tables.finding_row(key, ev))
                n_findings += 1
                n_errors += ev.is_error
            else:
                end = ev
    txn_below = txn_index_below_base(files)
    writers["_segments_walk"].add(tables.segment_row(key, files, end.file_size, end.valid_bytes, end.stopped_by,
                                                     n_findings, txn_below))
    return ScanTotals(segments=1, bytes=end.file_size, batches=n_batches, records=n_records, findings=n_findings,
                      errors=n_errors)


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
        kind = "decompression_error" if "decompress" in exc.reason else "invalid_record"
        yield Finding(kind, batch.path, batch.position,
                      f"batch at byte {batch.position} (offsets {batch.base_offset}-{batch.last_offset}): {exc.reason}",
                      details={"field": exc.field} if exc.field else {})


# -- stage 3: checks across batches and segments -------------------------------------------------


def check_replicas(out: str, index: int, rows: Iterable) -> Iterator[ScanTotals]:
    """Stage 3 task: rows of ``batches`` sorted by replica, segment base offset and position;
    :func:`check_batch` runs over each replica's sequence with one context, as ``inspect-dir``."""
    writers = _Writers(Path(out), f"checks-{index:05d}")
    totals = ScanTotals()
    current = None
    context = PartitionContext()
    fields = tables.BATCH_FIELDS
    try:
        for row in rows:
            key = tuple(row[c] for c in tables.KEY_COLUMNS)
            if key != current:
                current, context = key, PartitionContext()
            batch = RecordBatch(*(row["file" if f == "path" else f] for f in fields))
            for f in check_batch(batch, row["segment_base_offset"], context):
                writers["findings"].add(tables.finding_row(key, f))
                totals += ScanTotals(findings=1, errors=int(f.is_error))
    finally:
        writers.close()
    yield totals


# -- the job -------------------------------------------------------------------------------------


def prepare_output(out: str) -> Path:
    """The output directory: created, or an existing empty one; never written over."""
    path = local_path(out)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise EvidenceError("exists and is not an empty directory: fleet scan never writes over earlier output",
                            path=out)
    if not path.parent.is_dir():
        raise EvidenceError("the parent directory does not exist", path=out)
    path.mkdir(exist_ok=True)
    return path


def _balanced(segments: list[tuple], slices: int) -> list[list[tuple]]:
    """Segments dealt largest first to the least loaded slice (longest-processing-time first)."""
    bins: list[list[tuple]] = [[] for _ in range(slices)]
    loads = [0] * slices
    for seg in sorted(segments, key=lambda s: -s[2]):
        i = loads.index(min(loads))
        bins[i].append(seg)
        loads[i] += seg[2]
    return [b for b in bins if b]


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """A checked scan: the fleet's log directories and an output directory ready for the tables."""

    log_dirs: tuple[FleetLogDir, ...]
    out: Path


def plan_scan(root: str, out: str) -> ScanPlan:
    """Find the fleet and prepare the output before any Spark start-up (bad input fails fast)."""
    log_dirs = tuple(discover(root))
    return ScanPlan(log_dirs, prepare_output(out))


def run_scan(spark, plan: ScanPlan, *, records: bool = False, payloads: bool = False) -> ScanTotals:
    """Scan the fleet into Parquet tables under ``plan.out``."""
    from pyspark.sql import functions as F

    log_dirs, out_path = list(plan.log_dirs), plan.out
    out_s = str(out_path)
    sc = spark.sparkContext
    sc.setJobDescription("kreplica fleet scan: log directories")
    stage1 = sc.parallelize(log_dirs, len(log_dirs)).mapPartitionsWithIndex(
        lambda i, it: scan_log_dirs(out_s, i, it)).collect()
    segments = [(item[1], item[2], item[3]) for item in stage1 if item[0] == "segment"]
    totals = sum((item[1] for item in stage1 if item[0] == "totals"), ScanTotals())
    if segments:
        slices = _balanced(segments, min(len(segments), max(sc.defaultParallelism * 4, 1)))
        sc.setJobDescription("kreplica fleet scan: segments")
        totals = sc.parallelize(slices, len(slices)).mapPartitionsWithIndex(
            lambda i, it: scan_segments(out_s, records, payloads, i, (seg for group in it for seg in group))
        ).reduce(lambda a, b: a + b) + totals
    _write_empty_tables(out_path, records)
    key = list(tables.KEY_COLUMNS)
    walked = spark.read.parquet(str(out_path / "_segments_walk"))
    if segments:
        sc.setJobDescription("kreplica fleet scan: checks across batches")
        bases = walked.select(*key, "file", F.col("base_offset").alias("segment_base_offset"))
        ordered = (spark.read.parquet(str(out_path / "batches")).join(bases, on=[*key, "file"])
                   .repartition(*key).sortWithinPartitions(*key, "segment_base_offset", "file", "position"))
        totals = ordered.rdd.mapPartitionsWithIndex(lambda i, it: check_replicas(out_s, i, it)).reduce(
            lambda a, b: a + b) + totals
    findings = spark.read.parquet(str(out_path / "findings"))
    per_file = (findings.where(F.col("topic").isNotNull()).groupBy(*key, F.col("path").alias("file"))
                .agg(F.count(F.lit(1)).alias("n")))
    final = (walked.join(per_file, on=[*key, "file"], how="left")
             .withColumn("findings", F.coalesce(F.col("n"), F.lit(0)).cast("long")).drop("n")
             .select(*tables.SEGMENTS.names))
    final.write.parquet(str(out_path / "segments"))
    shutil.rmtree(out_path / "_segments_walk", ignore_errors=True)
    return totals


def _write_empty_tables(out: Path, records: bool) -> None:
    """Every table readable even when no task wrote a row to it."""
    for name in ("replicas", "batches", "markers", "findings", "_segments_walk", *(("records",) if records else ())):
        directory = out / name
        if not directory.is_dir() or not any(directory.glob("*.parquet")):
            directory.mkdir(parents=True, exist_ok=True)
            pq.write_table(_SCHEMAS[name].empty_table(), str(directory / "part-empty.parquet"))
