"""The ZooKeeper data tree (``DataTree``) for offline replay: its nodes, operations and digest.

Sources (apache/zookeeper ``release-3.8.0-1``): ``server/DataTree.java`` (``processTxn``,
``createNode``, ``deleteNode``, ``setData``, ``setACL``, ``killSession``,
``setCversionPzxid``), ``server/DataNode.java`` (``copyStat``), ``server/DigestCalculator.java``
and ``NodeHashMapImpl.java`` (the tree digest); ``../shared/specs/zookeeper-formats.md`` §4.5.

Why replay works on a fuzzy snapshot: ZooKeeper names a snapshot after the last zxid applied
when it *started*, while nodes are copied one by one as later transactions keep landing. So
replay starts at name-zxid + 1 and every operation is idempotent: ``setData``/``setACL`` carry
absolute versions, creates of an existing node fail (a plain ``create`` still raises the
parent's cversion/pzxid), deletes of a missing node fail but still raise the parent's pzxid,
and the parent's cversion only ever grows. A multi with any error sub-transaction changes
nothing. The same digest ZooKeeper logs with each transaction is kept here incrementally
(``ZkTree.digest``), so every replayed step can be checked against the server's own tree digest.

Which files are replayed is :mod:`~kreplica.model.zookeeper.files`; the replay itself is
:mod:`~kreplica.model.zookeeper.replay`.
"""

from __future__ import annotations

import fnmatch
import re
import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from kreplica.formats import zookeeper_snapshot as zks
from kreplica.formats import zookeeper_txnlog as zkl
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper_snapshot import Acl

_DIGEST_STAT = struct.Struct(
    ">"
    "q"  # czxid
    "q"  # mzxid
    "q"  # pzxid
    "q"  # ctime
    "q"  # mtime
    "i"  # version
    "i"  # cversion (persisted)
    "i"  # aversion
    "q"  # ephemeralOwner
)
_MASK64 = 0xFFFFFFFFFFFFFFFF
_NO_CHILDREN: frozenset[str] = frozenset()


class ZkNode:
    """One node of the replayed tree: data, ACL list and ``StatPersisted``, plus its children.

    Exposed read-only through :class:`ZkState`; only the replayer mutates it. ``cversion`` is
    the persisted value; :attr:`client_cversion` is what zkCli shows.
    """

    __slots__ = ("data", "acl", "czxid", "mzxid", "ctime", "mtime", "version", "cversion",
                 "aversion", "ephemeral_owner", "pzxid", "_children")

    def __init__(self, data, acl, czxid, mzxid, ctime, mtime, version, cversion, aversion,
                 ephemeral_owner, pzxid):
        self.data = data
        self.acl = acl
        self.czxid = czxid
        self.mzxid = mzxid
        self.ctime = ctime
        self.mtime = mtime
        self.version = version
        self.cversion = cversion
        self.aversion = aversion
        self.ephemeral_owner = ephemeral_owner
        self.pzxid = pzxid
        self._children: set[str] | None = None   # created on the first child: most nodes are leaves

    @property
    def children(self) -> set[str] | frozenset[str]:
        """Names (not paths) of the children."""
        return self._children if self._children is not None else _NO_CHILDREN

    def add_child(self, name: str) -> None:
        if self._children is None:
            self._children = {name}
        else:
            self._children.add(name)

    def remove_child(self, name: str) -> None:
        if self._children is not None:
            self._children.discard(name)

    @property
    def num_children(self) -> int:
        return len(self._children) if self._children is not None else 0

    @property
    def client_cversion(self) -> int:
        """``DataNode.copyStat``: ``2 * persisted cversion - numChildren``."""
        return 2 * self.cversion - self.num_children

    @property
    def client_ephemeral_owner(self) -> int:
        return zks.client_ephemeral_owner(self.ephemeral_owner)


@dataclass(frozen=True)
class ZkState:
    """The tree and session table at ``zxid`` (the last applied transaction).

    ``nodes`` maps client paths (root ``"/"``) to :class:`ZkNode`; ``sessions`` maps open
    session ids to their timeouts; ``time`` is the header time of the last applied txn (None
    when nothing was replayed). ``snapshot`` and ``logs`` name the files used.
    """

    source: str
    zxid: int
    time: int | None
    nodes: Mapping[str, ZkNode]
    sessions: Mapping[int, int]
    snapshot: str
    snapshot_zxid: int
    logs: tuple[str, ...]
    applied: int
    digest: int
    findings: tuple[Finding, ...] = field(default=())

    def get(self, path: str) -> ZkNode | None:
        return self.nodes.get(path)

    def child_paths(self, path: str) -> list[str]:
        """Full paths of the children of ``path`` (sorted), or ``[]`` when it does not exist."""
        node = self.nodes.get(path)
        if node is None:
            return []
        prefix = "" if path == "/" else path
        return sorted(f"{prefix}/{c}" for c in node.children)


def _parent_and_name(path: str) -> tuple[str, str]:
    i = path.rfind("/")
    return (path[:i] or "/"), path[i + 1:]


