"""``fleet analyze`` gives one answer wherever it runs (issue 22): in the driver for small tables,
or as one Spark job; and ``fleet run`` is ``fleet scan`` then ``fleet analyze``.

The fleet is ``tests/pipeline/test_fleet.py``'s (its scenarios, sample, damaged and oracle
partitions); that module proves the driver's answers equal the single-partition commands'. Here
``fleet run`` scans and analyses it in the driver, and ``fleet analyze`` forced onto Spark
(``KREPLICA_FLEET_ANALYZE=spark``) must print the same objects and write the same tables. The
Spark job's map and reduce functions are also checked without Spark, on the same tables.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app

pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from kreplica.pipeline.analyze import tables as analysis_tables  # noqa: E402
from kreplica.pipeline.analyze import run as analyze_run  # noqa: E402
from tests.builders.fleet import build_fleet  # noqa: E402


def _objects(result) -> list[dict]:
    assert result.exit_code in (0, 1), result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _table_rows(scan_dir: Path) -> dict[str, list[str]]:
    return {name: sorted(map(repr, pq.read_table(str(scan_dir / "analysis" / name)).to_pylist()))
            for name in ("objects", "partitions")}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    topics = build_fleet(root / "evidence")
    out = root / "tables"
    result = CliRunner().invoke(app, ["fleet", "run", str(root / "evidence"), "--output-dir", str(out), "--master",
                                      "local[2]", "-f", "ndjson"])
    return out, result, _table_rows(out), len(topics)


def test_fleet_run_prints_the_scan_then_the_analysis_and_exits_as_the_worse(ran) -> None:
    out, result, _, partitions = ran
    objects = _objects(result)
    assert objects[0]["type"] == "fleet_scan" and objects[0]["out"] == str(out)
    # every partition of the fleet: 25 from fixtures/, and the oracle's where ../shared is beside
    assert objects[-1]["type"] == "fleet_summary" and objects[-1]["partitions"] == partitions >= 25
    assert {o["type"] for o in objects[1:-1]} >= {"epochs", "truncation", "divergence", "fleet_partition"}
    assert result.exit_code == 1  # damaged logs, divergent replicas
    again = CliRunner().invoke(app, ["fleet", "analyze", str(out), "-f", "ndjson"])
    assert _objects(again) == objects[1:]


def test_analysis_on_spark_prints_and_writes_what_the_driver_does(ran, monkeypatch) -> None:
    out, result, in_driver, _ = ran
    monkeypatch.setenv(analyze_run.PLACE_ENV, "spark")
    on_spark = CliRunner().invoke(app, ["fleet", "analyze", str(out), "--master", "local[2]", "-f", "ndjson"])
    assert _objects(on_spark) == _objects(result)[1:]
    assert _table_rows(out) == in_driver
    parts = sorted((out / "analysis" / "objects").glob("part-0*.parquet"))
    assert len(parts) > 1, "the job's reduce tasks each wrote their range of partitions"
    assert (out / "analysis" / "objects" / "_SUCCESS").is_file() and not (out / "analysis" / "_temporary").exists()


def test_the_spark_jobs_map_and_reduce_gather_what_the_driver_gathers(ran) -> None:
    out, _, _, _ = ran
    in_driver = list(analysis_tables.partition_groups(analysis_tables.read_scan_tables(str(out))))
    files = analyze_run._parquet_files(str(out))
    ranges = analyze_run._key_ranges(str(out), 3)
    assert sorted(ranges) == [key for key, _ in in_driver]
    # map tasks each with some of the files, in any order; each reduce task gets its range's rows
    shuffled = [pair for half in (files[1::2], files[::2]) for pair in analyze_run.keyed_rows(half, ranges)]
    gathered = [item for r in range(3) for item in analyze_run._gathered(p for p in shuffled if ranges[p[0]] == r)]
    assert gathered == in_driver


def test_key_ranges_follow_topic_and_partition_order_and_share_the_bytes(ran) -> None:
    out, _, _, _ = ran
    ranges = analyze_run._key_ranges(str(out), 4)
    numbers = [ranges[key] for key in sorted(ranges)]
    assert numbers == sorted(numbers) and set(numbers) == {0, 1, 2, 3}


def test_partitions_without_a_replica_row_are_left_out_and_rows_keep_their_order() -> None:
    def table(rows: list[tuple]) -> pa.Table:
        return pa.table({"topic": [r[0] for r in rows], "partition": [r[1] for r in rows],
                         "n": [r[2] for r in rows]})

    replicas = table([("b", 0, 1), ("a", 1, 2), ("a", 0, 3)])
    batches = table([("a", 0, 10), ("z", 9, 11), (None, None, 12), ("a", 0, 13), ("a", 1, 14), ("0", 0, 15)])
    empty = table([])
    groups = list(analysis_tables.partition_groups(
        [analysis_tables.sorted_by_partition(t) for t in (replicas, empty, batches, empty, empty)]))
    assert [key for key, _ in groups] == [("a", 0), ("a", 1), ("b", 0)]
    assert [[r["n"] for r in rows[2]] for _, rows in groups] == [[10, 13], [14], []]


def test_small_tables_are_analysed_in_the_driver_unless_told(ran, monkeypatch) -> None:
    out, _, _, _ = ran
    monkeypatch.delenv(analyze_run.PLACE_ENV, raising=False)
    assert analyze_run.runs_in_driver(str(out))
    monkeypatch.setattr(analyze_run, "DRIVER_MAX_BYTES", 1000)
    assert not analyze_run.runs_in_driver(str(out))
    monkeypatch.setenv(analyze_run.PLACE_ENV, "driver")
    assert analyze_run.runs_in_driver(str(out))


def test_the_fleets_spark_makes_its_sql_session_only_when_asked() -> None:
    from kreplica.pipeline.spark.session import spark_session

    with spark_session("local[1]") as spark:
        assert spark._session is None and spark._jvm is spark.sparkContext._jvm
        assert spark.sparkContext.parallelize(range(3), 2).sum() == 3
        assert spark._session is None  # the fleet's jobs run on the context alone
        assert spark.createDataFrame([(1,), (2,)], "n int").count() == 2
        assert spark._session is not None and spark._session.sparkContext is spark.sparkContext
