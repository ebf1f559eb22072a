"""A ZooKeeper history from snapshots alone: what changed from one snapshot to the next.

A copy of a data directory often holds snapshots but no transaction log (ZooKeeper preallocates
64 MiB log files, which copies and repositories leave out). The history is then what the
snapshots show, one after the other, each loaded as ZooKeeper loads it
(:func:`~kreplica.model.zookeeper.replay.replay`). A znode written or created between two
snapshots is placed at the zxid and time that wrote it as the later snapshot holds it (its
``mzxid`` and ``mtime``): the transactions of one zxid are grouped again, as the log would have
them. A znode that is gone is placed at the later snapshot's zxid, with no time. What happened in
between (a znode written twice, or created and deleted) is not seen: the resolution is the
snapshots', not the transactions'.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import groupby
from typing import NamedTuple

from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.zookeeper.files import ZkFiles
from kreplica.model.zookeeper.history import ZnodeChange
from kreplica.model.zookeeper.replay import replay
from kreplica.model.zookeeper.tree import ZkNode, ZkState

#: findings of a later snapshot that say nothing about the history: ephemerals of sessions the
#: snapshot does not list are normal in a fuzzy snapshot (ZooKeeper deletes them only at start-up)
_NOT_HISTORY = frozenset({"zk_ephemeral_without_session"})


class SnapshotWrite(NamedTuple):
    """The znodes one zxid changed as the next snapshot shows them (``time`` ``None``: znodes that
    are gone, placed at the later snapshot's zxid). ``snapshot`` is that later snapshot. A znode
    deleted and created again in between is a creation (``before`` ``None``)."""

    snapshot: str
    zxid: int
    time: int | None
    changes: tuple[ZnodeChange, ...]


class SnapshotDiff(NamedTuple):
    """One snapshot after the one before it: its tree (``nodes``) and its writes in zxid order."""

    snapshot: str
    zxid: int
    nodes: Mapping[str, ZkNode]
    writes: tuple[SnapshotWrite, ...]


def snapshot_diff(before: Mapping[str, ZkNode], after: Mapping[str, ZkNode], snapshot: str,
                  zxid: int) -> list[SnapshotWrite]:
    """The znodes created, written or deleted from ``before`` to ``after`` (the tree of
    ``snapshot``, at ``zxid``), grouped by the zxid that wrote them, in zxid order; deletions
    last, at ``zxid`` or the highest write if that is later (a fuzzy snapshot holds writes past
    its name). A znode created since is written at its creation (``czxid``, ``ctime``), with
    the data the later snapshot holds: what it was created with is not recorded."""
    written = []
    for path, node in after.items():
        old = before.get(path)
        if old is not None and old.czxid != node.czxid:
            old = None              # deleted and created again: a new znode
        if old is None:
            written.append((node.czxid, node.ctime, path, old, node))
        elif old.mzxid != node.mzxid:
            written.append((node.mzxid, node.mtime, path, old, node))
    written.sort(key=lambda w: (w[0], w[2]))
    out = []
    for (at, time), group in groupby(written, key=lambda w: (w[0], w[1])):
        changes = tuple(ZnodeChange(path, old.data if old is not None else None, old, node)
                        for _at, _time, path, old, node in group)
        out.append(SnapshotWrite(snapshot, at, time, changes))
    gone = tuple(ZnodeChange(path, node.data, node, None) for path, node in sorted(before.items())
                 if path not in after)
    if gone:
        out.append(SnapshotWrite(snapshot, max([zxid] + [w.zxid for w in out]), None, gone))
    return out


def iter_snapshot_steps(files: ZkFiles, start: ZkState, *, to_zxid: int | None = None,
                        to_time: int | None = None) -> Iterator[SnapshotDiff | Finding]:
    """The snapshots after ``start`` (the state a history starts from), each with its writes since
    the one before (:func:`snapshot_diff`), up to ``to_zxid``/``to_time`` (a snapshot holding a
    write stamped after ``to_time`` ends the history at the write before it). A snapshot that
    does not load is passed over with a ``zk_snapshot_rejected`` finding; the findings of each
    snapshot loaded come before it."""
    names = [f.path for f in files.snapshots]
    later = files.snapshots[names.index(start.snapshot) + 1:] if start.snapshot in names else files.snapshots
    before = start.nodes
    for snap in later:
        try:
            state = replay(ZkFiles((snap,), (), files.source))
        except FormatError as exc:
            yield Finding("zk_snapshot_rejected", snap.path, exc.position or 0,
                          f"snapshot not loadable ({exc.one_line()}); the history goes on at the next one")
            continue
        yield from (f for f in state.findings if f.kind not in _NOT_HISTORY)
        writes = snapshot_diff(before, state.nodes, snap.path, state.zxid)
        kept = []
        for w in writes:
            if (to_zxid is not None and w.zxid > to_zxid) or (
                    to_time is not None and (w.time is None or w.time > to_time)):
                break
            kept.append(w)
        yield SnapshotDiff(snap.path, state.zxid, state.nodes, tuple(kept))
        if len(kept) < len(writes) or (to_zxid is not None and state.zxid >= to_zxid):
            return
        before = state.nodes
