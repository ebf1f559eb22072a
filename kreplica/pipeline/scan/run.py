"""``fleet scan``: every segment of every replica of a fleet, walked once, into Parquet tables.
This module plans the work, runs the stages on Spark and joins what they report; each stage's
tasks run the same readers a single-partition command runs:

1. one task per log directory (:mod:`.scan_log_dirs`): its checkpoints, partition directories
   and small files → ``replicas`` rows and the list of segment files;
2. one task per group of segment files, balanced by size (a segment large enough to keep the
   other cores waiting is split into stretches that meet at batch boundaries,
   :func:`plan_stretches`; a split that does not hold — damage at a boundary — is dropped and
   that segment walked again whole, the one case a file is read twice), each walked once
   (:mod:`.scan_segments`) → ``batches``, ``markers``, ``findings``, ``records``, and a
   :class:`~.scan_work.SegmentWalk` summary per segment to the driver;
3. the checks across segments (:mod:`.scan_checks`): only the segments whose findings the
   segments before them would change are checked again. The driver then writes the
   ``segments`` table from the summaries.

Tasks write their rows straight to Parquet files with Arrow (:mod:`.parquet_writers`), so no
row passes through the driver; they write into a staging directory in the output directory, from
which the tables are moved into place and marked complete (``_SUCCESS``) once all are written.
An output directory on a file system only Spark writes (a URI) gets the same tables through
Spark's writer (:mod:`.scan_output`).

Evidence on a file system only Spark reads (``hdfs://``, ``s3a://``...) takes the same stages
with the files fetched through Spark (:mod:`.remote_scan`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path
from typing import TypeVar

from kreplica.formats.mapped import EvidenceError
from kreplica.pipeline.evidence import remote as remote
from kreplica.pipeline.scan import remote as remote_scan
from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.spark.job_progress import JobAnnouncer, JobWork, announce
from kreplica.pipeline.evidence.layout import FleetLogDir, discover, local_path
from kreplica.pipeline.tables.parquet import TableWriter
from kreplica.pipeline.scan.checks import recheck_segments, segments_to_recheck
from kreplica.pipeline.scan.log_dirs import scan_log_dirs
from kreplica.pipeline.scan.output import open_tables
from kreplica.pipeline.scan.segments import scan_segments
from kreplica.pipeline.scan.work import ScanTotals, SegmentWalk, Stretch


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


T = TypeVar("T")


def balanced(items: list[T], slices: int, size: Callable[[T], int] = attrgetter("size")) -> list[list[T]]:
    """Work dealt largest first to the least loaded slice (longest-processing-time first)."""
    bins: list[list[T]] = [[] for _ in range(slices)]
    loads = [0] * slices
    for item in sorted(items, key=lambda s: -size(s)):
        i = loads.index(min(loads))
        bins[i].append(item)
        loads[i] += size(item)
    return [b for b in bins if b]


#: Tasks per core in each stage: enough to even out segments of unequal size, few enough that
#: PySpark's cost per task stays small beside the walking.
TASKS_PER_CORE = 2

#: A segment is split only into stretches of at least this many bytes.
MIN_STRETCH = 64 << 20


def plan_stretches(segments: list[tuple], parallelism: int) -> list[Stretch]:
    """One unit of work per segment, and large segments split when that helps: when a segment
    is over twice the share of bytes each task would get (a straggler the other cores would
    wait for), into stretches of about half that share, so the tasks can be balanced."""
    total = sum(segment[2] for segment in segments)
    share = max(MIN_STRETCH, -(-total // max(2 * TASKS_PER_CORE * parallelism, 1)))
    out = []
    for key, files, size, txn_below in segments:
        if size <= 2 * share:
            out.append(Stretch(key, files, size, txn_index_below_base=txn_below))
            continue
        n = -(-size // share)
        for k in range(n):
            out.append(Stretch(key, files, size // n, k, n, k * size // n, (k + 1) * size // n if k < n - 1 else None,
                               txn_below))
    return out


def join_stretches(walks: list[SegmentWalk]) -> tuple[list[SegmentWalk], list[SegmentWalk]]:
    """The walks that stand, and the stretches of segments whose split failed: a stretch did not
    end cleanly at the batch the next one began at (damage, or a batch-like payload there). Those
    segments are walked again whole; nothing else is read twice."""
    by_file: dict[str, list[SegmentWalk]] = {}
    kept, failed = [], []
    for w in walks:
        if w.stretch.chunks == 1:
            kept.append(w)
        else:
            by_file.setdefault(w.files.log, []).append(w)
    for seq in by_file.values():
        seq.sort(key=lambda w: w.stretch.chunk)
        ok = len(seq) == seq[0].stretch.chunks and all(w.ends_cleanly for w in seq[:-1])
        (kept if ok else failed).extend(seq)
    return kept, failed


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """A checked scan: the fleet's log directories and an output directory ready for the tables.
    Remote evidence (:mod:`.remote`) is found, and a remote output (a URI) checked, once Spark,
    whose connectors read and write them, has started."""

    log_dirs: tuple[FleetLogDir, ...]
    out: Path | str
    root: str = ""
    remote: bool = False

    @property
    def remote_out(self) -> bool:
        """Whether the tables go to a URI (Spark's writer writes them) rather than a local directory."""
        return not isinstance(self.out, Path)

    @property
    def session_options(self) -> dict:
        """How :func:`~kreplica.pipeline.spark.session.spark_session` should start Spark for this scan:
        for local evidence into a local directory the JVM only schedules (a light driver); for
        remote evidence it reads the files for the tasks, so it keeps the optimising compiler and
        the default collector, and gets room for the files in flight (:data:`remote.TASK_HEAP` a
        task); into a URI it keeps the compiler for Spark's writer."""
        if self.remote:
            return {"light_driver": False, "task_heap": remote.TASK_HEAP}
        return {"light_driver": not self.remote_out}


def plan_scan(root: str, out: str) -> ScanPlan:
    """Find the fleet and prepare the output before any Spark start-up (bad input fails fast)."""
    target = out if remote.is_remote(out) else prepare_output(out)
    if remote.is_remote(root):
        return ScanPlan((), target, root, True)
    log_dirs = tuple(discover(root))
    return ScanPlan(log_dirs, target, root)


def run_scan(spark, plan: ScanPlan, *, records: bool = False, payloads: bool = False,
             progress: JobAnnouncer = None) -> ScanTotals:
    """Scan the fleet into Parquet tables under ``plan.out``, published only when all are written;
    ``progress`` is told what each job covers as it starts."""
    log_dirs, output = list(plan.log_dirs), open_tables(spark, plan.out)
    sc = spark.sparkContext
    sc.setJobDescription("kreplica fleet scan: log directories")
    # NOTE: a PySpark task costs ~0.1-0.2 s however small; bench/bench_fleet.py has the figures
    tasks = max(sc.defaultParallelism * TASKS_PER_CORE, 1)
    announce(progress, JobWork("log directories"))
    if plan.remote:
        stage1 = remote_scan.scan_remote_log_dirs(spark, plan.root, output, tasks)
    else:
        stage1 = output.run(sc.parallelize(log_dirs, min(len(log_dirs), tasks)), scan_log_dirs)
    segments = [item[1:] for item in stage1 if item[0] == "segment"]
    totals = sum((item[1] for item in stage1 if item[0] == "totals"), ScanTotals())

    def walk(stretches: list[Stretch], what: str) -> list[SegmentWalk]:
        if not stretches:
            return []
        announce(progress, JobWork(what, len({s.files.log for s in stretches}), sum(s.size for s in stretches),
                                   len({s.key[2:] for s in stretches})))
        slices = balanced(stretches, min(len(stretches), tasks))
        sc.setJobDescription(f"kreplica fleet scan: {what}")
        return output.run(sc.parallelize(slices, len(slices)), lambda out, i, it: scan_segments(
            out, records, payloads, i, (s for group in it for s in group)))

    if plan.remote:
        announce(progress, JobWork("segments", len(segments), sum(s[2] for s in segments),
                                   len({s[0][2:] for s in segments})))
        walks = remote_scan.walk_fetched(spark, segments, output, records, payloads, tasks)
    else:
        walks, failed = join_stretches(walk(plan_stretches(segments, sc.defaultParallelism), "segments"))
        if failed:
            output.drop_parts({w.part for w in failed})
            whole = {w.files.log: replace(w.stretch, size=w.file_size, chunk=0, chunks=1, begin=0, until=None)
                     for w in failed}
            walks += walk(list(whole.values()), "segments whose split failed, whole")
    totals = sum((w.totals for w in walks), totals)
    checks = {(w.files.log, w.start): (w.checks, w.check_errors) for w in walks}
    by_part: dict[str, list] = {}
    for w, before in segments_to_recheck(walks):
        by_part.setdefault(w.part, []).append((w, before))
    if by_part:
        announce(progress, JobWork("checks across segments", sum(len(work) for work in by_part.values())))
        sc.setJobDescription("kreplica fleet scan: checks across segments")
        parts = sorted(by_part.items())
        for at, n, errors in output.run_on_parts(
                parts, lambda out, _, items: (r for part, work in items for r in recheck_segments(out, part, work)),
                part_of=lambda item: item[0], reads=("_checks", "batches")):
            old_n, old_errors = checks[at]
            totals += ScanTotals(findings=n - old_n, errors=errors - old_errors)
            checks[at] = (n, errors)
    output.publish_checks(set(by_part))
    with output.driver_writes() as out_path:
        _write_segments(out_path, walks, checks)
    output.publish(records, progress)
    return totals


def _write_segments(out: Path, walks: list[SegmentWalk], checks: dict[tuple, tuple[int, int]]) -> None:
    """The ``segments`` table, one row per segment (its stretches joined), with its finding count."""
    by_file: dict[str, list[SegmentWalk]] = {}
    for w in walks:
        by_file.setdefault(w.files.log, []).append(w)
    writer = TableWriter(out, "segments", "00000")
    for seq in by_file.values():
        seq.sort(key=lambda w: w.stretch.chunk)
        first = seq[0]
        last = next(w for w in seq if w.stop is None)  # the stretch that walked to the end of the file
        findings = sum(w.findings + checks[(w.files.log, w.start)][0] for w in seq)
        writer.add(tables.segment_row(first.key, first.files, first.file_size, last.valid_bytes, last.stopped_by,
                                      findings, first.txn_index_below_base))
    writer.close()
