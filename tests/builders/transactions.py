"""Partitions with transactions, written in the test with kreplica's writers and read back once as
:class:`~kreplica.model.log.partition_log.PartitionLog` values: data batches of transactional and
idempotent producers, COMMIT/ABORT markers (``build_control_record``), and
``__transaction_state`` records (``build_key``/``build_value``), one batch per record as the
coordinator appends them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kreplica.formats.coordinator.records import TRANSACTION_STATE, build_key, build_value
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.formats.log.producer_snapshot import ProducerSnapshotEntry, build_producer_snapshot
from kreplica.formats.logdir.naming import segment_file_name
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
from kreplica.model.logdir.log_dir import find_log_dirs
from kreplica.model.log.partition_log import PartitionLog, read_partition_log

TS = 1_700_000_000_000
STATUS = {name: code for code, name in TRANSACTION_STATES.items()}


def data(offset: int, count: int = 1, *, pid: int = -1, epoch: int = -1, txn: bool = False, ts: int = TS) -> bytes:
    """``count`` records from ``offset``, of producer ``pid`` (transactional when ``txn``)."""
    records = [NewRecord(offset + k, ts, f"k{offset + k}".encode(), b"v") for k in range(count)]
    return build_batch(records, base_offset=offset, producer_id=pid, producer_epoch=epoch,
                       base_sequence=0 if pid >= 0 else -1, is_transactional=txn)


def marker(offset: int, pid: int, kind: int, *, epoch: int = 0, ts: int = TS) -> bytes:
    """A COMMIT (1) or ABORT (0) marker of producer ``pid``."""
    return build_batch([build_control_record(offset, ts, kind, 0)], base_offset=offset, producer_id=pid,
                       producer_epoch=epoch, is_transactional=True, is_control=True)


def empty_control(offset: int, pid: int, *, epoch: int = 0, ts: int = TS) -> bytes:
    """A control batch the cleaner emptied (no record left)."""
    return build_batch([], base_offset=offset, last_offset_delta=0, max_timestamp=ts, producer_id=pid,
                       producer_epoch=epoch, is_transactional=True, is_control=True)


def txn_value(state: str | None, pid: int, epoch: int = 0, partitions: Sequence[tuple[str, int]] = (), *,
              version: int = 1, ts: int = TS, previous: int = -1, next_id: int = -1, tv: int = 0,
              status: int | None = None) -> bytes | None:
    """A ``TransactionLogValue`` (``None`` state: a tombstone)."""
    if state is None:
        return None
    topics: dict[str, list[int]] = {}
    for topic, p in partitions:
        topics.setdefault(topic, []).append(p)
    return build_value(TRANSACTION_STATE, 0, version, {
        "producer_id": pid, "previous_producer_id": previous, "next_producer_id": next_id, "producer_epoch": epoch,
        "transaction_timeout_ms": 60_000, "transaction_status": STATUS[state] if status is None else status,
        "transaction_partitions": tuple({"topic": t, "partition_ids": tuple(ps)} for t, ps in topics.items()),
        "transaction_last_update_timestamp_ms": ts, "transaction_start_timestamp_ms": ts,
        "client_transaction_version": tv})


def txn_key(transactional_id: str) -> bytes:
    return build_key(TRANSACTION_STATE, 0, {"transactional_id": transactional_id})


def coordinator_records(records: Iterable[tuple[bytes | None, bytes | None]], *, start: int = 0,
                        ts: int = TS) -> list[bytes]:
    """One batch per (key, value), from offset ``start``, a second apart."""
    return [build_batch([NewRecord(start + k, ts + 1000 * k, key, value)], base_offset=start + k)
            for k, (key, value) in enumerate(records)]


def write_partition(root: Path, name: str, batches: Sequence[bytes], *, base: int | None = None,
                    hw: int | None = None, log_start: int | None = None,
                    snapshot: tuple[int, Sequence[ProducerSnapshotEntry]] | None = None) -> Path:
    """``root/<name>`` holding one segment of ``batches`` (at ``base``, else the first batch's
    offset), a producer snapshot at (offset, entries), and the log directory's checkpoints."""
    part = root / name
    part.mkdir(parents=True, exist_ok=True)
    first = base if base is not None else (int.from_bytes(batches[0][:8], "big") if batches else 0)
    (part / segment_file_name(first)).write_bytes(b"".join(batches))
    if snapshot is not None:
        (part / segment_file_name(snapshot[0]).replace(".log", ".snapshot")).write_bytes(
            build_producer_snapshot(list(snapshot[1])))
    if hw is not None or log_start is not None:
        topic, _, p = name.rpartition("-")
        _merge_checkpoint(root / "replication-offset-checkpoint", (topic, int(p)), hw)
        _merge_checkpoint(root / "log-start-offset-checkpoint", (topic, int(p)), log_start)
    return part


def _merge_checkpoint(path: Path, key: tuple[str, int], value: int | None) -> None:
    if value is None:
        return
    from kreplica.formats.logdir.offset_checkpoint import parse_offset_checkpoint

    entries: Mapping = parse_offset_checkpoint(path.read_bytes(), path=str(path)) if path.exists() else {}
    path.write_bytes(build_offset_checkpoint({**entries, key: value}))


def read_log(part: Path) -> PartitionLog:
    """The partition directory read as every command reads it."""
    log_dir = find_log_dirs([str(part)])[0]
    return read_partition_log(log_dir.partitions[0], log_dir)


def snapshot_entry(pid: int, epoch: int, txn_first: int, *, last_offset: int = 0, ts: int = TS) -> ProducerSnapshotEntry:
    return ProducerSnapshotEntry(pid, epoch, 0, last_offset, 0, ts, 0, txn_first)
