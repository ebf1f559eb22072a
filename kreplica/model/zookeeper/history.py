"""A ZooKeeper history, step by step: the tree at a starting point, then every logged transaction
after it with the znodes it changed, before and after.

Sources (apache/zookeeper ``release-3.8.0-1``): ``server/persistence/FileTxnSnapLog.java``
(``fastForwardFromEdits``), ``FileTxnLog.java`` (``FileTxnIterator``); ``../shared/specs/
zookeeper-formats.md`` §4.5. The starting tree is what :func:`~kreplica.model.zookeeper.replay.
replay` restores (a snapshot, or a snapshot replayed to a zxid or time); each later entry is
applied with ``ZkTree.apply``, exactly as the replay applies it, so a history ends in the state
``load_zk_state`` gives for the same point.

What a step carries is what the tree itself shows changed: for each znode the transaction names
(the sub-operations of a multi, and for ``closeSession`` every ephemeral the session owned),
whether it existed and its data before and after. A failed multi, a create of a node that
exists, or a delete of a missing one changes nothing and lists nothing. Streamed: one log file
mapped at a time and nothing kept but the tree, so memory does not grow with the history.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from types import MappingProxyType
from typing import NamedTuple

from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.zookeeper.files import ZkFiles, iter_log_entries, log_files_for
from kreplica.model.zookeeper.replay import replay
from kreplica.model.zookeeper.tree import ZkNode, ZkState, ZkTree


# NOTE: NamedTuples, not frozen dataclasses, and built with ``tuple.__new__`` where it counts: one
# step per logged transaction (bench/bench_timeline.py)
_new = tuple.__new__


class ZnodeChange(NamedTuple):
    """One znode a transaction changed. ``before``/``after`` are the node (``None`` when it did
    not exist); the node objects are the tree's own, so read ``after`` before the next step."""

    path: str
    before_data: bytes | None
    before: ZkNode | None
    after: ZkNode | None

    @property
    def created(self) -> bool:
        return self.before is None and self.after is not None

    @property
    def deleted(self) -> bool:
        return self.before is not None and self.after is None


class ZkStep(NamedTuple):
    """One logged transaction and the znodes it changed (in the order it names them)."""

    entry: zkl.TxnEntry
    changes: tuple[ZnodeChange, ...]


#: The first zxid an ensemble ever logs: counter 1 of epoch 0 (a standalone server) or of epoch 1
#: (the first epoch a quorum elects). Before it the tree is the one ``DataTree``'s constructor
#: makes, which a fresh data directory saves as ``snapshot.0`` (zookeeper-formats.md §3.9).
FIRST_ZXIDS = (0x1, 0x100000001)


def start_state(files: ZkFiles, *, from_zxid: int | None = None, from_time: int | None = None) -> ZkState:
    """The tree a history starts from.

    With ``from_zxid``/``from_time``: the state :func:`replay` restores at that point. Without:
    the *oldest* snapshot ZooKeeper could load, as it holds it (so the history covers as much of
    the logs as the evidence allows); a snapshot that does not load is passed over for the next.

    When the logs begin with the ensemble's first transaction (:data:`FIRST_ZXIDS`) before that
    snapshot, or there is no snapshot at all, the history starts from the empty tree instead, at
    zxid 0: what ZooKeeper restores from the ``snapshot.0`` of a fresh data directory, or from no
    snapshot with ``zookeeper.snapshot.trust.empty`` (``FileTxnSnapLog.restore``): an empty
    ``DataTree`` and every logged transaction from zxid 1. Not when the snapshot holds a node
    created before the logs begin (they are not the ensemble's first, whatever their zxid says).

    Raises :class:`FormatError` when no snapshot loads and the logs do not begin at the start.
    """
    if from_zxid is not None or from_time is not None:
        return replay(files, at_zxid=from_zxid, at_time=from_time)
    failures: list[Finding] = []
    last_error: FormatError | None = None
    state = None
    for snap in files.snapshots:
        try:
            state = replay(ZkFiles((snap,), (), files.source))
        except FormatError as exc:
            last_error = exc
            failures.append(Finding("zk_snapshot_rejected", snap.path, exc.position or 0,
                                    f"snapshot not loadable ({exc.one_line()}); the history starts at a later one"))
            continue
        break
    first = _first_logged_zxid(files)
    if first in FIRST_ZXIDS and (state is None or (first <= state.zxid and not _created_before(state, first))):
        return _initial_state(files.source, tuple(failures))
    if state is None:
        if last_error is not None:
            raise last_error
        raise FormatError("no ZooKeeper snapshot to start a history from", path=files.source or None)
    if failures:
        return ZkState(state.source, state.zxid, state.time, state.nodes, state.sessions, state.snapshot,
                       state.snapshot_zxid, state.logs, state.applied, state.digest,
                       tuple(failures) + tuple(state.findings))
    return state


def _first_logged_zxid(files: ZkFiles) -> int | None:
    """The zxid of the first entry of the oldest log (``None``: no readable entry)."""
    with closing(iter_log_entries(files.logs[:1])) as entries:
        for item in entries:
            if isinstance(item, zkl.TxnEntry):
                return item.zxid if item.checksum_valid else None
    return None


def _created_before(state: ZkState, zxid: int) -> bool:
    """A node of ``state`` was created by a transaction before ``zxid`` (the tree ``DataTree``
    starts with is created at zxid 0)."""
    return any(0 < n.czxid < zxid for n in state.nodes.values())


