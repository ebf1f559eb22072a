"""The transactions still open in one replica's log, and the last stable offset they hold.

Sources (apache/kafka, trunk of 2024-10): ``storage/src/main/java/org/apache/kafka/storage/
internals/log/ProducerAppendInfo.java`` (``append``, ``appendDataBatch``, ``appendEndTxnMarker``),
``ProducerStateEntry.java``, ``ProducerStateManager.java`` (``firstUnstableOffset``,
``removeUnreplicatedTransactions``, ``loadFromSnapshot``), ``UnifiedLog.java``
(``rebuildProducerState``, ``loadProducersFromRecords``), ``core/src/main/scala/kafka/log/
UnifiedLog.scala`` (``lastStableOffset``, ``maybeIncrementFirstUnstableOffset``).

A broker rebuilds its producers by replaying the batch headers after its producer snapshot
(``AppendOrigin.REPLICATION``: epochs and sequences are not validated). Per batch with a
producer id (``hasProducerId``: id > -1):

* a data batch updates the producer's epoch and last timestamp (its ``maxTimestamp``); a
  transactional one opens a transaction at its base offset when the producer has none open
  (``appendDataBatch``: "Began a new transaction"), and belongs to the open one otherwise, whatever
  its epoch (``maybeUpdateProducerEpoch`` leaves ``currentTxnFirstOffset`` alone);
* a control batch holding a COMMIT or ABORT marker closes the producer's open transaction
  (``appendEndTxnMarker``), whatever the marker's epoch; an empty control batch ("the entire
  transaction has been cleaned from the log") changes nothing;
* a non-transactional batch while a transaction is open makes Kafka throw
  ``InvalidTxnStateException``; here the transaction stays open and the batch is not counted in it.

Transactions whose first batches lie before the first batch the evidence holds (retention deleted
them; the LSO can stay below the log start) come from the producer snapshot, as the broker loads
them (``loadFromSnapshot``: ``currentTxnFirstOffset``); their first timestamp is the snapshot's
``timestamp`` (the producer's last write then), so their age is a lower bound.

The last stable offset (``UnifiedLog.lastStableOffset``): the first unstable offset, the first
offset of an open transaction or of a completed one whose marker is at or above the high
watermark (not yet replicated, ``unreplicatedTxns``), raised to the log start offset; the high
watermark when that is lower or there is none. The high watermark is the
``replication-offset-checkpoint``'s, capped at the log end as a loading broker caps it, or the
log end when there is none (and at a point in the past, where no checkpoint tells it).
"""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.analysis.log.log_loading import loaded_high_watermark
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, NO_PRODUCER_ID, RecordBatch
from kreplica.model.log.log_cut import batches_until
from kreplica.model.log.partition_log import PartitionLog

#: What the last stable offset is, when no transaction holds it.
LSO_HIGH_WATERMARK = "high_watermark"
LSO_LOG_END = "log_end_offset"
#: ... and when one does.
LSO_OPEN_TRANSACTION = "open_transaction"
LSO_UNREPLICATED_TRANSACTION = "unreplicated_transaction"
#: ``currentTxnFirstOffset`` of a snapshot entry without an open transaction
NO_TXN = -1
#: ``RecordBatch.NO_PRODUCER_EPOCH``: a producer before its first batch
NO_PRODUCER_EPOCH = -1
#: the partition number of a directory whose name is not ``<topic>-<partition>``
NO_PARTITION = -1


@dataclass(frozen=True, slots=True)
class SnapshotView:
    """What the producer snapshot at ``offset`` (``path``) says of a producer whose transaction it
    covers (the transaction began below ``offset``): ``current_txn_first_offset`` (-1: no open
    transaction), or ``None`` when it holds no entry for the producer."""

    path: str
    offset: int
    current_txn_first_offset: int | None


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """A producer's transaction with no marker after it.

    ``producer_epoch`` is the producer's epoch as Kafka holds it (its latest batch's);
    ``first_timestamp`` and ``last_timestamp`` are the ``maxTimestamp`` of its first and latest
    batch (``lastTimestamp``, what ``kafka-transactions.sh`` ages it by). ``from_snapshot``: its
    first batches are not in the evidence; it begins where the producer snapshot says.
    """

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int
    batches: int
    first_timestamp: int
    last_timestamp: int
    from_snapshot: bool = False
    snapshot: SnapshotView | None = None


@dataclass(frozen=True, slots=True)
class PartitionTransactions:
    """One replica's open transactions (by first offset) and its last stable offset.

    ``end_offset`` is the log end at the point read; ``newest_timestamp`` the latest batch time
    read (``None``: none). ``lso_reason`` is one of the ``LSO_*`` names.
    """

    topic: str
    partition: int
    source: str
    path: str
    open: tuple[OpenTransaction, ...]
    last_stable_offset: int
    lso_reason: str
    high_watermark: int | None
    log_start_offset: int
    end_offset: int
    newest_timestamp: int | None


