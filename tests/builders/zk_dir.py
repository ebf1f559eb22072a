"""A ZooKeeper data directory written by kreplica's snapshot and txn log writers: a snapshot at 0x5
(data shapes the schema must keep apart) and a log from 0x6 (:func:`write_zk_dir`)."""

from __future__ import annotations

from pathlib import Path

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl


OPEN = zks.Acl(31, "world", "anyone")
SESSION = 0x100000000000001


def _node(path, data, zxid, *, owner=0, cversion=0):
    return zks.ZNode(path, data, 1, zxid, zxid, 1_700_000_000_000 + zxid, 1_700_000_000_000 + zxid,
                     0, cversion, 0, owner, zxid)


def write_zk_dir(root: Path, *, bad_checksum: bool = False) -> Path:
    """``version-2/`` with a snapshot at 0x5 (data shapes the schema must keep apart) and a log
    from 0x6: a session, an ephemeral, a setData, a failed multi, a delete."""
    d = root / "version-2"
    d.mkdir(parents=True)
    nodes = [
        zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 7, 0, 0, 5),
        _node("/json", b'{"version":1,"isr":[1,2]}', 1),
        _node("/null", None, 2),
        _node("/empty", b"", 3),
        _node("/binary", b"\xff\x00\xfe", 4),
        _node("/nan", b"NaN", 5),
        _node("/huge", b"%d" % (1 << 70), 5),
        _node("/number", b"42", 5),
        _node("/gone", b"x", 5),
        _node("/deep", b"[" * 150 + b"]" * 150, 5),
        _node("/zookeeper", b"", 0),
    ]
    (d / "snapshot.5").write_bytes(zks.build_snapshot(nodes, acls={1: [OPEN]}))
    t0 = 1_700_000_001_000
    entries = [
        zkl.build_entry(client_id=SESSION, cxid=0, zxid=6, time=t0, txn_type=zkl.OP_CREATE_SESSION,
                        body=zkl.CreateSessionTxn(30000)),
        zkl.build_entry(client_id=SESSION, cxid=1, zxid=7, time=t0 + 1000, txn_type=zkl.OP_CREATE,
                        body=zkl.CreateTxn("/eph", b'{"a":true}', (OPEN,), True, 8)),
        zkl.build_entry(client_id=SESSION, cxid=2, zxid=8, time=t0 + 2000, txn_type=zkl.OP_SET_DATA,
                        body=zkl.SetDataTxn("/json", b'{"version":2}', 1)),
        zkl.build_entry(client_id=SESSION, cxid=3, zxid=9, time=t0 + 3000, txn_type=zkl.OP_MULTI,
                        body=zkl.MultiTxn((zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-103), b""),
                                           zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-2), b"")))),
        zkl.build_entry(client_id=SESSION, cxid=4, zxid=10, time=t0 + 4000, txn_type=zkl.OP_DELETE,
                        body=zkl.DeleteTxn("/gone"), checksum=1 if bad_checksum else None),
    ]
    (d / "log.6").write_bytes(zkl.build_txnlog(entries, preallocate=4096))
    (d / "myid").write_text("1\n")   # ignored
    return root
