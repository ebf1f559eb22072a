"""``fleet scan``'s ``group_offsets`` and ``transactions`` tables, and ``fleet analyze``'s
``consumer_impact``, against the single-partition commands on the same directories.

The fleet: broker 1 with two log directories (``fixtures/scenarios/unclean-with-groups/broker-1``
and ``fixtures/transactions/broker-1``), broker 2 with one (``unclean-with-groups/broker-2``).
The tables must hold, row for row, what ``kreplica groups -f json`` gives for each
``__consumer_offsets`` replica and ``kreplica transactions`` for the ``__transaction_state``
one; ``fleet analyze`` must give orders-0 the consumer_impact objects ``truncate-plan`` gives for
the same leader (broker 1: the highest last epoch, 3) and follower.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

import pyarrow.parquet as pq  # noqa: E402

S = FIXTURES / "scenarios" / "unclean-with-groups"
KEY = ("broker", "log_dir", "topic", "partition")


def run(*args: str, fmt: str = "ndjson") -> list[dict]:
    result = CliRunner().invoke(app, [*args, "-f", fmt])
    assert result.exit_code in (0, 1), result.output
    if fmt == "json":
        return json.loads(result.stdout)
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, Path, list[dict]]:
    root = tmp_path_factory.mktemp("fleet")
    evidence = root / "evidence"
    shutil.copytree(S / "broker-1", evidence / "1" / "groups")
    shutil.copytree(FIXTURES / "transactions" / "broker-1", evidence / "1" / "txn")
    shutil.copytree(S / "broker-2", evidence / "2" / "groups")
    out = root / "tables"
    run("fleet", "scan", str(evidence), "--output-dir", str(out), "--master", "local[1]")
    return evidence, out, run("fleet", "analyze", str(out), "--master", "local[1]")


def test_group_offsets_rows_are_what_groups_gives(fleet) -> None:
    evidence, out, _ = fleet
    rows = pq.read_table(str(out / "group_offsets")).to_pylist()
    for broker in (1, 2):
        log_dir = evidence / str(broker) / "groups"
        mine = [r for r in rows if r["broker"] == broker]
        assert {(r["log_dir"], r["topic"]) for r in mine} == {(str(log_dir), "__consumer_offsets")}
        got = sorted((json.dumps({("topic" if k == "committed_topic" else "partition" if k == "committed_partition"
                                   else k): v for k, v in r.items() if k not in (*KEY, "replica_log_end_offset")},
                                 sort_keys=True) for r in mine))
        objs = run("groups", str(log_dir), fmt="json")
        want = sorted(json.dumps({k: v for k, v in o.items() if k not in ("type", "label")}, sort_keys=True)
                      for o in objs if o["type"] == "group_offset")
        assert got == want and len(got) == 6
        # every row carries its replica's log end, which picks the replica that answers
        ends = {o["coordinator_partition"]: o["log_end_offset"] for o in objs if o["type"] == "group_partition"}
        assert {(r["coordinator_partition"], r["replica_log_end_offset"]) for r in mine} <= set(ends.items())


def test_transactions_rows_are_what_transactions_gives(fleet) -> None:
    evidence, out, _ = fleet
    rows = pq.read_table(str(out / "transactions")).to_pylist()
    assert {(r["broker"], r["log_dir"], r["topic"], r["partition"]) for r in rows} == {
        (1, str(evidence / "1" / "txn"), "__transaction_state", 0)}
    fields = ("transactional_id", "producer_id", "producer_epoch", "previous_producer_id", "next_producer_id",
              "transaction_timeout_ms", "state", "partitions", "transaction_start_timestamp_ms",
              "transaction_last_update_timestamp_ms", "client_transaction_version", "value_version",
              "coordinator_partition", "record_offset")
    want = [{f: o[f] for f in fields} for o in run("transactions", str(evidence / "1" / "txn"))
            if o["type"] == "transaction"]
    got = [{f: r[f] for f in fields} for r in rows]
    assert sorted(got, key=lambda t: t["transactional_id"]) == sorted(want, key=lambda t: t["transactional_id"])
    assert len(got) == len(want) > 0


def test_analyze_gives_the_consumer_impact_truncate_plan_gives(fleet) -> None:
    evidence, _, objs = fleet
    fleet_impacts = [o for o in objs if o["type"] == "consumer_impact"]
    plan = run("truncate-plan", "--leader", str(evidence / "1" / "groups" / "orders-0"),
               "--follower", str(evidence / "2" / "groups" / "orders-0"))
    assert fleet_impacts == [o for o in plan if o["type"] == "consumer_impact"]
    assert [(o["group"], o["consumed_and_lost"]) for o in fleet_impacts] == [
        ("audit", 18), ("billing", 15), ("search", 10), ("fresh", 0), ("ledger", 0), ("reports", 0)]
    # they come among orders-0's objects, before its fleet_partition
    kinds = [o["type"] for o in objs]
    last = max(i for i, k in enumerate(kinds) if k == "consumer_impact")
    assert objs[last + 1]["type"] == "fleet_partition" and objs[last + 1]["partition"] == "orders-0"


def test_tables_at_a_uri_hold_the_same_groups_and_analyze_reads_them_there(fleet, tmp_path) -> None:
    """Written by Spark's writer into a ``viewfs://`` --output-dir, the two tables keep their rows, and
    ``fleet analyze`` of that URI reads ``group_offsets`` there for the same consumer impact."""
    evidence, out, objs = fleet
    tables = tmp_path / "tables"
    conf = [arg for c in (f"spark.hadoop.fs.viewfs.mounttable.fleet.link./tables=file://{tables}",
                          "spark.hadoop.fs.viewfs.impl.disable.cache=true") for arg in ("--conf", c)]
    run("fleet", "scan", str(evidence), "--output-dir", "viewfs://fleet/tables", "--master", "local[1]", *conf)
    for table in ("group_offsets", "transactions"):
        assert (tables / table / "_SUCCESS").is_file()
        got = sorted(json.dumps(r, sort_keys=True) for r in pq.read_table(str(tables / table)).to_pylist())
        want = sorted(json.dumps(r, sort_keys=True) for r in pq.read_table(str(out / table)).to_pylist())
        assert got == want and got
    at_uri = run("fleet", "analyze", "viewfs://fleet/tables", "--master", "local[1]", *conf)
    impacts = [o for o in at_uri if o["type"] == "consumer_impact"]
    assert impacts == [o for o in objs if o["type"] == "consumer_impact"] and len(impacts) == 6


def test_fleet_run_into_a_uri_prints_what_scan_and_analyze_print(fleet, tmp_path) -> None:
    """``fleet run --output-dir`` a URI: Spark's writer writes the tables and the analysis, and the
    objects are those of ``fleet scan`` then ``fleet analyze`` of a local directory."""
    evidence, _, objs = fleet
    conf = [arg for c in (f"spark.hadoop.fs.viewfs.mounttable.fleet.link./run=file://{tmp_path / 'run'}",
                          "spark.hadoop.fs.viewfs.impl.disable.cache=true") for arg in ("--conf", c)]
    result = CliRunner().invoke(app, ["fleet", "run", str(evidence), "--output-dir", "viewfs://fleet/run", "--master",
                                      "local[1]", *conf, "-f", "ndjson"])
    assert result.exit_code == 1, result.output   # orders-0's replicas diverge
    scanned, *analysed = [json.loads(line) for line in result.stdout.splitlines()]
    assert scanned["type"] == "fleet_scan" and scanned["out"] == "viewfs://fleet/run"
    assert analysed == objs
    assert all((tmp_path / "run" / "analysis" / t / "_SUCCESS").is_file() for t in ("objects", "partitions"))
