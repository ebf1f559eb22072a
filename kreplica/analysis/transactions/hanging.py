"""Hanging transactions, offline: open transactions judged against the coordinator's state.

A transaction open in a partition holds its last stable offset (LSO) at its first offset until a
COMMIT or ABORT marker closes it; consumers with ``isolation.level=read_committed`` read no
further. The coordinator writes the markers to the partitions its transaction names. A
transaction is *hanging* when no marker will come, and ``kafka-transactions.sh find-hanging``
(``tools/src/main/java/org/apache/kafka/tools/TransactionsCommand.java``,
``FindHangingTransactionsCommand``) finds them on a live cluster: among the open transactions
(``DescribeProducers``) idle for longer than the maximum transaction timeout (15 minutes by
default), those whose producer id no transactional id uses (``ListTransactions`` filtered by
producer id), whose transactional id is unknown (``DescribeTransactions``), or whose
coordinator's transaction does not name the partition (``TransactionDescription.topicPartitions``:
the partitions of an ``Ongoing`` transaction, or those still awaiting markers in
``PrepareCommit``/``PrepareAbort``; none in the other states).

Offline the coordinator's state is the replay of ``__transaction_state``
(:mod:`kreplica.model.coordinator.transactions`) and the producers' state the replay of each data
partition (:mod:`kreplica.analysis.log.open_transactions`). :func:`judge` applies, in order:

1. the coordinator's transaction is pending (``Ongoing``, ``PrepareCommit``, ``PrepareAbort``,
   ``PrepareEpochFence``) and names the partition: a marker will come (one for a newer epoch
   closes it too: ``appendEndTxnMarker`` takes any epoch) -- *ongoing*;
2. no transactional id has the producer id, but one moved on from it (its
   ``previous_producer_id``, KIP-890: the producer id was rotated when the epoch ran out) --
   hanging, ``producer_id_replaced``; no transactional id has it at all -- hanging,
   ``no_transactional_id``, when the evidence holds every ``__transaction_state`` partition
   (``transaction.state.log.num.partitions``), else ``coordinator_partition_missing`` (not called
   hanging: the transactional id may live in a partition not given);
3. the coordinator is at a newer epoch than the transaction's -- hanging, ``producer_fenced`` (an
   ``InitProducerId`` or the coordinator's timeout abort bumped it); except with transaction
   version 2 (KIP-890 part 2: every transaction ends with an epoch bump, ``prepareAbortOrCommit``),
   where the epoch just after it, in ``Ongoing`` or ``Empty``, means its transaction ended --
   hanging, ``transaction_complete``;
4. the coordinator is at an older epoch: its record of this transaction is not in the evidence
   (copies taken at different times) -- ``coordinator_behind``, not called hanging;
5. same epoch: a pending transaction that does not name the partition -- hanging,
   ``partition_not_in_transaction``; ``CompleteCommit``, ``CompleteAbort``, ``Empty`` or ``Dead``
   -- hanging, ``transaction_complete``.

Then, for a transaction not found hanging: open for longer than ``transaction.max.timeout.ms``
(measured from its first batch) -- hanging, ``timed_out``: the coordinator aborts a transaction
after its own timeout, at most that. ``find-hanging`` only looks at transactions idle for longer
than the timeout (a guard against transactions in flight on a live cluster); offline the evidence
is a stopped picture and the coordinator's rules need no such guard. :func:`find_hanging_lists`
says whether the live tool would list a transaction in the state the evidence shows.

The epoch a coordinator record's transaction wrote its data with (:func:`data_epoch`) is its
producer epoch, less one in ``PrepareCommit``, ``PrepareAbort``, ``CompleteCommit`` and
``CompleteAbort`` under transaction version 2, which bumps it when preparing the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.analysis.log.open_transactions import LSO_OPEN_TRANSACTION, OpenTransaction, PartitionTransactions
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.coordinator.transactions import (COMPLETE_ABORT, COMPLETE_COMMIT, EMPTY, ONGOING, PREPARE_ABORT,
                                               PREPARE_COMMIT, PREPARE_EPOCH_FENCE, TransactionLogState,
                                               TransactionMetadata)

#: ``transaction.max.timeout.ms`` (``TransactionStateManagerConfig``): 15 minutes
DEFAULT_TRANSACTION_MAX_TIMEOUT_MS = 900_000
#: ``transaction.state.log.num.partitions`` (``TransactionLogConfig``)
DEFAULT_TRANSACTION_STATE_PARTITIONS = 50
#: ``TransactionVersion.supportsEpochBump``: transaction version 2 bumps the epoch per transaction
EPOCH_BUMP_VERSION = 2

#: statuses of an open transaction
HANGING, ONGOING_STATUS, UNDECIDED = "hanging", "ongoing", "undecided"
#: why a transaction is hanging
PRODUCER_ID_REPLACED = "producer_id_replaced"
NO_TRANSACTIONAL_ID = "no_transactional_id"
PRODUCER_FENCED = "producer_fenced"
PARTITION_NOT_IN_TRANSACTION = "partition_not_in_transaction"
TRANSACTION_COMPLETE = "transaction_complete"
TIMED_OUT = "timed_out"
#: why the evidence cannot decide
COORDINATOR_PARTITION_MISSING = "coordinator_partition_missing"
COORDINATOR_BEHIND = "coordinator_behind"

#: states whose transaction still expects markers: ``DescribeTransactions`` lists their partitions
PENDING_STATES = frozenset({ONGOING, PREPARE_COMMIT, PREPARE_ABORT, PREPARE_EPOCH_FENCE})
#: states a transaction version 2 record carries the bumped epoch in (``prepareAbortOrCommit``)
BUMPED_STATES = frozenset({PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT})
#: states in which a transaction version 2 coordinator has moved on to the next transaction
NEXT_TRANSACTION_STATES = frozenset({ONGOING, EMPTY})


@dataclass(frozen=True, slots=True)
class CoordinatorView:
    """The coordinator partitions in the evidence, indexed by the producer ids their
    transactional ids use now (``by_producer_id``) and used before a rotation
    (``by_previous_producer_id``); ``complete``: every partition of
    ``transaction.state.log.num.partitions`` is there."""

    states: tuple[TransactionLogState, ...]
    partition_count: int
    by_producer_id: Mapping[int, TransactionMetadata]
    by_previous_producer_id: Mapping[int, TransactionMetadata]

    @property
    def present(self) -> frozenset[int]:
        return frozenset(s.coordinator_partition for s in self.states)

    @property
    def complete(self) -> bool:
        return set(range(self.partition_count)) <= self.present

    @property
    def transactions(self) -> tuple[TransactionMetadata, ...]:
        return tuple(sorted((t for s in self.states for t in s.transactions), key=lambda t: t.transactional_id))


def coordinator_view(states: Iterable[TransactionLogState],
                     partition_count: int = DEFAULT_TRANSACTION_STATE_PARTITIONS) -> CoordinatorView:
    """Index the coordinator's transactions by producer id (``ListTransactions`` filtered by
    producer id matches the current one); of two ids with the same producer id (none should
    share one) the later updated wins, the first read of equals."""
    states = tuple(states)
    current: dict[int, TransactionMetadata] = {}
    previous: dict[int, TransactionMetadata] = {}
    for s in states:
        for t in s.transactions:
            _keep_latest(current, t.producer_id, t)
            if t.previous_producer_id is not None:   # looked up only when no id uses the producer id now
                _keep_latest(previous, t.previous_producer_id, t)
    return CoordinatorView(states, partition_count, current, previous)


def _keep_latest(index: dict[int, TransactionMetadata], producer_id: int, t: TransactionMetadata) -> None:
    held = index.get(producer_id)
    if held is None or t.transaction_last_update_timestamp_ms > held.transaction_last_update_timestamp_ms:
        index[producer_id] = t


@dataclass(frozen=True, slots=True)
class Judgement:
    """A status (``hanging``, ``ongoing``, ``undecided``), why, and the coordinator record it rests on."""

    status: str
    reason: str | None
    metadata: TransactionMetadata | None = None


def data_epoch(meta: TransactionMetadata) -> int:
    """The producer epoch the record's transaction wrote its data with (module docstring)."""
    if meta.client_transaction_version >= EPOCH_BUMP_VERSION and meta.state in BUMPED_STATES:
        return meta.producer_epoch - 1
    return meta.producer_epoch


