"""``fleet scan``, ``fleet analyze`` and ``fleet run`` as one call each: where Spark starts, what
runs in it (or, for small local tables, in this process), and what comes back to print.

Each takes what its command checked before Spark starts (a :class:`ScanJob`, the leaders' facts
and :class:`~kreplica.pipeline.analyze.run.AnalysisSettings`) and a ``progress`` factory: a context
manager giving the display that watches Spark's jobs, or ``None`` (the command's, on stderr).
Printing waits for nothing: ``fleet analyze`` and ``fleet run`` return the partitions' objects as
a stream, read while Spark runs when the tables are at a URI (Spark reads them back), read back
from the local analysis tables otherwise, Spark stopped first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kreplica.pipeline.analyze.partitions import PartitionFacts
    from kreplica.pipeline.analyze.run import AnalysisSettings
    from kreplica.pipeline.scan.run import ScanPlan
    from kreplica.pipeline.scan.work import ScanTotals
    from kreplica.pipeline.spark.session import SparkLog

#: a display of Spark's jobs while a block runs, or ``None`` (no terminal, or Spark's log shown)
Progress = Callable[[], AbstractContextManager]


@dataclass(frozen=True, slots=True)
class ScanJob:
    """A checked ``fleet scan``: its plan (:func:`~kreplica.pipeline.scan.run.plan_scan`), Spark's
    settings, and what to write."""

    plan: ScanPlan
    conf: dict[str, str]
    log: SparkLog
    records: bool
    payloads: bool


def _watch(display, spark) -> None:
    if display is not None:
        from kreplica.pipeline.spark.job_progress import jobs_done

        display.watch(partial(jobs_done, spark))


def _job(display):
    """Where a job tells the display what it covers (nowhere without one)."""
    return display.job if display is not None else None


def _scan(spark, job: ScanJob, display) -> ScanTotals:
    from kreplica.pipeline.scan.run import run_scan

    _watch(display, spark)
    return run_scan(spark, job.plan, records=job.records, payloads=job.payloads, progress=_job(display))


def scan_fleet(job: ScanJob, master: str | None, progress: Progress) -> ScanTotals:
    """``fleet scan``: every segment of the fleet walked once into the tables, in one Spark session."""
    from kreplica.pipeline.spark.session import spark_session

    with progress() as display, \
            spark_session(master, conf=job.conf, log=job.log, **job.plan.session_options) as spark:
        return _scan(spark, job, display)


def analyze_fleet(scan_dir: str, facts: Mapping[tuple[str, int], PartitionFacts], settings: AnalysisSettings, *,
                  master: str | None, conf: dict[str, str], log: SparkLog,
                  progress: Progress) -> Iterator[tuple[dict, ...]]:
    """``fleet analyze`` of a scan's tables (a local one already checked complete): each
    partition's objects. Local tables small enough are analysed in this process, others in one
    Spark job; tables at a URI are checked, read and written by Spark."""
    from kreplica.pipeline.analyze.partitions import check_scan_dir
    from kreplica.pipeline.analyze.run import analyze_at_uri, analyze_in_driver, analyze_on_spark, runs_in_driver
    from kreplica.pipeline.analyze.tables import iter_partition_objects
    from kreplica.pipeline.evidence.remote import is_remote
    from kreplica.pipeline.spark.hadoop_files import HadoopFiles
    from kreplica.pipeline.spark.session import spark_session

    if is_remote(scan_dir):
        with progress() as display, spark_session(master, conf=conf, log=log) as spark:
            check_scan_dir(scan_dir, HadoopFiles(spark))  # once Spark, whose connectors read it, has started
            _watch(display, spark)
            yield from analyze_at_uri(spark, scan_dir, facts, settings, progress=_job(display))
        return
    if runs_in_driver(scan_dir):
        analyze_in_driver(scan_dir, facts, settings)
    else:
        with progress() as display, spark_session(master, conf=conf, log=log) as spark:
            _watch(display, spark)
            analyze_on_spark(spark, scan_dir, facts, settings, progress=_job(display))
    yield from iter_partition_objects(scan_dir)


def run_fleet(job: ScanJob, facts: Mapping[tuple[str, int], PartitionFacts], settings: AnalysisSettings, *,
              master: str | None, progress: Progress) -> Iterator:
    """``fleet run``: the scan, then the analysis of its tables, Spark started once. The first
    item is the scan's :class:`~kreplica.pipeline.scan.work.ScanTotals`, then each partition's
    objects."""
    from kreplica.pipeline.analyze.run import analyze_at_uri, analyze_in_driver, analyze_on_spark, runs_in_driver
    from kreplica.pipeline.analyze.tables import iter_partition_objects
    from kreplica.pipeline.spark.session import spark_session

    scan_dir = str(job.plan.out)
    with progress() as display, \
            spark_session(master, conf=job.conf, log=job.log, **job.plan.session_options) as spark:
        yield _scan(spark, job, display)
        if job.plan.remote_out:  # streamed from Spark as the analysis runs
            yield from analyze_at_uri(spark, scan_dir, facts, settings, progress=_job(display))
            return
        in_driver = runs_in_driver(scan_dir)
        if not in_driver:
            analyze_on_spark(spark, scan_dir, facts, settings, progress=_job(display))
    if in_driver:
        analyze_in_driver(scan_dir, facts, settings)
    yield from iter_partition_objects(scan_dir)
