"""Replaying ZooKeeper evidence: which snapshot and logs are chosen, fuzzy snapshots, failed
multis, session closes, stopping points, and the findings replay raises. Evidence is built in
the test with kreplica's writers; digests in the logs come from a reference replay of the same
history (the oracle interop test checks the digest itself against ZooKeeper's)."""

from __future__ import annotations

import pytest

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.zookeeper.snapshot import Acl, SnapshotDigest
from kreplica.model.zookeeper import (
    ZkFiles,
    ZkTree,
    find_zk_files,
    load_zk_state,
    log_files_for,
    parse_zxid,
    replay,
)

ACL = (Acl(31, "world", "anyone"),)
S1, S2, S3 = 0x1000001, 0x1000002, 0x1000003
T0 = 1_700_000_000_000


def _base_tree() -> ZkTree:
    t = ZkTree()
    for z in [
        zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        zks.ZNode("/zookeeper", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    ]:
        t.load_node(z, {})
    t.sessions[S1] = 18000
    return t


def C(path, data=None, eph=False, pcv=-1, t=zkl.OP_CREATE):
    return t, zkl.CreateTxn(path, data, ACL, eph, pcv)


# (client, type, body): zxids 1.. in order
HISTORY = [
    (S1, *C("/brokers", pcv=1)),
    (S1, *C("/brokers/ids", pcv=1)),
    (S2, zkl.OP_CREATE_SESSION, zkl.CreateSessionTxn(6000)),
    (S2, *C("/brokers/ids/2", b"{}", eph=True, pcv=1)),
    (S3, zkl.OP_CREATE_SESSION, zkl.CreateSessionTxn(6000)),
    (S3, *C("/brokers/ids/3", b"{}", eph=True, pcv=2)),
    (S1, *C("/tmp", pcv=3)),
    (S1, *C("/tmp/x", b"1", pcv=1, t=zkl.OP_CREATE2)),             # 8
    (S1, zkl.OP_SET_DATA, zkl.SetDataTxn("/tmp/x", b"2", 1)),        # 9
    (S1, zkl.OP_DELETE, zkl.DeleteTxn("/tmp/x")),                    # 10
    (S1, zkl.OP_ERROR, zkl.ErrorTxn(-110)),                          # 11
    (S1, zkl.OP_MULTI, zkl.MultiTxn((                                 # 12: failed multi
        zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn("/tmp/never", None, ACL, False, 2), b""),
        zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-103), b""),
    ))),
    (S1, zkl.OP_MULTI, zkl.MultiTxn((                                 # 13: good multi
        zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/tmp", 1), b""),
        zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn("/tmp/y", b"y", ACL, False, 2), b""),
        zkl.SubTxn(zkl.OP_SET_DATA, zkl.SetDataTxn("/tmp", b"t", 1), b""),
    ))),
    (S1, zkl.OP_SET_ACL, zkl.SetACLTxn("/tmp/y", (Acl(1, "world", "anyone"),), 1)),  # 14
    (S2, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(("/brokers/ids/2",))),            # 15
    (S3, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(None)),                            # 16: pre-3.6 style
    (S1, *C("/c", t=zkl.OP_CREATE_CONTAINER, pcv=4)),                                  # 17
]


def _entries(upto: int | None = None, digests: dict | None = None) -> list[tuple[int, bytes]]:
    """Log entries for HISTORY with the digest a reference replay gives after each."""
    tree = _base_tree()
    out = []
    for i, (client, t, body) in enumerate(HISTORY[:upto], start=1):
        e = zkl.TxnEntry("x", 0, 0, 0, True, client, i, i, T0 + i * 1000, t, body, None)
        tree.apply(e)
        digest = None if t == zkl.OP_ERROR else zkl.TxnDigest(2, (digests or {}).get(i, tree.digest))
        out.append((i, zkl.build_entry(client_id=client, cxid=i, zxid=i, time=T0 + i * 1000,
                                       txn_type=t, body=body, digest=digest)))
    return out


def _tree_at(zxid: int) -> ZkTree:
    tree = _base_tree()
    for i, (client, t, body) in enumerate(HISTORY[:zxid], start=1):
        tree.apply(zkl.TxnEntry("x", 0, 0, 0, True, client, i, i, T0 + i * 1000, t, body, None))
    return tree


