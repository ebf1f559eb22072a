"""The ZooKeeper data tree a snapshot and its txn logs describe, replayed as ZooKeeper replays it.

Sources (apache/zookeeper ``release-3.8.0-1``): ``server/DataTree.java`` (``processTxn``,
``createNode``, ``deleteNode``, ``setData``, ``setACL``, ``killSession``,
``setCversionPzxid``), ``server/persistence/FileTxnSnapLog.java`` (``restore``,
``fastForwardFromEdits``, ``processTransaction``), ``FileTxnLog.java`` (``getLogFiles``),
``FileSnap.java`` (``findNValidSnapshots``), ``server/DigestCalculator.java`` and
``NodeHashMapImpl.java`` (the tree digest); ``../shared/specs/zookeeper-formats.md`` §1, §3.9, §4.5.

Why replay works on a fuzzy snapshot: ZooKeeper names a snapshot after the last zxid applied
when it *started*, while nodes are copied one by one as later transactions keep landing. So
replay starts at name-zxid + 1 and every operation is idempotent: ``setData``/``setACL`` carry
absolute versions, creates of an existing node fail (a plain ``create`` still raises the
parent's cversion/pzxid), deletes of a missing node fail but still raise the parent's pzxid,
and the parent's cversion only ever grows. A multi with any error sub-transaction changes
nothing. The same digest ZooKeeper logs with each transaction is kept here incrementally, so
every replayed step is checked against the server's own tree digest.
"""

from __future__ import annotations

import fnmatch
import gc
import os
import re
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from types import MappingProxyType

from kreplica.formats import zookeeper_snapshot as zks
from kreplica.formats import zookeeper_txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import open_buffer
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
#: ``FileSnap.findNValidSnapshots`` tries at most this many snapshots, newest first.
MAX_SNAPSHOTS_TRIED = 100
VERSION_DIR = "version-2"


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


@dataclass(frozen=True, slots=True)
class ZkFile:
    """A snapshot or log file found in the evidence, with the zxid its name carries."""

    path: str
    kind: str          # "snapshot" | "log"
    zxid: int
    compression: str = zks.COMPRESSION_NONE


@dataclass(frozen=True, slots=True)
class ZkFiles:
    """The snapshot and log files of a SOURCE, each sorted by zxid."""

    snapshots: tuple[ZkFile, ...]
    logs: tuple[ZkFile, ...]
    source: str = ""


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
    """ZooKeeper's ``DataTree`` for offline replay (mutable; see :func:`replay`)."""

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


# -- evidence discovery ---------------------------------------------------------------------


def _classify(path: str) -> ZkFile | None:
    name = os.path.basename(path)
    snap = zks.parse_snapshot_name(name)
    if snap is not None:
        return ZkFile(path, "snapshot", snap[0], snap[1])
    zxid = zkl.parse_log_name(name)
    if zxid is not None:
        return ZkFile(path, "log", zxid)
    return None


