"""``kreplica plan-reassign`` end to end: the oracle's ZooKeeper cluster states (with an in-flight
reassignment), the README's fixture, the files it writes (Kafka's version-1 JSON, round trip),
the output contract, bad input (exit 2) and stated warnings."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.tools.reassignment_json import parse_reassignment_json
from tests.conftest import FIXTURES, ROOT, oracle_dir

ASSIGNMENT = FIXTURES / "reassign" / "assignment.json"
SIZES = FIXTURES / "reassign" / "log-dirs.json"
RACKS = "1:a,2:b,3:a,4:b,5:a,6:b"


def run(*args):
    return CliRunner().invoke(app, ["plan-reassign", *[str(a) for a in args]])


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def _plan(objs):
    (plan,) = [o for o in objs if o["type"] == "plan"]
    return plan


# -- the oracle: ZooKeeper cluster states written by a real ZooKeeper ----------------------------


@pytest.mark.interop
@pytest.mark.parametrize("case", [pytest.param(c, id=c) for c in ("snapshot-plus-logs", "gz-snapshot-plus-logs")])
def test_oracle_decommission(case: str) -> None:
    src = oracle_dir("zookeeper", case)
    result = run(src, "decommission", "5", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    plan = _plan(objs)
    moves = [o for o in objs if o["type"] == "move"]
    # broker 5 is removed; broker 6 is not registered (its session expired), so its replicas move too
    assert {m["from"] for m in moves} == {5, 6}
    assert all(m["reason"] == ("broker_removed" if m["from"] == 5 else "broker_not_live") for m in moves)
    assert plan["moves"] == plan["lower_bound"] == len(moves)
    assert plan["targets"] == [1, 2, 3, 4]
    assert plan["rack_violations"]["after"] == 0
    assert plan["controller"] == "zookeeper-kip455"
    # orders-0 is being reassigned (adding 4, removing 5): planned from its target [1,3,4]
    assert not [m for m in moves if (m["topic"], m["partition"]) == ("orders", 0)]
    transitions = [o for o in objs if o["type"] == "transitions"]
    assert len(transitions) == plan["partitions_changed"]
    assert all(t["rows"][0]["leader_epoch"] is not None for t in transitions)


@pytest.mark.interop
def test_oracle_verify_in_flight_reassignment() -> None:
    src = oracle_dir("zookeeper", "snapshot-plus-logs")
    result = run(src, "verify", "-f", "ndjson")
    assert result.exit_code == 1
    objs = ndjson(result)
    (status,) = [o for o in objs if o["type"] == "reassignment_status"]
    assert status | {} == {**status, "topic": "orders", "partition": 0, "status": "in_progress",
                           "replicas": [1, 3, 4, 5], "adding": [4], "removing": [5], "target": [1, 3, 4],
                           "caught_up": [], "lagging": [4]}
    throttles = {(o["entity"], o["config"]): o["value"] for o in objs if o["type"] == "throttle_left"}
    assert throttles[("orders", "leader.replication.throttled.replicas")] == "0:1,0:3,0:5"
    assert throttles[("orders", "follower.replication.throttled.replicas")] == "0:4"
    assert objs[-1] == {"type": "verify", "in_progress": 1, "completed": 0, "differs": 0,
                        "throttles_left": len(throttles)}


@pytest.mark.interop
def test_oracle_verify_against_the_executed_file(tmp_path: Path) -> None:
    src = oracle_dir("zookeeper", "snapshot-plus-logs")
    f = tmp_path / "r.json"
    f.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,3,4]},'
                 '{"topic":"payments","partition":3,"replicas":[2,3,4]},{"topic":"orders","partition":1,"replicas":[1,2,3]}]}')
    objs = ndjson(run(src, "verify", "--reassignment-json-file", f, "-f", "ndjson"))
    got = {(o["topic"], o["partition"]): o["status"] for o in objs if o["type"] == "reassignment_status"}
    assert got == {("orders", 0): "in_progress", ("payments", 3): "completed", ("orders", 1): "differs"}


@pytest.mark.interop
def test_oracle_at_the_snapshot_zxid_both_reassignments_are_in_flight() -> None:
    # at the snapshot's zxid the third-party tool's reassignment of payments-3 had not completed
    # yet: what ZooKeeper held then (expected.json, read back from the live server) is the answer
    src = oracle_dir("zookeeper", "snapshot-plus-logs")
    kafka = json.loads((src / "expected.json").read_text())["at_snapshot"]
    zxid, kafka = kafka["zxid"], kafka["kafka"]
    result = run(src, "verify", "--at-zxid", zxid, "-f", "ndjson")
    assert result.exit_code == 1, result.stderr
    objs = ndjson(result)
    moving = {(t, int(p)): s for t, topic in kafka["topics"].items() for p, s in topic["partitions"].items()
              if s["adding_replicas"] or s["removing_replicas"]}
    assert {(e["topic"], e["partition"]) for e in kafka["reassign_partitions"]["partitions"]} == set(moving)
    statuses = {(o["topic"], o["partition"]): o for o in objs if o["type"] == "reassignment_status"}
    assert statuses.keys() == moving.keys()
    for key, s in moving.items():
        got = statuses[key]
        assert got["status"] == "in_progress"
        assert (got["replicas"], got["adding"], got["removing"]) == (
            s["replicas"], s["adding_replicas"], s["removing_replicas"])
        # KIP-455: the target is the replica set less the replicas being removed
        assert got["target"] == [b for b in s["replicas"] if b not in s["removing_replicas"]]
        assert (got["leader"], got["isr"]) == (s["state"]["leader"], s["state"]["isr"])
        assert got["lagging"] == [b for b in s["adding_replicas"] if b not in s["state"]["isr"]]
    throttle_keys = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
                     "leader.replication.throttled.rate", "follower.replication.throttled.rate")
    set_then = {(e, k): v for e, cfg in [*((t, x["config"]) for t, x in kafka["topics"].items()),
                                         *kafka["broker_configs"].items()]
                for k, v in cfg.items() if k in throttle_keys}
    assert {(o["entity"], o["config"]): o["value"] for o in objs if o["type"] == "throttle_left"} == set_then
    assert objs[-1] == {"type": "verify", "in_progress": len(moving), "completed": 0, "differs": 0,
                        "throttles_left": len(set_then)}


# -- the README's fixture ------------------------------------------------------------------------


def test_add_brokers_on_the_fixture_writes_kafkas_json(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    result = run("--assignment", ASSIGNMENT, "--brokers", "1-6", "--racks", RACKS, "add-brokers", "5,6",
                 "--sizes", SIZES, "--output-dir", out, "--phases", "2", "--throttle", "50", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    plan = _plan(objs)
    assert plan["moves"] == plan["lower_bound"] == 12
    assert plan["replica_spread"]["after"] == 0 and plan["leader_spread"]["after"] == 0
    assert plan["bytes_moved"] == sum(o["bytes"] for o in objs if o["type"] == "move")
    assert [p["phase"] for p in plan["phases"]] == [1, 2]
    assert sorted(os.listdir(out)) == ["phase-1.json", "phase-2.json", "proposal.json", "rollback.json"]
    proposal = {(e.topic, e.partition): e.replicas for e in parse_reassignment_json((out / "proposal.json").read_bytes())}
    rollback = {(e.topic, e.partition): e.replicas for e in parse_reassignment_json((out / "rollback.json").read_bytes())}
    current = {(e.topic, e.partition): e.replicas for e in parse_reassignment_json(ASSIGNMENT.read_bytes())}
    assert proposal.keys() == rollback.keys()
    assert all(rollback[k] == current[k] for k in rollback)
    phased = {}
    for n in (1, 2):
        phased |= {(e.topic, e.partition): e.replicas
                   for e in parse_reassignment_json((out / f"phase-{n}.json").read_bytes())}
    assert phased == proposal
    throttles = [o for o in objs if o["type"] == "throttle"]
    assert [t["phase"] for t in throttles] == [1, 2]
    assert all(t["rate"] == 50_000_000 and t["estimated_seconds"] > 0 for t in throttles)
    # the file with the proposal applied is balanced: planning a rebalance on it moves nothing
    from kreplica.formats.tools.reassignment_json import PartitionReassignment, build_reassignment_json

    applied = tmp_path / "applied.json"
    applied.write_bytes(build_reassignment_json(PartitionReassignment(t, p, r)
                                                for (t, p), r in (current | proposal).items()))
    again = _plan(ndjson(run("--assignment", applied, "--brokers", "1-6", "--racks", RACKS, "rebalance",
                             "-f", "ndjson")))
    assert (again["moves"], again["leader_changes"], again["rack_violations"]["before"]) == (0, 0, 0)


def test_generate_with_a_fixed_start_is_kafkas_placement(tmp_path: Path) -> None:
    from kreplica.analysis.reassignment.placement import StartDraw, assign_replicas_to_brokers

    result = run("--assignment", ASSIGNMENT, "--brokers", "1-6", "generate", "--topics", "orders",
                 "--start-index", "0", "--disable-rack-aware", "--output-dir", tmp_path, "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    proposal = {e.partition: list(e.replicas) for e in parse_reassignment_json((tmp_path / "proposal.json").read_bytes())}
    assert proposal == assign_replicas_to_brokers([1, 2, 3, 4, 5, 6], 8, 3, start=StartDraw(0, 0))


def test_generate_seed_is_reproducible_and_differs_by_seed() -> None:
    def proposal(seed):
        objs = ndjson(run("--assignment", ASSIGNMENT, "--brokers", "1-6", "--racks", RACKS, "generate",
                          "--seed", seed, "-f", "ndjson"))
        return [(o["topic"], o["partition"], o["from"], o["to"]) for o in objs if o["type"] == "move"]

    assert proposal(1) == proposal(1)
    assert proposal(1) != proposal(2)


def test_same_plan_in_another_process_with_other_hash_seeds() -> None:
    args = [sys.executable, "-m", "kreplica", "plan-reassign", "--assignment", str(ASSIGNMENT), "--brokers", "1-6",
            "--racks", RACKS, "rebalance", "--sizes", str(SIZES), "-f", "ndjson"]
    outs = {subprocess.run(args, cwd=ROOT, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed},
                           check=False).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and outs.pop()


def test_machine_formats_carry_the_same_objects() -> None:
    base = ["--assignment", ASSIGNMENT, "--brokers", "1-6", "decommission", "4"]
    nd = ndjson(run(*base, "-f", "ndjson"))
    assert json.loads(run(*base, "-f", "json").stdout) == nd
    packed = CliRunner().invoke(app, ["plan-reassign", *map(str, base), "-f", "msgpack"]).stdout_bytes
    assert list(msgpack.Unpacker(io.BytesIO(packed))) == nd
    assert all("type" in o for o in nd)


def test_text_output_names_the_verdict() -> None:
    result = run("--assignment", ASSIGNMENT, "--brokers", "1-6", "decommission", "4", "-f", "text")
    assert result.exit_code == 0
    assert result.stdout.startswith("decommission: 9 moves in 9 partitions")


def test_options_may_come_before_or_after_the_action() -> None:
    a = run("--assignment", ASSIGNMENT, "--brokers", "1-6", "decommission", "4", "-f", "ndjson").stdout
    b = run("decommission", "4", "--assignment", ASSIGNMENT, "-f", "ndjson", "--brokers", "1-6").stdout
    assert a == b


# -- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["decommission", "9"], "decommission: no broker 9 in the assignment (it has 1, 2, 3, 4, 5, 6)",
                 id="unknown-broker"),
    pytest.param(["set-replication-factor", "7"], "replication factor 7 is larger than the 6 target brokers",
                 id="rf-above-brokers"),
    pytest.param(["replace-broker", "4"], "expected OLD=NEW", id="replace-without-new"),
    pytest.param(["frobnicate"], "no action", id="no-action"),
    pytest.param(["rebalance", "--brokers", "1,x"], "--brokers", id="bad-broker-list"),
    pytest.param(["rebalance", "--racks", "1"], "--racks", id="bad-racks"),
    pytest.param(["generate", "--topics", "nope"], "no topic 'nope' in the assignment", id="unknown-topic"),
    pytest.param(["rebalance", "--max-bytes", "10"], "--max-bytes: needs --sizes or --sizes-from", id="max-bytes-no-sizes"),
    pytest.param(["add-brokers", "7", "--brokers", "1-6", "--racks", "1:a"], "have no rack", id="racks-mixed"),
])
def test_bad_usage_is_exit_2_with_one_line(args, message) -> None:
    base = ["--assignment", ASSIGNMENT] + (["--brokers", "1-6"] if "--brokers" not in args else [])
    result = run(*base, *args)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 1 or "Usage" in result.stderr
    assert result.stdout == ""


def test_malformed_json_is_exit_2_naming_the_byte(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,}]}')
    result = run("--assignment", bad, "--brokers", "1,2", "rebalance")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"kreplica: error: {bad}: byte ")


def test_partition_missing_from_sizes_is_a_stated_warning(tmp_path: Path) -> None:
    sizes = tmp_path / "sizes.json"
    text = SIZES.read_text()
    sizes.write_text(text.replace('"partition":"payments-3"', '"partition":"elsewhere-3"'))
    result = run("--assignment", ASSIGNMENT, "--brokers", "1-6", "rebalance", "--sizes", sizes, "-f", "ndjson")
    assert result.exit_code in (0, 1)
    assert "1 partition(s) have no size" in result.stderr and "payments-3" in result.stderr


def test_sizes_from_a_fleet_layout(tmp_path: Path) -> None:
    # broker-1 holds orders-0 with a 1000-byte segment, broker-2 holds it with 400 bytes
    for broker, size in ((1, 1000), (2, 400)):
        part = tmp_path / f"broker-{broker}" / "orders-0"
        part.mkdir(parents=True)
        (part / "00000000000000000000.log").write_bytes(b"\0" * size)
        (tmp_path / f"broker-{broker}" / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    assign = tmp_path / "a.json"
    assign.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}')
    result = run("--assignment", assign, "--brokers", "1-3", "decommission", "1", "--sizes-from", tmp_path,
                 "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    (move,) = [o for o in ndjson(result) if o["type"] == "move"]
    assert (move["from"], move["to"], move["bytes"]) == (1, 3, 1000)