def _snapshot_bytes(tree: ZkTree, digest_zxid: int) -> bytes:
    acls = {}
    ids = {}
    nodes = []

    def walk(path):
        n = tree.nodes[path]
        acl_id = -1
        if n.acl is not None:
            acl_id = ids.setdefault(n.acl, len(ids) + 1)
            acls[acl_id] = list(n.acl)
        nodes.append(zks.ZNode(path, n.data, acl_id, n.czxid, n.mzxid, n.ctime, n.mtime, n.version,
                               n.cversion, n.aversion, n.ephemeral_owner, n.pzxid))
        for c in sorted(n.children):
            walk(("" if path == "/" else path) + "/" + c)

    walk("/")
    return zks.build_snapshot(nodes, sessions=dict(tree.sessions), acls=acls,
                              digest=SnapshotDigest(digest_zxid, 2, tree.digest))


def _write_log(d, first: int, entries):
    (d / f"log.{first:x}").write_bytes(zkl.build_txnlog([b for _, b in entries], preallocate=8192))


def _stat(state):
    return {p: (n.data, n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime, n.version, n.cversion,
                n.aversion, n.ephemeral_owner, n.acl, sorted(n.children))
            for p, n in state.nodes.items()}


@pytest.fixture
def datadir(tmp_path):
    """snapshot.0 (base), log.1 with all of HISTORY, plus side files ZooKeeper would ignore."""
    d = tmp_path / "version-2"
    d.mkdir()
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    _write_log(d, 1, _entries())
    (tmp_path / "myid").write_text("1\n")
    (d / "log.1.TxnLogToolkit.txt").write_text("not a log")
    (d / "snapshot.0.tmp").write_bytes(b"junk")
    return tmp_path


def test_full_replay_applies_every_change(datadir):
    state = load_zk_state([datadir])
    assert state.zxid == len(HISTORY) and state.applied == len(HISTORY)
    assert state.findings == ()
    assert sorted(state.nodes) == ["/", "/brokers", "/brokers/ids", "/c", "/tmp", "/tmp/y", "/zookeeper"]
    assert state.nodes["/tmp"].data == b"t" and state.nodes["/tmp"].version == 1
    assert state.nodes["/tmp/y"].acl == (Acl(1, "world", "anyone"),) and state.nodes["/tmp/y"].aversion == 1
    assert state.nodes["/c"].ephemeral_owner == zks.CONTAINER_EPHEMERAL_OWNER
    assert dict(state.sessions) == {S1: 18000}
    # delete of /tmp/x raised the parent's pzxid; the failed multi changed nothing
    assert state.nodes["/tmp"].pzxid == 13 and state.nodes["/tmp"].cversion == 2
    assert state.time == T0 + len(HISTORY) * 1000
    assert state.snapshot.endswith("snapshot.0") and len(state.logs) == 1


def test_failed_multi_is_skipped_whole(datadir):
    state = load_zk_state([datadir], at_zxid=12)
    assert "/tmp/never" not in state.nodes
    assert state.nodes["/tmp"].cversion == 1   # the create inside the failed multi never ran


@pytest.mark.parametrize("zxid, alive", [
    pytest.param(6, {"2", "3"}, id="both-registered"),
    pytest.param(15, {"3"}, id="listed-path-deleted"),
    pytest.param(16, set(), id="no-body-deletes-every-ephemeral"),
])
def test_close_session_removes_ephemerals(datadir, zxid, alive):
    state = load_zk_state([datadir], at_zxid=zxid)
    assert set(state.nodes["/brokers/ids"].children) == alive
    assert all(s in state.sessions for s in (state.nodes[f"/brokers/ids/{b}"].ephemeral_owner for b in alive))


def test_stop_at_time(datadir):
    state = load_zk_state([datadir], at_time=T0 + 9_500)
    assert state.zxid == 9 and state.nodes["/tmp/x"].data == b"2"


def test_fuzzy_snapshot_replays_to_the_same_tree(tmp_path, datadir):
    exact = load_zk_state([datadir])
    # a snapshot named 0x7 that already holds the effects of txns 8-10 (create, set, delete of
    # /tmp/x) and 11-14, with the session table as it was at 0x7
    fuzzy_tree = _tree_at(14)
    fuzzy_tree.sessions = dict(_tree_at(7).sessions)
    d = tmp_path / "fuzzy"
    d.mkdir()
    (d / "snapshot.7").write_bytes(_snapshot_bytes(fuzzy_tree, 14))
    _write_log(d, 1, _entries())
    state = load_zk_state([d])
    assert state.snapshot.endswith("snapshot.7") and state.applied == len(HISTORY) - 7
    assert _stat(state) == _stat(exact)
    assert dict(state.sessions) == dict(exact.sessions)
    assert [f.kind for f in state.findings] == []


