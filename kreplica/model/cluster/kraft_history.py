"""A KRaft metadata history, record by record: the snapshot it starts from, then every record of the
log after it in offset order, each with the records a broker's metadata loader applies when it
is read.

Sources: ``../shared/specs/kafka-formats.md`` §10; Kafka ``metadata/.../MetadataLoader.java`` and
``image/loader/MetadataBatchLoader.java``. Records of a metadata transaction
(``BeginTransactionRecord`` .. ``EndTransactionRecord``) are applied together when the End is
read, an ``AbortTransactionRecord`` drops them, and a transaction still open where the log ends
is not applied (:class:`~kreplica.model.cluster.kraft_image.MetadataTransaction`, the one rule
``cluster-state``, ``plan-elect`` and the timeline share).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster.kraft_files import KraftFiles, offset_gap
from kreplica.model.cluster.kraft_image import MetadataTransaction


@dataclass(frozen=True, slots=True)
class KraftStart:
    """Where a history starts: a snapshot (``path``, ``end_offset``: it holds every record below
    it; ``time``: its ``last_contained_log_timestamp``; ``records``) or, with ``path`` ``None``,
    the beginning of the log (offset 0; ``records``: the bootstrap checkpoint's, if any)."""

    path: str | None
    end_offset: int
    time: int | None
    records: tuple[kraft.MetadataRecord, ...] = ()


def load_snapshot(path: str) -> tuple[KraftStart | None, list[Finding]]:
    """A snapshot as a start (``None`` when it holds an error finding) and its findings."""
    items = kraft.read_metadata_file(path)
    findings = [x for x in items if isinstance(x, Finding)]
    if any(f.is_error for f in findings):
        return None, findings
    header = next((x for x in items if isinstance(x, kraft.ControlRecord)
                   and x.control_type == kraft.SNAPSHOT_HEADER), None)
    end = kraft.parse_checkpoint_name(path.rsplit("/", 1)[-1])
    records = tuple(x for x in items if isinstance(x, kraft.MetadataRecord) and x.name is not None)
    return KraftStart(path, end[0] if end else 0,
                      header.data.get("last_contained_log_timestamp") if header is not None else None,
                      records), findings


def kraft_start(files: KraftFiles, *, from_offset: int | None = None) -> tuple[KraftStart, list[Finding]]:
    """Where a history of ``files`` starts: the log's beginning when its first segment starts at
    offset 0 (and no ``from_offset`` beyond it asks for a later snapshot), with the records of the
    bootstrap checkpoint (``...0-...0.checkpoint``) when there is one, as ``cluster-state`` applies
    them, else the newest
    complete snapshot ending at or before ``from_offset + 1``, else the oldest complete one."""
    findings: list[Finding] = []
    if files.segments and files.segments[0][0] == 0:
        # the bootstrap checkpoint (end offset 0) is still loaded first: KafkaRaftClient hands a new
        # listener the latest snapshot there is (updateListenersProgress), then the log from its end
        for end, _epoch, path in sorted(files.snapshots, reverse=True):
            if end == 0:
                boot, fs = load_snapshot(path)
                if boot is not None:
                    findings.extend(fs)
                    return KraftStart(None, 0, None, boot.records), findings
        return KraftStart(None, 0, None), findings
    snaps = sorted(files.snapshots)
    if from_offset is not None:
        usable = [s for s in snaps if s[0] <= from_offset + 1]
        order = list(reversed(usable)) or snaps
    else:
        order = snaps
    for _end, _epoch, path in order:
        start, fs = load_snapshot(path)
        findings.extend(fs)
        if start is not None:
            return start, findings
    first = files.segments[0][0] if files.segments else 0
    if first > 0:
        findings.append(offset_gap(0, first, files.segments[0][1]))
    return KraftStart(None, first, None), findings


def iter_kraft_records(files: KraftFiles, start: KraftStart) -> Iterator[
        tuple[kraft.MetadataRecord | kraft.ControlRecord, list | tuple | None] | Finding]:
    """Every record of the log in offset order, as ``(record, applied)``: ``applied`` is what
    the loader applies when ``record`` is read (the record itself, a transaction's records at
    its End, or nothing), and ``None`` for a record below ``start.end_offset`` (the snapshot
    holds it). Findings of the segments come where they arise, and a ``kraft_offset_gap``
    finding where the segments present skip offsets. Segments are read one at a time."""
    txn = MetadataTransaction()
    expected = start.end_offset
    for base, path in files.segments:
        if base > expected:
            yield offset_gap(expected, base, path, snapshot=start.path if expected == start.end_offset else None)
        for x in kraft.read_metadata_file(path):
            if isinstance(x, Finding):
                yield x
                continue
            expected = max(expected, x.offset + 1)
            yield (x, None) if x.offset < start.end_offset else (x, txn.feed(x))
