"""A partition's replicas as the fleet scan's table rows, built without Spark: the rows the
analysis reads, made from the logs the single-partition commands read (the fleet extra's pyarrow
is imported on first use, so collecting a test that skips without it does not fail)."""

from __future__ import annotations

from pathlib import Path

from kreplica.model.log.replica import read_replicas


def rows_of(log) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """The replica row, segment rows, batch rows and marker rows of one replica."""
    from kreplica.pipeline.tables import schemas as tables

    key = (log.broker_id, log.log_dir.path, *log.key)
    replica = tables.replica_row(key, "meta.properties", log)
    segments = [tables.segment_row(key, s.files, s.file_size, s.valid_bytes, s.stopped_by, len(s.findings),
                                   s.txn_index_below_base) for s in log.segments]
    batches = [dict(zip(tables.BATCH_COLUMNS, tables.batch_row(key, b))) for s in log.segments for b in s.batches]
    markers = [tables.marker_row(key, s.path, m) for s in log.segments for m in s.markers.values()]
    return replica, segments, batches, markers


def partition_rows(scenario: Path):
    """``orders-0`` of every ``broker-*`` of a scenario directory: the logs, then all replicas'
    replica, segment, batch and marker rows."""
    logs = read_replicas(sorted(str(p / "orders-0") for p in scenario.glob("broker-*")), None, {})
    all_rows = [rows_of(log) for log in logs]
    return logs, [r[0] for r in all_rows], [x for r in all_rows for x in r[1]], [x for r in all_rows for x in r[2]], \
        [x for r in all_rows for x in r[3]]
