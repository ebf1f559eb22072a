"""``fleet analyze`` run where it costs least: in the driver for small tables, else as one Spark job.

Tables of less than :data:`DRIVER_MAX_BYTES` on a local path are analysed in this process
(:func:`analyze_in_driver`): no Spark is started, which on small evidence is most of the time
(see ``bench/README.md``). Larger ones are analysed in one Spark job (:func:`analyze_on_spark`):
its map tasks read the tables' part files with Arrow and hand each row to the task of its
partition's range, the reduce tasks analyse their partitions in order and write their part of
the analysis tables (no row passes through the JVM as a Spark row, nor through the driver). The
driver only sizes the job: it reads the partition keys and segment sizes, and cuts the partitions,
in topic and partition order, into ranges of about equal evidence, as many as the tables' size
asks for (:data:`REDUCE_BYTES` each), at least two per core. Both write the same tables, from
which the command prints (:mod:`.analysis_tables`). ``KREPLICA_FLEET_ANALYZE=driver`` or
``spark`` forces one way (tests, benchmarks).

Tables at a URI (``hdfs://``, ``s3a://``, ``viewfs://``...: a scan with an ``--output-dir`` URI) are
analysed by :func:`analyze_at_uri`: no task can open them with Arrow, so Spark reads them and
groups the rows by partition, and Spark's writer writes the analysis tables; each partition's
objects are streamed to the driver as they are made. Every way analyses a partition with
:func:`~.analyze.run_partitions` and the same committed offsets (:func:`~.analyze.read_committed`).

Arrow UDFs (``applyInArrow``) would need pandas on the driver, which the fleet extra leaves out:
PySpark's RDD API with tasks reading Parquet themselves needs neither, and keeps the tables'
values Python's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.versions import KafkaVersion, Protocol
from kreplica.pipeline.analyze.tables import (ANALYSIS_DIR, ANALYZED_TABLES, AnalysisWriter, Key, partition_groups,
                                               prepare_analysis, publish_analysis, read_scan_tables, table_files)
from kreplica.pipeline.analyze.partitions import (ANALYSIS_OBJECTS, ANALYSIS_PARTITIONS, PartitionAnalysis, PartitionFacts,
                                      read_committed, run_partitions)
from kreplica.pipeline.spark.hadoop_files import join_uri
from kreplica.pipeline.spark.job_progress import JobAnnouncer, JobWork, announce
from kreplica.pipeline.tables.parquet import ROW_GROUP
from kreplica.pipeline.scan.run import TASKS_PER_CORE, balanced

#: Tables (the five the analysis reads, as Parquet) below this size are analysed in the driver:
#: about 500,000 batch headers (8 GiB of 16 KiB batches), some 10 s of one core and 0.5 GB here,
#: where a Spark job would cost as much to start (``bench/README.md``).
DRIVER_MAX_BYTES = 8 << 20
#: Parquet bytes of the tables per reduce task of the Spark job: its rows are held as tuples
#: (about 15 times as much) until their partition's turn.
REDUCE_BYTES = 8 << 20
#: Forces where the analysis runs: ``driver`` or ``spark``.
PLACE_ENV = "KREPLICA_FLEET_ANALYZE"


@dataclass(frozen=True, slots=True)
class AnalysisSettings:
    """What every partition is analysed with, in the driver or in any task: the leaders' source,
    the truncation protocol and Kafka version, and ``render``, which turns a partition's analysis
    into the objects printed (from ``report/``, which the pipeline does not import)."""

    facts_source: str | None
    protocol: Protocol
    kafka_version: KafkaVersion
    render: Callable[[PartitionAnalysis], tuple[dict, ...]]


def _parquet_files(scan_dir: str) -> list[tuple[int, int, str, int]]:
    """``(table index, file index, path, size)`` of every part file of the :data:`ANALYZED_TABLES`."""
    return [(i, k, str(f), f.stat().st_size) for i, files in enumerate(table_files(scan_dir))
            for k, f in enumerate(files)]


def runs_in_driver(scan_dir: str) -> bool:
    """Whether the analysis of these (local) tables runs in this process, without Spark."""
    forced = os.environ.get(PLACE_ENV, "").strip().lower()
    if forced in ("driver", "spark"):
        return forced == "driver"
    return sum(f[-1] for f in _parquet_files(scan_dir)) < DRIVER_MAX_BYTES


Committed = Mapping[Key, tuple[CommittedOffset, ...]]


def analyze_part(scan_dir: str, index: int, groups: Iterable, facts: Mapping[Key, PartitionFacts],
                 settings: AnalysisSettings, committed: Committed) -> int:
    """Analyse ``groups`` (:func:`~.analysis_tables.partition_groups`' items, in order) into
    part ``index`` of the analysis tables; returns how many partitions."""
    writer = AnalysisWriter(scan_dir, index)
    try:
        for row, objects in run_partitions(groups, facts, settings.facts_source, settings.protocol,
                                           settings.kafka_version, settings.render, committed):
            writer.add(row, objects)
    finally:
        writer.close()
    return writer.partitions


def analyze_in_driver(scan_dir: str, facts: Mapping[Key, PartitionFacts], settings: AnalysisSettings) -> None:
    """The analysis tables of a small scan, written by this process."""
    prepare_analysis(scan_dir)
    analyze_part(scan_dir, 0, partition_groups(read_scan_tables(scan_dir)), facts, settings,
                 read_committed(scan_dir))
    publish_analysis(scan_dir)


# -- the Spark job -------------------------------------------------------------------------------


def _key_ranges(scan_dir: str, ranges: int) -> dict[Key, int]:
    """Every partition with a replica, numbered by its range: the partitions in topic and
    partition order cut into at most ``ranges`` runs of about equal segment bytes."""
    import pyarrow.parquet as pq

    base = Path(scan_dir)
    weight: dict[Key, int] = {}
    for row in pq.read_table(str(base / "replicas"), columns=["topic", "partition"]).to_pylist():
        if row["topic"] is not None:
            weight[(row["topic"], row["partition"])] = 1
    segments = pq.read_table(str(base / "segments"), columns=["topic", "partition", "size"])
    for topic, partition, size in zip(*(segments.column(i).to_pylist() for i in range(3))):
        if (topic, partition) in weight:
            weight[(topic, partition)] += size
    keys = sorted(weight)
    share = max(sum(weight.values()) / max(min(ranges, len(keys)), 1), 1)
    out, done = {}, 0
    for key in keys:
        out[key] = min(int(done // share), ranges - 1)
        done += weight[key]
    return out


def keyed_rows(files: Iterable[tuple[int, int, str, int]], ranges: Mapping[Key, int]) -> Iterator[tuple]:
    """Map task: ``(key, (table index, (file index, row group), column names, rows))`` for each
    partition's rows in each row group of each file; rows of a partition with no replica are
    left out."""
    import pyarrow.parquet as pq

    for table, k, path, _ in files:
        for n, batch in enumerate(pq.ParquetFile(path).iter_batches(batch_size=ROW_GROUP)):
            names = tuple(batch.schema.names)
            by_key: dict[Key, list[tuple]] = {}
            for row in zip(*(batch.column(i).to_pylist() for i in range(batch.num_columns))):
                key = (row[2], row[3])  # tables.KEY_COLUMNS: broker, log_dir, topic, partition
                if key in ranges:
                    by_key.setdefault(key, []).append(row)
            for key, rows in by_key.items():
                yield key, (table, (k, n), names, rows)


def _gathered(pairs: Iterable[tuple]) -> Iterator[tuple[Key, tuple[list[dict], ...]]]:
    """A reduce task's rows by partition, in topic and partition order, each table's rows in the
    order of its files, as :func:`~.analysis_tables.partition_groups` gives them."""
    held: dict[Key, list[list]] = {}
    for key, chunk in pairs:
        held.setdefault(key, [[] for _ in ANALYZED_TABLES])[chunk[0]].append(chunk)
    for key in sorted(held):
        chunks = held.pop(key)
        yield key, tuple([dict(zip(names, row)) for _, _, names, rows in sorted(table, key=lambda c: c[1])
                          for row in rows] for table in chunks)


def analyze_on_spark(spark, scan_dir: str, facts: Mapping[Key, PartitionFacts], settings: AnalysisSettings,
                     progress: JobAnnouncer = None) -> None:
    """The analysis tables of a scan, written by the tasks of one Spark job."""
    sc = spark.sparkContext
    tasks = max(sc.defaultParallelism * TASKS_PER_CORE, 1)
    files = _parquet_files(scan_dir)
    wanted = max(tasks, -(-sum(f[-1] for f in files) // REDUCE_BYTES))
    ranges = _key_ranges(scan_dir, wanted)
    announce(progress, JobWork("partitions", partitions=len(ranges)))
    prepare_analysis(scan_dir)
    if ranges:
        n = max(ranges.values()) + 1
        ranges_b, facts_b = sc.broadcast(ranges), sc.broadcast(dict(facts))
        committed_b = sc.broadcast(read_committed(scan_dir))
        slices = balanced(files, min(len(files), tasks), size=lambda f: f[-1])
        sc.setJobDescription("kreplica fleet analyze")
        (sc.parallelize(slices, len(slices))
         .mapPartitions(lambda it: keyed_rows((f for group in it for f in group), ranges_b.value))
         .partitionBy(n, lambda key: ranges_b.value[key])
         .mapPartitionsWithIndex(lambda i, it: [analyze_part(scan_dir, i, _gathered(it), facts_b.value, settings,
                                                                committed_b.value)])
         .collect())
    publish_analysis(scan_dir)


# -- tables at a URI -----------------------------------------------------------------------------


def _ddl(columns: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)


def analyze_at_uri(spark, scan_dir: str, facts: Mapping[Key, PartitionFacts], settings: AnalysisSettings,
                   progress: JobAnnouncer = None) -> Iterator[tuple[dict, ...]]:
    """The analysis of tables at a URI: Spark reads and groups their rows by partition, Spark's
    writer writes ``DIR/analysis/objects`` and ``DIR/analysis/partitions`` (each marked complete
    with ``_SUCCESS``), and each partition's objects come back to the driver in topic and
    partition order, one partition at a time."""
    import json

    from pyspark import StorageLevel

    def keyed(table: str):
        return (spark.read.parquet(join_uri(scan_dir, table)).where("topic IS NOT NULL").rdd
                .map(lambda row: ((row["topic"], row["partition"]), row.asDict(recursive=True))))

    sc = spark.sparkContext
    announce(progress, JobWork("partitions", partitions=spark.read.parquet(join_uri(scan_dir, "replicas"))
                               .where("topic IS NOT NULL").select("topic", "partition").distinct().count()))
    sc.setJobDescription("kreplica fleet analyze")
    facts_b, committed_b = sc.broadcast(dict(facts)), sc.broadcast(read_committed(scan_dir, spark))
    first, *rest = (keyed(table) for table in ANALYZED_TABLES)
    results = (first.groupWith(*rest).filter(lambda kv: len(kv[1][0]) > 0).sortByKey()
               .mapPartitions(lambda it: run_partitions(it, facts_b.value, settings.facts_source, settings.protocol,
                                                        settings.kafka_version, settings.render, committed_b.value))
               .persist(StorageLevel.MEMORY_AND_DISK))

    def object_rows(result):
        row, objs = result
        return [(row[0], row[1], o["type"], json.dumps(o, separators=(",", ":"))) for o in objs]

    out = join_uri(scan_dir, ANALYSIS_DIR)
    spark.createDataFrame(results.flatMap(object_rows), _ddl(ANALYSIS_OBJECTS)).write.mode("overwrite") \
        .parquet(join_uri(out, "objects"))
    spark.createDataFrame(results.map(lambda result: result[0]), _ddl(ANALYSIS_PARTITIONS)).write.mode("overwrite") \
        .parquet(join_uri(out, "partitions"))
    try:
        for _, objs in results.toLocalIterator():
            yield objs
    finally:
        results.unpersist()