def judge(txn: OpenTransaction, topic: str, partition: int, view: CoordinatorView, *, age_ms: int,
          max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS) -> Judgement:
    """Whether ``txn``, open in ``topic``-``partition``, is hanging (module docstring, rules 1-5,
    then the timeout)."""
    found = _by_coordinator(txn, topic, partition, view)
    if found.status != HANGING and age_ms > max_timeout_ms:
        return Judgement(HANGING, TIMED_OUT, found.metadata)
    return found


def _by_coordinator(txn: OpenTransaction, topic: str, partition: int, view: CoordinatorView) -> Judgement:
    meta = view.by_producer_id.get(txn.producer_id)
    if meta is None:
        replaced = view.by_previous_producer_id.get(txn.producer_id)
        if replaced is not None:
            return Judgement(HANGING, PRODUCER_ID_REPLACED, replaced)
        if view.complete:
            return Judgement(HANGING, NO_TRANSACTIONAL_ID)
        return Judgement(UNDECIDED, COORDINATOR_PARTITION_MISSING)
    if meta.state in PENDING_STATES and meta.names(topic, partition):
        return Judgement(ONGOING_STATUS, None, meta)
    epoch = data_epoch(meta)
    if epoch > txn.producer_epoch:
        ended = (meta.client_transaction_version >= EPOCH_BUMP_VERSION and meta.state in NEXT_TRANSACTION_STATES
                 and epoch == txn.producer_epoch + 1)
        return Judgement(HANGING, TRANSACTION_COMPLETE if ended else PRODUCER_FENCED, meta)
    if epoch < txn.producer_epoch:
        return Judgement(UNDECIDED, COORDINATOR_BEHIND, meta)
    if meta.state in PENDING_STATES:
        return Judgement(HANGING, PARTITION_NOT_IN_TRANSACTION, meta)
    return Judgement(HANGING, TRANSACTION_COMPLETE, meta)


