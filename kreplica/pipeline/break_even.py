"""When the fleet pays for itself: the time of a fleet run (Spark's start, then every core walking
the segments) against the time of the single-partition commands that give the same answers
(``epochs``, ``truncate-plan`` and ``diverge`` of each partition, one process each, each reading
every replica of its partition). Few partitions and little data are answered sooner without
Spark; ``fleet scan`` says so before Spark starts. The figures are this machine's kind, measured
by ``bench/bench_fleet.py --break-even`` (``bench/README.md``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

#: A fleet run's fixed cost: Python, Spark's start (with the JVM archive) and stop, the first
#: jobs that start the Python workers.
FLEET_SECONDS = 10.0
#: Batch headers walked per second by one core, the single-partition commands' (and, within a
#: tenth, a fleet task's) speed.
BYTES_PER_SECOND = 1.2e9
#: A fleet task's speed per core, as a share of the single-partition commands'.
FLEET_SHARE = 0.9
#: A single-partition command's fixed cost (Python and kreplica's start, the small files).
COMMAND_SECONDS = 0.4
#: The commands that answer what ``fleet analyze`` answers of one partition.
COMMANDS = ("epochs", "truncate-plan", "diverge")


@dataclass(frozen=True, slots=True)
class EvidenceSize:
    """How much a fleet holds: partitions (by name across brokers), replicas and segment bytes."""

    partitions: int
    replicas: int
    bytes: int

    def single_partition_seconds(self) -> float:
        """The single-partition commands, one after another: each starts, and reads every
        replica of its partition."""
        return len(COMMANDS) * (self.partitions * COMMAND_SECONDS + self.bytes / BYTES_PER_SECOND)

    def fleet_seconds(self, cores: int) -> float:
        return FLEET_SECONDS + self.bytes / (max(cores, 1) * BYTES_PER_SECOND * FLEET_SHARE)

    def below_break_even(self, cores: int) -> bool:
        return self.single_partition_seconds() < self.fleet_seconds(cores)


def break_even_partitions() -> int:
    """With little data, the fewest partitions for which the fleet answers sooner."""
    return int(FLEET_SECONDS / (len(COMMANDS) * COMMAND_SECONDS)) + 1


def break_even_bytes(cores: int) -> float:
    """With one partition, the least data for which the fleet answers sooner."""
    single = len(COMMANDS) / BYTES_PER_SECOND
    fleet = 1 / (max(cores, 1) * BYTES_PER_SECOND * FLEET_SHARE)
    return (FLEET_SECONDS - len(COMMANDS) * COMMAND_SECONDS) / (single - fleet)


def measure(log_dirs: Iterable[str], enough: int | None = None) -> EvidenceSize:
    """The partitions, replicas and ``.log`` bytes under local log directories, by listing only;
    the count stops early once ``enough`` partitions are seen (no need to list a large fleet)."""
    names: set[str] = set()
    replicas = size = 0
    for log_dir in log_dirs:
        try:
            entries = [e for e in os.scandir(log_dir) if e.is_dir() and "-" in e.name]
        except OSError:
            continue
        for entry in entries:
            try:
                logs = [f.stat().st_size for f in os.scandir(entry.path) if f.name.endswith(".log") and f.is_file()]
            except OSError:
                continue
            names.add(entry.name)
            replicas += 1
            size += sum(logs)
            if enough is not None and len(names) >= enough:
                return EvidenceSize(len(names), replicas, size)
    return EvidenceSize(len(names), replicas, size)
