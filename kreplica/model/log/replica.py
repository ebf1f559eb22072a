"""Which replicas a user named: partition directories, or log directories plus a partition name.

A replica is then read once into a :class:`~kreplica.model.log.partition_log.PartitionLog`
(:func:`read_replicas`), labelled by the broker id in its log directory's ``meta.properties``
when present, else by its path, with its high watermark from the checkpoints unless overridden.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kreplica.formats.mapped import EvidenceError, refuse_special
from kreplica.formats.usage import UsageError
from kreplica.model.logdir.log_dir import LogDir, PartitionDir, find_log_dirs, scan_log_dir
from kreplica.model.log.partition_log import PartitionLog, read_partition_log


def resolve_replica_paths(paths: list[str], partition: str | None) -> list[tuple[PartitionDir, LogDir]]:
    """Partition directories, or log directories plus ``--partition topic-p``."""
    out = []
    for raw in paths:
        refuse_special(raw)
        p = Path(raw)
        if partition is not None and (p / partition).is_dir():
            log_dir = scan_log_dir(p)
            match = [pd for pd in log_dir.partitions if pd.name == partition]
            if not match:
                # a directory the log directory's scan keeps apart (a KRaft metadata directory's
                # __cluster_metadata-0): read as the partition directory it is, as when named itself
                named = find_log_dirs([str(p / partition)])[0]
                if named.is_whole or not named.partitions:
                    raise UsageError(f"holds no partition directory {partition}", option="--partition", path=raw)
                out.append((named.partitions[0], named))
                continue
            out.append((match[0], log_dir))
            continue
        dirs = find_log_dirs([raw])
        log_dir = dirs[0]
        if log_dir.is_whole:
            if partition is None:
                raise UsageError("is a log directory: name the partition with --partition topic-p", path=raw)
            raise UsageError(f"holds no partition directory {partition}", option="--partition", path=raw)
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


def replica_bytes(paths: list[str], partition: str | None) -> int:
    """The bytes of segments :func:`read_replicas` will walk (for a progress bar)."""
    return sum(seg.size for pdir, _ in resolve_replica_paths(paths, partition) for seg in pdir.segments)


def read_replicas(paths: list[str], partition: str | None, hw_overrides: dict[str, int], *,
                  advance: Callable[[int], None] | None = None) -> list[PartitionLog]:
    """Read every named replica once; labels are made unique (``broker-1#2``) and ``--hw``
    overrides (keyed by label or path) applied. Raises ``KeyError`` naming unknown labels."""
    replicas = []
    seen: dict[str, int] = {}
    for pdir, log_dir in resolve_replica_paths(paths, partition):
        r = read_partition_log(pdir, log_dir, advance=advance)
        if r.label in seen:
            seen[r.label] += 1
            r = r.relabelled(f"{r.label}#{seen[r.label]}")
        else:
            seen[r.label] = 1
        for key in (r.label, r.path):
            if key in hw_overrides:
                r = r.with_high_watermark(hw_overrides[key])
        replicas.append(r)
    unknown = set(hw_overrides) - {r.label for r in replicas} - {r.path for r in replicas}
    if unknown:
        raise KeyError(f"no replica labelled {sorted(unknown)}; labels are {[r.label for r in replicas]}")
    return replicas


def require_one_partition(replicas: list[PartitionLog]) -> None:
    """Replicas compared with each other must be copies of one partition: a named partition
    directory that differs from the first replica's is a usage error naming both."""
    first = replicas[0]
    for r in replicas[1:]:
        if first.key is not None and r.key is not None and r.key != first.key:
            raise EvidenceError(f"holds partition {r.name}, but {first.path} holds {first.name}: replicas compared "
                                "with each other must be copies of one partition", path=r.path)

