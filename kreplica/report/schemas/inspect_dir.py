"""The ``inspect-dir`` output: one ``log_dir`` object per log directory, one ``partition``
object per partition, then that partition's ``finding`` objects; and the text report.

    log_dir    {type, path, broker_id, cluster_id, directory_id, clean_shutdown, partitions}
    partition  {type, log_dir, path, name, topic, partition, suffix, topic_id, segments: [{path,
                base_offset, size, batches, first_offset, last_offset, valid_bytes, index,
                index_entries, timeindex, time_index_entries, txnindex, txn_index_entries}],
                log_start_offset, log_end_offset, high_watermark, recovery_point,
                lineage: [{epoch, start_offset, last_offset, batches, first_timestamp, last_timestamp}],
                epoch_checkpoint: [[epoch, start_offset], ...] | null,
                producer_snapshot: {path, offset} | null, producers: [{producer_id, producer_epoch,
                last_sequence, last_offset, offset_delta, timestamp, coordinator_epoch,
                current_txn_first_offset}], open_transactions: [{producer_id, producer_epoch, first_offset}],
                restart: {shutdown, kafka_version, recovery_point, recovered_segments, truncate_at:
                {path, position} | null, truncated_bytes, deleted_segments, rebuilt_indexes, created_files,
                deleted_files, epoch_cache: [[epoch, start_offset], ...], epoch_cache_changes,
                log_start_offset, log_end_offset, refuses_to_start, reasons}, problems}
"""

from __future__ import annotations

from collections.abc import Iterable


from kreplica.analysis.inspect.inspect_dir import LogDirReport, PartitionReport
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.findings import finding_object


def log_dir_object(r: LogDirReport) -> dict:
    return {"type": "log_dir", "path": r.path, "broker_id": r.broker_id, "cluster_id": r.cluster_id,
            "directory_id": r.directory_id, "clean_shutdown": r.clean_shutdown, "partitions": r.partitions}


def partition_object(r: PartitionReport) -> dict:
    rs = r.restart
    return {
        "type": "partition", "log_dir": r.log_dir, "path": r.path, "name": r.name, "topic": r.topic,
        "partition": r.partition, "suffix": r.suffix, "topic_id": r.topic_id,
        "segments": [{
            "path": s.path, "base_offset": s.base_offset, "size": s.size, "batches": s.batches,
            "first_offset": s.first_offset, "last_offset": s.last_offset, "valid_bytes": s.valid_bytes,
            "index": s.index, "index_entries": s.index_entries, "timeindex": s.timeindex,
            "time_index_entries": s.time_index_entries, "txnindex": s.txnindex,
            "txn_index_entries": s.txn_index_entries,
        } for s in r.segments],
        "log_start_offset": r.log_start_offset, "log_end_offset": r.log_end_offset,
        "high_watermark": r.high_watermark, "recovery_point": r.recovery_point,
        "lineage": [{"epoch": e.epoch, "start_offset": e.start_offset, "last_offset": e.last_offset,
                     "batches": e.batches, "first_timestamp": e.first_timestamp, "last_timestamp": e.last_timestamp}
                    for e in r.lineage],
        "epoch_checkpoint": None if r.epoch_checkpoint is None else [list(e) for e in r.epoch_checkpoint],
        "producer_snapshot": None if r.snapshot is None else {"path": r.snapshot[0], "offset": r.snapshot[1]},
        "producers": [{
            "producer_id": p.producer_id, "producer_epoch": p.producer_epoch, "last_sequence": p.last_sequence,
            "last_offset": p.last_offset, "offset_delta": p.offset_delta, "timestamp": p.timestamp,
            "coordinator_epoch": p.coordinator_epoch, "current_txn_first_offset": p.current_txn_first_offset,
        } for p in r.producers],
        "open_transactions": [{"producer_id": t.producer_id, "producer_epoch": t.producer_epoch,
                               "first_offset": t.first_offset} for t in r.open_transactions],
        "restart": {
            "shutdown": rs.shutdown, "kafka_version": rs.kafka_version, "recovery_point": rs.recovery_point,
            "recovered_segments": list(rs.recovered_segments),
            "truncate_at": None if rs.truncate_at is None else {"path": rs.truncate_at[0], "position": rs.truncate_at[1]},
            "truncated_bytes": rs.truncated_bytes, "deleted_segments": list(rs.deleted_segments),
            "rebuilt_indexes": list(rs.rebuilt_indexes), "created_files": list(rs.created_files),
            "deleted_files": list(rs.deleted_files), "epoch_cache": [list(e) for e in rs.epoch_cache],
            "epoch_cache_changes": list(rs.epoch_cache_changes), "log_start_offset": rs.log_start_offset,
            "log_end_offset": rs.log_end_offset, "refuses_to_start": rs.refuses_to_start, "reasons": list(rs.reasons),
        },
        "problems": r.problems,
    }


def emit_reports(reports: Iterable[LogDirReport | PartitionReport], emitter: Emitter) -> int:
    """Machine output; returns the number of error findings."""
    errors = 0
    for r in reports:
        if isinstance(r, LogDirReport):
            emitter.emit(log_dir_object(r))
        else:
            emitter.emit(partition_object(r))
        for f in r.findings:
            errors += f.is_error
            emitter.emit(finding_object(f))
    return errors