def _sniff(path: str) -> ZkFile:
    """An explicit file with a foreign name: recognised by its magic (zxid from its content)."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head[:4] == b"ZKSN":
        return ZkFile(path, "snapshot", -1)
    if head[:4] == b"ZKLG":
        return ZkFile(path, "log", -1)
    if head[:2] == zks.GZIP_MAGIC:
        return ZkFile(path, "snapshot", -1, zks.COMPRESSION_GZ)
    if head[:8] == zks.SNAPPY_MAGIC:
        return ZkFile(path, "snapshot", -1, zks.COMPRESSION_SNAPPY)
    raise FormatError("not a ZooKeeper snapshot or transaction log (unknown name and magic)",
                      path=path, position=0, field="magic")


def find_zk_files(sources: Iterable[str | os.PathLike]) -> ZkFiles:
    """The snapshots and logs in SOURCE: data directories (``version-2/`` looked into when
    present), any directory holding ``snapshot.*``/``log.*`` files, or explicit files.

    In directories, only names of the shapes ZooKeeper writes are taken (``snapshot.<hex>``,
    ``snapshot.<hex>.gz|.snappy``, ``log.<hex>``); everything else (``myid``, ``*.tmp``, tool
    outputs) is ignored. Explicit files with other names are recognised by their magic.
    """
    snaps: dict[str, ZkFile] = {}
    logs: dict[str, ZkFile] = {}
    names = []
    for src in sources:
        s = os.fspath(src)
        names.append(s)
        if os.path.isdir(s):
            dirs = [s]
            sub = os.path.join(s, VERSION_DIR)
            if os.path.isdir(sub):
                dirs.append(sub)
            for d in dirs:
                for name in sorted(os.listdir(d)):
                    full = os.path.join(d, name)
                    if not os.path.isfile(full):
                        continue
                    f = _classify(full)
                    if f is not None:
                        (snaps if f.kind == "snapshot" else logs)[full] = f
        elif os.path.isfile(s):
            f = _classify(s) or _sniff(s)
            (snaps if f.kind == "snapshot" else logs)[s] = f
        else:
            raise FormatError("no such file or directory", path=s)
    return ZkFiles(tuple(sorted(snaps.values(), key=lambda f: (f.zxid, f.path))),
                   tuple(sorted(logs.values(), key=lambda f: (f.zxid, f.path))),
                   ", ".join(names))


def log_files_for(logs: Iterable[ZkFile], snap_zxid: int) -> list[ZkFile]:
    """``FileTxnLog.getLogFiles``: the newest log starting at or before ``snap_zxid``, and every
    later one (the txns just after a fuzzy snapshot usually sit at the end of the older log)."""
    ordered = sorted(logs, key=lambda f: f.zxid)
    start = 0
    for i, f in enumerate(ordered):
        if f.zxid <= snap_zxid:
            start = i
    return ordered[start:]


def iter_log_entries(logs: Iterable[ZkFile]) -> Iterator[zkl.TxnEntry | Finding]:
    """Every entry of ``logs`` in file order, each followed by its findings, as
    ``FileTxnIterator`` chains files (streamed: one file mapped at a time, nothing kept)."""
    for f in logs:
        with open_buffer(f.path) as buf:
            if not buf:
                continue   # a crash before the header was written; ZooKeeper 3.9+ deletes it
            with closing(_walk_log(f, buf)) as items:
                for item in items:
                    if isinstance(item, (zkl.TxnEntry, Finding)):
                        yield item


def _walk_log(f: ZkFile, buf) -> Iterator[zkl.TxnLogHeader | zkl.TxnEntry | Finding | zkl.TxnLogEnd]:
    """:func:`~kreplica.formats.zookeeper_txnlog.iter_txnlog` over one mapped log; a file with a
    foreign header becomes a ``zk_invalid_txn`` finding and ends the walk of that file."""
    walk = zkl.iter_txnlog(buf, path=f.path)
    try:
        yield from walk
    except FormatError as exc:
        yield Finding("zk_invalid_txn", f.path, exc.position or 0,
                      f"not a readable txn log ({exc.one_line()}); skipped")
    finally:
        walk.close()   # releases its views of the map before the map is closed


def iter_zk_log(sources: Iterable[str | os.PathLike]) -> Iterator[
        zkl.TxnLogHeader | zkl.TxnEntry | Finding | zkl.TxnLogEnd]:
    """Every log file of SOURCE in zxid order, each as :func:`~kreplica.formats.
    zookeeper_txnlog.iter_txnlog` walks it (header, entries with their findings, end), for
    ``zk log``. A file with a foreign header gives a ``zk_invalid_txn`` finding and is skipped;
    an empty file gives just its end."""
    for f in find_zk_files(sources).logs:
        with open_buffer(f.path) as buf:
            if not buf:
                yield zkl.TxnLogEnd(f.path, 0, 0, 0, zkl.STOP_END_OF_FILE, 0, None, None)
                continue
            yield from _walk_log(f, buf)


@dataclass(frozen=True, slots=True)
class _Loaded:
    tree: ZkTree
    preamble: zks.SnapshotPreamble
    end: zks.SnapshotEnd


def _load_snapshot(f: ZkFile) -> tuple[_Loaded | None, list[Finding]]:
    """Stream one snapshot file straight into a tree (no intermediate node list).

    ``None`` (with findings) when ZooKeeper would not load it: unreadable, incomplete, or a seal
    or structure finding of severity error. The cyclic garbage collector is paused while the
    nodes stream in: a million new objects would otherwise trigger it hundreds of times for
    nothing (there are no cycles to find).
    """
    findings: list[Finding] = []
    tree = ZkTree()
    preamble = end = None
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with zks.open_snapshot_stream(f.path) as (buf, compression, finding):
            if finding:
                findings.append(finding)
            items = zks.iter_snapshot(buf, path=f.path, compression=compression)
            preamble = next(items)
            acls = preamble.acls
            load = tree.load_node
            node_type = zks.ZNode
            for item in items:
                if type(item) is node_type:
                    load(item, acls)
                elif isinstance(item, Finding):
                    findings.append(item)
                else:
                    end = item
    except FormatError as exc:
        return None, findings + [_rejected(f, exc)]
    finally:
        if gc_was_enabled:
            gc.enable()
    if any(fi.is_error for fi in findings) or end is None or not end.complete:
        return None, findings + [Finding(
            "zk_snapshot_rejected", f.path, 0,
            "snapshot is damaged (see the findings before this one); ZooKeeper would try an older one")]
    return _Loaded(tree, preamble, end), findings


def _rejected(f: ZkFile, exc: Exception) -> Finding:
    msg = exc.one_line() if isinstance(exc, FormatError) else str(exc)
    return Finding("zk_snapshot_rejected", f.path, getattr(exc, "position", None) or 0,
                   f"snapshot not loadable ({msg}); ZooKeeper would try an older one")


def time_to_zxid(files: ZkFiles, at_time: int) -> int | None:
    """The zxid of the last logged txn before the first one stamped after ``at_time`` (ms)."""
    target = None
    entries = iter_log_entries(files.logs)
    try:
        for item in entries:
            if isinstance(item, zkl.TxnEntry):
                if item.time > at_time:
                    break
                target = item.zxid
    finally:
        entries.close()
    return target


def replay(files: ZkFiles, *, at_zxid: int | None = None, at_time: int | None = None) -> ZkState:
    """The tree at ``at_zxid`` / ``at_time`` (default: the end of the logs), as ZooKeeper restores it.

    Chooses the newest snapshot at or before the target that ZooKeeper would load (valid
    seals, complete; up to 100 tried, newest first) and that cannot hold changes past the
    target (a fuzzy snapshot whose digest zxid lies beyond it is passed over for an older one
    when one exists), then applies every logged txn with a
    higher zxid from the logs ``getLogFiles`` picks, up to the target. Stops early at an entry
    whose checksum fails (ZooKeeper cannot go past it). Raises :class:`FormatError` when no
    snapshot can serve the target.
    """
    findings: list[Finding] = []
    target = at_zxid
    if at_time is not None:
        t = time_to_zxid(files, at_time)
        target = t if target is None or (t is not None and t < target) else target
        if t is None:
            target = min((f.zxid for f in files.snapshots), default=0)
    candidates = [f for f in files.snapshots if target is None or f.zxid <= target or f.zxid < 0]
    candidates.sort(key=lambda f: f.zxid, reverse=True)
    snap = chosen = None
    fuzzy_fallback = None
    for f in candidates[:MAX_SNAPSHOTS_TRIED]:
        loaded, fs = _load_snapshot(f)
        if loaded is None:
            findings.extend(fs)
            continue
        d = loaded.end.digest
        if target is not None and d is not None and d.zxid > target:
            # A fuzzy snapshot may already hold changes up to its digest zxid, which lies past
            # the target: an older snapshot replayed forward gives the exact state instead.
            if fuzzy_fallback is None:
                fuzzy_fallback = (f, loaded, fs)
            continue
        snap, chosen = loaded, f
        findings.extend(fs)
        break
    if snap is None and fuzzy_fallback is not None:
        chosen, snap, fs = fuzzy_fallback
        findings.extend(fs)
        findings.append(Finding("zk_fuzzy_snapshot", chosen.path, 0,
                                f"the only usable snapshot may already contain changes up to zxid "
                                f"{snap.end.digest.zxid:#x}, past the requested {target:#x}; the state "
                                "shown can be ahead of the requested point",
                                details={"digest_zxid": snap.end.digest.zxid, "target": target}))
    if snap is None:
        # ZooKeeper itself refuses too (FileTxnSnapLog.restore, 3.5+): "No snapshot found, but there
        # are log entries. Something is broken!" unless zookeeper.snapshot.trust.empty=true
        where = f" at or before zxid {target:#x}" if target is not None else ""
        also = (" (ZooKeeper refuses to start on this too: \"No snapshot found, but there are log entries\")"
                if files.logs else "")
        raise FormatError(f"no loadable ZooKeeper snapshot{where}{also}", path=files.source or None)

    tree = snap.tree
    tree.sessions.update(snap.preamble.sessions)
    snap_zxid = chosen.zxid
    if snap.end.last_processed_zxid is not None:
        snap_zxid = snap.end.last_processed_zxid
    elif snap_zxid < 0:
        snap_zxid = max((max(n.mzxid, n.pzxid, n.czxid) for n in tree.nodes.values()), default=0)
    tree.last_zxid = snap_zxid
    digest = snap.end.digest
    digest_zxid = digest.zxid if digest is not None else snap_zxid
    if digest is not None and digest.digest_version == 2 and digest.zxid == snap_zxid \
            and digest.digest != tree.digest:
        findings.append(Finding("zk_digest_mismatch", chosen.path, 0,
                                f"the snapshot's nodes sum to digest {tree.digest:#x} but its trailer "
                                f"records {digest.digest:#x} for zxid {digest.zxid:#x}",
                                details={"zxid": digest.zxid, "expected": digest.digest, "actual": tree.digest}))

    logs = log_files_for(files.logs, snap_zxid)
    applied = 0
    last_time = None
    expected_next = snap_zxid + 1
    positioned = False
    with closing(iter_log_entries(logs)) as entries:
        for item in entries:
            if isinstance(item, Finding):
                if item.kind != "zk_checksum_mismatch":
                    findings.append(item)
                continue
            e = item
            if not positioned:
                # FileTxnIterator.init: skip forward to the first txn past the snapshot; after that
                # every entry is applied, even one whose zxid goes backwards (ZooKeeper only logs it).
                if e.zxid <= snap_zxid:
                    continue
                positioned = True
            if target is not None and e.zxid > target:
                break
            if not e.checksum_valid:
                findings.append(Finding("zk_checksum_mismatch", e.path, e.position,
                                        f"entry zxid {e.zxid:#x} fails its Adler-32 check; ZooKeeper stops "
                                        "restoring here ('CRC check failed') and so does this replay",
                                        details={"zxid": e.zxid}))
                break
            if e.zxid != expected_next and (e.zxid >> 32) == (expected_next >> 32):
                findings.append(Finding("zk_zxid_gap", e.path, e.position,
                                        f"expected zxid {expected_next:#x} next but the logs continue at {e.zxid:#x}",
                                        details={"expected": expected_next, "actual": e.zxid}))
            expected_next = e.zxid + 1
            tree.apply(e)
            applied += 1
            last_time = e.time
            if e.digest is not None and e.digest.version == 2 and e.zxid > digest_zxid \
                    and e.digest.tree_digest != tree.digest:
                findings.append(Finding("zk_digest_mismatch", e.path, e.position,
                                        f"after zxid {e.zxid:#x} the replayed tree digest is {tree.digest:#x}, "
                                        f"but ZooKeeper logged {e.digest.tree_digest:#x}",
                                        details={"zxid": e.zxid, "expected": e.digest.tree_digest,
                                                 "actual": tree.digest}))
    for owner, paths in sorted(tree.ephemerals.items()):
        if owner not in tree.sessions:
            for p in sorted(paths):
                findings.append(Finding("zk_ephemeral_without_session", chosen.path, 0,
                                        f"ephemeral {p} belongs to session {owner:#x}, which is not open "
                                        "at this point; ZooKeeper would delete it at start-up",
                                        details={"znode": p, "session": owner}))
    return ZkState(files.source, tree.last_zxid, last_time, MappingProxyType(tree.nodes),
                   MappingProxyType(tree.sessions), chosen.path, snap_zxid,
                   tuple(f.path for f in logs), applied, tree.digest, tuple(findings))


def load_zk_state(sources: Iterable[str | os.PathLike], *, at_zxid: int | None = None,
                  at_time: int | None = None) -> ZkState:
    """:func:`find_zk_files` then :func:`replay`: the tree a ZooKeeper SOURCE describes."""
    return replay(find_zk_files(sources), at_zxid=at_zxid, at_time=at_time)


def parse_zxid(text: str) -> int:
    """``0xb6`` (hex) or ``182`` (decimal) → int; raises ``ValueError`` otherwise."""
    t = text.strip().lower()
    value = int(t, 16) if t.startswith("0x") else int(t, 10)
    if value < 0:
        raise ValueError(f"zxid must not be negative: {text}")
    return value


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
