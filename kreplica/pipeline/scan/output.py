"""Where a fleet scan's tables go (``--output-dir``): a directory the driver and every executor share
(:class:`LocalTables`, a local directory in local mode), where the tasks write their Parquet
files themselves; or any URI Spark writes (:class:`~.spark_tables.SparkTables`), where Spark's
own writer does. Both give the same tables row for row, each published only when every table
is complete (``_SUCCESS``), and the stages use either through the same methods: ``run`` a task
on each partition of an RDD, ``run_on_parts`` (tasks reading the files parts wrote),
``drop_parts``, ``publish_checks``, ``driver_writes`` and ``publish``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kreplica.formats.mapped import EvidenceError
from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.spark.hadoop_files import HadoopFiles
from kreplica.pipeline.spark.job_progress import JobAnnouncer
from kreplica.pipeline.tables.parquet import publish_tables, write_empty_tables
from kreplica.pipeline.scan.checks import publish_checks
from kreplica.pipeline.tables.spark_writer import SparkTables

#: A stage's task: ``(out, index, items)`` → results, where ``out`` is the directory it writes
#: its part files into.
Task = Callable[[str, int, Iterator], Iterator]


class LocalTables:
    """Tables in a directory every task writes into itself (``DIR/_temporary`` until published)."""

    def __init__(self, spark, out: Path) -> None:
        self.spark, self.out = spark, out
        self.staging = out / tables.STAGING_DIR
        self.staging.mkdir()

    def run(self, rdd, task: Task) -> list:
        """Run ``task`` on each partition of ``rdd``; its results, collected."""
        staging = str(self.staging)
        return rdd.mapPartitionsWithIndex(lambda i, it: task(staging, i, it)).collect()

    def run_on_parts(self, items: list, task: Task, *, part_of: Callable, reads: tuple[str, ...]) -> list:
        """:meth:`run` over ``items``, one a task; each reads the part files it needs itself."""
        return self.run(self.spark.sparkContext.parallelize(items, len(items)), task)

    def drop_parts(self, parts: set[str]) -> None:
        for part in parts:
            for file in self.staging.glob(f"*/part-{part}.parquet"):
                file.unlink()

    def publish_checks(self, rewritten: set[str]) -> None:
        publish_checks(self.staging, rewritten)

    @contextmanager
    def driver_writes(self) -> Iterator[Path]:
        yield self.staging

    def publish(self, records: bool, progress: JobAnnouncer = None) -> None:
        write_empty_tables(self.staging, records)
        publish_tables(self.staging, self.out)


def open_tables(spark, out: Path | str) -> LocalTables | SparkTables:
    """The tables of a scan into ``out``: a prepared local directory (:func:`.scan.prepare_output`),
    or a URI, checked here as that is (it must not exist, or be an empty directory)."""
    if isinstance(out, Path):
        return LocalTables(spark, out)
    files = HadoopFiles(spark)
    if files.exists(out) and not files.is_empty_dir(out):
        raise EvidenceError("exists and is not an empty directory: fleet scan never writes over earlier output",
                            path=out)
    files.mkdirs(out)
    return SparkTables(spark, out)
