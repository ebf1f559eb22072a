"""``kreplica plan-elect`` end to end: machine output, the text table's order, the election JSON,
the sweep, and the exit statuses (1 for offline or unclean results, 2 for bad input)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES, oracle_dir

KRAFT = str(FIXTURES / "elections" / "kraft")
THREE = FIXTURES / "scenarios" / "three-replicas"
LOG_DIRS = [x for b in (1, 2, 3) for x in ("--log-dirs", f"{b}={THREE / f'broker-{b}'}")]


def run(*args: str):
    result = CliRunner().invoke(app, ["plan-elect", *args])
    return result, [json.loads(line) for line in result.stdout.splitlines()] if "-f" in args else []


def test_readme_example_fail_broker_1_with_replica_files(tmp_path) -> None:
    out = tmp_path / "election.json"
    result, objs = run(KRAFT, "--fail", "1", *LOG_DIRS, "--output-file", str(out), "-f", "ndjson")
    assert result.exit_code == 1, result.output
    election, ranking, summary = objs
    # orders-0: ISR [1] only, 1 fenced, unclean not allowed: leader -1, ISR kept [1] (no ELR on a
    # 3.9-era metadata.version), leader epoch 2 -> 3, partition epoch 4 -> 5
    assert election == {
        "type": "election", "partition": "orders-0", "kind": "offline",
        "before": {"leader": 1, "leader_epoch": 2, "isr": [1], "version": 4},
        "after": {"leader": -1, "leader_epoch": 3, "isr": [1], "version": 5, "leader_recovery_state": 0},
        "elected": False, "unclean": False, "offline": True, "under_min_isr": True,
        "reason": election["reason"], "rule": "PartitionChangeBuilder ONLINE"}
    assert ranking["type"] == "election_candidates" and ranking["best"] == 2 and ranking["recovery_choice"] == 1
    assert ranking["election_type"] == "unclean"
    assert summary["type"] == "election_summary" and summary["offline"] == 1 and summary["rules"] == "kraft"
    assert json.loads(out.read_text()) == {"partitions": [{"topic": "orders", "partition": 0}]}


def test_no_problem_exits_0() -> None:
    # payments-0 is led by its preferred replica already; payments-1 too: nothing to do
    result, objs = run(KRAFT, "--preferred", "payments", "-f", "ndjson")
    assert result.exit_code == 0, result.output
    assert [o["reason"].split(":")[0] for o in objs if o["type"] == "election"] == ["ELECTION_NOT_NEEDED"] * 2


def test_text_table_puts_offline_then_unclean_rows_first() -> None:
    result = CliRunner().invoke(app, ["plan-elect", str(oracle_dir("zookeeper", "plain-snapshot")), "-f", "text"])
    assert result.exit_code == 1
    rows = [line.split()[0] for line in result.stdout.splitlines()
            if line.strip().startswith(("payments-", "audit.log-", "orders-")) and "→" in line]
    assert rows == ["payments-1", "audit.log-0", "orders-4", "orders-5"]


def test_sweep_by_rack() -> None:
    result, objs = run(KRAFT, "--sweep", "2", "--by-rack", "-f", "ndjson")
    assert result.exit_code == 1
    # rack-a = brokers 1, 2; rack-b = broker 3. Losing both racks takes every partition offline;
    # losing rack-a leaves payments-0/-1 led by 3 (ISR [3]: under min ISR 2) and orders-0
    # (leader 1, ISR [1]) offline. Losing rack-b alone: payments keep 2 in-sync replicas.
    first, second, summary = objs
    assert (first["racks"], first["offline"]) == (["rack-a", "rack-b"], ["orders-0", "payments-0", "payments-1"])
    assert (second["racks"], second["offline"], second["under_min_isr"]) == \
        (["rack-a"], ["orders-0"], ["payments-0", "payments-1"])
    assert summary["combinations"] == 3 and summary["baseline_under_min_isr"] == ["orders-0"]


@pytest.mark.parametrize("args,message", [
    pytest.param(["--fail", "9"], "broker 9", id="unknown-broker"),
    pytest.param(["--fail", "x"], "broker id", id="not-a-broker-id"),
    pytest.param(["--preferred", "orders-7"], "no partition or topic 'orders-7'", id="unknown-partition"),
    pytest.param(["--unclean-election", "orders-7"], "--unclean-election: no partition or topic 'orders-7'",
                 id="unclean-election-unknown-partition"),
    pytest.param(["--sweep", "1", "--unclean-election", "all"], "--unclean-election", id="unclean-election-with-sweep"),
    pytest.param(["--at-zxid", "0x10"], "--at-zxid applies to ZooKeeper", id="zxid-on-kraft"),
    pytest.param(["--at-offset", "999"], "beyond the evidence, which ends at offset 9", id="offset-beyond-log"),
    pytest.param(["--unclean-allowed", "maybe"], "yes, no, config", id="bad-unclean"),
    pytest.param(["--log-dirs", "1"], "BROKER=DIR", id="bad-log-dirs"),
    pytest.param(["--log-dirs", "7=/"], "broker 7", id="log-dirs-unknown-broker"),
    pytest.param(["--output-file", "/tmp/x.json"], "needs --log-dirs", id="json-without-log-dirs"),
    pytest.param(["--by-rack"], "--by-rack: needs --sweep", id="by-rack-alone"),
    pytest.param(["--kafka-version", "2.8"], "KRaft controller starts in 3.0", id="kraft-too-old"),
])
def test_bad_input_exits_2_with_one_line(args, message) -> None:
    result = CliRunner().invoke(app, ["plan-elect", KRAFT, *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_zxid_beyond_the_logs_exits_2() -> None:
    result = CliRunner().invoke(app, ["plan-elect", str(oracle_dir("zookeeper", "snapshot-plus-logs")),
                                      "--at-zxid", "0xfffff"])
    assert result.exit_code == 2 and "beyond the evidence, which ends at zxid 0xf6" in result.stderr


def test_controlled_shutdown_of_a_dead_broker_exits_2() -> None:
    result = CliRunner().invoke(app, ["plan-elect", str(oracle_dir("zookeeper", "plain-snapshot")),
                                      "--controlled-shutdown", "6"])
    assert result.exit_code == 2 and "not alive" in result.stderr


def test_an_admin_unclean_election_of_a_partition_with_a_leader_is_not_needed() -> None:
    # KRaft ReplicationControlManager.electLeader UNCLEAN: payments-0 has a leader, so
    # ELECTION_NOT_NEEDED and nothing changes; 'all' asks only for the leaderless partitions
    result, objs = run(KRAFT, "--unclean-election", "payments-0", "-f", "ndjson")
    assert result.exit_code == 0, result.output
    (election,) = [o for o in objs if o["type"] == "election"]
    assert election["kind"] == "unclean_election" and not election["elected"]
    assert election["reason"].startswith("ELECTION_NOT_NEEDED")
    assert objs[-1]["scenario"]["unclean_election"] == ["payments-0"]
    result, objs = run(KRAFT, "--unclean-election", "all", "-f", "ndjson")
    assert [o for o in objs if o["type"] == "election"] == []
