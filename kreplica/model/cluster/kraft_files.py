"""Where a KRaft metadata history is: the ``__cluster_metadata-0`` snapshots and segments of a
SOURCE (:func:`find_kraft_files`), and the finding for offsets missing between them
(:func:`offset_gap`).

Sources: ``../shared/specs/kafka-formats.md`` §10; Kafka ``raft/.../KafkaRaftLog`` (file names:
``<20 digits>.log`` segments, ``<20 digits>-<10 digits>.checkpoint`` snapshots named by end
offset and epoch), ``FileQuorumStateStore`` (``quorum-state``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.formats.kraft.quorum_state import QUORUM_STATE_FILE
from kreplica.formats.logdir.meta_properties import META_PROPERTIES_FILE, parse_java_properties


@dataclass(frozen=True, slots=True)
class KraftFiles:
    """The metadata evidence of a SOURCE: snapshots ``(end_offset, epoch, path)`` and segments
    ``(base_offset, path)``, each sorted; ``cluster_id`` from a ``meta.properties`` nearby;
    ``quorum_state`` the path of the metadata directory's ``quorum-state``, when there is one."""

    snapshots: tuple[tuple[int, int, str], ...]
    segments: tuple[tuple[int, str], ...]
    cluster_id: str | None = None
    source: str = ""
    quorum_state: str | None = None


def offset_gap(expected: int, base: int, path: str, *, snapshot: str | None = None) -> Finding:
    """A ``kraft_offset_gap`` finding: the segment ``path`` starts at ``base`` although the
    records replayed so far (the ``snapshot``, or the log) end below ``expected``, so offsets
    ``expected`` .. ``base - 1`` are missing from the history (as ``zk_zxid_gap`` for ZooKeeper)."""
    before = (f"the snapshot {os.path.basename(snapshot)} holds the records below offset {expected}"
              if snapshot is not None else
              (f"the records present end at offset {expected - 1}" if expected else "no snapshot holds them"))
    return Finding("kraft_offset_gap", path, 0,
                   f"metadata offsets {expected}..{base - 1} are missing: {before} and the next segment present "
                   f"starts at {base}; the records between are not replayed (a segment left out of the copy?)",
                   details={"expected": expected, "actual": base})


def _meta_cluster_id(directory: str) -> str | None:
    """The ``cluster.id`` of the first ``meta.properties`` in ``directory`` or its parent, read
    as ``MetaProperties`` reads it (``Properties.load``: ISO-8859-1, ``=``/``:``/blank
    separators, the last occurrence wins, the value untrimmed at its end); ``None`` when neither
    has the file, the first found has no ``cluster.id``, or it breaks ``Properties.load``."""
    for d in (directory, os.path.dirname(os.path.abspath(directory))):
        p = os.path.join(d, META_PROPERTIES_FILE)
        if os.path.isfile(p):
            with open(p, "rb") as fh:
                content = fh.read()
            try:
                props, _where = parse_java_properties(content, path=p)
            except FormatError:
                return None
            return props.get("cluster.id")
    return None


def find_kraft_files(sources: Iterable[str | os.PathLike]) -> KraftFiles:
    """``*.checkpoint`` snapshots and ``*.log`` segments in ``__cluster_metadata-0`` directories
    or given explicitly. ``.checkpoint.part``/``.deleted`` files (which Kafka deletes at start)
    and every other file are ignored."""
    snaps: dict[str, tuple[int, int, str]] = {}
    segs: dict[str, tuple[int, str]] = {}
    cluster_id = quorum_state = None
    names = []
    for src in sources:
        s = os.fspath(src)
        names.append(s)
        if os.path.isdir(s):
            cluster_id = cluster_id or _meta_cluster_id(s)
            entries = [os.path.join(s, n) for n in sorted(os.listdir(s))]
            if os.path.isfile(os.path.join(s, QUORUM_STATE_FILE)):
                quorum_state = quorum_state or os.path.join(s, QUORUM_STATE_FILE)
        elif os.path.isfile(s):
            cluster_id = cluster_id or _meta_cluster_id(os.path.dirname(os.path.abspath(s)))
            entries = [s]
        else:
            raise FormatError("no such file or directory", path=s)
        for full in entries:
            name = os.path.basename(full)
            snap = kraft.parse_checkpoint_name(name)
            if snap is not None:
                snaps[full] = (snap[0], snap[1], full)
                continue
            base = kraft.parse_segment_name(name)
            if base is not None:
                segs[full] = (base, full)
            elif os.path.isfile(s) and full == s:
                raise FormatError("not a KRaft metadata segment (<20 digits>.log) or snapshot "
                                  "(<20 digits>-<10 digits>.checkpoint)", path=s)
    return KraftFiles(tuple(sorted(snaps.values())), tuple(sorted(segs.values())), cluster_id,
                      ", ".join(names), quorum_state)
