"""Which segment files a path stands for: a segment, a partition directory, or a log directory.

A partition directory contributes its ``*.log`` segments in base-offset order; a log directory
contributes each partition directory in it, in name order. Anything else in a directory
(indexes, checkpoints, ``.deleted`` leftovers) is not a segment and is left to other commands.
A ``*.log`` file whose name is not a segment name (``server.log``, a copied ``README``) is a
segment only when its first bytes are a log entry's (:func:`starts_like_segment`): given by
name it is otherwise refused, and in a directory it is skipped with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kreplica.formats.log.segment import first_bytes_kind, starts_like_segment
from kreplica.formats.logdir.naming import (CLUSTER_METADATA_TOPIC, KRAFT_SNAPSHOT_SUFFIX, LOG_SUFFIX,
                                            classify_partition_file, parse_partition_dir, segment_base_offset)
from kreplica.formats.mapped import STDIN, Buffer, EvidenceError, open_buffer, refuse_special


_NOT_SEGMENTS = {
    "index": "kreplica inspect-index", "timeindex": "kreplica inspect-index", "txnindex": "kreplica inspect-index",
    "snapshot": "kreplica inspect-dir", "leader_epoch_checkpoint": "kreplica epochs or inspect-dir",
    "partition_metadata": "kreplica inspect-dir",
}


@dataclass(frozen=True, slots=True)
class SegmentFile:
    """One segment to read; ``base_offset`` comes from the file name (``None`` if it has none)."""

    path: str
    base_offset: int | None


@dataclass(frozen=True, slots=True)
class SegmentGroup:
    """Segments read together, so offsets and epochs are checked across them: one partition
    directory, or one loose file. ``partition`` is ``topic-p`` when known; ``topic`` is the
    topic the directory name gives (``None`` on stdin, for a file outside a partition directory,
    or a directory name Kafka would not parse), except that a ``*.checkpoint`` file is a KRaft
    snapshot, of ``__cluster_metadata``, wherever it lies (``bootstrap.checkpoint``)."""

    partition: str | None
    segments: tuple[SegmentFile, ...]
    topic: str | None = None

    @property
    def size(self) -> int:
        total = 0
        for s in self.segments:
            if s.path != STDIN:
                total += os.path.getsize(s.path)
        return total


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A ``*.log`` file that is not a Kafka segment, and what its first bytes are instead."""

    path: str
    first_bytes: str

    @property
    def reason(self) -> str:
        return f"not a Kafka segment: it starts with {_START_WORDS[self.first_bytes]}, and its name is not a segment name"


_START_WORDS = {"empty": "nothing (it is empty)", "zeros": "zero bytes", "text": "text", "binary": "bytes that are not a log entry"}


@dataclass(frozen=True, slots=True)
class SegmentSearch:
    """What user paths stand for: the segment groups, and the files skipped as not segments."""

    groups: list[SegmentGroup]
    skipped: tuple[SkippedFile, ...] = ()


def not_a_segment(path: str) -> SkippedFile | None:
    """Why a ``*.log`` file is not a segment, or ``None`` when it is read as one: a segment name
    (``00000000000000000262.log``) always is, so a real segment whose first batch is damaged is
    reported as damaged; another name is when the file starts like a log entry."""
    if segment_base_offset(os.path.basename(path)) is not None:
        return None
    with open_buffer(path) as buf:
        if starts_like_segment(buf):
            return None
        return SkippedFile(path, first_bytes_kind(buf))


def mapped_segments(group: SegmentGroup) -> Iterator[tuple[SegmentFile, Buffer]]:
    """Each segment of ``group`` with a read-only buffer over it, in order: mapped when it is
    reached, unmapped when the next one is asked for (one segment mapped at a time)."""
    for segment in group.segments:
        with open_buffer(segment.path) as buf:
            yield segment, buf


def _partition_segments(directory: Path, skipped: list[SkippedFile]) -> tuple[SegmentFile, ...]:
    found = []
    for entry in os.scandir(directory):
        if entry.is_file() and entry.name.endswith(LOG_SUFFIX):
            reason = not_a_segment(entry.path)
            if reason is not None:
                skipped.append(reason)
                continue
            found.append(SegmentFile(entry.path, segment_base_offset(entry.name)))
    found.sort(key=lambda s: (s.base_offset is None, s.base_offset or 0, s.path))
    return tuple(found)


def find_segment_groups(paths: list[str]) -> list[SegmentGroup]:
    """The segment groups of :func:`find_segments`."""
    return find_segments(paths).groups


def find_segments(paths: list[str]) -> SegmentSearch:
    """Resolve user paths to segment groups, in the order given, and the files in the
    directories given that were skipped as not segments.

    Raises :class:`EvidenceError` for a path that does not exist, holds no segments, or is a
    file that is not a segment (:func:`not_a_segment`).
    """
    groups: list[SegmentGroup] = []
    skipped: list[SkippedFile] = []
    for raw in paths:
        if raw == STDIN:
            groups.append(SegmentGroup(None, (SegmentFile(STDIN, None),)))
            continue
        refuse_special(raw)
        path = Path(raw)
        if path.is_file():
            kind = classify_partition_file(path.name).kind
            if kind in _NOT_SEGMENTS:
                raise EvidenceError(f"is a {kind.replace('_', ' ')} file, not a segment "
                                    f"(use {_NOT_SEGMENTS[kind]})", path=raw)
            refused = not_a_segment(raw)
            if refused is not None:
                raise EvidenceError(f"is {refused.reason}", path=raw)
            parent = parse_partition_dir(path.parent.name)
            topic = parent.topic if parent else None
            if path.name.endswith(KRAFT_SNAPSHOT_SUFFIX):   # Kafka writes them for the metadata log only
                topic = CLUSTER_METADATA_TOPIC
            groups.append(SegmentGroup(parent.name if parent else None,
                                       (SegmentFile(str(path), segment_base_offset(path.name)),), topic))
            continue
        if not path.is_dir():
            raise EvidenceError("no such file or directory", path=raw)
        skipped_before = len(skipped)
        own = _partition_segments(path, skipped)
        if own:
            name = parse_partition_dir(path.name)
            groups.append(SegmentGroup(name.name if name else None, own, name.topic if name else None))
            continue
        children = sorted((e for e in os.scandir(path) if e.is_dir()), key=lambda e: e.name)
        before = len(groups)
        for child in children:
            segs = _partition_segments(Path(child.path), skipped)
            if segs:
                name = parse_partition_dir(child.name)
                groups.append(SegmentGroup(name.name if name else child.name, segs, name.topic if name else None))
        if len(groups) == before:
            passed_over = skipped[skipped_before:]
            raise EvidenceError("holds no segment files (*.log), directly or in partition directories"
                                + (f" ({os.path.basename(passed_over[0].path)} is {passed_over[0].reason})"
                                   if passed_over else ""), path=raw)
    return SegmentSearch(groups, tuple(skipped))
