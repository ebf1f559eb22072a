"""How far the evidence of a control-plane SOURCE reaches: its first and last position (zxid or
metadata offset) and its first and last time.

A command asked for a point past the evidence (``--at-zxid``, ``--at-offset``, ``--at-time``,
``timeline --from/--to``, ``zk log --from/--to``) would otherwise stop at the end
and show the final state as if it were the state asked for; one before the evidence would show
the oldest state there is. The commands compare the point with :class:`EvidenceSpan` first.

* ZooKeeper: a state exists from the oldest snapshot on (from zxid 0, the empty tree a fresh
  ensemble starts with, when the logs begin with its first transaction,
  :data:`~kreplica.model.zookeeper.history.FIRST_ZXIDS`) to the last logged transaction or the
  newest snapshot, whichever is later. Times are those of the logged transactions: a snapshot
  carries none. The transactions themselves (``zk log``) are there from the first logged one to
  the last (:func:`transactions_span`), older than every snapshot or not.
* KRaft: from the oldest snapshot (the offset before its end offset) or the first record of the
  log, whichever is earlier, to the last record or the newest snapshot. Times are the records'
  timestamps and the snapshots' ``last_contained_log_timestamp``.

Only the oldest and newest files are read (the newest ZooKeeper log and KRaft segment whole, to
find their last entry), and only when a command was asked for a point.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import closing

from kreplica.formats.kraft import records as kraft
from kreplica.formats.mapped import open_buffer
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.cluster.kraft_files import KraftFiles, find_kraft_files
from kreplica.model.cluster.sources import detect_source_kind
from kreplica.model.evidence_span import EvidenceSpan
from kreplica.model.zookeeper.files import ZkFile, ZkFiles, find_zk_files, iter_log_entries
from kreplica.model.zookeeper.history import FIRST_ZXIDS


def evidence_span(sources: Iterable[str | os.PathLike]) -> EvidenceSpan:
    """The span of SOURCE, ZooKeeper or KRaft (detected as ``load_cluster_state`` does)."""
    kind, resolved = detect_source_kind(sources)
    if kind == "zookeeper":
        return zookeeper_span(find_zk_files(resolved))
    return kraft_span(find_kraft_files(resolved))


def zookeeper_span(files: ZkFiles) -> EvidenceSpan:
    """The span of a ZooKeeper SOURCE (module docstring). Snapshots given under a foreign name
    (their zxid unknown from the name) do not bound it."""
    snapshots = [f.zxid for f in files.snapshots if f.zxid >= 0]
    logged = transactions_span(files)
    first = None if logged.first_position is None else logged
    last = None if logged.last_position is None else logged
    if first is not None and first.first_position in FIRST_ZXIDS:
        first_position = 0
    else:
        first_position = min(snapshots, default=None)
    ends = snapshots + ([logged.last_position] if last is not None else [])
    earlier = (logged.first_position if first_position is not None and logged.first_position is not None
               and logged.first_position < first_position else None)
    return EvidenceSpan("zookeeper", first_position, max(ends, default=None), logged.first_time, logged.last_time,
                        earlier)


def transactions_span(files: ZkFiles) -> EvidenceSpan:
    """What the transaction logs of a ZooKeeper SOURCE cover, for the commands that list their
    transactions (``zk log --from/--to``): the first to the last logged transaction, whatever
    the snapshots (a log may hold transactions older than every snapshot)."""
    first = _first(_zk_entries(files.logs))
    last = None
    for f in reversed(files.logs):
        for last in _zk_entries([f]):
            pass
        if last is not None:
            break
    return EvidenceSpan("zookeeper", first.zxid if first is not None else None, last.zxid if last is not None else None,
                        first.time if first is not None else None, last.time if last is not None else None)


def _first(items: Iterator):
    """The first item (``None``: none), the walk closed at once (it holds a mapped file)."""
    with closing(items):
        return next(items, None)


def _zk_entries(logs: Iterable[ZkFile]) -> Iterator[zkl.TxnEntry]:
    with closing(iter_log_entries(logs)) as entries:
        for item in entries:
            if isinstance(item, zkl.TxnEntry):
                yield item


def kraft_span(files: KraftFiles) -> EvidenceSpan:
    """The span of KRaft metadata (module docstring)."""
    first = last = None
    for _base, path in files.segments:
        first = _first(_kraft_records(path))
        if first is not None:
            break
    for _base, path in reversed(files.segments):
        for last in _kraft_records(path):
            pass
        if last is not None:
            break
    positions = [end - 1 for end, _epoch, _path in files.snapshots[:1]]
    ends = [end - 1 for end, _epoch, _path in files.snapshots[-1:]]
    times = [t for _end, _epoch, path in (*files.snapshots[:1], *files.snapshots[-1:])
             if (t := _snapshot_time(path)) is not None]
    if first is not None:
        positions.append(first.offset)
        times.append(first.timestamp)
    if last is not None:
        ends.append(last.offset)
        times.append(last.timestamp)
    return EvidenceSpan("kraft", min(positions, default=None), max(ends, default=None),
                        min(times, default=None), max(times, default=None))


def _kraft_records(path: str) -> Iterator[kraft.MetadataRecord | kraft.ControlRecord]:
    """The records of one metadata file, as the replay reads them (streamed)."""
    with open_buffer(path) as buf:
        if not buf:
            return
        with closing(kraft.iter_metadata(buf, path=path)) as items:
            for x in items:
                if isinstance(x, (kraft.MetadataRecord, kraft.ControlRecord)):
                    yield x


def _snapshot_time(path: str) -> int | None:
    """A snapshot's ``last_contained_log_timestamp`` (its SNAPSHOT_HEADER, the first record)."""
    head = _first(_kraft_records(path))
    if isinstance(head, kraft.ControlRecord) and head.control_type == kraft.SNAPSHOT_HEADER:
        t = head.data.get("last_contained_log_timestamp")
        return t if t is not None and t >= 0 else None
    return None
