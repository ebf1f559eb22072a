"""Restoring a ZooKeeper tree as a server does at start-up: a snapshot, then the logs after it.

Sources (apache/zookeeper ``release-3.8.0-1``): ``server/persistence/FileTxnSnapLog.java``
(``restore``, ``fastForwardFromEdits``, ``processTransaction``), ``FileSnap.java``
(``findNValidSnapshots``: the newest loadable snapshot of at most 100); ``../shared/specs/
zookeeper-formats.md`` §3.9, §4.5.

:func:`load_zk_state` is the entry point: it finds the files
(:mod:`~kreplica.model.zookeeper.files`), picks the snapshot ZooKeeper would load for the
requested zxid or time, streams it into a :class:`~kreplica.model.zookeeper.tree.ZkTree`, and
applies the logged transactions after it, checking each step against the digests ZooKeeper
logged. Damage is reported as findings; only "no loadable snapshot" raises.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from types import MappingProxyType

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.zookeeper.files import ZkFile, ZkFiles, find_zk_files, iter_log_entries, log_files_for
from kreplica.model.zookeeper.tree import ZkState, ZkTree

#: ``FileSnap.findNValidSnapshots`` tries at most this many snapshots, newest first.
MAX_SNAPSHOTS_TRIED = 100


@dataclass(frozen=True, slots=True)
class _Loaded:
    tree: ZkTree
    preamble: zks.SnapshotPreamble
    end: zks.SnapshotEnd

    @property
    def digest(self) -> zks.SnapshotDigest | None:
        """The trailer's digest as ZooKeeper's loader takes it (``DataTree.deserializeZxidDigest``):
        the empty digest (zxid 0, written when no transaction was applied since the server
        started, as in every ``snapshot.0``) is ignored, so nothing is checked against it."""
        d = self.end.digest
        return d if d is not None and d.zxid > 0 else None


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
            items = zks.iter_snapshot(buf, path=f.path, compression=compression, raw=True)
            with closing(items):
                preamble = next(items)
                end = tree.load_nodes(items, preamble.acls, findings, f.path)
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
        d = loaded.digest
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
                                f"{snap.digest.zxid:#x}, past the requested {target:#x}; the state "
                                "shown can be ahead of the requested point",
                                details={"digest_zxid": snap.digest.zxid, "target": target}))
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
    digest = snap.digest
    digest_zxid = digest.zxid if digest is not None else snap_zxid
    if digest is not None and digest.digest_version == 2 and digest.zxid == snap_zxid \
            and digest.digest != tree.digest:
        findings.append(Finding("zk_digest_mismatch", chosen.path, 0,
                                f"the snapshot's nodes sum to digest {tree.digest:#x} but its trailer "
                                f"records {digest.digest:#x} for zxid {digest.zxid:#x}",
                                details={"zxid": digest.zxid, "expected": digest.digest, "actual": tree.digest}))

    logs = log_files_for(files.logs, snap_zxid)
    # Entries without a digest (before ZooKeeper 3.6, or generated) leave nothing to check the
    # tree against step by step: the digest is then summed once, when it is read (zk dump), and
    # kept change by change again from the first entry that carries one.
    deferred = tree.defer_digest()
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
            if deferred and e.digest is not None:
                tree.keep_digest()
                deferred = False
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
                   tuple(f.path for f in logs), applied,
                   tree.exact_digest if tree.digest_stale else tree.digest, tuple(findings))


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