class _Producer:
    """A producer's entry while replaying (``ProducerStateEntry``); mutable, never handed out."""

    __slots__ = ("epoch", "first", "last", "batches", "first_ts", "last_ts", "from_snapshot")

    def __init__(self) -> None:
        self.epoch = NO_PRODUCER_EPOCH
        self.first: int | None = None      # currentTxnFirstOffset
        self.last = self.batches = self.first_ts = self.last_ts = 0
        self.from_snapshot = False

    def open(self, first: int, last: int, first_ts: int, last_ts: int, *, batches: int = 1,
             from_snapshot: bool = False) -> None:
        self.first, self.last, self.first_ts, self.last_ts = first, last, first_ts, last_ts
        self.batches, self.from_snapshot = batches, from_snapshot


def open_transactions(log: PartitionLog, *, at_time: int | None = None) -> PartitionTransactions:
    """The transactions open at the end of ``log`` (or at the last batch before one stamped after
    ``at_time``) and its last stable offset (module docstring for the rules)."""
    batches = batches_until(log, at_time=at_time)
    end = batches[-1].next_offset if batches else log.log_start_offset
    if at_time is None:
        end = max(end, log.log_end_offset)
    snapshot = log.producer_state.snapshot
    if snapshot is not None and snapshot[1] > end:   # written after the point read
        snapshot = None
    entries = {e.producer_id: e for e in log.producer_state.entries} if snapshot else {}
    first_seen = batches[0].base_offset if batches else end
    producers: dict[int, _Producer] = {}
    for e in entries.values():   # transactions begun before the evidence (loadFromSnapshot)
        if NO_TXN < e.current_txn_first_offset < first_seen:
            p = producers[e.producer_id] = _Producer()
            p.epoch = e.producer_epoch
            p.open(e.current_txn_first_offset, max(e.last_offset, e.current_txn_first_offset), e.timestamp,
                   e.timestamp, batches=0, from_snapshot=True)
    completed: list[tuple[int, int]] = []   # (first offset, marker offset)
    for b in batches:
        if b.producer_id > NO_PRODUCER_ID:
            _append(log, b, producers, completed)
    high_watermark = _high_watermark(log, end, at_time)
    bound = high_watermark if high_watermark is not None else end
    found = tuple(sorted((_open(pid, p, snapshot, entries) for pid, p in producers.items() if p.first is not None),
                         key=lambda t: (t.first_offset, t.producer_id)))
    unstable = [(t.first_offset, LSO_OPEN_TRANSACTION) for t in found]
    unstable += [(first, LSO_UNREPLICATED_TRANSACTION) for first, marker in completed if marker >= bound]
    lso, reason = bound, LSO_HIGH_WATERMARK if high_watermark is not None else LSO_LOG_END
    if unstable:
        first, why = min(unstable)
        first = max(first, log.log_start_offset)   # maybeIncrementFirstUnstableOffset
        if first < bound:
            lso, reason = first, why
    topic, partition = log.key or (log.name, NO_PARTITION)
    return PartitionTransactions(topic, partition, log.label, log.path, found, lso, reason, high_watermark,
                                 log.log_start_offset, end,
                                 max((b.max_timestamp for b in batches), default=None))


def _append(log: PartitionLog, b: RecordBatch, producers: dict[int, _Producer], completed: list) -> None:
    """``ProducerAppendInfo.append`` of one batch of a producer (module docstring)."""
    if b.is_control:
        marker = log.marker(b)
        if marker is None or marker.control_type not in (CONTROL_ABORT, CONTROL_COMMIT):
            return   # an empty control batch, or none Kafka reads a marker from
        p = producers.setdefault(b.producer_id, _Producer())
        if p.first is not None:
            completed.append((p.first, b.base_offset))
        p.epoch, p.first = b.producer_epoch, None
        return
    p = producers.setdefault(b.producer_id, _Producer())
    p.epoch = b.producer_epoch
    if p.first is None:
        if b.is_transactional:
            p.open(b.base_offset, b.last_offset, b.max_timestamp, b.max_timestamp)
    elif b.is_transactional:
        p.last, p.last_ts = b.last_offset, b.max_timestamp
        p.batches += 1


def _open(producer_id: int, p: _Producer, snapshot: tuple[str, int] | None, entries: dict) -> OpenTransaction:
    view = None
    if snapshot is not None and snapshot[1] > p.first:
        entry = entries.get(producer_id)
        view = SnapshotView(snapshot[0], snapshot[1], None if entry is None else entry.current_txn_first_offset)
    return OpenTransaction(producer_id, p.epoch, p.first, p.last, p.batches, p.first_ts, p.last_ts,
                           p.from_snapshot, view)


def _high_watermark(log: PartitionLog, end: int, at_time: int | None) -> int | None:
    """The checkpoint's high watermark between the log start and ``end`` (a loading broker's
    ``updateHighWatermark``); ``None`` without a checkpoint or at a point in the past."""
    if at_time is not None or log.high_watermark is None:
        return None
    return loaded_high_watermark(log.high_watermark, log.log_start_offset, end)
