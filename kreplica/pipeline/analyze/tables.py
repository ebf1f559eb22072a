"""The tables ``fleet analyze`` reads and writes, wherever it runs (in the driver, or in the tasks
of one Spark job: :mod:`.analyze_run`).

Read: the scan's rows of each partition gathered together, from Arrow tables sorted by
partition (:func:`partition_groups`), in topic and partition order.

Written: ``DIR/analysis/objects`` and ``DIR/analysis/partitions`` (:data:`OBJECTS`,
:data:`PARTITIONS`; their columns in the README), with Arrow, by whoever analyses: one part
file per analyser, each in topic and partition order, the parts themselves in that order
(:func:`part_name`). They are staged in ``DIR/analysis/_temporary`` and published, replacing any
earlier analysis, with ``_SUCCESS`` (:func:`publish_analysis`). What the command prints is then
read back from ``objects`` (:func:`iter_partition_objects`): the table and the output are one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.analyze.partitions import ANALYSIS_OBJECTS, ANALYSIS_PARTITIONS
from kreplica.pipeline.tables.parquet import TableWriter

#: The scan tables the analysis reads, in the order :func:`~.analyze.run_partitions` takes them.
ANALYZED_TABLES = ("replicas", "segments", "batches", "markers", "findings")
#: Where ``fleet analyze`` writes, under the scan's directory.
ANALYSIS_DIR = "analysis"

_ARROW_TYPES = {"string": pa.string(), "int": pa.int32(), "bigint": pa.int64(), "boolean": pa.bool_(),
                "array<int>": pa.list_(pa.int32())}


def _schema(columns: tuple[tuple[str, str], ...]) -> pa.Schema:
    return pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in columns])


OBJECTS = _schema(ANALYSIS_OBJECTS)
PARTITIONS = _schema(ANALYSIS_PARTITIONS)

Key = tuple[str, int]


# -- the scan's rows, by partition ---------------------------------------------------------------


#: Columns whose values repeat from row to row (a replica's, a file's), read dictionary-encoded:
#: half the memory of a ``batches`` table.
_REPEATED = ("log_dir", "topic", "file", "path", "dir", "dir_name")
_ORDER = [("topic", "ascending"), ("partition", "ascending")]


def _topics(table: pa.Table) -> pa.ChunkedArray:
    return table["topic"].cast(pa.string())  # dictionary-encoded columns neither sort nor compare


def sorted_by_partition(table: pa.Table) -> pa.Table:
    """The rows that belong to a partition (log-directory findings have no topic), in topic and
    partition order (stable: rows of a partition keep the order they were read in)."""
    table = table.filter(pc.is_valid(table["topic"]))
    keys = pa.table({"topic": _topics(table), "partition": table["partition"]})
    return table.take(pc.sort_indices(keys, sort_keys=_ORDER))


def _runs(table: pa.Table) -> Iterator[tuple[Key, pa.Table]]:
    """Each partition's rows of a table :func:`sorted_by_partition`."""
    n = table.num_rows
    if n == 0:
        return
    topic, part = _topics(table), table["partition"]
    changed = pc.or_(pc.not_equal(topic[1:], topic[:-1]), pc.not_equal(part[1:], part[:-1]))
    starts = [0, *(i + 1 for i in pc.indices_nonzero(changed).to_pylist())]
    keys = zip(topic.take(starts).to_pylist(), part.take(starts).to_pylist())
    for key, start, stop in zip(keys, starts, [*starts[1:], n]):
        yield key, table.slice(start, stop - start)


def partition_groups(sorted_tables: Sequence[pa.Table]) -> Iterator[tuple[Key, tuple[list[dict], ...]]]:
    """``((topic, partition), (replicas, segments, batches, markers, findings))`` per partition
    that has a ``replicas`` row, in topic and partition order, from the :data:`ANALYZED_TABLES`
    each :func:`sorted_by_partition`; a partition's rows become Python values only when its turn
    comes."""
    replicas, *others = (_runs(t) for t in sorted_tables)
    pending: list[tuple[Key, pa.Table] | None] = [next(it, None) for it in others]
    for key, rows in replicas:
        group = [rows.to_pylist()]
        for i, it in enumerate(others):
            while pending[i] is not None and pending[i][0] < key:  # rows of a partition with no replica
                pending[i] = next(it, None)
            if pending[i] is not None and pending[i][0] == key:
                group.append(pending[i][1].to_pylist())
                pending[i] = next(it, None)
            else:
                group.append([])
        yield key, tuple(group)


