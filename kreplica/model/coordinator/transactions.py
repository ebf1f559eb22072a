"""The transaction coordinator's state, replayed from a ``__transaction_state-N`` partition.

The coordinator of a transactional id is the leader of ``__transaction_state-N`` (N =
``abs(hash(transactional id)) % transaction.state.log.num.partitions``). When it becomes leader it
rebuilds its transactions by replaying that partition, and this module does the same.

Sources (apache/kafka, trunk of 2024-10): ``core/src/main/scala/kafka/coordinator/transaction/
TransactionStateManager.scala`` (``loadTransactionMetadata``), ``TransactionLog.scala``
(``readTxnRecordKey``, ``readTxnRecordValue``), ``TransactionMetadata.scala``
(``TransactionState.fromId``); the layout is :mod:`kreplica.formats.coordinator.transaction_records`.

``loadTransactionMetadata`` reads from the log start offset to the log end (isolation
``LOG_END``: records above the high watermark too), every record of every batch in order:

* a key of an unknown version (record type) is an ``UnknownKey``: "Ignoring it", and the load
  goes on (a ``coordinator_unknown_record`` warning here);
* a tombstone (null value) removes the transactional id;
* any other value replaces the id's :class:`TransactionMetadata`; its partitions are kept only
  when the state is not ``Empty``;
* a null key (``require(record.hasKey)``), a value of an unknown version, a state id outside
  ``TransactionState.fromId`` or bytes that do not fit the schema throw. The loader catches every
  ``Throwable``, logs "Error loading transactions from transaction log" and keeps only what it
  read before. kreplica reports the record (``coordinator_invalid_record``, or
  ``coordinator_unknown_record`` for a version or state a newer Kafka may have written), replays
  on so the state after it stays visible, and says where Kafka's load stopped
  (:attr:`TransactionLogState.kafka_stopped_at`).

The last transactional id's metadata after the replay is what the coordinator would load.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.coordinator.records import TRANSACTION_STATE, decode_record
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES
from kreplica.formats.errors import FormatError, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.model.log.log_cut import batches_until
from kreplica.model.log.partition_log import PartitionLog, iter_batch_records

#: ``RecordBatch.NO_PRODUCER_ID``: a previous or next producer id the record does not carry
NO_PRODUCER_ID = -1
#: ``TransactionState`` names (``TransactionMetadata.scala``)
EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT = "Empty", "Ongoing", "PrepareCommit", "PrepareAbort"
COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE = "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"
#: the field a key's unknown record type is reported under by ``decode_record``: the one error
#: Kafka's loader steps over (``UnknownKey``)
_RECORD_TYPE_FIELD = "record type"


@dataclass(frozen=True, slots=True)
class TransactionMetadata:
    """A transactional id as the coordinator loads it (``TransactionLog.readTxnRecordValue``).

    ``state`` is Kafka's name of the state (``Ongoing``, ``CompleteAbort`` ...). ``partitions``
    are the (topic, partition) pairs of its current transaction, sorted (none when ``Empty``).
    ``previous_producer_id`` and ``next_producer_id`` (KIP-890, value version 1) are ``None``
    when the record carries none (-1, or a version 0 value). ``transaction_start_timestamp_ms``
    is -1 when no transaction has started. ``client_transaction_version`` is the
    ``transaction.version`` the client used (0 in a version 0 value). ``record_offset`` is where
    the record sits in ``__transaction_state-<coordinator_partition>`` of ``source``.
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    previous_producer_id: int | None
    next_producer_id: int | None
    transaction_timeout_ms: int
    state: str
    partitions: tuple[tuple[str, int], ...]
    transaction_last_update_timestamp_ms: int
    transaction_start_timestamp_ms: int
    client_transaction_version: int
    value_version: int
    coordinator_partition: int
    record_offset: int
    source: str

    def names(self, topic: str, partition: int) -> bool:
        """Whether its current transaction holds ``topic``-``partition``."""
        return (topic, partition) in self.partitions


@dataclass(frozen=True, slots=True)
class TransactionLogState:
    """What one replica of ``__transaction_state-<coordinator_partition>`` loads.

    ``transactions`` are sorted by transactional id. ``end_offset`` is the offset after the last
    record replayed (the log end, or the point asked for). ``kafka_stopped_at`` is the offset of
    the first record Kafka's loader throws on, after which it loads nothing (``None``: it reads
    them all). ``newest_timestamp`` is the latest batch time replayed (``None``: none).
    """

    coordinator_partition: int
    source: str
    path: str
    transactions: tuple[TransactionMetadata, ...]
    records: int
    end_offset: int
    kafka_stopped_at: int | None
    newest_timestamp: int | None
    findings: tuple[Finding, ...]


def _optional_id(value: int) -> int | None:
    return None if value == NO_PRODUCER_ID else value


def _partitions(state: str, value: dict) -> tuple[tuple[str, int], ...]:
    """``readTxnRecordValue``: partitions are added unless the state is ``Empty``."""
    if state == EMPTY or not value["transaction_partitions"]:
        return ()
    return tuple(sorted({(p["topic"], pid) for p in value["transaction_partitions"] for pid in p["partition_ids"]}))


