"""``kreplica cluster-state`` through its command line: the oracle's ZooKeeper cases at every
checkpoint (``expected.json``), KRaft metadata written by kreplica's own writer, the output
contract (one ``cluster_state`` object then findings; json/msgpack equal to ndjson), the text
overview, exit codes, and untouched evidence."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.model.cluster import HEALTH_LISTS, load_cluster_state
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.conftest import ORACLE, oracle_dir
from tests.builders.kraft_metadata import write_metadata_dir
from tests.builders.zk_oracle import kafka_health

ZK_CASES = ("plain-snapshot", "snapshot-plus-logs", "gz-snapshot-plus-logs")


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def digest_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _zk_points() -> list:
    out = []
    for case in ZK_CASES:
        exp = ORACLE / "zookeeper" / case / "expected.json"
        if not exp.is_file():
            out.append(pytest.param(case, None, id=f"{case}-absent"))
            continue
        e = json.loads(exp.read_text(encoding="utf-8"))
        points = [e["at_snapshot"], *e.get("checkpoints", []), *([e["after_replay"]] if "after_replay" in e else [])]
        out += [pytest.param(case, p["zxid"], id=f"{case}@{p['label']}") for p in points]
    return out


def _point(expected: dict, zxid: str) -> dict:
    points = [expected["at_snapshot"], *expected.get("checkpoints", []), expected.get("after_replay") or {}]
    return next(p for p in points if p.get("zxid") == zxid)


# -- ZooKeeper: the oracle ----------------------------------------------------------------------


@pytest.mark.parametrize(("case", "zxid"), _zk_points())
def test_zookeeper_state_at_each_checkpoint(case: str, zxid: str | None) -> None:
    folder = oracle_dir("zookeeper", case)
    if zxid is None:
        pytest.skip("no expected.json in this case")
    k = _point(json.loads((folder / "expected.json").read_text(encoding="utf-8")), zxid)["kafka"]
    result = run("cluster-state", "--at-zxid", zxid, "-f", "ndjson", folder)
    objs = ndjson(result)
    doc = objs[0]
    assert doc["type"] == "cluster_state" and all(o["type"] == "finding" for o in objs[1:])
    assert doc == cluster_state_to_dict(load_cluster_state([folder], at_zxid=int(zxid, 16)))
    assert doc["position"] == {"zxid": int(zxid, 16)} and doc["source_kind"] == "zookeeper"
    assert doc["cluster_id"] == k["cluster_id"]
    assert doc["controller"]["broker_id"] == (k["controller"] or {}).get("brokerid")
    assert [b["id"] for b in doc["brokers"] if b["alive"]] == sorted(k["live_brokers"])
    derived = kafka_health(k)
    for name in HEALTH_LISTS:
        assert sorted(doc["health"][name]) == sorted(derived[name]), name
    problems = bool(k["derived"]["offline"] or k["derived"]["under_min_isr"])
    errors = any(o["severity"] == "error" for o in objs[1:])
    assert result.exit_code == (1 if problems or errors else 0), result.stderr


def test_zookeeper_text_overview_puts_problems_first() -> None:
    folder = oracle_dir("zookeeper", "snapshot-plus-logs")
    result = run("cluster-state", "-f", "text", folder)
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith("PROBLEMS cluster ")
    assert out.index("\noffline (") < out.index("\nbrokers\n") < out.index("\npartitions\n")
    assert "controller: broker" in out


@pytest.mark.parametrize("args", [
    pytest.param(["--at-offset", "3"], id="at-offset-on-zookeeper"),
    pytest.param(["--at-zxid", "b6"], id="zxid-without-0x"),
    pytest.param(["--at-time", "soon"], id="bad-at-time"),
])
def test_zookeeper_usage_errors_are_one_line_exit_2(args: list[str]) -> None:
    folder = oracle_dir("zookeeper", "snapshot-plus-logs")
    result = run("cluster-state", *args, folder)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("kreplica: error:")
    assert "Traceback" not in result.stderr


def test_zookeeper_evidence_is_unchanged() -> None:
    folder = oracle_dir("zookeeper", "gz-snapshot-plus-logs")
    before = digest_tree(folder)
    for fmt in ("ndjson", "text", "msgpack"):
        run("cluster-state", "-f", fmt, folder)
    assert digest_tree(folder) == before


# -- KRaft: fixtures written by kreplica's writer ----------------------------------------------


@pytest.fixture(params=[pytest.param(False, id="log-only"), pytest.param(True, id="snapshot+log")])
def kraft_dir(request, tmp_path: Path) -> Path:
    write_metadata_dir(tmp_path, with_snapshot=request.param)
    return tmp_path


@pytest.mark.parametrize(("offset", "status", "offline", "alive"), [
    pytest.param(12, 0, [], [1, 2, 3], id="healthy-12"),
    pytest.param(14, 0, [], [1, 2], id="broker-3-fenced-14"),
    pytest.param(15, 1, ["orders-1"], [1, 2], id="leader-fenced-15"),
    pytest.param(None, 1, ["orders-1"], [1, 2], id="end"),
])
def test_kraft_state_at_offsets(kraft_dir: Path, offset, status: int, offline: list[str], alive) -> None:
    args = ["cluster-state", "-f", "ndjson", kraft_dir] + (["--at-offset", offset] if offset is not None else [])
    result = run(*args)
    assert result.exit_code == status, result.output
    doc = ndjson(result)[0]
    assert doc["source_kind"] == "kraft" and doc["cluster_id"] == "148NWzG57-5oSfaEocvimA"
    assert doc["position"] == {"offset": offset if offset is not None else 27}
    assert doc["health"]["offline"] == offline
    assert [b["id"] for b in doc["brokers"] if b["alive"]] == alive


def test_kraft_at_zxid_is_a_usage_error(kraft_dir: Path) -> None:
    result = run("cluster-state", "--at-zxid", "0x5", kraft_dir)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "kreplica: error: --at-zxid applies to ZooKeeper; this SOURCE is KRaft metadata (use --at-offset)"]


@pytest.mark.parametrize("offset", [pytest.param("abc", id="not-a-number"), pytest.param("-1", id="negative")])
def test_kraft_bad_at_offset_is_one_line_exit_2(kraft_dir: Path, offset: str) -> None:
    result = run("cluster-state", "--at-offset", offset, kraft_dir)
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("kreplica: error: --at-offset")


def test_kraft_json_and_msgpack_equal_ndjson(kraft_dir: Path) -> None:
    stream = ndjson(run("cluster-state", "-f", "ndjson", kraft_dir))
    assert json.loads(run("cluster-state", "-f", "json", kraft_dir).stdout) == stream
    packed = CliRunner().invoke(app, ["cluster-state", "-f", "msgpack", str(kraft_dir)]).stdout_bytes
    assert list(msgpack.Unpacker(io.BytesIO(packed), raw=False)) == stream


def test_kraft_text_overview(kraft_dir: Path) -> None:
    result = run("cluster-state", "-f", "text", "--at-offset", "15", kraft_dir)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PROBLEMS cluster 148NWzG57-5oSfaEocvimA (kraft, offset 15)")
    assert "offline (1): orders-1" in lines and "under_min_isr (1): orders-1" in lines
    assert any(line.startswith("controller: ") for line in lines)
    ok = run("cluster-state", "-f", "text", "--at-offset", "12", kraft_dir)
    assert ok.exit_code == 0 and ok.stdout.startswith("OK cluster ")


def test_kraft_evidence_is_unchanged(kraft_dir: Path) -> None:
    before = digest_tree(kraft_dir)
    for args in (["-f", "ndjson"], ["-f", "text"], ["--at-offset", "14", "-f", "json"]):
        run("cluster-state", *args, kraft_dir)
    assert digest_tree(kraft_dir) == before


def test_unrecognised_source_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    for source in (tmp_path, tmp_path / "missing"):
        result = run("cluster-state", source)
        assert result.exit_code == 2, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
