"""What a ``groups`` SOURCE holds: replicas of ``__consumer_offsets`` partitions, and the data
partitions their committed offsets point into.

A SOURCE is a broker log directory (every ``__consumer_offsets-N`` in it, and its other
partitions as data) or one ``__consumer_offsets-N`` directory (that replica alone; the partitions
beside it are not read). Anything else is refused with what it is: a partition of another topic,
a file, a ZooKeeper directory (:func:`~kreplica.model.logdir.log_dir.find_log_dirs` words those), or
sources that hold no ``__consumer_offsets`` partition at all.

A data partition's bounds come from its newest segments alone
(:func:`data_partition_bounds`): the log end offset is where the newest segment holding a batch
Kafka's reader yields ends (the base offset of the first segment when none does), the log start
offset the greater of ``log-start-offset-checkpoint`` and the first segment's base offset, as
:func:`~kreplica.model.log.partition_log.assemble_partition_log` computes them, without walking
the whole partition. Beside them, the end its other files record: the high watermark and
recovery point checkpoints and the newest producer snapshot's offset. Above the log end, they
say the copy lacks segments (a file left out of it) or the broker lost unflushed records.

The commands that join consumer groups with what they find (``truncate-plan``, ``plan-elect
--log-dirs``, ``timeline --log-dirs``, ``transactions``) take as group evidence the
``__consumer_offsets`` partitions of the log directories they read (:func:`consumer_offsets_paths`)
and of their ``--groups`` SOURCEs, resolved by :func:`find_group_sources` as ``groups`` resolves
them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kreplica.formats.coordinator.records import CONSUMER_OFFSETS
from kreplica.formats.mapped import EvidenceError
from kreplica.model.coordinator.replay import GroupPartitionState, coordinator_partition_of
from kreplica.model.evidence_span import EvidenceSpan
from kreplica.model.logdir.log_dir import LogDir, LogDirCheckpoints, PartitionDir, broker_id_of, find_log_dirs, \
    read_checkpoints

#: a replica: its partition directory and the log directory it is read with
Replica = tuple[PartitionDir, LogDir]


@dataclass(frozen=True, slots=True)
class GroupSources:
    """``replicas``: coordinator partition N -> its replicas, in the order given; ``data``:
    (topic, partition) -> replicas of data partitions in the whole log directories given."""

    replicas: dict[int, tuple[Replica, ...]]
    data: dict[tuple[str, int], tuple[Replica, ...]]


def _refuse(path: str, reason: str) -> EvidenceError:
    return EvidenceError(reason, path=path)


def find_group_sources(paths: list[str]) -> GroupSources:
    """Resolve SOURCE paths (module docstring); :class:`EvidenceError` for one that is not a
    broker log directory or a ``__consumer_offsets-N`` directory, or when none holds a
    ``__consumer_offsets`` partition."""
    replicas: dict[int, list[Replica]] = {}
    data: dict[tuple[str, int], list[Replica]] = {}
    seen: set[str] = set()
    other: list[str] = []
    for raw in paths:
        if os.path.isfile(raw):
            raise _refuse(raw, "is a file, not a broker log directory or a __consumer_offsets-N directory "
                               "(kreplica inspect-log reads segment files)")
        log_dir = find_log_dirs([raw])[0]
        if not log_dir.is_whole:
            partition = log_dir.partitions[0]
            if coordinator_partition_of(partition.key) is None:
                what = f"a partition of topic {partition.key[0]}" if partition.key else "a partition directory"
                raise _refuse(raw, f"is {what}, not of {CONSUMER_OFFSETS}: give a broker log directory or a "
                                   f"{CONSUMER_OFFSETS}-N directory")
        for partition in log_dir.partitions:
            real = os.path.realpath(partition.path)
            if real in seen or not partition.holds_partition_files:
                continue
            seen.add(real)
            n = coordinator_partition_of(partition.key)
            if n is not None:
                replicas.setdefault(n, []).append((partition, log_dir))
            else:  # a data partition: only a whole log directory gets here without an offsets partition
                data.setdefault(partition.key, []).append((partition, log_dir))
                other.append(partition.name)
    if not replicas:
        shown = ", ".join(sorted(set(other))[:8]) or "none"
        raise _refuse(paths[0], f"holds no {CONSUMER_OFFSETS} partition (partitions found: {shown}): give the log "
                                "directories of the brokers that hosted the group coordinators")
    return GroupSources({n: tuple(r) for n, r in sorted(replicas.items())}, {k: tuple(v) for k, v in data.items()})


def _is_offsets_partition(name: str) -> bool:
    prefix = CONSUMER_OFFSETS + "-"
    return name.startswith(prefix) and name[len(prefix):].isdigit()


def consumer_offsets_paths(log_dirs: Iterable[str]) -> list[str]:
    """The paths among ``log_dirs`` that are or hold a ``__consumer_offsets`` partition: the
    group evidence of a command that reads those log directories already (one that cannot be
    listed holds none: the command reports its own reading of it)."""
    out = []
    for path in log_dirs:
        if _is_offsets_partition(os.path.basename(os.path.normpath(path))):
            out.append(path)
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        if any(map(_is_offsets_partition, names)):
            out.append(path)
    return out


def data_partition_bounds(partition: PartitionDir, cps: LogDirCheckpoints) -> tuple[int, int, int]:
    """``(log start offset, log end offset, recorded end)`` of a data partition (module
    docstring; the recorded end is at least the log end offset)."""
    from kreplica.model.log.partition_log import loaded_log_start, read_segment_log

    key = partition.key
    start, end = loaded_log_start(partition, cps)
    for files in reversed(partition.segments):
        seg = read_segment_log(files)
        if seg.kafka_batches:
            end = max(end, max(b.next_offset for b in seg.kafka_batches))
            break
    recorded = [end, *(offset for offset, _path in partition.snapshots)]
    for checkpoint in (cps.high_watermarks, cps.recovery_points):
        if checkpoint and key in checkpoint:
            recorded.append(checkpoint[key])
    return start, end, max(recorded)


@dataclass(frozen=True, slots=True)
class DataReplica:
    """One replica of a data partition: its label (``broker-N``, else its path) and bounds
    (:func:`data_partition_bounds`; ``recorded_end`` defaults to the log end offset)."""

    label: str
    path: str
    log_start_offset: int
    log_end_offset: int
    recorded_end: int | None = None

    @property
    def end_recorded(self) -> int:
        return self.log_end_offset if self.recorded_end is None else max(self.recorded_end, self.log_end_offset)


class LogDirFiles:
    """Each log directory's checkpoints, and each data partition's bounds, read once."""

    def __init__(self) -> None:
        self._checkpoints: dict[str, LogDirCheckpoints] = {}
        self._bounds: dict[str, DataReplica] = {}

    def checkpoints(self, log_dir: LogDir) -> LogDirCheckpoints:
        if log_dir.path not in self._checkpoints:
            self._checkpoints[log_dir.path] = read_checkpoints(log_dir)
        return self._checkpoints[log_dir.path]

    def data_replicas(self, replicas: Iterable[Replica]) -> list[DataReplica]:
        """The bounds of these data partition replicas (:func:`data_partition_bounds`)."""
        out = []
        for partition, log_dir in replicas:
            if partition.path not in self._bounds:
                cps = self.checkpoints(log_dir)
                start, end, recorded = data_partition_bounds(partition, cps)
                broker = broker_id_of(cps)
                self._bounds[partition.path] = DataReplica(
                    f"broker-{broker}" if broker is not None else partition.path, partition.path, start, end, recorded)
            out.append(self._bounds[partition.path])
        return out


def group_evidence_span(states: Sequence[GroupPartitionState]) -> EvidenceSpan:
    """How far the replicas read reach: their first and last offsets and record times (a point
    outside is refused, :func:`kreplica.cli.options.sources.check_point`)."""

    def bound(pick, values):
        values = [v for v in values if v is not None]
        return pick(values) if values else None

    return EvidenceSpan("log", bound(min, (s.first_offset for s in states)), bound(max, (s.last_offset for s in states)),
                        bound(min, (s.first_time for s in states)), bound(max, (s.last_time for s in states)))