class ZkTree:
    """ZooKeeper's ``DataTree`` for offline replay (mutable; see
    :func:`~kreplica.model.zookeeper.replay.replay`)."""

    def __init__(self) -> None:
        self.nodes: dict[str, ZkNode] = {}
        self.sessions: dict[int, int] = {}
        self.ephemerals: dict[int, set[str]] = {}
        self.digest = 0
        self.last_zxid = 0

    # -- digest (DigestCalculator v2 + AdHash) --
    @staticmethod
    def node_digest(path: str, n: ZkNode) -> int:
        """``DigestCalculator.calculateDigest``: CRC32 of path, data and a 60-byte stat."""
        if path.startswith("/zookeeper/"):
            return 0
        p = b"" if path == "/" else path.encode("utf-8")
        crc = zlib.crc32(p)
        if n.data is not None:
            crc = zlib.crc32(n.data, crc)
        return zlib.crc32(_DIGEST_STAT.pack(n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime, n.version,
                                            n.cversion, n.aversion, n.ephemeral_owner), crc)

    def _pre(self, path: str, n: ZkNode) -> None:
        self.digest = (self.digest - self.node_digest(path, n)) & _MASK64

    def _post(self, path: str, n: ZkNode) -> None:
        self.digest = (self.digest + self.node_digest(path, n)) & _MASK64

    # -- loading --
    def load_node(self, z: zks.ZNode, acls: Mapping[int, tuple[Acl, ...]]) -> None:
        """Add one snapshot node (parents first, as snapshots store them)."""
        # NOTE: runs once per snapshot node; parent lookup and digest are inlined (see the
        # loading figures in iter_snapshot's NOTE).
        path = z.path
        n = ZkNode(z.data, acls.get(z.acl) if z.acl != -1 else None, z.czxid, z.mzxid, z.ctime,
                   z.mtime, z.version, z.cversion, z.aversion, z.ephemeral_owner, z.pzxid)
        self.nodes[path] = n
        if path != "/":
            i = path.rfind("/")
            pn = self.nodes.get(path[:i] or "/")
            if pn is not None:
                pn.add_child(path[i + 1:])
            owner = z.ephemeral_owner
            if owner and zks.is_session_owner(owner):
                self.ephemerals.setdefault(owner, set()).add(path)
            if path.startswith("/zookeeper/"):
                return
            crc = zlib.crc32(path.encode("utf-8"))
        else:
            crc = 0
        if n.data is not None:
            crc = zlib.crc32(n.data, crc)
        crc = zlib.crc32(_DIGEST_STAT.pack(z.czxid, z.mzxid, z.pzxid, z.ctime, z.mtime, z.version,
                                           z.cversion, z.aversion, z.ephemeral_owner), crc)
        self.digest = (self.digest + crc) & _MASK64

    # -- DataTree operations --
    def create(self, path: str, data, acl, owner: int, parent_cversion: int, zxid: int, time: int,
               fix_up_on_exists: bool) -> int:
        """``DataTree.createNode`` (and the create-NODEEXISTS fix-up of ``processTxn``); returns an error code."""
        parent_path, name = _parent_and_name(path)
        parent = self.nodes.get(parent_path)
        if parent is None or not name:
            return -101  # NONODE
        if name in parent.children or path in self.nodes:
            if fix_up_on_exists:
                self._set_cversion_pzxid(parent_path, parent, parent_cversion, zxid)
            return -110  # NODEEXISTS
        self._pre(parent_path, parent)
        if parent_cversion == -1:
            parent_cversion = parent.cversion + 1
        if parent_cversion > parent.cversion:
            parent.cversion = parent_cversion
            parent.pzxid = zxid
        parent.add_child(name)
        self._post(parent_path, parent)
        n = ZkNode(data, acl, zxid, zxid, time, time, 0, 0, 0, owner, zxid)
        self.nodes[path] = n
        if zks.is_session_owner(owner):
            self.ephemerals.setdefault(owner, set()).add(path)
        self._post(path, n)
        return 0

    def _set_cversion_pzxid(self, path: str, node: ZkNode, new_cversion: int, zxid: int) -> None:
        if new_cversion == -1:
            new_cversion = node.cversion + 1
        if new_cversion > node.cversion:
            self._pre(path, node)
            node.cversion = new_cversion
            node.pzxid = zxid
            self._post(path, node)

    def delete(self, path: str, zxid: int) -> int:
        """``DataTree.deleteNode``: the parent's pzxid rises even when the child is already gone."""
        parent_path, name = _parent_and_name(path)
        parent = self.nodes.get(parent_path)
        if parent is None or path == "/":
            return -101
        self._pre(parent_path, parent)
        parent.remove_child(name)
        if zxid > parent.pzxid:
            parent.pzxid = zxid
        self._post(parent_path, parent)
        n = self.nodes.pop(path, None)
        if n is None:
            return -101
        self._pre(path, n)
        if zks.is_session_owner(n.ephemeral_owner):
            owned = self.ephemerals.get(n.ephemeral_owner)
            if owned is not None:
                owned.discard(path)
                if not owned:
                    del self.ephemerals[n.ephemeral_owner]
        return 0

    def set_data(self, path: str, data, version: int, zxid: int, time: int) -> int:
        n = self.nodes.get(path)
        if n is None:
            return -101
        self._pre(path, n)
        n.data, n.mtime, n.mzxid, n.version = data, time, zxid, version
        self._post(path, n)
        return 0

    def set_acl(self, path: str, acl, version: int) -> int:
        n = self.nodes.get(path)
        if n is None:
            return -101
        self._pre(path, n)
        n.aversion = version
        n.acl = acl
        self._post(path, n)
        return 0

    def kill_session(self, session: int, zxid: int, listed: tuple[str, ...] | None) -> None:
        """``DataTree.killSession``: the listed paths (3.6+), then any other ephemeral of the session."""
        local = self.ephemerals.pop(session, set())
        if listed is not None:
            for p in listed:
                self.delete(p, zxid)
                local.discard(p)
        for p in sorted(local):
            self.delete(p, zxid)

    def process(self, txn_type: int, body, client_id: int, zxid: int, time: int) -> int:
        """``DataTree.processTxn`` for one (sub-)transaction; returns ZooKeeper's error code."""
        if body is None and txn_type not in (zkl.OP_CLOSE_SESSION, zkl.OP_CREATE_SESSION):
            return 0
        if txn_type in (zkl.OP_CREATE, zkl.OP_CREATE2):
            owner = client_id if body.ephemeral else 0
            return self.create(body.path, body.data, body.acl, owner, body.parent_cversion, zxid, time,
                               fix_up_on_exists=txn_type == zkl.OP_CREATE)
        if txn_type == zkl.OP_CREATE_CONTAINER:
            return self.create(body.path, body.data, body.acl, zks.CONTAINER_EPHEMERAL_OWNER,
                               body.parent_cversion, zxid, time, False)
        if txn_type == zkl.OP_CREATE_TTL:
            # EphemeralType.TTL.toEphemeralOwner: 0xFF00... | ttl
            owner = ((0xFF << 56) | (body.ttl or 0)) - (1 << 64)
            return self.create(body.path, body.data, body.acl, owner, body.parent_cversion, zxid, time, False)
        if txn_type in (zkl.OP_DELETE, zkl.OP_DELETE_CONTAINER):
            return self.delete(body.path, zxid)
        if txn_type in (zkl.OP_SET_DATA, zkl.OP_RECONFIG):
            return self.set_data(body.path, body.data, body.version, zxid, time)
        if txn_type == zkl.OP_SET_ACL:
            return self.set_acl(body.path, body.acl, body.version)
        if txn_type == zkl.OP_CLOSE_SESSION:
            self.kill_session(client_id, zxid, body.paths if body is not None else None)
            return 0
        if txn_type == zkl.OP_ERROR:
            return body.err
        if txn_type == zkl.OP_MULTI:
            if body.failed:
                # DataTree.processTxn: any error sub-txn turns the whole multi into errors.
                for t in body.txns:
                    if t.type == zkl.OP_ERROR:
                        return t.body.err if t.body is not None else -2
            if any(t.type not in zkl.MULTI_TYPES for t in body.txns):
                return -2  # "Invalid type of op": ZooKeeper applies none of it here
            err = 0
            for sub in body.txns:
                rc = self.process(sub.type, sub.body, client_id, zxid, time)
                if rc and not err:
                    err = rc
            return err
        return 0

    def apply(self, e: zkl.TxnEntry) -> None:
        """``FileTxnSnapLog.processTransaction``: session table, then the tree."""
        if e.type == zkl.OP_CREATE_SESSION and e.body is not None:
            self.sessions[e.client_id] = e.body.timeout
        elif e.type == zkl.OP_CLOSE_SESSION:
            self.sessions.pop(e.client_id, None)
        self.process(e.type, e.body, e.client_id, e.zxid, e.time)
        if e.zxid > self.last_zxid:
            self.last_zxid = e.zxid


def iter_tree(nodes: Mapping[str, ZkNode], pattern: str | None = None) -> Iterator[tuple[str, ZkNode]]:
    """``(path, node)`` in pre-order with children sorted by name (a stable order, unlike
    ZooKeeper's hash order), keeping only paths that match the ``fnmatch`` glob ``pattern``
    (``*`` also crosses ``/``: ``/brokers/*`` is the whole subtree)."""
    match = re.compile(fnmatch.translate(pattern)).match if pattern is not None else None
    stack = ["/"] if "/" in nodes else []
    while stack:
        path = stack.pop()
        node = nodes.get(path)
        if node is None:
            continue
        if match is None or match(path):
            yield path, node
        prefix = "" if path == "/" else path
        stack.extend(f"{prefix}/{c}" for c in sorted(node.children, reverse=True))


def snapshot_nodes(snapshot: zks.Snapshot) -> dict[str, ZkNode]:
    """The nodes of one snapshot file as a tree (no replay): for dumping a file as it is."""
    tree = ZkTree()
    for z in snapshot.nodes:
        tree.load_node(z, snapshot.preamble.acls)
    return tree.nodes
