"""A fleet scan's tables written by Spark, for an ``--output-dir`` no executor can write with Arrow
itself: any URI Spark writes (``hdfs://``, ``s3a://``, ``gs://``, ``abfs://``, ``viewfs://``...),
through the user's connectors and credentials.

Each task runs exactly as for a shared directory, writing its Parquet files with
:mod:`.parquet_writers`, but into a spool of its own on the executor's disk
(``SPARK_LOCAL_DIRS``); when it is done it hands its files to Spark as Arrow row groups
(:class:`RowGroup`, compressed), which Spark keeps, in memory and then on disk, until every
stage is done. The evidence is walked once (a task Spark runs again, to recover lost work, writes
the same part files: their names do not change between runs). Spark's own Parquet writer then writes each table
into ``URI/_temporary/<table>``, and the driver moves each into place and marks it complete
(``_SUCCESS``) through Hadoop's ``FileSystem`` (:mod:`.hadoop_files`), as for a local
directory. Spark has no unsigned integers: the ``uint64`` columns (``records``' XXH64) are
``decimal(20,0)`` in these tables, which is the type Spark reads the local tables' as.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.spark.arrow_map import for_spark, map_in_arrow, spark_schema
from kreplica.pipeline.spark.hadoop_files import HadoopFiles, join_uri
from kreplica.pipeline.spark.job_progress import JobAnnouncer, JobWork, announce

#: How a row group travels through Spark: Arrow's IPC stream, compressed.
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")
#: Spark's writer marks its output complete itself unless told not to; here the driver does,
#: once the table is in place.
_NO_SUCCESS_MARKER = {"mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


@dataclass(frozen=True, slots=True)
class RowGroup:
    """One row group of the part file ``<table>/part-<part>.parquet`` a task wrote (the
    ``seq``-th), as an Arrow IPC stream."""

    table: str
    part: str
    seq: int
    data: bytes

    def read(self) -> pa.Table:
        return pa.ipc.open_stream(self.data).read_all()


def spool_dir() -> str:
    """Where a task keeps its files: the executor's first local directory (Spark tells its
    Python workers in ``SPARK_LOCAL_DIRS``), else the system's temporary directory."""
    return os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0] or tempfile.gettempdir()


def spooled(task: Callable[[str, int, Iterator], Iterator], index: int, items: Iterator) -> Iterator[tuple]:
    """Run ``task`` on a spool directory of its own; yields ``(True, result)`` for each of its
    results, then ``(False, RowGroup)`` for each row group of the files it wrote."""
    with tempfile.TemporaryDirectory(prefix="kreplica-tables-", dir=spool_dir()) as spool:
        for result in task(spool, index, items):
            yield True, result
        for group in row_groups(spool):
            yield False, group


def row_groups(spool: str) -> Iterator[RowGroup]:
    """Each row group of each part file under ``spool`` (``<table>/part-<part>.parquet``)."""
    for file in sorted(Path(spool).glob("*/part-*.parquet")):
        part = file.name[len("part-"):-len(".parquet")]
        parquet = pq.ParquetFile(str(file))
        for seq in range(parquet.num_row_groups):
            yield RowGroup(file.parent.name, part, seq, _ipc(parquet.read_row_group(seq)))


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=_IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def restore(spool: str, groups: Iterable[RowGroup]) -> list[Path]:
    """Part files written again, row for row, from their row groups; returns their paths."""
    by_file: dict[Path, list[RowGroup]] = {}
    for g in groups:
        by_file.setdefault(Path(spool, g.table, f"part-{g.part}.parquet"), []).append(g)
    for path, parts in by_file.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = None
        for g in sorted(parts, key=lambda g: g.seq):
            table = g.read()
            writer = writer or pq.ParquetWriter(str(path), table.schema)
            writer.write_table(table)
        writer.close()
    return list(by_file)


def _is_result(item: tuple) -> bool:
    return item[0]


def _is_row_group(item: tuple) -> bool:
    return not item[0]


def _value(item: tuple):
    return item[1]


