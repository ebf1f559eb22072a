"""``kreplica zk dump`` and ``kreplica zk log`` through their command line: agreement with
ZooKeeper's own SnapshotFormatter and TxnLogToolkit readings and with ``expected.json`` (the
oracle, ``../shared/oracle/zookeeper``), the output contract (types, payload encodings, null
versus empty, json/msgpack equal to ndjson), filters, exit codes, and untouched evidence.
Synthetic evidence is written with kreplica's own snapshot and txn log writers."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from datetime import datetime, timezone
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from tests.conftest import oracle_dir
from tests.builders.zk_tools import parse_formatter, parse_toolkit
from tests.builders.zk_dir import SESSION, write_zk_dir

U64 = 0xFFFFFFFFFFFFFFFF
CASES = ("plain-snapshot", "snapshot-plus-logs", "gz-snapshot-plus-logs")


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def of_type(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["type"] == kind]


def digest_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# -- synthetic evidence ---------------------------------------------------------------------


@pytest.fixture()
def zkdir(tmp_path: Path) -> Path:
    return write_zk_dir(tmp_path / "zk")


# -- zk dump: against the oracle ------------------------------------------------------------


def _snapshots() -> list:
    return [pytest.param(case, id=case) for case in CASES]


@pytest.mark.parametrize("case", _snapshots())
def test_dump_of_a_snapshot_file_agrees_with_snapshot_formatter(case: str) -> None:
    folder = oracle_dir("zookeeper", case)
    (snap,) = [p for p in folder.iterdir() if zks.parse_snapshot_name(p.name)]
    count, theirs, sessions = parse_formatter(Path(f"{snap}.SnapshotFormatter-d.txt").read_text(encoding="utf-8"))
    result = run("zk", "dump", "-f", "ndjson", snap)
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    nodes = {o["path"]: o for o in of_type(objs, "znode")}
    assert sorted(nodes) == sorted(theirs) and count == len(nodes) + 1   # the tool counts the root twice
    for path, f in theirs.items():
        st = nodes[path]["stat"]
        assert (int(f["cZxid"], 16), int(f["mZxid"], 16), int(f["pZxid"], 16)) == (st["czxid"], st["mzxid"], st["pzxid"])
        assert (int(f["cversion"]), int(f["dataVersion"]), int(f["aclVersion"])) == \
            (st["cversion"], st["version"], st["aversion"]), path
        assert int(f["ephemeralOwner"], 16) == st["ephemeral_owner"] & U64, path
        assert base64.b64decode(f["data"]) == base64.b64decode(nodes[path]["data"] or ""), path
    (summary,) = of_type(objs, "zk_summary")
    assert objs[-1] is summary or objs[-1] == summary
    assert summary["snapshot"] == str(snap) and summary["logs"] == [] and summary["applied"] == 0
    assert summary["nodes"] == summary["listed"] == len(nodes)
    assert sorted((s["session"] & U64, s["timeout"]) for s in summary["sessions"]) == \
        sorted((sid, timeout) for sid, timeout, _ in sessions)


def _points() -> list:
    out = []
    for case in ("snapshot-plus-logs", "gz-snapshot-plus-logs"):
        out.append(pytest.param(case, "at_snapshot", id=f"{case}@snapshot"))
        out.append(pytest.param(case, "C3-broker5-back", id=f"{case}@C3"))
        out.append(pytest.param(case, "after_replay", id=f"{case}@end"))
    return out


@pytest.mark.parametrize(("case", "label"), _points())
def test_dump_at_a_zxid_agrees_with_expected_json(case: str, label: str) -> None:
    folder = oracle_dir("zookeeper", case)
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    point = expected.get(label) or next(c for c in expected["checkpoints"] if c["label"] == label)
    result = run("zk", "dump", "--at-zxid", point["zxid"], "--payload", "utf8", "-f", "ndjson", folder)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    objs = ndjson(result)
    (summary,) = of_type(objs, "zk_summary")
    assert summary["zxid"] == int(point["zxid"], 16)
    assert sorted(f"{s['session'] & U64:#x}" for s in summary["sessions"]) == sorted(point["live_sessions"])
    if "znodes" not in point:
        return
    nodes = {o["path"]: o for o in of_type(objs, "znode")}
    assert sorted(nodes) == sorted(point["znodes"])
    for path, e in point["znodes"].items():
        o, st = nodes[path], nodes[path]["stat"]
        assert o["data"] == e["data"], path
        assert (hex(st["mzxid"]), hex(st["pzxid"]), st["version"], st["client_cversion"], st["cversion"],
                st["aversion"], st["num_children"], st["data_length"]) == \
            (e["mzxid"], e["pzxid"], e["version"], e["cversion"], e["cversion_persisted"], e["aversion"],
             e["numChildren"], e["dataLength"]), path
        if e["data"]:
            try:
                value = json.loads(e["data"])
            except ValueError:
                assert "data_json" not in o, path
            else:
                assert o["data_json"] == value, path


def test_dump_at_time_accepts_epoch_ms_and_iso_8601() -> None:
    folder = oracle_dir("zookeeper", "snapshot-plus-logs")
    txns = of_type(ndjson(run("zk", "log", "-f", "ndjson", folder)), "zk_txn")
    target = next(t for t in txns if t["zxid"] == 0xBF)
    want = max(t["zxid"] for t in txns if t["time"] <= target["time"])
    iso = datetime.fromtimestamp(target["time"] / 1000, timezone.utc)
    for when in (str(target["time"]), iso.isoformat(timespec="milliseconds"),
                 iso.replace(tzinfo=None).isoformat(timespec="milliseconds")):
        result = run("zk", "dump", "--at-time", when, "-f", "ndjson", "--path", "/", folder)
        assert result.exit_code == 0, (when, result.stderr)
        (summary,) = of_type(ndjson(result), "zk_summary")
        assert summary["zxid"] == want, when


# -- zk log: against the oracle -------------------------------------------------------------


@pytest.mark.parametrize("case", [pytest.param(c, id=c) for c in CASES[1:]])
def test_log_agrees_with_txn_log_toolkit(case: str) -> None:
    folder = oracle_dir("zookeeper", case)
    result = run("zk", "log", "-f", "ndjson", folder)
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    assert all("type" in o for o in objs)
    logs = sorted((p for p in folder.iterdir() if zkl.parse_log_name(p.name) is not None),
                  key=lambda p: zkl.parse_log_name(p.name))
    assert [o["path"] for o in of_type(objs, "zk_log_file")] == [str(p) for p in logs]
    for log in logs:
        header, theirs, eof = parse_toolkit(Path(f"{log}.TxnLogToolkit.txt").read_text(encoding="utf-8",
                                                                                           errors="replace"))
        (ours_header,) = [o for o in of_type(objs, "zk_log_file") if o["path"] == str(log)]
        assert header == (f"ZooKeeper Transactional Log File with dbid {ours_header['dbid']} "
                          f"txnlog format version {ours_header['version']}")
        ours = [o for o in of_type(objs, "zk_txn") if o["file"] == str(log)]
        assert len(ours) == len(theirs) == eof
        for o, t in zip(ours, theirs):
            assert o["zxid"] == int(t["zxid"], 16)
            assert o["session"] & U64 == int(t["session"], 16)
            assert o["cxid"] & 0xFFFFFFFF == int(t["cxid"], 16)
            # Request.op2String spells createTTL "createTtl"; kreplica uses the OpCode field name
            assert {"createTTL": "createTtl"}.get(o["txn_type"], o["txn_type"]) == t["op"]
            assert o["checksum_valid"] and o["body_error"] is None
            for p in o["paths"]:
                assert p in (t["details"] or ""), (o["zxid"], p)
        (end,) = [o for o in of_type(objs, "zk_log_end") if o["path"] == str(log)]
        assert end["entries"] == eof and end["stopped_by"] in ("preallocated_tail", "end_of_file")
    zxids = [o["zxid"] for o in of_type(objs, "zk_txn")]
    assert zxids == sorted(zxids)


def test_log_zxid_range() -> None:
    folder = oracle_dir("zookeeper", "snapshot-plus-logs")
    objs = ndjson(run("zk", "log", "--from", "0xb7", "--to", "190", "-f", "ndjson", folder))
    assert [o["zxid"] for o in of_type(objs, "zk_txn")] == list(range(0xB7, 191))
    assert len(of_type(objs, "zk_log_end")) == 2    # each file still says how it ends


# -- the output contract on synthetic evidence ---------------------------------------------


def test_dump_schema_keeps_null_empty_binary_and_json_apart(zkdir: Path) -> None:
    result = run("zk", "dump", "-f", "ndjson", zkdir)
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    nodes = {o["path"]: o for o in of_type(objs, "znode")}
    assert list(nodes)[:5] == ["/", "/binary", "/deep", "/empty", "/eph"]   # pre-order, children by name
    assert "/gone" not in nodes                                      # replayed to the end of the log
    assert nodes["/json"]["data_json"] == {"version": 2}
    assert base64.b64decode(nodes["/json"]["data"]) == b'{"version":2}'
    assert nodes["/json"]["stat"]["version"] == 1 and nodes["/json"]["stat"]["mzxid"] == 8
    assert nodes["/null"]["data"] is None and "data_json" not in nodes["/null"]
    assert nodes["/null"]["stat"]["data_length"] == 0
    assert nodes["/empty"]["data"] == "" and "data_json" not in nodes["/empty"]
    assert base64.b64decode(nodes["/binary"]["data"]) == b"\xff\x00\xfe" and "data_json" not in nodes["/binary"]
    assert "data_json" not in nodes["/nan"] and "data_json" not in nodes["/huge"]   # not losslessly JSON
    assert "data_json" not in nodes["/deep"]                     # deeper than msgpack can nest
    assert nodes["/number"]["data_json"] == 42
    assert nodes["/eph"]["stat"]["ephemeral_owner"] == SESSION and nodes["/eph"]["data_json"] == {"a": True}
    assert nodes["/json"]["acl"] == [{"perms": 31, "scheme": "world", "id": "anyone"}]
    assert nodes["/"]["stat"]["num_children"] == len([p for p in nodes if p.count("/") == 1 and p != "/"])
    summary = objs[-1]
    assert summary["type"] == "zk_summary" and summary["zxid"] == 10 and summary["applied"] == 5
    assert summary["snapshot"].endswith("snapshot.5") and summary["logs"][0].endswith("log.6")
    assert summary["sessions"] == [{"session": SESSION, "timeout": 30000}]


@pytest.mark.parametrize(("payload", "binary", "empty"), [
    pytest.param("hex", "ff00fe", "", id="hex"),
    pytest.param("utf8", "\ufffd\x00\ufffd", "", id="utf8"),
    pytest.param("none", None, None, id="none"),
])
def test_dump_payload_variants(zkdir: Path, payload: str, binary, empty) -> None:
    objs = ndjson(run("zk", "dump", "--payload", payload, "-f", "ndjson", zkdir))
    nodes = {o["path"]: o for o in of_type(objs, "znode")}
    assert nodes["/binary"]["data"] == binary
    assert nodes["/empty"]["data"] == empty
    assert nodes["/null"]["data"] is None
    if payload == "none":
        assert not any("data_json" in o for o in nodes.values())
    else:
        assert nodes["/json"]["data_json"] == {"version": 2}


def test_dump_path_filters(zkdir: Path) -> None:
    one = ndjson(run("zk", "dump", "--path", "/j*", "-f", "ndjson", zkdir))
    assert [o["path"] for o in of_type(one, "znode")] == ["/json"]
    two = ndjson(run("zk", "dump", "--path", "/nu*", "--path", "/eph", "-f", "ndjson", zkdir))
    assert [o["path"] for o in of_type(two, "znode")] == ["/eph", "/null", "/number"]
    assert two[-1]["listed"] == 3 and two[-1]["nodes"] > 3
    none = run("zk", "dump", "--path", "/nothing/*", "-f", "ndjson", zkdir)   # a typo, not an answer
    assert none.exit_code == 2 and none.stdout == ""
    assert "no znode matching '/nothing/*'" in none.stderr and "/null" in none.stderr


def test_dump_at_zxid_hex_and_decimal(zkdir: Path) -> None:
    for text in ("0x7", "7"):
        objs = ndjson(run("zk", "dump", "--at-zxid", text, "-f", "ndjson", zkdir))
        nodes = {o["path"] for o in of_type(objs, "znode")}
        assert "/eph" in nodes and objs[-1]["zxid"] == 7 and objs[-1]["applied"] == 2


@pytest.mark.parametrize("command", [pytest.param(["dump"], id="dump"), pytest.param(["log"], id="log")])
def test_json_and_msgpack_equal_ndjson(zkdir: Path, command: list[str]) -> None:
    stream = ndjson(run("zk", *command, "-f", "ndjson", zkdir))
    assert json.loads(run("zk", *command, "-f", "json", zkdir).stdout) == stream
    packed = CliRunner().invoke(app, ["zk", *command, "-f", "msgpack", str(zkdir)]).stdout_bytes
    assert list(msgpack.Unpacker(io.BytesIO(packed), raw=False, strict_map_key=False)) == stream


def test_log_objects(zkdir: Path) -> None:
    result = run("zk", "log", "-f", "ndjson", zkdir)
    assert result.exit_code == 0
    objs = ndjson(result)
    assert [o["type"] for o in objs] == ["zk_log_file"] + ["zk_txn"] * 5 + ["zk_log_end"]
    txns = {o["zxid"]: o for o in of_type(objs, "zk_txn")}
    assert txns[6]["txn_type"] == "createSession" and txns[6]["body"] == {"timeout": 30000}
    create = txns[7]["body"]
    assert txns[7]["paths"] == ["/eph"] and create["ephemeral"] is True and create["data_json"] == {"a": True}
    assert base64.b64decode(create["data"]) == b'{"a":true}' and create["parent_cversion"] == 8
    assert txns[8]["body"]["version"] == 1
    multi = txns[9]["body"]
    assert multi["failed"] is True
    assert [t["body"] for t in multi["txns"]] == [{"err": -103, "error": "BADVERSION"},
                                                   {"err": -2, "error": "RUNTIMEINCONSISTENCY"}]
    assert txns[10]["txn_type"] == "delete" and txns[10]["body"] == {"path": "/gone"}
    assert all(t["session"] == SESSION and t["digest"] is None and t["checksum_valid"] for t in txns.values())
    end = objs[-1]
    assert end["stopped_by"] == "preallocated_tail" and end["entries"] == 5 and end["last_zxid"] == 10


def test_damaged_log_exits_1_with_a_finding(tmp_path: Path) -> None:
    root = write_zk_dir(tmp_path / "zk", bad_checksum=True)
    result = run("zk", "log", "-f", "ndjson", root)
    assert result.exit_code == 1
    (finding,) = of_type(ndjson(result), "finding")
    assert finding["kind"] == "zk_checksum_mismatch" and finding["severity"] == "error"
    assert finding["path"].endswith("log.6") and isinstance(finding["position"], int)
    dump = run("zk", "dump", "-f", "ndjson", root)
    assert dump.exit_code == 1                                  # replay stops at the bad entry
    objs = ndjson(dump)
    assert objs[-1]["zxid"] == 9 and "zk_checksum_mismatch" in {o["kind"] for o in of_type(objs, "finding")}


def test_text_output(zkdir: Path) -> None:
    dump = run("zk", "dump", "-f", "text", "--path", "/json", zkdir)
    assert dump.exit_code == 0
    assert '/json v1 mzxid=0x8  {"version":2}' in dump.stdout
    assert "zxid 0xa" in dump.stdout and "no problems found" in dump.stdout
    log = run("zk", "log", "-f", "text", zkdir)
    assert "zxid 0x9 multi FAILED error -103 BADVERSION" in " ".join(log.stdout.split())
    assert "5 txns, zxids 0x6..0xa" in " ".join(log.stdout.split())


# -- usage errors and the evidence -------------------------------------------------------------


@pytest.mark.parametrize("args", [
    pytest.param(["dump", "--at-zxid", "0xzz"], id="bad-at-zxid"),
    pytest.param(["dump", "--at-zxid", "-5"], id="negative-at-zxid"),
    pytest.param(["dump", "--at-time", "yesterday"], id="bad-at-time"),
    pytest.param(["log", "--from", "x"], id="bad-from-zxid"),
])
def test_bad_option_is_one_line_exit_2(zkdir: Path, args: list[str]) -> None:
    result = run("zk", *args, zkdir)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("kreplica: error: --")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("make", [
    pytest.param(lambda p: p / "missing", id="missing"),
    pytest.param(lambda p: (p / "empty").mkdir() or p / "empty", id="no-snapshot"),
    pytest.param(lambda p: (p / "junk.bin").write_bytes(b"hello world") and p / "junk.bin", id="foreign-file"),
])
def test_bad_source_is_one_line_exit_2(tmp_path: Path, make) -> None:
    result = run("zk", "dump", make(tmp_path))
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("kreplica: error:")
    assert "Traceback" not in result.stderr


def test_log_filters_list_entries_but_findings_cover_every_file(tmp_path: Path) -> None:
    root = write_zk_dir(tmp_path / "zk", bad_checksum=True)
    result = run("zk", "log", "--to", "0x7", "-f", "ndjson", root)
    assert result.exit_code == 1                                  # the damage at zxid 0xa still counts
    objs = ndjson(result)
    assert [o["zxid"] for o in of_type(objs, "zk_txn")] == [6, 7]
    assert [o["kind"] for o in of_type(objs, "finding")] == ["zk_checksum_mismatch"]


def test_log_without_log_files_is_one_line_exit_2(tmp_path: Path) -> None:
    root = write_zk_dir(tmp_path / "zk")
    (root / "version-2" / "log.6").unlink()
    result = run("zk", "log", root)
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "no ZooKeeper transaction log" in result.stderr


def test_a_snapshot_before_the_requested_zxid_is_required(zkdir: Path) -> None:
    result = run("zk", "dump", "--at-zxid", "0x1", zkdir)
    assert result.exit_code == 2 and "before the evidence, which begins at zxid 0x5" in result.stderr


def test_evidence_is_unchanged(zkdir: Path) -> None:
    before = digest_tree(zkdir)
    for args in (["dump"], ["dump", "--at-zxid", "8", "--path", "/j*"], ["log"], ["log", "-f", "text"],
                 ["dump", "-f", "msgpack"]):
        run("zk", *args, zkdir)
    assert digest_tree(zkdir) == before
    assert sorted(p.name for p in zkdir.rglob("*")) == ["log.6", "myid", "snapshot.5", "version-2"]


def test_oracle_evidence_is_unchanged() -> None:
    folder = oracle_dir("zookeeper", "gz-snapshot-plus-logs")
    before = digest_tree(folder)
    run("zk", "dump", "-f", "ndjson", folder)
    run("zk", "log", "-f", "ndjson", folder)
    assert digest_tree(folder) == before


def test_log_ranges_are_what_the_logs_hold_not_what_the_snapshot_starts_at() -> None:
    """``snapshot-plus-logs``: log.a0 holds zxids 0xa0-0xb6, older than snapshot.b6; brokers 5 and 6
    closed their sessions at 0xb2 and 0xb3. ``zk log`` lists them; a zxid before the first logged
    transaction is still refused, naming it."""
    from tests.conftest import oracle_dir

    root = oracle_dir("zookeeper", "snapshot-plus-logs")
    result = run("zk", "log", "--from", "0xb2", "--to", "0xb3", "-f", "ndjson", str(root))
    assert result.exit_code == 0, result.output
    txns = of_type(ndjson(result), "zk_txn")
    assert [(t["zxid"], t["txn_type"]) for t in txns] == [(0xb2, "closeSession"), (0xb3, "closeSession")]
    early = run("zk", "log", "--from", "0x10", str(root))
    assert early.exit_code == 2 and "zxid 0x10 is before the evidence, which begins at zxid 0xa0" in early.stderr


def test_a_state_before_the_oldest_snapshot_says_what_the_logs_hold() -> None:
    """``snapshot-plus-logs``: a state at 0xb0 cannot be rebuilt (the oldest snapshot is at 0xb6;
    log.a0 holds the transactions from 0xa0, and nothing to replay them from): refused, naming
    both; a zxid before the logs too names where the evidence begins."""
    from tests.conftest import oracle_dir

    root = str(oracle_dir("zookeeper", "snapshot-plus-logs"))
    state = run("cluster-state", root, "--at-zxid", "0xb0")
    assert state.exit_code == 2 and state.stderr.strip() == (
        "kreplica: error: --at-zxid: zxid 0xb0 is before the oldest state the evidence holds, at zxid 0xb6: its "
        "transaction logs reach back to zxid 0xa0 (kreplica zk log lists them), but no snapshot holds a state "
        "older to replay them from")
    early = run("timeline", root, "--from", "0x10")
    assert early.exit_code == 2 and "zxid 0x10 is before the evidence, which begins at zxid 0xa0 (a transaction " \
        "log; its oldest state is at zxid 0xb6)" in early.stderr
