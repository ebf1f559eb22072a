"""``fleet scan`` on evidence only Spark's Hadoop connectors can read, into an output only they
can write, writes exactly the tables a scan of the same files on a local path writes into a local
directory, every path given as its URI; ``fleet analyze`` of those tables, read where they are,
then says the same.

The remote file system is Hadoop's ``viewfs://``, a real Hadoop scheme mounted here over the
test's directory with ``--conf`` (no network in tests): kreplica cannot map or open such a path
itself, so everything it reads came through Spark. The fleet is the one of ``test_fleet`` plus
what Spark's own file listing would hide or that the log-directory readers read: an internal
topic (``__consumer_offsets-0``), producer snapshots, ``partition.metadata``, and the
``.kafka_cleanshutdown`` markers the scenarios carry.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.logdir.partition_metadata import build_partition_metadata
from kreplica.formats.log.producer_snapshot import ProducerSnapshotEntry, build_producer_snapshot
from tests.conftest import FIXTURES
from tests.builders.fleet import build_fleet, place

pq = pytest.importorskip("pyarrow.parquet",
                         reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

MOUNT = "viewfs://fleet/evidence"
OUT = "viewfs://fleet/tables"
TABLES = ("replicas", "segments", "batches", "markers", "findings", "records")


def _mount(root: Path, tables: Path | None = None) -> list[str]:
    """``--conf`` mounting ``root`` at :data:`MOUNT` (and ``tables`` at :data:`OUT`)."""
    links = [f"spark.hadoop.fs.viewfs.mounttable.fleet.link./evidence=file://{root}"]
    if tables is not None:
        links.append(f"spark.hadoop.fs.viewfs.mounttable.fleet.link./tables=file://{tables}")
    return [arg for conf in (*links, "spark.hadoop.fs.viewfs.impl.disable.cache=true") for arg in ("--conf", conf)]


def _run(*args: str) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(app, [*args, "-f", "ndjson"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def _hidden_and_read_files(root: Path) -> None:
    internal = root / "broker-7" / "data-internal"
    place(FIXTURES / "logs", "orders-0", internal, "__consumer_offsets", broker=7)
    partition = internal / "__consumer_offsets-0"
    (partition / "partition.metadata").write_bytes(build_partition_metadata("vNhmCk5sRDewvuOiy9pPXg"))
    (partition / "00000000000000000017.snapshot").write_bytes(build_producer_snapshot(
        [ProducerSnapshotEntry(4000, 0, 9, 16, 0, 1_700_000_000_000, -1, -1)]))
    (partition / "00000000000000000038.snapshot").write_bytes(b"\x00\x01 not a snapshot")


@pytest.fixture(scope="module")
def scans(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("remote")
    evidence = root / "evidence"
    build_fleet(evidence)
    _hidden_and_read_files(evidence)
    local, fetched = root / "local", root / "fetched"
    code_local, (local_obj,) = _run("fleet", "scan", str(evidence), "--output-dir", str(local), "--master", "local[2]",
                                    "--records")
    code, (obj,) = _run("fleet", "scan", MOUNT, "--output-dir", OUT, "--master", "local[2]", "--records",
                        *_mount(evidence, fetched))
    assert (code, obj) == (code_local, {**local_obj, "out": OUT})
    return evidence, local, fetched


def _rows(out: Path, table: str, local_root: Path | None = None) -> list[str]:
    """The rows of a table, as sorted JSON; a ``decimal(20,0)`` (where Spark wrote a ``uint64``
    column: it has no unsigned type) as the integer it holds."""
    rows = []
    for row in pq.read_table(out / table).to_pylist():
        text = json.dumps(row, sort_keys=True, default=int)
        rows.append(text.replace(str(local_root), MOUNT) if local_root else text)
    return sorted(rows)


@pytest.mark.parametrize("table", TABLES)
def test_a_scan_through_spark_writes_the_tables_of_a_local_scan(scans, table) -> None:
    evidence, local, fetched = scans
    expected = _rows(local, table, evidence)
    assert expected, f"the fleet gives {table} rows"
    assert _rows(fetched, table) == expected


def test_names_spark_hides_and_files_the_readers_read_came_through(scans) -> None:
    _, _, fetched = scans
    replicas = pq.read_table(fetched / "replicas").to_pylist()
    internal = [r for r in replicas if r["topic"] == "__consumer_offsets"]
    assert len(internal) == 1 and internal[0]["dir"] == f"{MOUNT}/broker-7/data-internal/__consumer_offsets-0"
    assert internal[0]["topic_id"] == "vNhmCk5sRDewvuOiy9pPXg"
    assert any(r["clean_shutdown"] for r in replicas)
    findings = pq.read_table(fetched / "findings").to_pylist()
    assert any(f["path"] == f"{MOUNT}/broker-7/data-internal/__consumer_offsets-0/00000000000000000038.snapshot"
               for f in findings)
    assert all(f["path"] is None or f["path"].startswith(MOUNT) for f in findings)


def test_analyze_says_the_same_of_both_scans(scans) -> None:
    evidence, local, fetched = scans
    code_local, local_objs = _run("fleet", "analyze", str(local), "--master", "local[2]")
    code, objs = _run("fleet", "analyze", OUT, "--master", "local[2]", *_mount(evidence, fetched))
    assert {p.name for p in (fetched / "analysis").iterdir()} == {"objects", "partitions"}
    assert all((fetched / "analysis" / name / "_SUCCESS").is_file() for name in ("objects", "partitions"))
    assert code == code_local
    local_objs = [json.loads(json.dumps(o).replace(str(evidence), MOUNT)) for o in local_objs]
    assert len(objs) == len(local_objs)
    unread = 0
    for o, expected in zip(objs, local_objs):
        if o["type"] == "divergence" and o["records_unread"] is not None:
            # where batches differ, records are read from the evidence; a remote segment is not
            # read again from the driver, so the range is not compared, and says why
            unread += 1
            assert "only Spark reads" in o["records_unread"] and o["records_unread"].startswith(MOUNT)
            assert [(r["first"], r["last"]) for r in o["ranges"] if r["kind"] == "batches_differ"]
            assert all(r["kind"] in ("batches_differ", "same_records") or r["kind"].startswith("only_")
                       for r in o["ranges"])
        elif o["type"] == "fleet_partition" and o["notes"] != expected["notes"]:
            # ranges not compared count as differing (never a silent "same"), so a pair whose local
            # records are the same may count here
            assert any("could not be read" in n for n in o["notes"])
            assert o["divergent_pairs"] >= expected["divergent_pairs"]
            assert {**o, "notes": None, "divergent_pairs": None} == {**expected, "notes": None, "divergent_pairs": None}
        elif o["type"] == "fleet_summary":
            assert o["divergent_partitions"] >= expected["divergent_partitions"]
            assert {**o, "divergent_partitions": None} == {**expected, "divergent_partitions": None}
        else:
            assert o == expected
    assert unread >= 1   # the fleet has replicas whose batches differ


def test_a_scheme_without_its_connector_is_a_usage_error(tmp_path) -> None:
    result = CliRunner().invoke(app, ["fleet", "scan", "s3a://bucket/fleet", "--output-dir", str(tmp_path / "out"),
                                      "--master", "local[1]"])
    assert result.exit_code == 2
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("kreplica: error:")]
    assert line.startswith("kreplica: error: s3a://bucket/fleet: ") and "connector" in line


def test_a_remote_output_holding_files_is_refused(scans, tmp_path) -> None:
    evidence, _, _ = scans
    (tmp_path / "earlier").write_text("")
    result = CliRunner().invoke(app, ["fleet", "scan", str(evidence), "--output-dir", OUT, "--master", "local[1]",
                                      *_mount(evidence, tmp_path)])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("kreplica: error:")]
    assert line == (f"kreplica: error: {OUT}: exists and is not an empty directory: fleet scan never writes over "
                    "earlier output")
    assert [p.name for p in tmp_path.iterdir()] == ["earlier"]


def test_tables_at_a_uri_are_checked_where_they_are(scans, tmp_path) -> None:
    from kreplica.formats.mapped import EvidenceError
    from kreplica.pipeline.analyze.partitions import check_scan_dir
    from kreplica.pipeline.spark.hadoop_files import HadoopFiles
    from kreplica.pipeline.spark.session import spark_session

    evidence, _, fetched = scans
    unmarked = tmp_path / "unmarked"
    shutil.copytree(fetched, unmarked)
    (unmarked / "markers" / "_SUCCESS").unlink()
    conf = {k: v for k, _, v in (pair.partition("=") for pair in _mount(evidence, unmarked)[1::2])}
    with spark_session("local[1]", conf=conf) as spark:
        files = HadoopFiles(spark)
        with pytest.raises(EvidenceError, match=r"the markers table is incomplete \(no _SUCCESS"):
            check_scan_dir(OUT, files)
        (unmarked / "markers" / "_SUCCESS").touch()
        check_scan_dir(OUT, files)
        assert files.read(f"{OUT}/markers/_SUCCESS", 0, 0) == b""


def test_listing_in_bulk_equals_listing_entry_by_entry(scans, monkeypatch, tmp_path) -> None:
    from kreplica.pipeline.evidence import remote as remote
    from kreplica.pipeline.spark.session import spark_session

    evidence, _, _ = scans
    by_entry = []
    one_by_one = remote._Lister.one_by_one
    monkeypatch.setattr(remote._Lister, "one_by_one", staticmethod(lambda st: by_entry.append(1) or one_by_one(st)))
    conf = {k: v for k, _, v in (pair.partition("=") for pair in _mount(evidence)[1::2])}
    with spark_session("local[1]", conf=conf) as spark:
        bulk = remote.list_tree(spark, f"file://{evidence}")
        assert not by_entry, "file:// statuses print themselves: every directory listed in bulk"
        viewfs = remote.list_tree(spark, MOUNT)
        assert by_entry, "viewfs statuses do not: listed entry by entry"
        # names that would break the printed statuses: that directory is listed entry by entry
        odd = tmp_path / "odd" / "broker-1"
        odd.mkdir(parents=True)
        for name in ("x; isDirectory=true; length=9; y", "new\nline", "plain"):
            (odd / name).write_bytes(b"12345")
        by_entry.clear()
        listed = remote.list_tree(spark, f"file://{tmp_path / 'odd'}")
        assert by_entry == [1]
        assert [(e.rel, e.is_dir, e.size) for e in listed.entries] == [
            ("broker-1", True, 0), ("broker-1/new\nline", False, 5), ("broker-1/plain", False, 5),
            ("broker-1/x; isDirectory=true; length=9; y", False, 5)]
    assert bulk.entries == viewfs.entries and bulk.contents == viewfs.contents
    assert any(e.rel.endswith("/__consumer_offsets-0") and e.is_dir for e in bulk.entries)
    assert any(rel.endswith("/.kafka_cleanshutdown") for rel in bulk.contents)


def test_on_separate_executor_processes_the_tables_are_the_same(scans, tmp_path, monkeypatch) -> None:
    # local-cluster runs two executor JVMs of their own, as a cluster would: nothing the scan
    # needs may live only in the driver (the listing ships by broadcast, the mount by --conf),
    # and each executor keeps the row groups of its own tasks until Spark writes the tables.
    # Every segment is read in ranges here, ranges of 4 KiB, so most batches lie across two
    from kreplica.pipeline.scan import remote_ranges as remote_ranges, remote as remote_scan

    monkeypatch.setattr(remote_scan, "WHOLE_FETCH_LIMIT", 0)
    monkeypatch.setattr(remote_ranges, "RANGE_BYTES", 4096)
    evidence, local, _ = scans
    code, _ = _run("fleet", "scan", MOUNT, "--output-dir", OUT, "--master", "local-cluster[2,1,1024]",
                   "--records", *_mount(evidence, tmp_path))
    for table in TABLES:
        assert _rows(tmp_path, table) == _rows(local, table, evidence), table