def find_hanging_lists(txn: OpenTransaction, topic: str, partition: int, view: CoordinatorView, *, now: int,
                       max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS) -> bool | None:
    """Whether ``kafka-transactions.sh find-hanging --max-transaction-timeout`` (the same timeout)
    would list ``txn`` on a cluster in this state: idle (since ``lastTimestamp``) for longer than
    the timeout, and its producer id used by no transactional id, or the transactional id's
    transaction not naming the partition. ``None`` when the answer lies in a coordinator
    partition the evidence lacks."""
    if now - txn.last_timestamp <= max_timeout_ms:
        return False
    meta = view.by_producer_id.get(txn.producer_id)
    if meta is None:
        return True if view.complete else None
    return not (meta.state in PENDING_STATES and meta.names(topic, partition))


@dataclass(frozen=True, slots=True)
class TransactionVerdict:
    """One open transaction of one replica, judged.

    ``age_ms`` is the time from its first batch to ``now`` (the evidence time).
    ``last_stable_offset`` is the replica's; ``pins_lso`` whether this transaction is what holds
    it. ``stalled`` are the committed offsets of groups at or above the LSO: consumers reading
    with ``isolation.level=read_committed`` stay at the LSO (given for hanging transactions).
    """

    topic: str
    partition: int
    source: str
    path: str
    transaction: OpenTransaction
    status: str
    reason: str | None
    coordinator: TransactionMetadata | None
    age_ms: int
    last_stable_offset: int
    lso_reason: str
    pins_lso: bool
    find_hanging: bool | None
    stalled: tuple[CommittedOffset, ...] = ()

    @property
    def transactional_id(self) -> str | None:
        return self.coordinator.transactional_id if self.coordinator is not None else None

    @property
    def hanging(self) -> bool:
        return self.status == HANGING


def stalled_groups(committed: Iterable[CommittedOffset], topic: str, partition: int,
                   last_stable_offset: int) -> tuple[CommittedOffset, ...]:
    """The groups' committed offsets of ``topic``-``partition`` at or above the LSO (expired ones
    are gone: the coordinator removed them), by group."""
    return tuple(sorted((c for c in committed if c.topic == topic and c.partition == partition and not c.expired
                         and c.offset >= last_stable_offset), key=lambda c: (c.group, c.source)))


def judge_partitions(partitions: Iterable[PartitionTransactions], view: CoordinatorView, *, now: int,
                     max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
                     committed: Iterable[CommittedOffset] = ()) -> tuple[TransactionVerdict, ...]:
    """Every open transaction of ``partitions`` judged (:func:`judge`), hanging ones with the
    groups they stall among ``committed``; in the order of the partitions and their transactions."""
    committed = tuple(committed)
    out = []
    for p in partitions:
        for txn in p.open:
            age = now - txn.first_timestamp
            j = judge(txn, p.topic, p.partition, view, age_ms=age, max_timeout_ms=max_timeout_ms)
            stalled = stalled_groups(committed, p.topic, p.partition, p.last_stable_offset) if j.status == HANGING else ()
            out.append(TransactionVerdict(
                p.topic, p.partition, p.source, p.path, txn, j.status, j.reason, j.metadata, age,
                p.last_stable_offset, p.lso_reason, _pins(txn, p),
                find_hanging_lists(txn, p.topic, p.partition, view, now=now, max_timeout_ms=max_timeout_ms), stalled))
    return tuple(out)


def _pins(txn: OpenTransaction, p: PartitionTransactions) -> bool:
    """Whether ``txn`` is what holds ``p``'s LSO (raised to the log start when it began below it)."""
    return p.lso_reason == LSO_OPEN_TRANSACTION and max(txn.first_offset, p.log_start_offset) == p.last_stable_offset
