"""kreplica's reading of files written by a real ZooKeeper 3.8.0, diffed against ZooKeeper's own
readings in ``../shared/oracle/zookeeper/<case>/``:

* every snapshot against ``<snapshot>.SnapshotFormatter-d.txt`` (every path, stat field, data,
  and the session table with ephemeral counts);
* every txn log against ``<log>.TxnLogToolkit.txt`` (every entry's time, session, cxid, zxid,
  type and paths, and the entry count);
* the replayed tree and the cluster state against ``expected.json`` at the snapshot, after full
  replay, and at every checkpoint zxid (the znodes where the oracle lists them; brokers and
  liveness, controller, every partition, pending admin work, every health list).

Case folders and files are discovered by globbing, so held-back histories of the same kinds
(every rolled fuzzy snapshot of a run, snappy compression) are checked the same way.

Known, deliberate difference: ZooKeeper's ``Util.getZxidFromName`` would take
``snapshot.b6.SnapshotFormatter-d.txt`` for a snapshot named 0xb6 (and then reject it as
invalid); kreplica only takes ``snapshot.<hex>[.gz|.snappy]`` and ``log.<hex>``, so the tool
outputs lying beside the data files here are ignored rather than tried.
"""

from __future__ import annotations

import base64
import calendar
import json
import re
import time
from pathlib import Path

import pytest

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.cluster import HEALTH_LISTS, cluster_state_from_zk
from kreplica.model.zookeeper import ZkFiles, find_zk_files, replay
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.conftest import ORACLE, oracle_dir
from tests.builders.zk_oracle import kafka_health
from tests.builders.zk_tools import parse_formatter, parse_toolkit

ZK = ORACLE / "zookeeper"
CASES = sorted(p for p in ZK.iterdir() if p.is_dir()) if ZK.is_dir() else []
SNAPSHOTS = sorted(p for c in CASES for p in c.iterdir() if zks.parse_snapshot_name(p.name))
LOGS = sorted(p for c in CASES for p in c.iterdir() if zkl.parse_log_name(p.name) is not None)

U64 = 0xFFFFFFFFFFFFFFFF  # Java prints longs in hex as unsigned two's complement

#: ``Request.op2String`` names as TxnLogToolkit prints them.
OP2STRING = {**zkl.OPCODE_NAMES, zkl.OP_CREATE_TTL: "createTtl"}


def _params(paths: list[Path]) -> list:
    if not paths:
        return [pytest.param(None, id="oracle-absent")]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in paths]


def _need(p: Path | None) -> Path:
    """The parametrized file, or skip (fail when CI=true) when the oracle is absent."""
    if p is None:
        oracle_dir("zookeeper")   # skips, or fails in CI, when ../shared/oracle/zookeeper is missing
        pytest.skip("the zookeeper oracle holds no file of this kind")
    return p


def _points(expected: dict) -> list[dict]:
    pts = [dict(expected["at_snapshot"], _kind="at_snapshot")]
    pts += [dict(c, _kind="checkpoint") for c in expected.get("checkpoints", [])]
    if "after_replay" in expected:
        pts.append(dict(expected["after_replay"], _kind="after_replay"))
    return pts


def _case_points() -> list:
    out = []
    for case in CASES:
        exp = case / "expected.json"
        if not exp.is_file():
            continue
        for i, pt in enumerate(_points(json.loads(exp.read_text(encoding="utf-8")))):
            out.append(pytest.param(case, i, id=f"{case.name}@{pt['_kind']}:{pt.get('label')}({pt['zxid']})"))
    return out or [pytest.param(None, 0, id="oracle-absent")]


# -- SnapshotFormatter -d ---------------------------------------------------------------------


def _java_date(text: str) -> int:
    """``java.util.Date.toString()`` (pinned to UTC by the oracle) → epoch seconds."""
    return calendar.timegm(time.strptime(text.strip(), "%a %b %d %H:%M:%S %Z %Y"))


