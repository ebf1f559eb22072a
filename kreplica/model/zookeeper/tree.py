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
(``ZkTree.digest``), so every replayed step can be checked against the server's own tree digest;
while the logs carry none (servers before 3.6) the replay defers it (``ZkTree.defer_digest``)
and it is summed over the nodes once, when read.

Which files are replayed is :mod:`~kreplica.model.zookeeper.files`; the replay itself is
:mod:`~kreplica.model.zookeeper.replay`.
"""

from __future__ import annotations

import fnmatch
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper.snapshot import Acl

_STAT = zks.STAT_PERSISTED
_MASK64 = 0xFFFFFFFFFFFFFFFF
_NO_CHILDREN: frozenset[str] = frozenset()
_OP_SET_DATA, _OP_CREATE_SESSION, _OP_CLOSE_SESSION = zkl.OP_SET_DATA, zkl.OP_CREATE_SESSION, zkl.OP_CLOSE_SESSION
#: ``StatPersisted`` field -> (offset, struct) in the stored 60 bytes.
_FIELDS = {}
_at = 0
for _name, _code in zip(("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
                         "ephemeral_owner", "pzxid"), _STAT.format[1:]):
    _FIELDS[_name] = (_at, struct.Struct(">" + _code))
    _at += _FIELDS[_name][1].size
_INDEX = {name: i for i, name in enumerate(_FIELDS)}
del _at, _name, _code
#: The stored stat cut where ``setData`` changes it (mzxid, mtime, version), and where a child
#: change does (cversion, pzxid): the other fields stay bytes, nothing else is decoded.
_SET_DATA_STAT = struct.Struct(">8sq8sqi24s")
_CHILD_STAT = struct.Struct(">36si12sq")
assert _SET_DATA_STAT.size == _CHILD_STAT.size == _STAT.size


def _stat_field(name: str) -> property:
    offset, st = _FIELDS[name]
    unpack = st.unpack_from
    i = _INDEX[name]

    def get(self) -> int:
        return unpack(self.stat, offset)[0]

    def set_(self, value: int) -> None:
        values = list(_STAT.unpack(self.stat))
        values[i] = value
        self.stat = _STAT.pack(*values)

    return property(get, set_, doc=f"``StatPersisted.{name}``")


class ZkNode:
    """One node of the replayed tree: data, ACL list and ``StatPersisted``, plus its children.

    Exposed read-only through :class:`ZkState`; only the replayer mutates it. ``cversion`` is
    the persisted value; :attr:`client_cversion` is what zkCli shows.

    NOTE: the stat is kept as the 60 bytes the snapshot stores (``stat``), decoded per field on
    access (``czxid`` ... ``pzxid``) or all at once (:meth:`stat_values`): a million nodes then
    cost one small object, one bytes and the data each, and loading decodes no integers (the
    digest is a CRC of those same bytes). Figures in bench/README.md, "ZooKeeper".
    """

    __slots__ = ("data", "acl", "stat", "_children")

    def __init__(self, data, acl, stat: bytes) -> None:
        self.data = data
        self.acl = acl
        self.stat = stat
        self._children: set[str] | None = None   # created on the first child: most nodes are leaves

    @classmethod
    def of(cls, data, acl, czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeral_owner,
           pzxid) -> ZkNode:
        """A node from its stat fields."""
        return cls(data, acl, _STAT.pack(czxid, mzxid, ctime, mtime, version, cversion, aversion,
                                         ephemeral_owner, pzxid))

    czxid = _stat_field("czxid")
    mzxid = _stat_field("mzxid")
    ctime = _stat_field("ctime")
    mtime = _stat_field("mtime")
    version = _stat_field("version")
    cversion = _stat_field("cversion")
    aversion = _stat_field("aversion")
    ephemeral_owner = _stat_field("ephemeral_owner")
    pzxid = _stat_field("pzxid")

    def stat_values(self) -> tuple[int, int, int, int, int, int, int, int, int]:
        """``(czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeral_owner, pzxid)``."""
        return _STAT.unpack(self.stat)

    def update(self, **fields: int) -> None:
        """Set several stat fields at once (one decode and one encode)."""
        values = list(_STAT.unpack(self.stat))
        for name, value in fields.items():
            values[_INDEX[name]] = value
        self.stat = _STAT.pack(*values)

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
    #: the tree digest, or a function computing it (a replay that did not keep the digest
    #: change by change leaves it to be summed when :attr:`digest` is first read)
    _digest: int | Callable[[], int]
    findings: tuple[Finding, ...] = field(default=())

    @property
    def digest(self) -> int:
        """The tree digest (``DigestCalculator`` v2 summed over the nodes, as ZooKeeper keeps it)."""
        d = self._digest
        if not isinstance(d, int):
            d = d()
            object.__setattr__(self, "_digest", d)
        return d

    def get(self, path: str) -> ZkNode | None:
        return self.nodes.get(path)

    def child_paths(self, path: str) -> list[str]:
        """Full paths of the children of ``path`` (sorted), or ``[]`` when it does not exist."""
        node = self.nodes.get(path)
        if node is None:
            return []
        prefix = "" if path == "/" else path
        return sorted(f"{prefix}/{c}" for c in node.children)


def _sum_of_digests(nodes: Mapping[str, ZkNode]) -> int:
    """The tree digest summed over ``nodes``: :meth:`ZkTree.node_digest` of each, inlined."""
    crc32 = zlib.crc32
    total = 0
    for p, n in nodes.items():
        if p == "/":
            crc = 0
        elif p.startswith("/zookeeper/"):
            continue
        else:
            crc = crc32(p.encode("utf-8"))
        data = n.data
        if data is not None:
            crc = crc32(data, crc)
        st = n.stat
        total += crc32(st[16:52], crc32(st[52:60], crc32(st[:16], crc)))
    return total & _MASK64


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
        self._digest = 0
        self.last_zxid = 0
        # NOTE: the digest is ZooKeeper's AdHash, a sum over the nodes in the tree; each change
        # subtracts a node's old digest and adds its new one. In deferred mode (defer_digest)
        # changes skip that and mark the digest stale; it is summed again over every node when
        # next read. ``_is_sum`` says the digest equals that sum (false when a snapshot stored a
        # path twice: both copies are in ZooKeeper's digest, one in ``nodes``), which deferring
        # needs. Figures in bench/README.md, "ZooKeeper".
        self._deferred = False
        self._stale = False
        self._is_sum = True

    @property
    def digest(self) -> int:
        """The tree digest ZooKeeper logs with each transaction (``NodeHashMapImpl.getDigest``)."""
        if self._stale:
            self._digest = _sum_of_digests(self.nodes)
            self._stale = False
        return self._digest

    @digest.setter
    def digest(self, value: int) -> None:
        self._digest = value
        self._stale = False
        self._is_sum = False   # set from outside: not known to be the sum over these nodes

    def exact_digest(self) -> int:
        return self.digest

    def defer_digest(self) -> bool:
        """Stop keeping the digest change by change (it is summed over the nodes when read);
        refused (False) when the digest is not that sum."""
        if self._is_sum:
            self._deferred = True
        return self._deferred

    def drop_digest(self) -> None:
        """Keep no digest from here on, for a tree whose digest is not checked (a history's): the
        changes only mark it stale, and it is summed over the nodes if it is ever read."""
        self._deferred = True
        self._stale = True
        self._is_sum = True

    def keep_digest(self) -> None:
        """Keep the digest change by change again (summing it once if changes were deferred)."""
        if self._deferred:
            self.digest   # noqa: B018 (sums it when stale)
            self._deferred = False

    @property
    def digest_stale(self) -> bool:
        return self._stale

    # -- digest (DigestCalculator v2 + AdHash) --
    @staticmethod
    def node_digest(path: str, n: ZkNode) -> int:
        """``DigestCalculator.calculateDigest``: CRC32 of path, data and a 60-byte stat
        (czxid, mzxid, pzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner: the
        stored bytes with pzxid moved up)."""
        if path.startswith("/zookeeper/"):
            return 0
        crc = 0 if path == "/" else zlib.crc32(path.encode("utf-8"))
        if n.data is not None:
            crc = zlib.crc32(n.data, crc)
        st = n.stat
        return zlib.crc32(st[16:52], zlib.crc32(st[52:60], zlib.crc32(st[:16], crc)))

    def _pre(self, path: str, n: ZkNode) -> None:
        if self._deferred:
            self._stale = True
        else:
            self._digest = (self._digest - self.node_digest(path, n)) & _MASK64

    def _post(self, path: str, n: ZkNode) -> None:
        if self._deferred:
            self._stale = True
        else:
            self._digest = (self._digest + self.node_digest(path, n)) & _MASK64

    # -- loading --
    def load_node(self, z: zks.ZNode, acls: Mapping[int, tuple[Acl, ...]]) -> None:
        """Add one snapshot node (parents first, as snapshots store them)."""
        self.load_nodes([(z.path, z.data, z.acl, z.ephemeral_owner,
                          _STAT.pack(z.czxid, z.mzxid, z.ctime, z.mtime, z.version, z.cversion,
                                     z.aversion, z.ephemeral_owner, z.pzxid), z.position)], acls, [], "")

    def load_nodes(self, items: Iterable, acls: Mapping[int, tuple[Acl, ...]], findings: list[Finding],
                   path: str) -> zks.SnapshotEnd | None:
        """Add the nodes of ``iter_snapshot(raw=True)`` (after its preamble), in file order.

        Findings of the walk, and ``zk_orphan_znode`` for a node that comes before its parent,
        go to ``findings`` in stream order; returns the walk's :class:`SnapshotEnd`.
        """
        # NOTE: runs once per snapshot node (figures in bench/README.md, "ZooKeeper"): no stat
        # decoding, parent lookup and digest inlined, one tuple unpack per node.
        nodes = self.nodes
        ephemerals = self.ephemerals
        crc32 = zlib.crc32
        new = ZkNode.__new__
        node_type = ZkNode
        container, ttl_mask = zks.CONTAINER_EPHEMERAL_OWNER, zks.TTL_MASK
        total = 0
        count = 0
        before = len(nodes)
        end = None
        for item in items:
            if type(item) is not tuple:
                if isinstance(item, Finding):
                    findings.append(item)
                else:
                    end = item
                continue
            p, data, acl, owner, stat, at = item
            count += 1
            n = new(node_type)
            n.data = data
            n.acl = acls.get(acl) if acl != -1 else None
            n.stat = stat
            n._children = None
            nodes[p] = n
            if p != "/":
                i = p.rfind("/")
                parent = p[:i] or "/"
                pn = nodes.get(parent)
                if pn is None:
                    findings.append(zks.orphan_finding(path, at, p, parent))
                elif pn._children is None:
                    pn._children = {p[i + 1:]}
                else:
                    pn._children.add(p[i + 1:])
                if owner and owner != container and (owner & ttl_mask) != ttl_mask:
                    owned = ephemerals.get(owner)
                    if owned is None:
                        ephemerals[owner] = {p}
                    else:
                        owned.add(p)
                if p.startswith("/zookeeper/"):
                    continue
                crc = crc32(p.encode("utf-8"))
            else:
                crc = 0
            if data is not None:
                crc = crc32(data, crc)
            total += crc32(stat[16:52], crc32(stat[52:60], crc32(stat[:16], crc)))
        if self._stale or self._deferred:
            self.keep_digest()
        self._digest = (self._digest + total) & _MASK64
        if len(nodes) - before != count:
            self._is_sum = False   # a path stored twice
        return end

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
        head, cversion, middle, _pzxid = _CHILD_STAT.unpack(parent.stat)
        if parent_cversion == -1:
            parent_cversion = cversion + 1
        if parent_cversion > cversion:
            parent.stat = _CHILD_STAT.pack(head, parent_cversion, middle, zxid)
        parent.add_child(name)
        self._post(parent_path, parent)
        n = ZkNode.of(data, acl, zxid, zxid, time, time, 0, 0, 0, owner, zxid)
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
            node.update(cversion=new_cversion, pzxid=zxid)
            self._post(path, node)

    def delete(self, path: str, zxid: int) -> int:
        """``DataTree.deleteNode``: the parent's pzxid rises even when the child is already gone."""
        parent_path, name = _parent_and_name(path)
        parent = self.nodes.get(parent_path)
        if parent is None or path == "/":
            return -101
        self._pre(parent_path, parent)
        parent.remove_child(name)
        head, cversion, middle, pzxid = _CHILD_STAT.unpack(parent.stat)
        if zxid > pzxid:
            parent.stat = _CHILD_STAT.pack(head, cversion, middle, zxid)
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
        # NOTE: the most common transaction: the stat is spliced (mzxid, mtime, version) in one
        # unpack and one pack, and the digest is inlined (bench/README.md, "ZooKeeper").
        if self._deferred:
            self._stale = True
            n.data = data
            czxid, _mzxid, ctime, _mtime, _version, rest = _SET_DATA_STAT.unpack(n.stat)
            n.stat = _SET_DATA_STAT.pack(czxid, zxid, ctime, time, version, rest)
            return 0
        node_digest = self.node_digest
        d = self._digest - node_digest(path, n)
        n.data = data
        czxid, _mzxid, ctime, _mtime, _version, rest = _SET_DATA_STAT.unpack(n.stat)
        n.stat = _SET_DATA_STAT.pack(czxid, zxid, ctime, time, version, rest)
        self._digest = (d + node_digest(path, n)) & _MASK64
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
        t = e.type
        body = e.body
        if t == _OP_SET_DATA:
            if body is not None:
                self.set_data(body.path, body.data, body.version, e.zxid, e.time)
        else:
            if t == _OP_CREATE_SESSION and body is not None:
                self.sessions[e.client_id] = body.timeout
            elif t == _OP_CLOSE_SESSION:
                self.sessions.pop(e.client_id, None)
            self.process(t, body, e.client_id, e.zxid, e.time)
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
