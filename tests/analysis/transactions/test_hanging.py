"""Hanging transactions judged offline (``kreplica.analysis.transactions.hanging``): each rule beside
the counter-case that must not match. The rules come from ``TransactionsCommand.java``
(``FindHangingTransactionsCommand.filterHangingTransactions``, ``collectCandidateOpenTransactions``),
``TransactionMetadata.scala`` (``prepareAbortOrCommit``, ``prepareFenceProducerEpoch``,
``prepareComplete``: the epochs each state is written with) and ``ProducerAppendInfo.java``
(``appendEndTxnMarker`` takes a marker of any epoch)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kreplica.analysis.transactions import hanging as h
from kreplica.analysis.log.open_transactions import LSO_HIGH_WATERMARK, LSO_OPEN_TRANSACTION, OpenTransaction, \
    PartitionTransactions
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.coordinator.transactions import TransactionLogState, TransactionMetadata

MAX = h.DEFAULT_TRANSACTION_MAX_TIMEOUT_MS
TXN = OpenTransaction(producer_id=5, producer_epoch=3, first_offset=10, last_offset=12, batches=2,
                      first_timestamp=1000, last_timestamp=2000)


def meta(state: str, *, pid: int = 5, epoch: int = 3, partitions=(("t", 0),), tv: int = 0,
         previous: int | None = None, tid: str = "app") -> TransactionMetadata:
    return TransactionMetadata(tid, pid, epoch, previous, None, 60_000, state,
                               partitions if state in h.PENDING_STATES else (), 0, 0, tv, 1, 0, 0, "broker-1")


def view(*metas: TransactionMetadata, partitions: int = 1) -> h.CoordinatorView:
    """The coordinator holding ``metas`` in partition 0 of ``partitions``."""
    state = TransactionLogState(0, "broker-1", "p", tuple(metas), len(metas), len(metas), None, None, ())
    return h.coordinator_view([state], partitions)


def spec(*metas: TransactionMetadata, partitions: int = 1) -> tuple:
    """A table's coordinator, built by :func:`view` inside the test (where mutmut sees it run)."""
    return metas, partitions


def _judge(coordinator: tuple, *, age: int = 0, txn: OpenTransaction = TXN, partition: int = 0):
    """The status and reason, and the transactional id the judgement rests on."""
    metas, partitions = coordinator
    j = h.judge(txn, "t", partition, view(*metas, partitions=partitions), age_ms=age, max_timeout_ms=MAX)
    return j.status, j.reason, j.metadata.transactional_id if j.metadata else None