class SparkTables:
    """A scan's tables for a URI: the tasks' rows kept by Spark until :meth:`publish` has
    Spark's writer write them there."""

    def __init__(self, spark, out: str) -> None:
        self.spark, self.out = spark, out.rstrip("/")
        self.files = HadoopFiles(spark)
        self.staging = join_uri(self.out, tables.STAGING_DIR)
        self._spooled: list = []     # the stages' RDDs, persisted
        self._dropped: set[str] = set()
        self._rewritten: set[str] = set()
        self._driver_groups: list[RowGroup] = []

    def run(self, rdd, task: Callable[[str, int, Iterator], Iterator]) -> list:
        """Run ``task(spool, index, items)`` on each partition of ``rdd``; its results, collected.
        The rows it wrote stay with Spark (persisted, so nothing is walked twice)."""
        from pyspark import StorageLevel

        spooled_rdd = rdd.mapPartitionsWithIndex(lambda i, it: spooled(task, i, it))
        spooled_rdd.persist(StorageLevel.MEMORY_AND_DISK)
        self._spooled.append(spooled_rdd)
        return spooled_rdd.filter(_is_result).map(_value).collect()

    def run_on_parts(self, items: list, task: Callable[[str, int, Iterator], Iterator], *,
                     part_of: Callable, reads: tuple[str, ...]) -> list:
        """:meth:`run` over ``items``, where the task of an item reads the files of the tables
        ``reads`` that part ``part_of(item)`` wrote: those are written again into its spool
        first (and left out of what it hands on)."""
        sc = self.spark.sparkContext
        keyed = [(part_of(item), item) for item in items]
        wanted, reading = {part for part, _ in keyed}, set(reads)
        inputs = self._row_groups().filter(lambda g: g.part in wanted and g.table in reading).map(lambda g: (g.part, g))
        joined = sc.parallelize(keyed, len(keyed)).cogroup(inputs, len(keyed))

        def on_parts(spool: str, index: int, groups: Iterator) -> Iterator:
            for _, (own, groups_read) in groups:
                restored = restore(spool, groups_read)
                yield from task(spool, index, iter(own))
                for path in restored:
                    path.unlink()
        return self.run(joined, on_parts)

    def drop_parts(self, parts: set[str]) -> None:
        """The rows of these parts are left out of the tables."""
        self._dropped |= parts

    def publish_checks(self, rewritten: set[str]) -> None:
        """Every part's in-segment check findings join ``findings``, but those of the parts stage
        3 wrote again (:func:`~.scan_checks.publish_checks`)."""
        self._rewritten |= rewritten

    @contextmanager
    def driver_writes(self) -> Iterator[Path]:
        """A directory for the part files the driver writes itself (the ``segments`` table)."""
        with tempfile.TemporaryDirectory(prefix="kreplica-tables-") as spool:
            yield Path(spool)
            self._driver_groups += row_groups(spool)

    def _row_groups(self):
        sc = self.spark.sparkContext
        stores = [rdd.filter(_is_row_group).map(_value) for rdd in self._spooled]
        if self._driver_groups:
            stores.append(sc.parallelize(self._driver_groups, 1))
        return sc.union(stores) if stores else sc.parallelize([], 1)

    def publish(self, records: bool, progress: JobAnnouncer = None) -> None:
        """Each table written by Spark into the staging directory, then moved into place and
        marked complete, one by one; the staging directory removed and Spark's copies let go."""
        dropped, rewritten = self._dropped, self._rewritten
        groups = self._row_groups().filter(lambda g: g.part not in dropped)
        names = (*tables.SCAN_TABLES, *tables.COORDINATOR_TABLES, *(("records",) if records else ()))
        for name in names:
            announce(progress, JobWork(f"{name} table"))
            self.spark.sparkContext.setJobDescription(f"kreplica fleet scan: the {name} table")
            data = self.spark.createDataFrame(groups.filter(_of_table(name, rewritten)).map(lambda g: (g.data,)),
                                              "data binary")
            map_in_arrow(data, _decoded, spark_schema(tables.TABLES[name])).write.options(**_NO_SUCCESS_MARKER) \
                .parquet(join_uri(self.staging, name))
        for name in names:
            target = join_uri(self.out, name)
            self.files.rename(join_uri(self.staging, name), target)
            self.files.touch(join_uri(target, tables.SUCCESS_MARKER))
        self.files.delete(self.staging)
        for rdd in self._spooled:
            rdd.unpersist()


def _of_table(name: str, rewritten: set[str]) -> Callable[[RowGroup], bool]:
    """Which row groups make the table ``name``: its own, and for ``findings`` the in-segment
    check findings of the parts stage 3 did not write again."""
    if name == "findings":
        return lambda g: g.table == "findings" or (g.table == "_checks" and g.part not in rewritten)
    return lambda g: g.table == name


def _decoded(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Spark task body: the row groups a column of IPC streams holds, as Spark takes them."""
    for batch in batches:
        for data in batch.column(0).to_pylist():
            yield from for_spark(pa.ipc.open_stream(data).read_all()).to_batches()
