"""How many bytes each replica holds: from ``kafka-log-dirs.sh --describe`` or from the files.

A replica's size is what a broker reports in ``DescribeLogDirs`` (``UnifiedLog.size``): the sum of
its segment files' sizes. Read from copied log directories it is that sum, taken from the
directory listing (nothing is opened). Replicas being moved between a broker's log dirs
(``-future`` directories, ``isFuture``) and directories marked for deletion are left out: they
are not where the replica lives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.formats.tools.log_dirs_describe import ReplicaLogDirInfo
from kreplica.model.logdir.log_dir import scan_log_dir

#: (topic, partition, broker)
ReplicaKey = tuple[str, int, int]


@dataclass(frozen=True)
class ReplicaSizes:
    """Bytes per replica, with where they came from (``source``: a file or a folder)."""

    source: str
    by_replica: Mapping[ReplicaKey, int]

    def replica(self, topic: str, partition: int, broker: int) -> int | None:
        return self.by_replica.get((topic, partition, broker))

    def partition_sizes(self) -> dict[tuple[str, int], int]:
        """The largest replica of each partition: the bytes a new replica of it must copy."""
        out: dict[tuple[str, int], int] = {}
        for (topic, partition, _broker), size in self.by_replica.items():
            key = (topic, partition)
            if size > out.get(key, -1):
                out[key] = size
        return out


def sizes_from_describe(replicas: Iterable[ReplicaLogDirInfo], *, source: str) -> ReplicaSizes:
    """Sizes from ``kafka-log-dirs.sh --describe`` (future replicas left out; a replica in two
    log dirs of one broker counts its current one, which is the non-future one)."""
    sizes: dict[ReplicaKey, int] = {}
    for r in replicas:
        if not r.is_future:
            key = (r.topic, r.partition, r.broker)
            sizes[key] = sizes.get(key, 0) + r.size
    return ReplicaSizes(source, sizes)


def sizes_from_log_dirs(log_dirs: Iterable[tuple[int, str]], *, source: str) -> ReplicaSizes:
    """Sizes summed from copied log directories, given as ``(broker id, log dir path)`` pairs
    (a fleet layout's discovery gives them): each partition directory's segment files."""
    sizes: dict[ReplicaKey, int] = {}
    for broker, path in log_dirs:
        for part in scan_log_dir(path).partitions:
            parsed = part.parsed
            if parsed is None or parsed.suffix is not None:
                continue
            key = (parsed.topic, parsed.partition, broker)
            sizes[key] = sizes.get(key, 0) + sum(s.size for s in part.segments)
    return ReplicaSizes(source, sizes)