@pytest.mark.parametrize("coordinator, expected", [
    # rule 1: the coordinator's pending transaction names the partition: a marker will come
    pytest.param(spec(meta("Ongoing")), (h.ONGOING_STATUS, None), id="Ongoing names it"),
    pytest.param(spec(meta("PrepareCommit")), (h.ONGOING_STATUS, None), id="PrepareCommit names it"),
    pytest.param(spec(meta("PrepareAbort")), (h.ONGOING_STATUS, None), id="PrepareAbort names it"),
    pytest.param(spec(meta("PrepareEpochFence")), (h.ONGOING_STATUS, None), id="PrepareEpochFence names it"),
    pytest.param(spec(meta("Ongoing", epoch=5)), (h.ONGOING_STATUS, None),
                 id="a newer epoch's transaction names it: its marker closes this one"),
    pytest.param(spec(meta("Ongoing", partitions=(("t", 1),))), (h.HANGING, h.PARTITION_NOT_IN_TRANSACTION),
                 id="counter: Ongoing names another partition"),
    pytest.param(spec(meta("Ongoing", epoch=5, partitions=(("t", 1),))), (h.HANGING, h.PRODUCER_FENCED),
                 id="counter: a newer epoch's transaction names another partition"),
    # rule 2: the producer id
    pytest.param(spec(meta("CompleteCommit", pid=9, previous=5)), (h.HANGING, h.PRODUCER_ID_REPLACED),
                 id="the transactional id moved on from the producer id"),
    pytest.param(spec(meta("CompleteCommit", pid=9, previous=4), partitions=2),
                 (h.UNDECIDED, h.COORDINATOR_PARTITION_MISSING), id="counter: it moved on from another producer id"),
    pytest.param(spec(meta("CompleteCommit", pid=9)), (h.HANGING, h.NO_TRANSACTIONAL_ID),
                 id="no transactional id uses it, every partition read"),
    pytest.param(spec(meta("CompleteCommit", pid=9), partitions=2), (h.UNDECIDED, h.COORDINATOR_PARTITION_MISSING),
                 id="counter: no transactional id uses it, one of two partitions read: undecided"),
    # rule 3: a newer epoch
    pytest.param(spec(meta("Empty", epoch=4)), (h.HANGING, h.PRODUCER_FENCED),
                 id="Empty at the next epoch: InitProducerId fenced it"),
    pytest.param(spec(meta("CompleteAbort", epoch=4)), (h.HANGING, h.PRODUCER_FENCED),
                 id="CompleteAbort at the next epoch (transaction version 0): the coordinator fenced it"),
    pytest.param(spec(meta("CompleteAbort", epoch=4, tv=2)), (h.HANGING, h.TRANSACTION_COMPLETE),
                 id="counter: CompleteAbort at the next epoch under transaction version 2 is its own end"),
    pytest.param(spec(meta("Ongoing", epoch=4, tv=2, partitions=(("t", 1),))), (h.HANGING, h.TRANSACTION_COMPLETE),
                 id="transaction version 2 Ongoing at the next epoch: its transaction ended"),
    pytest.param(spec(meta("Empty", epoch=4, tv=2)), (h.HANGING, h.TRANSACTION_COMPLETE),
                 id="transaction version 2 Empty at the next epoch: its transaction ended"),
    pytest.param(spec(meta("Ongoing", epoch=5, tv=2, partitions=(("t", 1),))), (h.HANGING, h.PRODUCER_FENCED),
                 id="counter: transaction version 2 two epochs on: fenced"),
    pytest.param(spec(meta("CompleteAbort", epoch=5, tv=2)), (h.HANGING, h.PRODUCER_FENCED),
                 id="counter: transaction version 2 CompleteAbort two epochs on: fenced"),
    # rule 4: an older epoch
    pytest.param(spec(meta("CompleteCommit", epoch=2)), (h.UNDECIDED, h.COORDINATOR_BEHIND),
                 id="the coordinator's record is of an older epoch"),
    pytest.param(spec(meta("CompleteCommit", epoch=3, tv=2)), (h.UNDECIDED, h.COORDINATOR_BEHIND),
                 id="transaction version 2 CompleteCommit at the same epoch ended the transaction before"),
    # rule 5: the same epoch
    pytest.param(spec(meta("CompleteCommit")), (h.HANGING, h.TRANSACTION_COMPLETE), id="CompleteCommit"),
    pytest.param(spec(meta("CompleteAbort")), (h.HANGING, h.TRANSACTION_COMPLETE), id="CompleteAbort"),
    pytest.param(spec(meta("Empty")), (h.HANGING, h.TRANSACTION_COMPLETE), id="Empty"),
    pytest.param(spec(meta("Dead")), (h.HANGING, h.TRANSACTION_COMPLETE), id="Dead"),
    pytest.param(spec(meta("PrepareCommit", partitions=(("t", 1),))), (h.HANGING, h.PARTITION_NOT_IN_TRANSACTION),
                 id="PrepareCommit of other partitions"),
    pytest.param(spec(meta("PrepareCommit", epoch=4, tv=2, partitions=(("t", 1),))),
                 (h.HANGING, h.PARTITION_NOT_IN_TRANSACTION),
                 id="transaction version 2 PrepareCommit at the next epoch is this transaction's end"),
])
def test_the_coordinators_rules(coordinator: tuple, expected) -> None:
    tid = None if expected[1] in (h.NO_TRANSACTIONAL_ID, h.COORDINATOR_PARTITION_MISSING) else "app"
    assert _judge(coordinator) == (*expected, tid)


@pytest.mark.parametrize("coordinator, age, expected", [
    pytest.param(spec(meta("Ongoing")), MAX + 1, (h.HANGING, h.TIMED_OUT),
                 id="named by the coordinator, open longer than transaction.max.timeout.ms"),
    pytest.param(spec(meta("Ongoing")), MAX, (h.ONGOING_STATUS, None), id="counter: open exactly that long"),
    pytest.param(spec(partitions=2), MAX + 1, (h.HANGING, h.TIMED_OUT), id="coordinator evidence missing, open too long"),
    pytest.param(spec(partitions=2), MAX, (h.UNDECIDED, h.COORDINATOR_PARTITION_MISSING),
                 id="counter: coordinator evidence missing, open exactly that long"),
    pytest.param(spec(meta("CompleteCommit", epoch=2)), MAX + 1, (h.HANGING, h.TIMED_OUT),
                 id="coordinator behind, open too long"),
    pytest.param(spec(meta("CompleteCommit")), MAX + 1, (h.HANGING, h.TRANSACTION_COMPLETE),
                 id="the coordinator's rule says why before the timeout does"),
])
def test_the_timeout(coordinator, age, expected) -> None:
    assert _judge(coordinator, age=age)[:2] == expected
    assert _judge(coordinator, age=age)[2] == ("app" if coordinator[0] else None)


