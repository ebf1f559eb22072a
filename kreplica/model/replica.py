"""A replica: one copy of a partition's directory, with what its broker knew about it.

Replicas are given as partition directories (``broker-a/orders-0``) or as log directories plus
a partition name. A replica is labelled by the broker id in its log directory's
``meta.properties`` when present, else by its path; its high watermark, recovery point and log
start offset come from the log directory's checkpoints (overridable). The batches of every
segment are read once, headers only, into a :class:`BatchRef` list in offset order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kreplica.formats import default_records
from kreplica.formats.batch import RecordBatch
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.segment import SegmentEnd, iter_segment
from kreplica.formats.mapped import EvidenceError, open_buffer
from kreplica.model.epoch_cache import EpochEntry
from kreplica.model.lineage import LineageBuilder, LineageEntry
from kreplica.model.log_dir import (
    LogDir,
    LogDirCheckpoints,
    PartitionDir,
    find_log_dirs,
    read_checkpoints,
    scan_log_dir,
)


@dataclass(frozen=True, slots=True)
class BatchRef:
    """A batch header and where it lives; ``control_type`` is read for control batches only."""

    segment: str
    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    count: int | None
    epoch: int
    crc: int
    crc_valid: bool | None
    producer_id: int
    producer_epoch: int
    is_transactional: bool
    is_control: bool
    control_type: int | None
    max_timestamp: int

    @property
    def records(self) -> int:
        return self.count if self.count is not None else self.last_offset - self.base_offset + 1


@dataclass
class Replica:
    """One replica of one partition, read from disk."""

    label: str
    path: str
    partition: PartitionDir
    log_dir: LogDir
    checkpoints: LogDirCheckpoints
    broker_id: int | None
    batches: list[BatchRef] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    lineage: tuple[LineageEntry, ...] = ()
    batch_cache: tuple[EpochEntry, ...] = ()  # the cache Kafka's assign rule builds from the batch headers
    high_watermark: int | None = None
    recovery_point: int | None = None
    log_start_offset: int = 0
    log_end_offset: int = 0
    hw_source: str = "none"

    @property
    def name(self) -> str:
        return self.partition.label


def _ref(buf, b: RecordBatch) -> BatchRef:
    control_type = None
    if b.is_control and b.magic >= 2 and b.count:
        try:
            control_type = next(default_records.iter_records(buf, b)).control_type
        except (FormatError, StopIteration):
            control_type = None
    return BatchRef(b.path, b.position, b.size, b.magic, b.base_offset, b.last_offset, b.count,
                    b.partition_leader_epoch if b.magic >= 2 else -1, b.crc, b.crc_valid, b.producer_id,
                    b.producer_epoch, b.is_transactional, b.is_control, control_type, b.max_timestamp)


def load_replica(partition: PartitionDir, log_dir: LogDir, *, label: str | None = None,
                 hw_override: int | None = None) -> Replica:
    """Read a replica's batches (the ones Kafka's reader yields) and its checkpoint values."""
    cps = read_checkpoints(log_dir)
    meta = cps.meta
    broker_id = None
    if meta is not None:
        broker_id = meta.broker_id if meta.broker_id is not None else meta.node_id
    key = partition.key
    r = Replica(label or (f"broker-{broker_id}" if broker_id is not None else partition.path), partition.path,
                partition, log_dir, cps, broker_id)
    r.findings.extend(cps.findings)
    lineage = LineageBuilder()
    end = partition.segments[0].base_offset if partition.segments else 0
    for seg in partition.segments:
        with open_buffer(seg.log) as buf:
            for ev in iter_segment(buf, path=seg.log):
                if isinstance(ev, RecordBatch):
                    if ev.after_break:
                        continue
                    ref = _ref(buf, ev)
                    r.batches.append(ref)
                    lineage.feed(ev)
                    end = max(end, ev.last_offset + 1)
                elif isinstance(ev, Finding):
                    r.findings.append(ev)
                elif isinstance(ev, SegmentEnd):
                    pass
    r.lineage = lineage.runs
    r.batch_cache = lineage.cache_entries
    r.log_end_offset = end
    if hw_override is not None:
        r.high_watermark, r.hw_source = hw_override, "override"
    elif key and cps.high_watermarks is not None and key in cps.high_watermarks:
        r.high_watermark, r.hw_source = cps.high_watermarks[key], "replication-offset-checkpoint"
    if key and cps.recovery_points is not None:
        r.recovery_point = cps.recovery_points.get(key)
    lso_cp = (cps.log_start_offsets or {}).get(key, 0) if key else 0
    r.log_start_offset = max(lso_cp, partition.segments[0].base_offset if partition.segments else 0)
    return r


def resolve_replica_paths(paths: list[str], partition: str | None) -> list[tuple[PartitionDir, LogDir]]:
    """Partition directories, or log directories plus ``--partition topic-p``."""
    out = []
    for raw in paths:
        p = Path(raw)
        if partition is not None and (p / partition).is_dir():
            log_dir = scan_log_dir(p)
            match = [pd for pd in log_dir.partitions if pd.name == partition]
            if not match:
                raise EvidenceError(f"holds no partition directory {partition}", path=raw)
            out.append((match[0], log_dir))
            continue
        dirs = find_log_dirs([raw])
        log_dir = dirs[0]
        if log_dir.is_whole:
            if partition is None:
                raise EvidenceError("is a log directory: name the partition with --partition topic-p", path=raw)
            raise EvidenceError(f"holds no partition directory {partition}", path=raw)
        out.append((log_dir.partitions[0], log_dir))
    return out


def parse_hw_overrides(values: list[str]) -> dict[str, int]:
    """``LABEL=OFFSET`` pairs (label: broker label or path as shown in output)."""
    out = {}
    for v in values:
        label, sep, offset = v.rpartition("=")
        if not sep or not label:
            raise ValueError(f"expected LABEL=OFFSET, got {v!r}")
        out[label] = int(offset)
    return out
