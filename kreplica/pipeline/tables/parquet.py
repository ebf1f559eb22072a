"""The Parquet files a fleet scan's tasks write themselves, with Arrow: one file per table and
task (``<out>/<table>/part-<part>.parquet``, in a staging directory until every table is complete,
:func:`publish_tables`), in bounded row groups, so a task's memory does not grow with segment size
and no row passes through the driver (the departure from Spark's own DataFrame writer is in
``kreplica/CONTRIBUTING.md``). The schemas are :mod:`.tables`'.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kreplica.formats.log.batch import RecordBatch
from kreplica.pipeline.tables import schemas as tables

ROW_GROUP = 1 << 16
#: The published tables, and the in-segment check findings stage 3 completes into ``findings``.
_SCHEMAS = {**tables.TABLES, "_checks": tables.FINDINGS}


class TableWriter:
    """Rows of one table, written as one Parquet file in row groups of :data:`ROW_GROUP` rows
    (``schema``: a table other than the scan's)."""

    def __init__(self, out: Path, table: str, part: str, relabel=None, schema: pa.Schema | None = None) -> None:
        self.schema = _SCHEMAS[table] if schema is None else schema
        self.path = out / table / f"part-{part}.parquet"
        self._rows: list[tuple] = []
        self._writer: pq.ParquetWriter | None = None
        self._relabel = relabel
        self.rows_added = 0

    def add(self, row: tuple | dict) -> None:
        if self._relabel is not None:
            row = self._relabel(row)
        if isinstance(row, dict):
            row = tuple(row[name] for name in self.schema.names)
        self._rows.append(row)
        self.rows_added += 1
        if len(self._rows) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        columns = [pa.array(col, type=field.type) for col, field in zip(zip(*self._rows), self.schema)]
        self._rows.clear()
        self._write(columns)

    def _write(self, columns: list) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(str(self.path), self.schema)
        self._writer.write_table(pa.Table.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()


class BatchWriter(TableWriter):
    """The ``batches`` table: headers kept as the walker yields them, a replica key per run of
    them, and turned into columns only when a row group is written (no row tuple per batch)."""

    def __init__(self, out: Path, table: str, part: str, relabel=None) -> None:
        super().__init__(out, table, part, relabel)
        self._runs: list[tuple[tuple, list[RecordBatch]]] = []
        self._pending = 0

    def add_run(self, key: tuple, batches: list[RecordBatch]) -> None:
        self._runs.append((key, batches))
        self._pending += len(batches)
        self.rows_added += len(batches)
        if self._pending >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._runs:
            return
        columns: list[list] = [[] for _ in self.schema]
        n_key = len(tables.KEY_COLUMNS)
        for key, batches in self._runs:
            for i, value in enumerate(key):
                columns[i].extend([value] * len(batches))
            for i, values in enumerate(zip(*batches), n_key):
                columns[i].extend(values)
        for column, (word, _) in tables.WORD_COLUMNS.items():
            i = self.schema.get_field_index(column)
            columns[i] = list(map(word, columns[i]))
        self._runs, self._pending = [], 0
        self._write([pa.array(col, type=field.type) for col, field in zip(columns, self.schema)])


class PartWriters(dict):
    """A part's table writers, opened on first use; ``relabel`` maps each row's staged paths."""

    def __init__(self, out: Path, part: str, relabel=None) -> None:
        super().__init__()
        self._out, self._part, self._relabel = out, part, relabel

    def __missing__(self, table: str) -> TableWriter:
        writer = self[table] = (BatchWriter if table == "batches" else TableWriter)(self._out, table, self._part,
                                                                                     self._relabel)
        return writer

    def close(self) -> None:
        for w in self.values():
            w.close()


def write_empty_tables(out: Path, records: bool) -> None:
    """Every table readable even when no task wrote a row to it."""
    for name in (*tables.SCAN_TABLES, *tables.COORDINATOR_TABLES, *(("records",) if records else ())):
        directory = out / name
        if not directory.is_dir() or not any(directory.glob("*.parquet")):
            directory.mkdir(parents=True, exist_ok=True)
            pq.write_table(_SCHEMAS[name].empty_table(), str(directory / "part-empty.parquet"))


def publish_tables(staging: Path, out: Path) -> None:
    """The tables written under ``staging`` moved into ``out`` one by one, each marked complete
    (:data:`~.tables.SUCCESS_MARKER`) once in place, then ``staging`` removed: a scan cut short
    leaves no table that looks complete."""
    for directory in sorted(p for p in staging.iterdir() if p.is_dir() and p.name in tables.TABLES):
        target = out / directory.name
        directory.rename(target)
        (target / tables.SUCCESS_MARKER).touch()
    shutil.rmtree(staging)
