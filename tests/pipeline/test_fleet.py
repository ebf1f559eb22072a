"""``fleet scan`` and ``fleet analyze`` on Spark's embedded local mode agree, partition by
partition, with what ``truncate-plan``, ``diverge``, ``epochs`` and ``inspect-log`` say about the
same replica directories.

The fleet is built once per module from the repository's replication scenarios (divergence,
unclean truncation, transactions, retention, legacy format), its damaged segments and sample
logs, and the oracle's Kafka-written partitions: several brokers, a log directory per source on
each broker (so several per broker), and dozens of partitions.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.logdir.meta_properties import build_meta_properties
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint, parse_offset_checkpoint
from tests.conftest import FIXTURES
from tests.builders.fleet import build_fleet

pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)


def run(*args: str) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(app, [*args, "-f", "ndjson"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, dict[str, list[Path]], int, list[dict]]:
    root = tmp_path_factory.mktemp("fleet")
    topics = build_fleet(root / "evidence")
    out = root / "tables"
    code, (scan_obj,) = run("fleet", "scan", str(root / "evidence"), "--output-dir", str(out), "--master", "local[2]",
                            "--records", "--record-bytes")
    assert scan_obj["type"] == "fleet_scan" and code == (1 if scan_obj["errors"] else 0)
    _, objs = run("fleet", "analyze", str(out), "--master", "local[2]")
    return out, topics, scan_obj, objs


def _by_partition(objs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    current: list[dict] = []
    for o in objs:
        if o["type"] == "fleet_summary":
            continue
        current.append(o)
        if o["type"] == "fleet_partition":
            out[o["partition"]] = current
            current = []
    assert not current
    return out


def test_the_fleet_has_dozens_of_partitions_on_several_brokers_and_log_dirs(fleet) -> None:
    _, topics, scan_obj, objs = fleet
    assert len(topics) >= 24 and scan_obj["replicas"] == sum(len(r) for r in topics.values())
    per_broker = Counter(p.parents[1].name for replicas in topics.values() for p in replicas)
    log_dirs = {(p.parents[1].name, p.parent.name) for replicas in topics.values() for p in replicas}
    several = [broker for broker in per_broker if sum(1 for b, _ in log_dirs if b == broker) > 1]
    # fixtures/ alone: brokers 1, 2, 3 and 7, three of them with several log dirs (broker 8, the
    # oracle's, is there only where ../shared is)
    assert len(per_broker) >= 4 and len(several) >= 3
    summary = objs[-1]
    assert summary["type"] == "fleet_summary" and summary["partitions"] == len(topics)
    assert summary["committed_loss_partitions"] >= 1 and summary["divergent_partitions"] >= 1


def test_truncation_divergence_and_epochs_equal_the_single_partition_commands(fleet) -> None:
    _, topics, _, objs = fleet
    results = _by_partition(objs)
    assert set(results) == {f"{t}-0" for t in topics}
    for topic, replicas in topics.items():
        got = results[f"{topic}-0"]
        summary = got[-1]
        by_label = {f"broker-{p.parents[1].name.removeprefix('broker-')}": p for p in replicas}
        assert summary["replicas"] == list(by_label)
        _, epochs = run("epochs", *map(str, replicas))
        assert [o for o in got if o["type"] in ("epochs", "finding")] == epochs, topic
        if len(replicas) > 1:
            leader = by_label[summary["leader"]]
            followers = [p for label, p in by_label.items() if label != summary["leader"]]
            args = ["truncate-plan", "--leader", str(leader)]
            for f in followers:
                args += ["--follower", str(f)]
            _, plans = run(*args)
            assert [o for o in got if o["type"] == "truncation"] == plans, topic
            _, divergences = run("diverge", *map(str, replicas))
            assert [o for o in got if o["type"] == "divergence"] == divergences, topic
            lost = sum(1 for p in plans if p["committed_loss"])
            assert len(summary["followers_losing_committed"]) == lost


def test_scan_findings_equal_inspect_log_on_every_replica(fleet) -> None:
    import pyarrow.parquet as pq

    out, topics, scan_obj, _ = fleet
    table = pq.read_table(out / "findings").to_pylist()
    scanned = Counter((r["path"], r["position"], r["kind"], r["message"]) for r in table if r["path"].endswith(".log"))
    expected: Counter = Counter()
    for replicas in topics.values():
        for p in replicas:
            _, objs = run("inspect-log", str(p), "--records")  # the scan ran with --records
            expected.update((o["path"], o["position"], o["kind"], o["message"]) for o in objs
                            if o["type"] == "finding" and o["path"].endswith(".log"))
    assert scanned == expected and scanned
    assert scan_obj["errors"] >= 1
    across = [m for (path, _, kind, m) in scanned if kind == "offset_regression" and "damaged.spliced" in path]
    assert across and all(" of /" in m for m in across)  # found against the batch of the segment before
    per_file = Counter(r["path"] for r in table)
    assert {s["file"]: s["findings"] for s in pq.read_table(out / "segments").to_pylist()} == {
        s["file"]: per_file[s["file"]] for s in pq.read_table(out / "segments").to_pylist()}


def test_batches_table_holds_every_batch_header_once(fleet) -> None:
    import pyarrow.parquet as pq

    out, topics, scan_obj, _ = fleet
    batches = pq.read_table(out / "batches", columns=["file", "position"]).to_pylist()
    assert len(batches) == scan_obj["batches"] == len({(r["file"], r["position"]) for r in batches})
    segments = pq.read_table(out / "segments").to_pylist()
    assert len(segments) == scan_obj["segments"] and sum(s["size"] for s in segments) == scan_obj["bytes"]


def test_records_table_equals_inspect_log_records(fleet) -> None:
    import base64

    import pyarrow.parquet as pq
    import xxhash

    out, topics, scan_obj, _ = fleet
    table = pq.read_table(out / "records").to_pylist()
    assert len(table) == scan_obj["records"]
    got = {(r["file"], r["offset"]): r for r in table}
    expected = 0
    for replicas in topics.values():
        for p in replicas:
            _, objs = run("inspect-log", str(p), "--records")
            for o in (o for o in objs if o["type"] == "record"):
                expected += 1
                row = got[(o["path"], o["offset"])]
                for field in ("key", "value"):
                    raw = None if o[field] is None else base64.b64decode(o[field])
                    assert row[field] == raw and row[f"{field}_size"] == (-1 if raw is None else len(raw))
                    assert row[f"{field}_xxhash"] == (None if raw is None else xxhash.xxh64_intdigest(raw))
                assert (row["timestamp"], row["batch_position"]) == (o["timestamp"], o["batch_position"])
    assert expected == len(table) > 1000


def test_leaders_file_chooses_the_leader(fleet, tmp_path: Path) -> None:
    out, topics, _, _ = fleet
    replicas = topics["kip101-scenario-1"]
    doc = {"partitions": [{"topic": "kip101-scenario-1", "partition": 0, "leader": 2}]}
    (tmp_path / "leaders.json").write_text(json.dumps(doc))
    _, objs = run("fleet", "analyze", str(out), "--leaders", str(tmp_path / "leaders.json"), "--master", "local[1]")
    got = _by_partition(objs)["kip101-scenario-1-0"]
    assert got[-1]["leader"] == "broker-2" and got[-1]["leader_source"] == "leaders file"
    _, plans = run("truncate-plan", "--leader", str(replicas[1]), "--follower", str(replicas[0]))
    assert [o for o in got if o["type"] == "truncation"] == plans


def test_scan_refuses_to_write_over_earlier_output(fleet) -> None:
    out, _, _, _ = fleet
    result = CliRunner().invoke(app, ["fleet", "scan", str(FIXTURES / "scenarios" / "kip101-scenario-1"),
                                      "--output-dir", str(out)])
    assert result.exit_code == 2 and "not an empty directory" in result.output