def replay_transaction_state(log: PartitionLog, *, at_offset: int | None = None,
                             at_time: int | None = None) -> TransactionLogState:
    """Replay ``log`` (a ``__transaction_state-N`` replica) as the coordinator loads it, up to
    ``at_offset`` (inclusive) or the last batch before one stamped after ``at_time``
    (:mod:`kreplica.model.log.log_cut`); module docstring for the rules."""
    coordinator_partition = log.key[1] if log.key else -1
    loaded: dict[str, TransactionMetadata] = {}
    findings: list[Finding] = []
    stopped_at = newest = None
    records = 0
    end = log.log_start_offset
    batches = batches_until(log, at_offset=at_offset, at_time=at_time)
    for batch, batch_records, complete in iter_batch_records(log, batches):
        newest = batch.max_timestamp if newest is None else max(newest, batch.max_timestamp)
        for record in batch_records:
            if at_offset is not None and record.offset > at_offset:
                break
            records += 1
            end = record.offset + 1
            try:
                decoded = decode_record(TRANSACTION_STATE, record.key, record.value, path=batch.path,
                                        position=batch.position)
            except FormatError as exc:
                kafka_stops = not (isinstance(exc, UnsupportedVersion) and exc.field == _RECORD_TYPE_FIELD)
                findings.append(_finding(exc, record.offset, kafka_stops))
                if kafka_stops and stopped_at is None:
                    stopped_at = record.offset
                continue
            transactional_id = decoded.key["transactional_id"]
            if decoded.tombstone:
                loaded.pop(transactional_id, None)
                continue
            metadata = _metadata(decoded, record.offset, coordinator_partition, log.label)
            if metadata is None:
                status = decoded.value["transaction_status"]
                findings.append(Finding(
                    "coordinator_unknown_record", batch.path, batch.position,
                    f"offset {record.offset}: transactional id {transactional_id!r} has transaction state id "
                    f"{status}, which Kafka's TransactionState.fromId does not know (IllegalStateException): "
                    "Kafka's loader stops here; kreplica leaves the record out",
                    details={"offset": record.offset, "transaction_status": status}))
                stopped_at = record.offset if stopped_at is None else stopped_at
                continue
            loaded[transactional_id] = metadata
        if not complete and stopped_at is None:   # Kafka's reader throws inside this batch (the walk says why)
            stopped_at = batch_records[-1].offset + 1 if batch_records else batch.base_offset
    if batches and at_offset is None:
        end = max(end, batches[-1].next_offset)
    return TransactionLogState(coordinator_partition, log.label, log.path,
                               tuple(loaded[k] for k in sorted(loaded)), records, end, stopped_at, newest,
                               tuple(findings))


def _metadata(decoded, offset: int, coordinator_partition: int, source: str) -> TransactionMetadata | None:
    """``TransactionLog.readTxnRecordValue`` of a decoded value (``None``: a state id Kafka does not know)."""
    value = decoded.value
    state = TRANSACTION_STATES.get(value["transaction_status"])
    if state is None:
        return None
    return TransactionMetadata(
        transactional_id=decoded.key["transactional_id"], producer_id=value["producer_id"],
        producer_epoch=value["producer_epoch"], previous_producer_id=_optional_id(value["previous_producer_id"]),
        next_producer_id=_optional_id(value["next_producer_id"]),
        transaction_timeout_ms=value["transaction_timeout_ms"], state=state, partitions=_partitions(state, value),
        transaction_last_update_timestamp_ms=value["transaction_last_update_timestamp_ms"],
        transaction_start_timestamp_ms=value["transaction_start_timestamp_ms"],
        client_transaction_version=value["client_transaction_version"], value_version=decoded.value_version,
        coordinator_partition=coordinator_partition, record_offset=offset, source=source)


def _finding(exc: FormatError, offset: int, kafka_stops: bool) -> Finding:
    """A record that does not decode: an unknown record type or value version is
    ``coordinator_unknown_record`` (a newer Kafka may have written it), other bytes
    ``coordinator_invalid_record``; the kind follows the exception's type."""
    kind = "coordinator_unknown_record" if isinstance(exc, UnsupportedVersion) else "coordinator_invalid_record"
    then = ("Kafka's loader stops here (it keeps only the transactions read before)" if kafka_stops
            else "Kafka's loader ignores it (UnknownKey)")
    return Finding(kind, exc.path or "", exc.position or 0, f"offset {offset}: {exc.reason}; {then}",
                   details={"offset": offset})


def latest_replicas(states: Iterable[TransactionLogState]) -> tuple[TransactionLogState, ...]:
    """One replica per coordinator partition: the one that replayed furthest (the first given
    of equals), as the partition's leader holds the longest log; sorted by partition."""
    best: dict[int, TransactionLogState] = {}
    for s in states:
        held = best.get(s.coordinator_partition)
        if held is None or s.end_offset > held.end_offset:
            best[s.coordinator_partition] = s
    return tuple(best[p] for p in sorted(best))