def test_fuzzy_snapshot_beyond_the_target_gives_way_to_an_older_one(tmp_path):
    d = tmp_path
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    (d / "snapshot.7").write_bytes(_snapshot_bytes(_tree_at(10), 10))
    _write_log(d, 1, _entries())
    state = replay(find_zk_files([d]), at_zxid=8)
    assert state.snapshot.endswith("snapshot.0")
    assert state.nodes["/tmp/x"].data == b"1"
    later = replay(find_zk_files([d]), at_zxid=12)
    assert later.snapshot.endswith("snapshot.7")


def test_damaged_newest_snapshot_falls_back(tmp_path):
    d = tmp_path
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    bad = bytearray(_snapshot_bytes(_tree_at(9), 9))
    bad[40] ^= 0xFF
    (d / "snapshot.9").write_bytes(bytes(bad))
    _write_log(d, 1, _entries())
    state = load_zk_state([d])
    assert state.snapshot.endswith("snapshot.0")
    kinds = [f.kind for f in state.findings]
    assert "zk_snapshot_rejected" in kinds
    assert state.zxid == len(HISTORY)


def test_log_selection_follows_get_log_files():
    logs = [zks_f for zks_f in (
        _zf("log.1", 1), _zf("log.5a", 0x5A), _zf("log.9f", 0x9F), _zf("log.e0", 0xE0))]
    assert [f.zxid for f in log_files_for(logs, 0x9E)] == [0x5A, 0x9F, 0xE0]
    assert [f.zxid for f in log_files_for(logs, 0x9F)] == [0x9F, 0xE0]
    assert [f.zxid for f in log_files_for(logs, 0)] == [1, 0x5A, 0x9F, 0xE0]


def _zf(name, zxid):
    from kreplica.model.zookeeper import ZkFile
    return ZkFile(name, "log", zxid)


def test_next_txn_may_sit_in_the_older_log(tmp_path):
    d = tmp_path
    entries = _entries()
    (d / "snapshot.7").write_bytes(_snapshot_bytes(_tree_at(7), 7))
    _write_log(d, 1, entries[:9])      # 1..9: holds 8 and 9, after the snapshot
    _write_log(d, 10, entries[9:])
    state = load_zk_state([d])
    assert state.applied == len(HISTORY) - 7 and state.findings == ()


def test_missing_log_is_a_gap(tmp_path):
    d = tmp_path
    entries = _entries()
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    _write_log(d, 1, entries[:5])
    _write_log(d, 9, entries[8:])
    state = load_zk_state([d])
    assert "zk_zxid_gap" in [f.kind for f in state.findings]


def test_logged_digest_disagreeing_with_replay_is_a_finding(tmp_path):
    d = tmp_path
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    _write_log(d, 1, _entries(digests={5: 42}))
    state = load_zk_state([d])
    mismatches = [f for f in state.findings if f.kind == "zk_digest_mismatch"]
    assert [f.details["zxid"] for f in mismatches] == [5]