#: ``DataTree``'s constructor: the root, ``/zookeeper``, its ``quota`` and (3.5+) ``config`` nodes,
#: each with empty data, created at zxid 0.
_INITIAL_NODES = {"/": {"zookeeper"}, "/zookeeper": {"quota", "config"}, "/zookeeper/quota": None,
                  "/zookeeper/config": None}


def _initial_state(source: str, findings: tuple[Finding, ...]) -> ZkState:
    """The empty tree a fresh ensemble starts from, at zxid 0 (no snapshot file: ``snapshot`` is "")."""
    tree = ZkTree()
    for path, children in _INITIAL_NODES.items():
        n = tree.nodes[path] = ZkNode.of(b"", None, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        for c in children or ():
            n.add_child(c)
    tree.drop_digest()   # summed over these nodes if read
    return ZkState(source, 0, None, MappingProxyType(tree.nodes), MappingProxyType(tree.sessions), "", 0, (), 0,
                   tree.exact_digest, findings)


def tree_of(state: ZkState, *, digest: bool = True) -> ZkTree:
    """A mutable tree holding ``state`` (the node objects are shared, not copied: ``state`` must
    not be used once the tree has been changed). With ``digest=False`` the tree does not keep
    ZooKeeper's digest change by change (see :meth:`ZkTree.drop_digest`)."""
    tree = ZkTree()
    tree.nodes = dict(state.nodes)
    tree.sessions = dict(state.sessions)
    for path, node in tree.nodes.items():
        owner = node.ephemeral_owner
        if owner and node.client_ephemeral_owner:
            tree.ephemerals.setdefault(owner, set()).add(path)
    if digest:
        tree.digest = state.digest
    else:
        tree.drop_digest()
    tree.last_zxid = state.zxid
    return tree


def _named_paths(tree: ZkTree, e: zkl.TxnEntry) -> list[str]:
    if e.type == zkl.OP_CLOSE_SESSION:
        listed = list(e.body.paths or ()) if e.body is not None else []
        return listed + sorted(tree.ephemerals.get(e.client_id, ()))
    if e.type == zkl.OP_MULTI and e.body is not None and e.body.failed:
        return []
    return list(e.paths)


def iter_zk_steps(files: ZkFiles, start: ZkState, *, to_zxid: int | None = None,
                  to_time: int | None = None) -> Iterator[ZkStep | Finding]:
    """Every transaction after ``start`` (from :func:`start_state`), applied in log order, up to
    ``to_zxid`` / ``to_time`` (inclusive), each as a :class:`ZkStep`.

    The logs read are those ``FileTxnLog.getLogFiles`` picks for the starting zxid; entries at
    or below it are skipped, as ``FileTxnIterator`` positions itself. Stops at an entry whose
    checksum fails (ZooKeeper cannot restore past it), with a ``zk_checksum_mismatch`` finding;
    a jump in the zxid counter within an epoch is a ``zk_zxid_gap`` finding. Log findings are
    passed on. The tree of ``start`` is taken over (see :func:`tree_of`).
    """
    # NOTE: a history checks no step against a logged digest (cluster-state's replay does), so
    # the tree keeps none: CRC-ing each changed node twice per transaction was 5% of a
    # timeline (bench/bench_timeline.py)
    tree = tree_of(start, digest=False)
    positioned = False
    expected_next = start.zxid + 1
    with closing(iter_log_entries(log_files_for(files.logs, start.zxid))) as entries:
        for item in entries:
            if isinstance(item, Finding):
                if item.kind != "zk_checksum_mismatch":
                    yield item
                continue
            e = item
            if not positioned:
                if e.zxid <= start.zxid:
                    continue
                positioned = True
            if (to_zxid is not None and e.zxid > to_zxid) or (to_time is not None and e.time > to_time):
                return
            if not e.checksum_valid:
                yield Finding("zk_checksum_mismatch", e.path, e.position,
                              f"entry zxid {e.zxid:#x} fails its Adler-32 check; ZooKeeper stops restoring "
                              "here ('CRC check failed') and so does this history", details={"zxid": e.zxid})
                return
            if e.zxid != expected_next and (e.zxid >> 32) == (expected_next >> 32):
                yield Finding("zk_zxid_gap", e.path, e.position,
                              f"expected zxid {expected_next:#x} next but the logs continue at {e.zxid:#x}; "
                              "the transactions between are missing from the history",
                              details={"expected": expected_next, "actual": e.zxid})
            expected_next = e.zxid + 1
            nodes = tree.nodes
            body = e.body
            if e.type == zkl.OP_SET_DATA and body is not None:
                # NOTE: the most common transaction (a setData): one path, no list building
                # (bench/bench_timeline.py)
                old = nodes.get(body.path)
                old_data = old.data if old is not None else None
                tree.apply(e)
                new = nodes.get(body.path)
                if old is new and (new is None or new.data is old_data):
                    yield _new(ZkStep, (e, ()))
                else:
                    yield _new(ZkStep, (e, (_new(ZnodeChange, (body.path, old_data, old, new)),)))
                continue
            before = [(p, nodes.get(p)) for p in _named_paths(tree, e)]
            before_data = [n.data if n is not None else None for _p, n in before]
            tree.apply(e)
            changes = []
            seen = set()
            for (p, old), old_data in zip(before, before_data):
                if p in seen:
                    continue
                seen.add(p)
                new = nodes.get(p)
                if old is new and (new is None or new.data is old_data):
                    continue
                changes.append(ZnodeChange(p, old_data, old, new))
            yield ZkStep(e, tuple(changes))