@pytest.mark.interop
@pytest.mark.parametrize("snapshot", _params(SNAPSHOTS))
def test_snapshot_agrees_with_snapshot_formatter(snapshot):
    snapshot = _need(snapshot)
    reading = Path(str(snapshot) + ".SnapshotFormatter-d.txt")
    if not reading.is_file():
        pytest.skip(f"no SnapshotFormatter -d reading beside {snapshot.name}")
    count, theirs, their_sessions = parse_formatter(reading.read_text(encoding="utf-8"))
    snap = zks.read_snapshot(snapshot)
    assert snap.findings == ()
    assert snap.end.complete and snap.end.seals_valid
    ours = {n.path: n for n in snap.nodes}
    # DataTree.getNodeCount counts the root twice (stored under "" and "/").
    assert count == len(snap.nodes) + 1
    assert sorted(ours) == sorted(theirs)
    for path, f in theirs.items():
        n = ours[path]
        assert int(f["cZxid"], 16) == n.czxid, path
        assert int(f["mZxid"], 16) == n.mzxid, path
        assert int(f["pZxid"], 16) == n.pzxid, path
        assert _java_date(f["ctime"]) == n.ctime // 1000, path
        assert _java_date(f["mtime"]) == n.mtime // 1000, path
        assert int(f["cversion"]) == n.cversion, path      # the persisted value, as the tool prints
        assert int(f["dataVersion"]) == n.version, path
        assert int(f["aclVersion"]) == n.aversion, path
        assert int(f["ephemeralOwner"], 16) == n.ephemeral_owner & U64, path
        assert base64.b64decode(f["data"]) == (n.data or b""), path
    owned = {}
    for n in snap.nodes:
        if zks.is_session_owner(n.ephemeral_owner):   # DataTree.getEphemerals: not containers/TTL
            owned[n.ephemeral_owner] = owned.get(n.ephemeral_owner, 0) + 1
    assert sorted(their_sessions) == sorted(
        (sid & U64, timeout, owned.get(sid, 0)) for sid, timeout in snap.preamble.sessions.items())


def _toolkit_time(e: dict) -> int | None:
    if e["zone"] != "UTC":
        return None
    return calendar.timegm(time.strptime(f"{e['date']} {e['time']} {e['ampm']}", "%m/%d/%y %I:%M:%S %p"))


def _check_details(entry: zkl.TxnEntry, details: str | None) -> None:
    t, b = entry.type, entry.body
    d = details or ""
    # TxnLogToolkit.getFormattedTxnStr formats CreateTxn and SetDataTxn by hand and every other
    # record with jute's CSV toString() (strings start with "'", vectors are "v{...}").
    if t in (zkl.OP_CREATE, zkl.OP_CREATE2):
        assert d.startswith(b.path + ","), (d[:80], b.path)
    elif t in (zkl.OP_CREATE_CONTAINER, zkl.OP_CREATE_TTL):
        assert d.startswith("'" + b.path + ","), (d[:80], b.path)
    elif t in (zkl.OP_SET_DATA, zkl.OP_RECONFIG):
        assert d.startswith(b.path + ",") and d.endswith(f",{b.version}"), (d[:80], b)
    elif t in (zkl.OP_DELETE, zkl.OP_DELETE_CONTAINER):
        assert d == "'" + b.path
    elif t == zkl.OP_SET_ACL:
        assert d.startswith("'" + b.path + ",") and d.endswith(f",{b.version}")
    elif t == zkl.OP_CLOSE_SESSION:
        assert d == "v{" + ",".join("'" + p for p in (b.paths or ())) + "}"
    elif t == zkl.OP_CREATE_SESSION:
        assert int(d) == b.timeout
    elif t == zkl.OP_ERROR:
        assert int(d) == b.err
    elif t == zkl.OP_MULTI:
        # TxnLogToolkit prints "<op>:<sub-record bytes as UTF-8>" joined by ";" (binary noise);
        # every sub-transaction's name must appear in order, with its path after it.
        cursor = 0
        for sub in b.txns:
            label = OP2STRING[sub.type] + ":"
            at = d.find(label, cursor)
            assert at >= 0, (label, d[cursor:cursor + 80])
            cursor = at + len(label)
            path = getattr(sub.body, "path", None)
            if path is not None:
                at = d.find(path, cursor)
                assert at >= 0, (label, path)
                cursor = at + len(path)


