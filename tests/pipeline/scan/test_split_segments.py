"""Large segments are split into stretches at batch boundaries (issue 10): the tables a split
scan writes are row for row those of a scan that walks every segment whole — for a clean
segment, one with CRC damage (Kafka reads on past it, so the split stands), one with garbage
in the middle (the split fails and the segment is walked again whole), and one whose last
stretch holds offsets that go backwards (checks across stretches); and so are those a split scan
writes through Spark's writer at a URI (the failed split's rows left out there too).
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.logdir.meta_properties import build_meta_properties

pyarrow_parquet = pytest.importorskip("pyarrow.parquet",
                                      reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

TABLES = ("segments", "batches", "markers", "findings", "records")


def _segment(first_offset: int, batches: int, *, epoch_at=lambda i: 1 + i // 150) -> bytes:
    out = []
    for i in range(batches):
        base = first_offset + 3 * i
        records = [NewRecord(base + j, 1_700_000_000_000 + base + j, b"k%d" % j, bytes(200) + b"%d" % i)
                   for j in range(3)]
        out.append(build_batch(records, base_offset=base, partition_leader_epoch=epoch_at(i)))
    return b"".join(out)


def _fleet(root: Path) -> None:
    log_dir = root / "broker-1" / "data"
    log_dir.mkdir(parents=True)
    (log_dir / "meta.properties").write_bytes(build_meta_properties({"version": "0", "broker.id": "1"}))
    clean = _segment(0, 400)
    cases = {"clean": clean}
    crc = bytearray(clean)
    crc[len(crc) // 2] ^= 0x10
    cases["crc"] = bytes(crc)
    middle = len(clean) // 2
    cases["garbage"] = clean[:middle - middle % 700] + b"\x01" * 999 + clean[middle - middle % 700:]
    cases["backwards"] = clean[: len(clean) * 3 // 4] + _segment(30, 100)
    for name, data in cases.items():
        (log_dir / f"{name}-0").mkdir()
        (log_dir / f"{name}-0" / "00000000000000000000.log").write_bytes(data)


def _scan(evidence: Path, out: Path, *, mounted: bool = False) -> dict:
    """A scan into ``out``, or with ``mounted`` into a ``viewfs://`` URI mounted on it."""
    target = ["--output-dir", str(out)] if not mounted else [
        "--output-dir", "viewfs://split/tables", "--conf", f"spark.hadoop.fs.viewfs.mounttable.split.link./tables=file://{out}",
        "--conf", "spark.hadoop.fs.viewfs.impl.disable.cache=true"]
    result = CliRunner().invoke(app, ["fleet", "scan", str(evidence), *target, "--master", "local[2]",
                                      "--records", "-f", "ndjson"])
    assert result.exit_code == 1, result.output  # the damaged segments have findings
    (obj,) = [json.loads(line) for line in result.stdout.splitlines()]
    return obj


def _rows(out: Path, table: str) -> list[tuple]:
    rows = pyarrow_parquet.read_table(out / table).to_pylist()
    # where Spark wrote the table, a uint64 column is decimal(20,0) (Spark has no unsigned type)
    rows = [{k: int(v) if isinstance(v, Decimal) else v for k, v in r.items()} for r in rows]
    return sorted((tuple(sorted(r.items())) for r in rows), key=repr)


def test_a_split_scan_writes_exactly_the_tables_of_a_whole_scan(tmp_path, monkeypatch) -> None:
    from kreplica.pipeline.scan import run as scan
    from kreplica.pipeline.tables import schemas as tables

    _fleet(tmp_path / "evidence")
    whole = _scan(tmp_path / "evidence", tmp_path / "whole")
    stretches = []
    real_plan = scan.plan_stretches

    def plan(segments, parallelism):
        out = real_plan(segments, 8)  # as many cores as segments need stretches
        stretches.extend(out)
        return out

    monkeypatch.setattr(scan, "MIN_STRETCH", 4096)
    monkeypatch.setattr(scan, "plan_stretches", plan)
    split = _scan(tmp_path / "evidence", tmp_path / "split")
    assert {s.files.log.split("/")[-2] for s in stretches if s.chunks > 1} == {"clean-0", "crc-0", "garbage-0",
                                                                                  "backwards-0"}
    assert {**split, "out": None} == {**whole, "out": None}
    for table in TABLES:
        assert _rows(tmp_path / "split", table) == _rows(tmp_path / "whole", table), table
    kinds = {r["kind"] for r in pyarrow_parquet.read_table(tmp_path / "split" / "findings").to_pylist()}
    assert {"crc_mismatch", "resynchronised", "offset_regression", "epoch_regression"} <= kinds
    (tmp_path / "at-uri").mkdir()
    at_uri = _scan(tmp_path / "evidence", tmp_path / "at-uri", mounted=True)
    assert {**at_uri, "out": None} == {**whole, "out": None}
    for table in TABLES:
        assert _rows(tmp_path / "at-uri", table) == _rows(tmp_path / "whole", table), table
    # no control batch here: Spark's writer still leaves a file with the table's columns
    assert pyarrow_parquet.read_table(tmp_path / "at-uri" / "markers").schema.names == tables.MARKERS.names
