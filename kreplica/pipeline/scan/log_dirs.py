"""``fleet scan``, stage 1: one task per log directory reads its checkpoints, partition
directories and small files (``leader-epoch-checkpoint``, ``partition.metadata``, producer
snapshots) with the readers a single-partition command uses, writes ``replicas`` rows and
log-directory findings (and, for local evidence, the ``group_offsets`` and ``transactions`` rows
of Kafka's internal topics, :mod:`.scan_groups`), and hands the driver the list of segment files
(a few hundred bytes per file; nothing per batch).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from kreplica.model.logdir.log_dir import LogDir, read_checkpoints, scan_log_dir
from kreplica.model.log.partition_log import read_partition_files, txn_index_below_base
from kreplica.pipeline.tables import schemas as tables
from kreplica.pipeline.evidence.layout import FleetLogDir
from kreplica.pipeline.tables.parquet import PartWriters
from kreplica.pipeline.scan.groups import coordinator_rows
from kreplica.pipeline.scan.work import ScanTotals


def _key(log_dir: FleetLogDir, partition) -> tuple:
    parsed = partition.parsed
    return (log_dir.broker, log_dir.path, parsed.topic if parsed else partition.name,
            parsed.partition if parsed else -1)


def scan_log_dirs(out: str, index: int, log_dirs: Iterable[FleetLogDir], relabel=None) -> Iterator[tuple]:
    """Stage 1 task: ``replicas`` rows and log-directory findings written; yields one
    ``("segment", key, SegmentFiles, size, txn_index_below_base)`` per segment for stage 2, then
    the task's totals. ``relabel`` maps staged paths to remote URIs (:mod:`.remote_scan`)."""
    local = relabel is None
    relabel = relabel or (lambda value: value)
    writers = PartWriters(Path(out), f"logdirs-{index:05d}", relabel)
    totals = ScanTotals()
    try:
        for fleet_dir in log_dirs:
            log_dir: LogDir = scan_log_dir(fleet_dir.path)
            cps = read_checkpoints(log_dir)
            dir_key = (fleet_dir.broker, fleet_dir.path, None, None)
            for f in cps.findings:
                writers["findings"].add(tables.finding_row(dir_key, f))
                totals += ScanTotals(findings=1, errors=int(f.is_error))
            for partition in log_dir.partitions:
                key = _key(fleet_dir, partition)
                log = read_partition_files(partition, log_dir, cps)
                writers["replicas"].add(tables.replica_row(key, fleet_dir.broker_source, log))
                for f in log.producer_state.findings:
                    writers["findings"].add(tables.finding_row(key, f))
                    totals += ScanTotals(findings=1, errors=int(f.is_error))
                totals += ScanTotals(replicas=1)
                if local:
                    for table, row in coordinator_rows(key, partition, log_dir, cps):
                        writers[table].add(row)
                for files in partition.segments:
                    yield relabel(("segment", key, files, os.path.getsize(files.log), txn_index_below_base(files)))
    finally:
        writers.close()
    yield ("totals", totals)
