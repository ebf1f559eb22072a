"""Open transactions and the last stable offset of one replica, as a broker rebuilds them:
``ProducerAppendInfo.append``/``appendDataBatch``/``appendEndTxnMarker``, ``ProducerStateManager``
(``firstUnstableOffset``, ``removeUnreplicatedTransactions``, ``loadFromSnapshot``),
``UnifiedLog.scala`` (``lastStableOffset``, ``maybeIncrementFirstUnstableOffset``); each rule with
its counter-case, expected values from those methods."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.log.open_transactions import (LSO_HIGH_WATERMARK, LSO_LOG_END, LSO_OPEN_TRANSACTION,
                                                     LSO_UNREPLICATED_TRANSACTION, SnapshotView, open_transactions)
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT
from tests.builders.transactions import (TS, data, empty_control, marker, read_log, snapshot_entry,
                                                write_partition)
from tests.conftest import FIXTURES


def _open(tmp_path: Path, batches, **kw):
    at_time = kw.pop("at_time", None)
    return open_transactions(read_log(write_partition(tmp_path, "t-0", batches, **kw)), at_time=at_time)


def _summary(result) -> list[tuple[int, int, int, int]]:
    return [(t.producer_id, t.producer_epoch, t.first_offset, t.last_offset) for t in result.open]


@pytest.mark.parametrize("batches, expected", [
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True)], [(5, 0, 0, 1)], id="a transactional batch opens"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), marker(2, 5, CONTROL_COMMIT)], [],
                 id="a COMMIT marker closes"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), marker(2, 5, CONTROL_ABORT)], [],
                 id="an ABORT marker closes"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), marker(2, 6, CONTROL_ABORT)], [(5, 0, 0, 1)],
                 id="another producer's marker does not"),
    pytest.param([data(0, 2, pid=5, epoch=3, txn=True), marker(2, 5, CONTROL_ABORT, epoch=1)], [],
                 id="a marker of an older epoch closes too (REPLICATION only warns)"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), empty_control(2, 5)], [(5, 0, 0, 1)],
                 id="an empty control batch closes nothing"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), data(2, 1, pid=5, epoch=1, txn=True)], [(5, 1, 0, 2)],
                 id="a newer epoch joins the open transaction (currentTxnFirstOffset stays)"),
    pytest.param([data(0, 1, pid=5, epoch=0, txn=True), data(1, 1, pid=5, epoch=0)], [(5, 0, 0, 0)],
                 id="a non-transactional batch while open is not counted in it"),
    pytest.param([data(0, 1, pid=5, epoch=0)], [], id="an idempotent batch opens nothing"),
    pytest.param([data(0, 1, txn=True)], [], id="a batch without producer id opens nothing"),
    pytest.param([data(0, 1, pid=5, epoch=0, txn=True), marker(1, 5, CONTROL_COMMIT),
                  data(2, 1, pid=5, epoch=0, txn=True)], [(5, 0, 2, 2)], id="the next transaction opens anew"),
])
def test_append_opens_and_closes_transactions(tmp_path: Path, batches, expected) -> None:
    assert _summary(_open(tmp_path, batches)) == expected


@pytest.mark.parametrize("batches, hw, expected", [
    pytest.param([data(0, 2), data(2, 2, pid=5, epoch=0, txn=True), data(4, 1)], 5, (2, LSO_OPEN_TRANSACTION),
                 id="the first offset of the open transaction"),
    pytest.param([data(0, 2), data(2, 2, pid=5, epoch=0, txn=True), data(4, 1)], 1, (1, LSO_HIGH_WATERMARK),
                 id="the high watermark when lower"),
    pytest.param([data(0, 2), data(2, 2, pid=5, epoch=0, txn=True)], 2, (2, LSO_HIGH_WATERMARK),
                 id="the high watermark when equal"),
    pytest.param([data(0, 2)], 1, (1, LSO_HIGH_WATERMARK), id="the high watermark without transactions"),
    pytest.param([data(0, 2)], None, (2, LSO_LOG_END), id="the log end without a checkpoint"),
    pytest.param([data(0, 2)], 9, (2, LSO_HIGH_WATERMARK), id="a checkpoint beyond the log end is capped"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), marker(2, 5, CONTROL_COMMIT), data(3, 1)], 2,
                 (0, LSO_UNREPLICATED_TRANSACTION), id="a marker at the high watermark: not yet replicated"),
    pytest.param([data(0, 2, pid=5, epoch=0, txn=True), marker(2, 5, CONTROL_COMMIT), data(3, 1)], 3,
                 (3, LSO_HIGH_WATERMARK), id="a marker below the high watermark: replicated"),
])
def test_the_last_stable_offset(tmp_path: Path, batches, hw, expected) -> None:
    result = _open(tmp_path, batches, hw=hw)
    assert (result.last_stable_offset, result.lso_reason) == expected


def test_a_transaction_begun_before_the_log_start_comes_from_the_snapshot(tmp_path: Path) -> None:
    # retention deleted offsets 0-9; the snapshot at 12 says producer 5's transaction began at 5
    batches = [data(10, 2), data(12, 1, pid=5, epoch=2, txn=True, ts=TS + 60_000)]
    result = _open(tmp_path, batches, hw=13, snapshot=(12, [snapshot_entry(5, 2, 5, last_offset=9, ts=TS + 5000)]))
    (t,) = result.open
    assert (t.producer_id, t.producer_epoch, t.first_offset, t.last_offset, t.batches, t.from_snapshot,
            t.first_timestamp, t.last_timestamp) == (5, 2, 5, 12, 1, True, TS + 5000, TS + 60_000)
    assert t.snapshot == SnapshotView(t.snapshot.path, 12, 5)
    # maybeIncrementFirstUnstableOffset: the first unstable offset is raised to the log start
    assert (result.last_stable_offset, result.lso_reason, result.log_start_offset) == (10, LSO_OPEN_TRANSACTION, 10)


def test_a_transaction_only_the_snapshot_shows(tmp_path: Path) -> None:
    result = _open(tmp_path, [data(10, 2)], hw=12, snapshot=(12, [snapshot_entry(5, 2, 5, last_offset=9, ts=TS + 7)]))
    (t,) = result.open
    assert (t.producer_epoch, t.first_offset, t.last_offset, t.batches, t.from_snapshot, t.first_timestamp,
            t.last_timestamp) == (2, 5, 9, 0, True, TS + 7, TS + 7)


def test_the_next_transaction_after_one_from_the_snapshot_is_the_logs(tmp_path: Path) -> None:
    batches = [marker(10, 5, CONTROL_ABORT, epoch=2), data(11, 1, pid=5, epoch=2, txn=True)]
    result = _open(tmp_path, batches, hw=12, snapshot=(10, [snapshot_entry(5, 2, 5, last_offset=9)]))
    assert [(t.first_offset, t.from_snapshot) for t in result.open] == [(11, False)]


def test_a_snapshot_without_an_open_transaction_opens_nothing(tmp_path: Path) -> None:
    result = _open(tmp_path, [data(10, 2)], hw=12, snapshot=(12, [snapshot_entry(5, 2, -1, last_offset=9)]))
    assert (result.open, result.last_stable_offset) == ((), 12)


def test_a_snapshot_beyond_the_point_read_is_not_used(tmp_path: Path) -> None:
    result = _open(tmp_path, [data(10, 2, ts=TS), data(12, 1, ts=TS + 9000)], at_time=TS,
                   snapshot=(13, [snapshot_entry(5, 2, 5, last_offset=9)]))
    assert (result.open, result.end_offset) == ((), 12)


@pytest.mark.parametrize("snapshot_at, expected", [
    pytest.param(3, 0, id="a snapshot after its start covers it"),
    pytest.param(0, None, id="a snapshot at its first offset does not"),
])
def test_what_the_producer_snapshot_says(tmp_path: Path, snapshot_at, expected) -> None:
    result = _open(tmp_path, [data(0, 2, pid=5, epoch=0, txn=True), data(2, 1)],
                   snapshot=(snapshot_at, [snapshot_entry(5, 0, 0, last_offset=1)]))
    (t,) = result.open
    assert (t.from_snapshot, t.batches) == (False, 1)
    if expected is None:
        assert t.snapshot is None
    else:
        assert t.snapshot == SnapshotView(str(tmp_path / "t-0" / f"{snapshot_at:020d}.snapshot"), snapshot_at, expected)


def test_a_snapshot_without_the_producer_says_so(tmp_path: Path) -> None:
    result = _open(tmp_path, [data(0, 2, pid=5, epoch=0, txn=True), data(2, 1)],
                   snapshot=(3, [snapshot_entry(6, 0, -1)]))
    assert result.open[0].snapshot.current_txn_first_offset is None


def test_batches_of_a_transaction_are_counted(tmp_path: Path) -> None:
    batches = [data(0, 2, pid=5, epoch=0, txn=True), data(2, 1), data(3, 1, pid=5, epoch=1, txn=True),
               data(4, 1, pid=5, epoch=1, txn=True)]
    (t,) = _open(tmp_path, batches).open
    assert (t.batches, t.last_offset, t.producer_epoch) == (3, 4, 1)


def test_a_directory_not_named_topic_partition(tmp_path: Path) -> None:
    part = write_partition(tmp_path, "copied", [data(0, 1, pid=5, epoch=0, txn=True)])
    result = open_transactions(read_log(part))
    assert (result.topic, result.partition, _summary(result)) == ("copied", -1, [(5, 0, 0, 0)])


def test_at_time_stops_before_the_first_batch_stamped_later(tmp_path: Path) -> None:
    batches = [data(0, 2, pid=5, epoch=0, txn=True, ts=TS), marker(2, 5, CONTROL_COMMIT, ts=TS + 10),
               data(3, 1, ts=TS + 5)]
    assert _summary(_open(tmp_path, batches, hw=4, at_time=TS + 9)) == [(5, 0, 0, 1)]
    assert _summary(open_transactions(read_log(tmp_path / "t-0"), at_time=TS + 10)) == []
    result = open_transactions(read_log(tmp_path / "t-0"), at_time=TS + 9)
    assert (result.end_offset, result.high_watermark, result.lso_reason) == (2, None, LSO_OPEN_TRANSACTION)


def test_the_fixture_partitions() -> None:
    broker = FIXTURES / "transactions" / "broker-1"
    t0 = open_transactions(read_log(broker / "transfers-0"))
    t1 = open_transactions(read_log(broker / "transfers-1"))
    assert _summary(t0) == [(8003, 0, 7, 8), (8002, 0, 11, 12)]
    assert [t.snapshot.current_txn_first_offset for t in t0.open] == [7, 11]
    assert _summary(t1) == [(8100, 0, 6, 6), (8002, 0, 7, 8)]
    assert (t0.last_stable_offset, t1.last_stable_offset) == (7, 6)
    assert (t0.path, t0.source, t0.high_watermark, t0.end_offset, t0.newest_timestamp) == \
        (str(broker / "transfers-0"), "broker-1", 14, 14, TS + 30 * 60_000)
