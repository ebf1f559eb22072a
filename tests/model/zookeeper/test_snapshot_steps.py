"""A ZooKeeper history from snapshots alone (``kreplica/model/zookeeper/snapshot_steps.py``): the
znodes two snapshots' trees differ by, each at the zxid that wrote it. Real data directories
with snapshots and no log are in ``tests/interop/test_wild_zookeeper.py``."""

from __future__ import annotations

from kreplica.model.zookeeper.snapshot_steps import snapshot_diff
from kreplica.model.zookeeper.tree import ZkNode


def _node(data: bytes, czxid: int, mzxid: int | None = None) -> ZkNode:
    mzxid = czxid if mzxid is None else mzxid
    return ZkNode.of(data, None, czxid, mzxid, czxid * 10, mzxid * 10, 0, 0, 0, 0, czxid)


def test_writes_are_grouped_by_the_zxid_that_made_them_and_deletions_come_last() -> None:
    kept = _node(b"k", 1)
    before = {"/kept": kept, "/written": _node(b"a", 2), "/gone": _node(b"g", 3), "/again": _node(b"x", 4)}
    after = {"/kept": kept, "/written": _node(b"b", 2, 9), "/new": _node(b"n", 9), "/again": _node(b"y", 12),
             "/late": _node(b"l", 30)}
    writes = snapshot_diff(before, after, "snapshot.14", 0x14)
    assert [(w.zxid, w.time) for w in writes] == [(9, 90), (12, 120), (30, 300), (30, None)]
    first = {c.path: c for c in writes[0].changes}
    assert set(first) == {"/new", "/written"}
    assert first["/written"].before_data == b"a" and first["/written"].after.data == b"b"
    assert first["/new"].created
    (recreated,) = writes[1].changes
    assert recreated.path == "/again" and recreated.created   # deleted and created again in between
    (gone,) = writes[3].changes
    assert gone.path == "/gone" and gone.deleted and gone.before_data == b"g"
    assert all(w.snapshot == "snapshot.14" for w in writes)


def test_the_same_tree_is_no_change() -> None:
    tree = {"/a": _node(b"a", 1)}
    assert snapshot_diff(tree, dict(tree), "snapshot.2", 2) == []


def test_a_znode_created_since_is_written_at_its_creation_not_its_last_change() -> None:
    # a partition state znode created at 0x46 and rewritten at 0x68 before the later snapshot: the
    # creation is its czxid (and ctime); the counter-case, a znode that existed before, is written
    # at its last change, mzxid
    before = {"/old": _node(b"a", 0x10)}
    after = {"/old": _node(b"b", 0x10, 0x68), "/state": _node(b"s", 0x46, 0x68)}
    writes = snapshot_diff(before, after, "snapshot.70", 0x70)
    assert [(w.zxid, w.time, [c.path for c in w.changes]) for w in writes] == [(0x46, 0x46 * 10, ["/state"]),
                                                                               (0x68, 0x68 * 10, ["/old"])]
    assert writes[0].changes[0].created and writes[0].changes[0].after.data == b"s"
