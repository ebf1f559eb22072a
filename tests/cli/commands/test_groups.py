"""``kreplica groups`` through its command line, on ``fixtures/groups`` (two brokers' replicas of
``__consumer_offsets-0`` beside ``orders-0`` and ``orders-1``): the objects and their order, every
format, the options, exit codes, the input it refuses, and untouched evidence."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

B1 = str(FIXTURES / "groups" / "broker-1")
B2 = str(FIXTURES / "groups" / "broker-2")
PARTITION = f"{B1}/__consumer_offsets-0"
TS = 1_700_000_000_000


def run(*args, env: dict | None = None):
    return CliRunner().invoke(app, ["groups", *[str(a) for a in args]], env=env)


def objects(*args) -> tuple[int, list[dict]]:
    result = run(*args, "-f", "ndjson")
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def of_type(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["type"] == kind]


def test_one_broker_the_objects_in_order_and_the_offset_beyond_the_log_end() -> None:
    code, objs = objects(B1)
    assert code == 1
    assert [o["type"] for o in objs][:3] == ["group_partition", "group", "group_offset"]
    (part,) = of_type(objs, "group_partition")
    assert (part["coordinator_partition"], part["label"], part["coordinator"], part["log_end_offset"],
            part["replayed_to"], part["offsets_retention_minutes"]) == (0, "broker-1", "new", 13, 12, 10080)
    assert [g["group"] for g in of_type(objs, "group")] == ["audit", "billing", "old-app", "payments-tx", "reports"]
    (finding,) = of_type(objs, "finding")
    assert (finding["kind"], finding["group"], finding["topic"], finding["partition"], finding["offset"]) \
        == ("group_offset_beyond_log_end", "billing", "orders", 1, 15)
    pending = [o for o in of_type(objs, "group_offset") if o["pending"]]
    assert [(o["group"], o["producer_id"]) for o in pending] == [("payments-tx", 7001)]
    assert [o["group"] for o in of_type(objs, "group_offset") if o["expired"]] == ["reports"]


def test_two_brokers_the_longer_log_answers_and_the_differences_are_listed() -> None:
    _code, objs = objects(B2, B1)
    (part,) = of_type(objs, "group_partition")
    assert part["label"] == "broker-1"
    assert [(r["label"], r["log_end_offset"], r["chosen"]) for r in part["replicas"]] \
        == [("broker-2", 11, False), ("broker-1", 13, True)]
    found = of_type(objs, "group_replica_disagreement")
    assert [(d["group"], d["topic"], d["partition"], d["field"]) for d in found] \
        == [("billing", "orders", 0, "offset"), ("billing", "orders", 1, "offset")]
    assert [(r["label"], r["value"]["offset"]) for r in found[0]["replicas"]] == [("broker-2", 10), ("broker-1", 25)]


def test_every_machine_format_carries_the_same_objects() -> None:
    _code, expected = objects(B1, B2)
    as_json = json.loads(run(B1, B2, "-f", "json").stdout)
    packed = list(msgpack.Unpacker(io.BytesIO(run(B1, B2, "-f", "msgpack").stdout_bytes), raw=False))
    assert as_json == expected and packed == expected


def test_group_filter_and_options() -> None:
    code, objs = objects(B1, B2, "--group", "audit")
    assert code == 0 and [g["group"] for g in of_type(objs, "group")] == ["audit"]
    assert not of_type(objs, "finding") and not of_type(objs, "group_replica_disagreement")
    # the old coordinator: old-app's offsets make a standalone group, not a group-less one
    _code, old = objects(PARTITION, "--kafka-version", "3.9")
    assert {g["group"]: g["state"] for g in of_type(old, "group")}["old-app"] == "Empty"
    assert of_type(old, "group_partition")[0]["coordinator"] == "old"
    # expiry: retention and evaluation time given
    _code, later = objects(PARTITION, "--offsets-retention-minutes", "1", "--expiry-time", str(TS + 3600_000))
    assert of_type(later, "group_partition")[0]["expiry_time"] == TS + 3600_000
    assert {o["group"] for o in of_type(later, "group_offset") if o["expired"]} == {"audit", "reports", "payments-tx"}


@pytest.mark.parametrize(("args", "replayed_to", "billing"), [
    pytest.param(["--at-offset", "2"], 2, {0: 10, 1: 5}, id="at-offset"),
    pytest.param(["--at-time", str(TS + 1000)], 1, {0: 10}, id="at-time"),
    pytest.param(["--at-time", "2023-11-14T22:13:22Z"], 2, {0: 10, 1: 5}, id="at-time-iso"),
])
def test_the_point(args, replayed_to, billing) -> None:
    _code, objs = objects(PARTITION, *args)
    assert of_type(objs, "group_partition")[0]["replayed_to"] == replayed_to
    assert {o["partition"]: o["offset"] for o in of_type(objs, "group_offset") if o["group"] == "billing"} == billing


@pytest.mark.parametrize(("args", "needle"), [
    pytest.param([f"{B1}/orders-0"], "is a partition of topic orders, not of __consumer_offsets", id="data-partition"),
    pytest.param([f"{PARTITION}/00000000000000000000.log"], "is a file", id="a-file"),
    pytest.param([str(FIXTURES / "logs")], "holds no __consumer_offsets partition", id="no-offsets-partition"),
    pytest.param([str(FIXTURES / "timeline" / "zookeeper")], "ZooKeeper data directory", id="zookeeper"),
    pytest.param([B1, "--group", "biling"], "no group 'biling' in the __consumer_offsets partitions given (it has "
                                            "billing,", id="unknown-group"),
    pytest.param([B1, "--at-offset", "13"], "offset 13 is beyond the evidence, which ends at offset 12",
                 id="at-offset-beyond"),
    pytest.param([B1, "--at-time", str(TS - 1)], "is before the evidence", id="at-time-before"),
    pytest.param([B1, "--at-offset", "x"], "expected a non-negative integer offset", id="bad-offset"),
])
def test_refused_with_exit_2_and_one_line(args, needle) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.stdout
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == ""


def test_an_offset_needs_one_partition(tmp_path: Path) -> None:
    from tests.builders.groups import commit, write

    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)]])
    write(tmp_path, [[commit("g", "t", 0, 1)]], partition=3)
    other = sorted(tmp_path.glob("case-*"))[-1] / "__consumer_offsets-3"
    result = run(log_dir, other, "--at-offset", "0")
    assert result.exit_code == 2 and "__consumer_offsets-0, __consumer_offsets-3" in result.stderr


def test_text_leads_with_the_verdict_and_the_problems() -> None:
    result = run(B1, B2, "-f", "text", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert result.exit_code == 1
    assert lines[0] == "PROBLEMS 5 groups in 1 partition of __consumer_offsets: 1 error"
    assert any("ERROR group_offset_beyond_log_end" in line for line in lines[:8])
    assert all(len(line.rstrip()) <= 80 for line in lines)


def test_the_evidence_is_not_touched() -> None:
    root = FIXTURES / "groups"
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    run(B1, B2, "-f", "ndjson")
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    assert before == after