@pytest.mark.interop
@pytest.mark.parametrize("log", _params(LOGS))
def test_txnlog_agrees_with_txn_log_toolkit(log):
    log = _need(log)
    reading = Path(str(log) + ".TxnLogToolkit.txt")
    if not reading.is_file():
        pytest.skip(f"no TxnLogToolkit reading beside {log.name}")
    header_line, theirs, eof_count = parse_toolkit(reading.read_text(encoding="utf-8", errors="replace"))
    header, entries, findings, end = zkl.read_txnlog(log)
    assert header_line == (f"ZooKeeper Transactional Log File with dbid {header.dbid} "
                           f"txnlog format version {header.version}")
    assert [f for f in findings if f.is_error] == []
    assert end.stopped_by in (zkl.STOP_PREALLOCATED, zkl.STOP_END_OF_FILE)
    assert eof_count == len(entries) == len(theirs)
    for ours, t in zip(entries, theirs):
        assert ours.checksum_valid and ours.body_error is None
        assert int(t["zxid"], 16) == ours.zxid
        assert int(t["session"], 16) == ours.client_id & U64
        assert int(t["cxid"], 16) == ours.cxid & 0xFFFFFFFF
        assert t["op"] == OP2STRING[ours.type], (hex(ours.zxid), t["op"])
        when = _toolkit_time(t)
        if when is not None:
            assert when == ours.time // 1000
        _check_details(ours, t["details"])


# -- expected.json: the tree and the cluster state --------------------------------------------


def _zxid(s: str) -> int:
    return int(s, 16)


@pytest.mark.interop
@pytest.mark.parametrize(("case", "index"), _case_points())
def test_replay_agrees_with_expected_state(case, index):
    case = _need(case)
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    point = _points(expected)[index]
    target = _zxid(point["zxid"])
    state = replay(find_zk_files([case]), at_zxid=target)

    # ZooKeeper's own tree digest was logged with every txn: a mismatch means replay diverged.
    assert [f for f in state.findings if f.kind == "zk_digest_mismatch"] == []
    assert state.zxid == target
    assert sorted(f"{s & U64:#x}" for s in state.sessions) == sorted(point["live_sessions"])

    if "znodes" in point:
        assert sorted(state.nodes) == sorted(point["znodes"])
        for path, e in point["znodes"].items():
            n = state.nodes[path]
            data = None if n.data is None else n.data.decode("utf-8", "replace")
            assert data == e["data"], path
            got = {"czxid": hex(n.czxid), "mzxid": hex(n.mzxid), "pzxid": hex(n.pzxid),
                   "ctime": n.ctime, "mtime": n.mtime, "version": n.version,
                   "cversion": n.client_cversion, "cversion_persisted": n.cversion,
                   "aversion": n.aversion, "ephemeralOwner": hex(n.client_ephemeral_owner & U64),
                   "numChildren": n.num_children, "dataLength": len(n.data or b"")}
            assert got == {k: e[k] for k in got}, path
            if "acl" in e:
                acl = n.acl if n.acl is not None else (zks.Acl(31, "world", "anyone"),)
                assert [dict(perms=a.perms, scheme=a.scheme, id=a.id) for a in acl] == e["acl"], path

    k = point["kafka"]
    cs = cluster_state_from_zk(state)
    doc = cluster_state_to_dict(cs)
    assert json.loads(json.dumps(doc)) == doc
    assert doc["position"] == {"zxid": target}
    assert doc["cluster_id"] == k["cluster_id"]
    assert doc["controller"] == {"broker_id": (k["controller"] or {}).get("brokerid"),
                                 "epoch": k["controller_epoch"]}
    assert [b["id"] for b in doc["brokers"]] == sorted(int(i) for i in k["brokers"])
    assert [b["id"] for b in doc["brokers"] if b["alive"]] == sorted(k["live_brokers"])
    for b in doc["brokers"]:
        e = k["brokers"][str(b["id"])]
        assert (b["rack"], b["endpoints"], b["broker_epoch"]) == (e["rack"], e["endpoints"], _zxid(e["broker_epoch"]))
    assert [t["name"] for t in doc["topics"]] == sorted(k["topics"])
    for t in doc["topics"]:
        e = k["topics"][t["name"]]
        assert (t["topic_id"], t["config"]) == (e.get("topic_id"), e["config"])
        assert [p["partition"] for p in t["partitions"]] == sorted(int(p) for p in e["partitions"])
        for p in t["partitions"]:
            ep = e["partitions"][str(p["partition"])]
            s = ep["state"]
            assert p == {
                "partition": p["partition"], "replicas": ep["replicas"],
                "adding_replicas": ep["adding_replicas"], "removing_replicas": ep["removing_replicas"],
                "leader": s["leader"], "leader_epoch": s["leader_epoch"], "isr": s["isr"],
                "elr": [], "last_known_elr": [],   # KIP-966 is KRaft's: none in ZooKeeper mode
                "controller_epoch": s["controller_epoch"],
                "leader_recovery_state": s["leader_recovery_state"], "version": s["zk_version"],
                "directories": [],   # KIP-858 is KRaft's too
            }, (t["name"], p["partition"])
    assert doc["broker_configs"] == k["broker_configs"]
    pending = doc["pending"]
    assert pending["reassignments"] == list((k["reassign_partitions"] or {}).get("partitions", []))
    assert pending["preferred_elections"] == list((k["preferred_replica_election"] or {}).get("partitions", []))
    assert pending["topic_deletions"] == sorted(k["delete_topics"])
    assert {n["name"]: {"version": 1, "partitions": n["partitions"]} for n in pending["isr_change_notifications"]} \
        == {name: {"version": 1, "partitions": v["partitions"]} for name, v in k["isr_change_notifications"].items()}
    assert [n["name"] for n in pending["log_dir_event_notifications"]] == sorted(k["log_dir_event_notifications"])
    derived = kafka_health(k)
    for name in HEALTH_LISTS:
        # compared as sets: the order of the oracle's lists is its own presentation choice
        assert sorted(doc["health"][name]) == sorted(derived[name]), name
        assert len(doc["health"][name]) == len(derived[name]), name


