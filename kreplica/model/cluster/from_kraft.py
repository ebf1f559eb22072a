"""Kafka's KRaft metadata, replayed from the ``__cluster_metadata-0`` snapshots and log to a point.

Sources: ``../shared/specs/kafka-formats.md`` §10; Kafka ``metadata/src/main/java/org/apache/
kafka/image/MetadataDelta.java``. The snapshot to start from is chosen here
(:func:`cluster_state_from_kraft`); the records after it come from
:mod:`~kreplica.model.cluster.kraft_history` and are applied to the one cluster image by
:mod:`~kreplica.model.cluster.kraft_image`. The controller is the Raft leader of the last
``LeaderChange`` (else :func:`_raft_leader`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.formats.kraft.quorum_state import parse_quorum_state
from kreplica.formats.mapped import open_buffer
from kreplica.model.cluster.kraft_files import KraftFiles, find_kraft_files, offset_gap
from kreplica.model.cluster.kraft_history import KraftStart, iter_kraft_records, load_snapshot
from kreplica.model.cluster.kraft_image import KraftImage
from kreplica.model.cluster.state import ClusterState

__all__ = ["KraftFiles", "cluster_state_from_kraft", "find_kraft_files", "load_kraft_state", "offset_gap"]


def _snapshot_at(files: KraftFiles, at_offset: int | None, at_time: int | None,
                 findings: list[Finding]) -> KraftStart | None:
    """The newest complete snapshot whose end offset is at most ``at_offset + 1`` and (with
    ``at_time``) whose SNAPSHOT_HEADER ``last_contained_log_timestamp`` is not later."""
    for end_offset, _epoch, path in sorted(files.snapshots, reverse=True):
        if at_offset is not None and end_offset > at_offset + 1:
            continue
        start, fs = load_snapshot(path)
        if start is None:
            findings.extend(f for f in fs if f.is_error)
            continue
        if at_time is not None and (start.time is None or start.time > at_time):
            continue
        findings.extend(fs)
        return KraftStart(path, end_offset, start.time, start.records)
    return None


def cluster_state_from_kraft(files: KraftFiles, *, at_offset: int | None = None,
                             at_time: int | None = None) -> ClusterState:
    """The metadata image at ``at_offset`` (inclusive; default: the end), as a KRaft broker
    would rebuild it: the newest complete snapshot whose end offset is at most ``at_offset + 1``
    (it holds every record below its end offset), then the log records from that end offset on.
    ``at_time`` (epoch ms) stops before the first log record stamped later, and only takes a
    snapshot whose SNAPSHOT_HEADER ``last_contained_log_timestamp`` is not later.

    Records bracketed by Begin/EndTransactionRecord are applied together at the End; an
    AbortTransactionRecord drops them, and a transaction still open at the stopping point is not
    applied. ``position`` is the offset of the last record read (or the snapshot's end - 1).
    Offsets missing between the snapshot (or the log's start) and the next segment present are a
    ``kraft_offset_gap`` finding. The controller is the leader of the last ``LeaderChange``
    replayed; a snapshot holds none, so when the log after it has none either, the Raft leader of
    the epoch reached (:func:`_raft_leader`) is taken.
    """
    findings: list[Finding] = []
    image = KraftImage()
    snapshot = _snapshot_at(files, at_offset, at_time, findings)
    start = snapshot or KraftStart(None, 0, None)
    epoch = None            # the Raft epoch of the last record replayed (a snapshot's: its name's)
    if snapshot is not None:
        for r in snapshot.records:
            image.apply(r)
        epoch = next(e for end, e, path in files.snapshots if path == snapshot.path)
    last = start.end_offset - 1
    earlier_leader = None   # the last LeaderChange below the snapshot's end: (leader, epoch)
    for item in iter_kraft_records(files, start):
        if isinstance(item, Finding):
            if item.kind != "kraft_offset_gap" or at_offset is None or item.details["expected"] <= at_offset:
                findings.append(item)
            continue
        x, applied = item
        if applied is None:
            if isinstance(x, kraft.ControlRecord) and x.control_type == kraft.LEADER_CHANGE:
                earlier_leader = (x.data.get("leader_id"), x.epoch)
            continue
        if (at_offset is not None and x.offset > at_offset) or (at_time is not None and x.timestamp > at_time):
            break
        last, epoch = x.offset, x.epoch
        for r in applied:
            image.apply(r)
    if image.controller_epoch is None and epoch is not None:
        at_end = at_offset is None and at_time is None
        image.controller, image.controller_epoch = _raft_leader(files, epoch, earlier_leader, at_end=at_end,
                                                                findings=findings)
    return image.state(files.source, {"offset": last}, cluster_id=files.cluster_id, findings=findings)


def _raft_leader(files: KraftFiles, epoch: int, earlier: tuple[int | None, int] | None, *, at_end: bool,
                 findings: list[Finding]) -> tuple[int | None, int | None]:
    """The Raft leader (the active controller) of ``epoch`` when no ``LeaderChange`` of the
    replayed records names it: the last one below the snapshot when it is of that epoch, else
    ``quorum-state`` (``FileQuorumStateStore``: the leader this node last knew) when its epoch
    is that one, or later and the replay went to the end of the evidence. ``(None, None)`` when
    neither says; an unreadable ``quorum-state`` is a finding."""
    if earlier is not None and earlier[1] == epoch:
        leader = earlier[0]
        return (leader if leader is not None and leader >= 0 else None), epoch
    if files.quorum_state is None:
        return None, None
    try:
        with open_buffer(files.quorum_state) as buf:
            qs = parse_quorum_state(bytes(buf), path=files.quorum_state)
    except FormatError as exc:
        # a warning here: all this command wanted of the file was the controller's id
        findings.append(Finding("checkpoint_malformed", files.quorum_state, exc.position or 0,
                                f"quorum-state cannot be read as Kafka reads it ({exc.one_line()}); the "
                                "controller stays unknown", severity="warning"))
        return None, None
    if qs.leader_id >= 0 and (qs.leader_epoch == epoch or (at_end and qs.leader_epoch > epoch)):
        return qs.leader_id, qs.leader_epoch
    return None, None


def load_kraft_state(sources: Iterable[str | os.PathLike], *, at_offset: int | None = None,
                     at_time: int | None = None) -> ClusterState:
    """:func:`find_kraft_files` then :func:`cluster_state_from_kraft`."""
    return cluster_state_from_kraft(find_kraft_files(sources), at_offset=at_offset, at_time=at_time)