@pytest.mark.parametrize("state, tv, expected", [
    pytest.param("PrepareCommit", 2, 6, id="PrepareCommit, version 2: bumped"),
    pytest.param("CompleteAbort", 2, 6, id="CompleteAbort, version 2: bumped"),
    pytest.param("Ongoing", 2, 7, id="Ongoing, version 2: not bumped"),
    pytest.param("Empty", 2, 7, id="Empty, version 2: not bumped"),
    pytest.param("CompleteCommit", 1, 7, id="CompleteCommit, version 1: not bumped"),
])
def test_data_epoch(state, tv, expected) -> None:
    assert h.data_epoch(meta(state, epoch=7, tv=tv)) == expected


@pytest.mark.parametrize("coordinator, now, expected", [
    pytest.param(spec(meta("CompleteCommit")), 2000 + MAX, False,
                 id="idle exactly the timeout: not a candidate (find-hanging compares with >)"),
    pytest.param(spec(meta("CompleteCommit")), 2001 + MAX, True, id="idle longer, not named: listed"),
    pytest.param(spec(meta("Ongoing")), 2001 + MAX, False, id="idle longer, named: not listed"),
    pytest.param(spec(meta("Ongoing", partitions=(("t", 1),))), 2001 + MAX, True, id="named another partition"),
    pytest.param(spec(partitions=2), 2001 + MAX, None, id="no transactional id, partitions missing: unknown"),
    pytest.param(spec(), 2001 + MAX, True, id="no transactional id, every partition read"),
])
def test_what_find_hanging_would_list(coordinator, now, expected) -> None:
    metas, partitions = coordinator
    assert h.find_hanging_lists(TXN, "t", 0, view(*metas, partitions=partitions), now=now, max_timeout_ms=MAX) \
        is expected


def _offset(group: str, offset: int, *, partition: int = 0, expired: bool = False) -> CommittedOffset:
    return CommittedOffset(group, "t", partition, offset, None, "", 0, None, 0, 3, "broker-1", 3, expired=expired)


def test_the_groups_a_hanging_transaction_stalls() -> None:
    committed = [_offset("at", 10), _offset("above", 11), _offset("below", 9), _offset("gone", 12, expired=True),
                 _offset("elsewhere", 12, partition=1)]
    assert [c.group for c in h.stalled_groups(committed, "t", 0, 10)] == ["above", "at"]


def test_judge_partitions_joins_the_lso_and_the_stalled_groups() -> None:
    other = replace(TXN, producer_id=6, first_offset=20, last_offset=20)
    p = PartitionTransactions("t", 0, "broker-1", "p", (TXN, other), 10, LSO_OPEN_TRANSACTION, 30, 0, 30, 5000)
    v = view(meta("CompleteCommit"), meta("Ongoing", pid=6, tid="other", partitions=(("t", 0), ("u", 1))))
    first, second = h.judge_partitions([p], v, now=5000, committed=[_offset("g", 15)])
    assert (first.status, first.pins_lso, first.age_ms, first.transactional_id, [c.group for c in first.stalled]) == \
        (h.HANGING, True, 4000, "app", ["g"])
    assert (first.path, first.last_stable_offset, first.lso_reason, first.find_hanging) == \
        ("p", 10, LSO_OPEN_TRANSACTION, False)
    assert (second.status, second.pins_lso, second.stalled, second.transactional_id) == \
        (h.ONGOING_STATUS, False, (), "other")
    first, second = h.judge_partitions([p], v, now=2001 + MAX)
    assert (first.find_hanging, second.status, second.reason, second.find_hanging) == \
        (True, h.HANGING, h.TIMED_OUT, False)
    below_start = replace(p, open=(TXN,), log_start_offset=12, last_stable_offset=12)
    assert h.judge_partitions([below_start], v, now=5000)[0].pins_lso
    by_hw = replace(p, lso_reason=LSO_HIGH_WATERMARK)
    assert not h.judge_partitions([by_hw], v, now=5000)[0].pins_lso


def test_of_two_ids_with_one_producer_id_the_later_updated_counts() -> None:
    old = replace(meta("CompleteCommit", tid="old"), transaction_last_update_timestamp_ms=1)
    new = replace(meta("Ongoing", tid="new"), transaction_last_update_timestamp_ms=2)
    assert view(old, new).by_producer_id[5].transactional_id == "new"
    assert view(new, old).by_producer_id[5].transactional_id == "new"
    tie = replace(old, transactional_id="tie", transaction_last_update_timestamp_ms=2)
    assert view(new, tie).by_producer_id[5].transactional_id == "new"
    assert view(tie, new).by_producer_id[5].transactional_id == "tie"