def test_checksum_failure_stops_replay(tmp_path):
    d = tmp_path
    entries = _entries()
    broken = bytearray(entries[4][1])
    broken[-3] ^= 1
    entries[4] = (5, bytes(broken))
    (d / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    _write_log(d, 1, entries)
    state = load_zk_state([d])
    assert state.zxid == 4 and "zk_checksum_mismatch" in [f.kind for f in state.findings]


def test_no_snapshot_for_target_raises(tmp_path):
    (tmp_path / "snapshot.9").write_bytes(_snapshot_bytes(_tree_at(9), 9))
    with pytest.raises(FormatError):
        replay(find_zk_files([tmp_path]), at_zxid=3)


def test_explicit_files_and_side_files(datadir):
    files = find_zk_files([datadir])
    assert [f.zxid for f in files.snapshots] == [0] and [f.zxid for f in files.logs] == [1]
    explicit = find_zk_files([datadir / "version-2" / "snapshot.0", datadir / "version-2" / "log.1"])
    assert isinstance(explicit, ZkFiles) and len(explicit.snapshots) == len(explicit.logs) == 1
    with pytest.raises(FormatError):
        find_zk_files([datadir / "myid"])
    with pytest.raises(FormatError):
        find_zk_files([datadir / "missing"])


def test_ephemeral_of_unknown_session_is_flagged(tmp_path):
    tree = _tree_at(6)
    tree.sessions.pop(S3)
    (tmp_path / "snapshot.6").write_bytes(_snapshot_bytes(tree, 6))
    state = load_zk_state([tmp_path])
    flagged = [f.details["znode"] for f in state.findings if f.kind == "zk_ephemeral_without_session"]
    assert flagged == ["/brokers/ids/3"]


@pytest.mark.parametrize("text, value", [
    pytest.param("0xb6", 0xB6, id="hex"), pytest.param("182", 182, id="decimal"),
    pytest.param("0X100000001", 0x100000001, id="upper"),
])
def test_parse_zxid(text, value):
    assert parse_zxid(text) == value


@pytest.mark.parametrize("text", ["b6", "-1", "0xzz", ""])
def test_parse_zxid_rejects(text):
    with pytest.raises(ValueError):
        parse_zxid(text)


# -- DataTree rules, one at a time ------------------------------------------------------------


def _tree_with_parent(cversion=5, pzxid=50) -> ZkTree:
    t = _base_tree()
    t.load_node(zks.ZNode("/p", None, -1, 1, 1, 0, 0, 0, cversion, 0, 0, pzxid), {})
    t.load_node(zks.ZNode("/p/old", b"", -1, 2, 2, 0, 0, 0, 0, 0, 0, 2), {})
    return t


def test_create_never_lowers_parent_cversion():
    t = _tree_with_parent()
    assert t.create("/p/a", None, None, 0, 3, 60, T0, False) == 0
    assert (t.nodes["/p"].cversion, t.nodes["/p"].pzxid) == (5, 50)
    assert t.create("/p/b", None, None, 0, -1, 61, T0, False) == 0      # -1: current + 1
    assert (t.nodes["/p"].cversion, t.nodes["/p"].pzxid) == (6, 61)


@pytest.mark.parametrize("fix_up, expected", [
    pytest.param(True, (9, 70), id="create-fixes-up-parent"),
    pytest.param(False, (5, 50), id="create2-does-not"),
])
def test_create_of_existing_node(fix_up, expected):
    t = _tree_with_parent()
    assert t.create("/p/old", b"new", None, 0, 9, 70, T0, fix_up) == -110
    assert (t.nodes["/p"].cversion, t.nodes["/p"].pzxid) == expected
    assert t.nodes["/p/old"].data == b""


def test_delete_of_missing_node_still_raises_parent_pzxid():
    t = _tree_with_parent()
    assert t.delete("/p/gone", 80) == -101
    assert t.nodes["/p"].pzxid == 80
    assert t.delete("/p/old", 60) == 0
    assert t.nodes["/p"].pzxid == 80 and "old" not in t.nodes["/p"].children


def test_set_data_is_absolute_and_idempotent():
    t = _tree_with_parent()
    for _ in range(2):
        t.set_data("/p/old", b"v", 7, 90, T0 + 5)
    n = t.nodes["/p/old"]
    assert (n.data, n.version, n.mzxid, n.mtime) == (b"v", 7, 90, T0 + 5)


def test_incremental_digest_equals_a_full_recount():
    t = _tree_at(len(HISTORY))
    full = sum(ZkTree.node_digest(p, n) for p, n in t.nodes.items()) & 0xFFFFFFFFFFFFFFFF
    assert t.digest == full != 0


def _entries_with_digests_from(first_with: int, wrong: dict | None = None) -> list[tuple[int, bytes]]:
    """HISTORY's entries, the first ``first_with - 1`` without a digest (a pre-3.6 server), the
    rest with the reference digest (or ``wrong[zxid]``)."""
    out = []
    for (i, _), (j, b) in zip(_entries(), _entries(digests=wrong)):
        if i < first_with:
            client, t, body = HISTORY[i - 1]
            b = zkl.build_entry(client_id=client, cxid=i, zxid=i, time=T0 + i * 1000, txn_type=t, body=body)
        out.append((i, b))
    return out


@pytest.mark.parametrize("first_with", [1, 6, 12, len(HISTORY) + 1])
def test_digest_is_the_same_whether_kept_or_summed_at_the_end(tmp_path, first_with):
    """Entries without a digest leave the tree digest to be summed when read; from the first
    entry with one it is kept step by step again. Either way it is the reference digest, and a
    logged digest that disagrees is still found."""
    (tmp_path / "snapshot.0").write_bytes(_snapshot_bytes(_base_tree(), 0))
    _write_log(tmp_path, 1, _entries_with_digests_from(first_with))
    state = load_zk_state([tmp_path])
    assert [f.kind for f in state.findings if f.kind == "zk_digest_mismatch"] == []
    assert callable(state._digest) == (first_with > len(HISTORY))   # summed only when read
    assert state.digest == _tree_at(len(HISTORY)).digest

    wrong = first_with + 1 if first_with < len(HISTORY) else None
    if wrong is not None:
        _write_log(tmp_path, 1, _entries_with_digests_from(first_with, {wrong: 42}))
        state = load_zk_state([tmp_path])
        assert [f.details["zxid"] for f in state.findings if f.kind == "zk_digest_mismatch"] == [wrong]


def test_a_snapshot_path_stored_twice_keeps_the_digest_step_by_step():
    """ZooKeeper's digest counts both copies of a path stored twice; the tree holds one, so the
    digest cannot be summed over the tree later and is kept change by change."""
    t = _base_tree()
    z = zks.ZNode("/a", b"1", -1, 1, 1, 0, 0, 0, 0, 0, 0, 1)
    t.load_node(z, {})
    assert t.defer_digest()
    u = _base_tree()
    u.load_nodes([(z.path, z.data, -1, 0, zks.STAT_PERSISTED.pack(*z[3:12]), 0)] * 2, {}, [], "")
    assert not u.defer_digest()


def test_load_cluster_state_detects_zookeeper(datadir):
    from kreplica.model.cluster import load_cluster_state
    cs = load_cluster_state([datadir], at_zxid=6)
    assert cs.source_kind == "zookeeper" and cs.position == {"zxid": 6}
    assert [b.id for b in cs.brokers] == [2, 3] and all(b.alive for b in cs.brokers)
    with pytest.raises(ValueError):
        load_cluster_state([datadir], at_offset=5)


def test_iter_tree_preorder_and_glob(datadir):
    from kreplica.model.zookeeper import iter_tree
    state = load_zk_state([datadir], at_zxid=8)
    assert [p for p, _ in iter_tree(state.nodes)] == [
        "/", "/brokers", "/brokers/ids", "/brokers/ids/2", "/brokers/ids/3", "/tmp", "/tmp/x", "/zookeeper"]
    assert [p for p, _ in iter_tree(state.nodes, "/brokers/*")] == [
        "/brokers/ids", "/brokers/ids/2", "/brokers/ids/3"]
    assert [p for p, _ in iter_tree(state.nodes, "/tmp")] == ["/tmp"]


def test_iter_zk_log_walks_every_log_in_zxid_order(tmp_path):
    from kreplica.model.zookeeper import iter_zk_log
    entries = _entries()
    _write_log(tmp_path, 9, entries[8:])
    _write_log(tmp_path, 1, entries[:8])
    (tmp_path / "log.20").write_bytes(b"")
    (tmp_path / "log.30").write_bytes(b"not a log at all")
    items = list(iter_zk_log([tmp_path]))
    zxids = [x.zxid for x in items if isinstance(x, zkl.TxnEntry)]
    assert zxids == list(range(1, len(HISTORY) + 1))
    ends = [x for x in items if isinstance(x, zkl.TxnLogEnd)]
    assert [e.stopped_by for e in ends] == [zkl.STOP_PREALLOCATED, zkl.STOP_PREALLOCATED, zkl.STOP_END_OF_FILE]
    bad = [x for x in items if not isinstance(x, (zkl.TxnEntry, zkl.TxnLogEnd, zkl.TxnLogHeader))]
    assert [(f.kind, f.path.endswith("log.30")) for f in bad] == [("zk_invalid_txn", True)]


# -- property: damaged evidence gives a state, findings or a FormatError ------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SNAP = _snapshot_bytes(_tree_at(3), 3)
_LOG = zkl.build_txnlog([b for _, b in _entries()], preallocate=4096)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["snapshot", "log"]),
       st.lists(st.tuples(st.integers(0, 4095), st.integers(0, 255)), min_size=1, max_size=6))
def test_damaged_evidence_never_crashes_replay(which, patches):
    import tempfile
    from pathlib import Path

    from kreplica.model.cluster import cluster_state_from_zk
    snap, log = bytearray(_SNAP), bytearray(_LOG)
    target = snap if which == "snapshot" else log
    for at, value in patches:
        target[at % len(target)] = value
    with tempfile.TemporaryDirectory() as d:
        Path(d, "snapshot.3").write_bytes(bytes(snap))
        Path(d, "log.1").write_bytes(bytes(log))
        try:
            state = load_zk_state([d])
        except FormatError:
            return
        cluster_state_from_zk(state)