def table_files(scan_dir: str) -> list[list[Path]]:
    """The part files of each of the :data:`ANALYZED_TABLES` of a (local) scan, in name order:
    the order their rows are read in, wherever the analysis runs."""
    return [sorted((Path(scan_dir) / name).glob("*.parquet")) for name in ANALYZED_TABLES]


def read_scan_tables(scan_dir: str) -> list[pa.Table]:
    """The :data:`ANALYZED_TABLES` of a (local) scan, each :func:`sorted_by_partition`."""
    out = []
    for name, files in zip(ANALYZED_TABLES, table_files(scan_dir)):
        repeated = [c for c in _REPEATED if c in tables.TABLES[name].names]
        out.append(sorted_by_partition(pa.concat_tables([pq.read_table(str(f), read_dictionary=repeated)
                                                         for f in files])))
    return out


# -- the analysis tables -------------------------------------------------------------------------


def staging_dir(scan_dir: str) -> Path:
    return Path(scan_dir) / ANALYSIS_DIR / tables.STAGING_DIR


def part_name(index: int) -> str:
    """Part files sort as the partitions they hold (each analyser holds a range of them)."""
    return f"{index:05d}"


class AnalysisWriter:
    """One analyser's part of ``objects`` and ``partitions``, written as its partitions come
    (in topic and partition order)."""

    def __init__(self, scan_dir: str, index: int) -> None:
        staging = staging_dir(scan_dir)
        self._objects = TableWriter(staging, "objects", part_name(index), schema=OBJECTS)
        self._partitions = TableWriter(staging, "partitions", part_name(index), schema=PARTITIONS)
        self.partitions = 0

    def add(self, row: tuple, objects: Iterable[Mapping]) -> None:
        """A partition's :func:`~.analyze.partition_row` and the objects printed for it."""
        topic, partition = row[0], row[1]
        for o in objects:
            self._objects.add((topic, partition, o["type"], json.dumps(o, separators=(",", ":"))))
        self._partitions.add(row)
        self.partitions += 1

    def close(self) -> None:
        self._objects.close()
        self._partitions.close()


def prepare_analysis(scan_dir: str) -> None:
    """An empty staging directory (what an interrupted analysis left is dropped)."""
    staging = staging_dir(scan_dir)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)


def publish_analysis(scan_dir: str) -> None:
    """The staged tables (an empty one where no analyser wrote a row) moved into place, replacing
    an earlier analysis, each then marked complete; the staging directory removed."""
    staging = staging_dir(scan_dir)
    for name, schema in (("objects", OBJECTS), ("partitions", PARTITIONS)):
        directory, target = staging / name, staging.parent / name
        if not directory.is_dir():
            directory.mkdir()
            pq.write_table(schema.empty_table(), str(directory / "part-empty.parquet"))
        shutil.rmtree(target, ignore_errors=True)
        directory.rename(target)
        (target / tables.SUCCESS_MARKER).touch()
    shutil.rmtree(staging)


def iter_partition_objects(scan_dir: str) -> Iterator[tuple[dict, ...]]:
    """Each partition's objects, as ``analysis/objects`` holds them, in topic and partition
    order; one row group in memory at a time."""
    files = sorted((Path(scan_dir) / ANALYSIS_DIR / "objects").glob("part-*.parquet"))
    current: list[dict] = []
    key = None
    for file in files:
        for batch in pq.ParquetFile(str(file)).iter_batches(columns=["topic", "partition", "object"]):
            topics, parts, objects = (batch.column(i).to_pylist() for i in range(3))
            for row_key, text in zip(zip(topics, parts), objects):
                if row_key != key and current:
                    yield tuple(current)
                    current = []
                key = row_key
                current.append(json.loads(text))
    if current:
        yield tuple(current)