def _snapshot_bases() -> list:
    out = []
    for case in CASES:
        exp = case / "expected.json"
        final = json.loads(exp.read_text(encoding="utf-8")).get("after_replay") if exp.is_file() else None
        if final is None:
            continue
        for snap in sorted(p for p in case.iterdir() if zks.parse_snapshot_name(p.name)):
            if zks.parse_snapshot_name(snap.name)[0] > _zxid(final["zxid"]):
                continue
            out.append(pytest.param(case, snap.name, id=f"{case.name}/{snap.name}"))
    return out or [pytest.param(None, "", id="oracle-absent")]


@pytest.mark.interop
@pytest.mark.parametrize(("case", "snapshot"), _snapshot_bases())
def test_every_snapshot_replays_to_the_final_tree(case, snapshot):
    """Each snapshot of a run (rolled ones are fuzzy) replayed alone with the logs ZooKeeper
    would pick for it must reach the final tree, with every logged digest matching."""
    case = _need(case)
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))["after_replay"]
    files = find_zk_files([case])
    only = ZkFiles(tuple(f for f in files.snapshots if Path(f.path).name == snapshot), files.logs, files.source)
    state = replay(only, at_zxid=_zxid(expected["zxid"]))
    assert state.snapshot.endswith(snapshot)
    assert [f for f in state.findings if f.kind in ("zk_digest_mismatch", "zk_zxid_gap")] == []
    assert state.zxid == _zxid(expected["zxid"])
    assert sorted(f"{s & U64:#x}" for s in state.sessions) == sorted(expected["live_sessions"])
    if "znodes" in expected:
        ours = {p: (None if n.data is None else n.data.decode("utf-8", "replace"), hex(n.mzxid), hex(n.pzxid),
                    n.version, n.client_cversion, n.aversion) for p, n in state.nodes.items()}
        theirs = {p: (e["data"], e["mzxid"], e["pzxid"], e["version"], e["cversion"], e["aversion"])
                  for p, e in expected["znodes"].items()}
        assert ours == theirs


def test_the_oracle_and_kafka_differ_on_under_replication_only_where_a_replica_is_being_added() -> None:
    """kafka_health changes the oracle's ``under_replicated`` only for partitions whose ISR holds
    every replica but the ones a reassignment is adding (payments-3 from B3 to C4: replicas
    [2, 3, 4, 1], adding [4], ISR [1, 2, 3]); every other list and partition is the oracle's own."""
    folder = oracle_dir("zookeeper", "snapshot-plus-logs")
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    changed = set()
    for point in _points(expected):
        k = point["kafka"]
        ours = kafka_health(k)
        assert {n: v for n, v in ours.items() if n != "under_replicated"} == \
            {n: list(v) for n, v in k["derived"].items() if n != "under_replicated"}
        for name in set(ours["under_replicated"]) ^ set(k["derived"]["under_replicated"]):
            p = k["topics"][name.rsplit("-", 1)[0]]["partitions"][name.rsplit("-", 1)[1]]
            assert p["adding_replicas"] and set(p["state"]["isr"]) >= set(p["replicas"]) - set(p["adding_replicas"])
            changed.add(name)
    assert changed == {"payments-3"}
