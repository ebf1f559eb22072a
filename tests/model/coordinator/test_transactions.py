"""``__transaction_state`` replayed as ``TransactionStateManager.loadTransactionMetadata`` loads it
(core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala,
TransactionLog.scala ``readTxnRecordKey``/``readTxnRecordValue``); each rule with its counter-case."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kreplica.formats.coordinator.records import TRANSACTION_STATE, build_value
from kreplica.formats.checksums import crc32c
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import ATTRIBUTES_OFFSET, CRC_OFFSET, build_batch
from kreplica.model.coordinator.transactions import latest_replicas, replay_transaction_state
from tests.builders.transactions import (TS, coordinator_records, read_log, txn_key, txn_value,
                                                write_partition)
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "transactions" / "broker-1" / f"{TRANSACTION_STATE}-0"


def _replay(tmp_path: Path, records, **cut):
    part = write_partition(tmp_path, f"{TRANSACTION_STATE}-0", coordinator_records(records))
    return replay_transaction_state(read_log(part), **cut)


def _states(state) -> dict[str, tuple]:
    return {t.transactional_id: (t.state, t.producer_id, t.producer_epoch, t.partitions) for t in state.transactions}


def test_the_fixture_loads_as_the_coordinator_loads_it() -> None:
    state = replay_transaction_state(read_log(FIXTURE))
    assert _states(state) == {
        "txn-aborted": ("CompleteAbort", 8001, 0, ()),
        "txn-committed": ("CompleteCommit", 8000, 0, ()),
        "txn-fenced": ("Empty", 8003, 2, ()),
        "txn-ongoing": ("Ongoing", 8002, 0, (("transfers", 0), ("transfers", 1))),
        "txn-v2": ("CompleteCommit", 8005, 1, ()),
    }
    assert (state.records, state.end_offset, state.kafka_stopped_at, state.findings) == (23, 23, None, ())
    ongoing = next(t for t in state.transactions if t.transactional_id == "txn-ongoing")
    assert (ongoing.previous_producer_id, ongoing.next_producer_id, ongoing.client_transaction_version,
            ongoing.value_version, ongoing.record_offset) == (7990, None, 2, 1, 22)


def test_the_fixture_holds_every_state_and_both_value_versions() -> None:
    log = read_log(FIXTURE)
    seen = set()
    versions = set()
    for offset in range(23):
        for t in replay_transaction_state(log, at_offset=offset).transactions:
            if t.record_offset == offset:
                seen.add(t.state)
                versions.add(t.value_version)
    assert seen == set(TRANSACTION_STATES.values())
    assert versions == {0, 1}


@pytest.mark.parametrize("records, expected", [
    pytest.param([(txn_key("a"), txn_value("Ongoing", 1, partitions=[("t", 0)])), (txn_key("a"), None)], {},
                 id="a tombstone removes the id"),
    pytest.param([(txn_key("a"), txn_value("Ongoing", 1, partitions=[("t", 0)])), (txn_key("b"), None)],
                 {"a": ("Ongoing", 1, 0, (("t", 0),))}, id="a tombstone of another id removes nothing"),
    pytest.param([(txn_key("a"), txn_value("Empty", 1, partitions=[("t", 0)]))], {"a": ("Empty", 1, 0, ())},
                 id="Empty keeps no partitions"),
    pytest.param([(txn_key("a"), txn_value("PrepareCommit", 1, partitions=[("t", 1), ("t", 0)]))],
                 {"a": ("PrepareCommit", 1, 0, (("t", 0), ("t", 1)))}, id="other states keep them"),
    pytest.param([(txn_key("a"), txn_value("Ongoing", 1)), (txn_key("a"), txn_value("CompleteAbort", 1, 1))],
                 {"a": ("CompleteAbort", 1, 1, ())}, id="the latest record wins"),
])
def test_records_apply_as_read_txn_record_value_reads_them(tmp_path: Path, records, expected) -> None:
    assert _states(_replay(tmp_path, records)) == expected


def test_a_version_0_value_has_no_previous_or_next_producer_id(tmp_path: Path) -> None:
    state = _replay(tmp_path, [(txn_key("a"), txn_value("Empty", 5, version=0, previous=4, next_id=6, tv=2))])
    t = state.transactions[0]
    assert (t.previous_producer_id, t.next_producer_id, t.client_transaction_version, t.value_version) == \
        (None, None, 0, 0)


def _unknown_type_key() -> bytes:
    return (7).to_bytes(2, "big") + txn_key("a")[2:]


@pytest.mark.parametrize("bad, kind, stops", [
    pytest.param((_unknown_type_key(), txn_value("Ongoing", 9)), "coordinator_unknown_record", False,
                 id="unknown key version: UnknownKey, ignored"),
    pytest.param((txn_key("x"), (2).to_bytes(2, "big") + txn_value("Ongoing", 9)[2:]), "coordinator_unknown_record",
                 True, id="unknown value version: IllegalStateException"),
    pytest.param((txn_key("x"), txn_value("Ongoing", 9, status=9)), "coordinator_unknown_record", True,
                 id="unknown state id: TransactionState.fromId throws"),
    pytest.param((txn_key("x"), txn_value("Ongoing", 9)[:-3]), "coordinator_invalid_record", True,
                 id="a value cut short"),
    pytest.param((None, txn_value("Ongoing", 9)), "coordinator_invalid_record", True,
                 id="a null key: require(record.hasKey)"),
])
def test_an_unreadable_record_is_a_finding_and_the_replay_goes_on(tmp_path: Path, bad, kind, stops) -> None:
    state = _replay(tmp_path, [(txn_key("a"), txn_value("Ongoing", 1)), bad, (txn_key("b"), txn_value("Empty", 2))])
    assert [f.kind for f in state.findings] == [kind]
    assert state.findings[0].details["offset"] == 1
    assert state.kafka_stopped_at == (1 if stops else None)
    assert set(_states(state)) == {"a", "b"}


def test_a_state_id_kafka_knows_is_no_finding(tmp_path: Path) -> None:
    state = _replay(tmp_path, [(txn_key("x"), txn_value("Ongoing", 9, status=7))])
    assert (state.findings, _states(state)["x"][0]) == ((), "PrepareEpochFence")


@pytest.mark.parametrize("cut, expected", [
    pytest.param({"at_offset": 1}, ("Ongoing", 2), id="at-offset is inclusive"),
    pytest.param({"at_offset": 0}, ("Empty", 1), id="at-offset before the record"),
    pytest.param({"at_time": TS + 1000}, ("Ongoing", 2), id="at-time keeps a batch stamped then"),
    pytest.param({"at_time": TS + 999}, ("Empty", 1), id="at-time stops before one stamped later"),
])
def test_a_point_cuts_the_replay(tmp_path: Path, cut, expected) -> None:
    state = _replay(tmp_path, [(txn_key("a"), txn_value("Empty", 1)), (txn_key("a"), txn_value("Ongoing", 1)),
                               (txn_key("a"), txn_value("CompleteCommit", 1))], **cut)
    assert (_states(state)["a"][0], state.end_offset) == expected


def test_the_replay_starts_at_the_log_start_offset(tmp_path: Path) -> None:
    part = write_partition(tmp_path, f"{TRANSACTION_STATE}-0",
                           coordinator_records([(txn_key("a"), txn_value("Ongoing", 1)),
                                                (txn_key("b"), txn_value("Ongoing", 2))]), log_start=1)
    assert set(_states(replay_transaction_state(read_log(part)))) == {"b"}


def test_the_replica_that_reaches_furthest_stands_for_a_partition(tmp_path: Path) -> None:
    records = [(txn_key("a"), txn_value("Ongoing", 1)), (txn_key("a"), txn_value("CompleteCommit", 1))]
    short = write_partition(tmp_path / "b1", f"{TRANSACTION_STATE}-0", coordinator_records(records[:1]))
    long = write_partition(tmp_path / "b2", f"{TRANSACTION_STATE}-0", coordinator_records(records))
    states = [replay_transaction_state(read_log(p)) for p in (short, long)]
    assert [s.path for s in latest_replicas(states)] == [str(long)]
    assert [s.path for s in latest_replicas(states[:1])] == [str(short)]


def test_build_value_round_trips_through_the_replay(tmp_path: Path) -> None:
    value = build_value(TRANSACTION_STATE, 0, 1, {
        "producer_id": 3, "previous_producer_id": 2, "next_producer_id": 4, "producer_epoch": 7,
        "transaction_timeout_ms": 5, "transaction_status": 2, "transaction_partitions": (),
        "transaction_last_update_timestamp_ms": 11, "transaction_start_timestamp_ms": 10,
        "client_transaction_version": 2})
    t = _replay(tmp_path, [(txn_key("a"), value)]).transactions[0]
    assert (t.producer_id, t.previous_producer_id, t.next_producer_id, t.producer_epoch, t.transaction_timeout_ms,
            t.state, t.transaction_last_update_timestamp_ms, t.transaction_start_timestamp_ms) == \
        (3, 2, 4, 7, 5, "PrepareCommit", 11, 10)


#: the batch header's recordCount field (``DefaultRecordBatch.RECORDS_COUNT_OFFSET``)
RECORD_COUNT_OFFSET = 57


# --- issue 27 §7: the rules the mutation run found untested -------------------------------------

def _batch(records, start: int, *, ts: int = TS, count: int | None = None) -> bytes:
    """One batch of ``records`` (key, value) from offset ``start``, as a coordinator appends
    several records at once; ``count`` declares another record count (CRC recomputed), so
    Kafka's ``DefaultRecordBatch`` iterator throws after the records present."""
    rs = [NewRecord(start + k, ts, key, value) for k, (key, value) in enumerate(records)]
    out = bytearray(build_batch(rs, base_offset=start, last_offset_delta=max(len(rs) - 1, 0), max_timestamp=ts))
    if count is not None:
        struct.pack_into(">i", out, RECORD_COUNT_OFFSET, count)
        struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def _replay_batches(tmp_path: Path, batches, name: str = f"{TRANSACTION_STATE}-3", **cut):
    return replay_transaction_state(read_log(write_partition(tmp_path, name, batches)), **cut)


def test_every_record_of_a_batch_is_replayed_past_a_tombstone_or_an_unreadable_record(tmp_path: Path) -> None:
    """``loadTransactionMetadata``: ``for (record <- batch.asScala)`` reads every record of the
    batch; a tombstone (``loadedTransactions.remove``), an ``UnknownKey`` ("Ignoring it") or a
    record kreplica reports goes on to the next record of the same batch."""
    state = _replay_batches(tmp_path, [_batch([
        (txn_key("a"), txn_value("Ongoing", 1)), (txn_key("a"), None), (txn_key("b"), txn_value("Ongoing", 2)),
        (_unknown_type_key(), txn_value("Ongoing", 9)), (txn_key("c"), txn_value("Ongoing", 3)),
        (txn_key("x"), txn_value("Ongoing", 9, status=9)), (txn_key("d"), txn_value("Ongoing", 4)),
        (txn_key("x"), txn_value("Ongoing", 9)[:-3]), (txn_key("e"), txn_value("Empty", 5)),
    ], 0)])
    assert sorted(_states(state)) == ["b", "c", "d", "e"]
    assert (state.records, state.end_offset, state.kafka_stopped_at) == (9, 9, 5)
    assert [f.details["offset"] for f in state.findings] == [3, 5, 7]


def test_the_first_record_kafka_throws_on_is_where_it_stopped(tmp_path: Path) -> None:
    """The loader's ``catch Throwable`` ends the load at the first throw: a second unknown state id
    (``TransactionState.fromId``) later does not move the stop."""
    state = _replay(tmp_path, [(txn_key("a"), txn_value("Ongoing", 1)), (txn_key("x"), txn_value("Ongoing", 9, status=9)),
                               (txn_key("y"), txn_value("Ongoing", 9, status=10))])
    assert state.kafka_stopped_at == 1
    assert [f.details for f in state.findings] == [{"offset": 1, "transaction_status": 9},
                                                   {"offset": 2, "transaction_status": 10}]


def test_an_unknown_state_id_is_reported_where_it_sits(tmp_path: Path) -> None:
    """``TransactionState.fromId`` throws IllegalStateException on an id it does not know: the
    exact finding (its text is output)."""
    part = write_partition(tmp_path, f"{TRANSACTION_STATE}-0", coordinator_records(
        [(txn_key("a"), txn_value("Ongoing", 1)), (txn_key("x"), txn_value("Ongoing", 9, status=9))]))
    log = read_log(part)
    state = replay_transaction_state(log)
    second = log.batches[1]
    assert second.position > 0
    f = state.findings[0]
    assert (f.kind, f.path, f.position, f.details) == ("coordinator_unknown_record", second.path, second.position,
                                                       {"offset": 1, "transaction_status": 9})
    assert f.message == ("offset 1: transactional id 'x' has transaction state id 9, which Kafka's "
                         "TransactionState.fromId does not know (IllegalStateException): Kafka's loader stops "
                         "here; kreplica leaves the record out")


@pytest.mark.parametrize("at, bad, message", [
    pytest.param(1, (_unknown_type_key(), txn_value("Ongoing", 9)),
                 "offset 1: Unknown record type 7 in __transaction_state; Kafka's loader ignores it (UnknownKey)",
                 id="UnknownKey: ignored"),
    pytest.param(1, (txn_key("x"), (2).to_bytes(2, "big") + txn_value("Ongoing", 9)[2:]),
                 "offset 1: Unknown TransactionLogValue version 2 (kreplica knows 0 to 1); Kafka's loader stops "
                 "here (it keeps only the transactions read before)", id="unknown value version: stops"),
    pytest.param(0, (None, txn_value("Ongoing", 9)),
                 "offset 0: a coordinator record needs a key (it names the state it updates); Kafka's loader "
                 "stops here (it keeps only the transactions read before)", id="null key in the first batch"),
])
def test_an_unreadable_record_is_reported_where_its_batch_sits(tmp_path: Path, at, bad, message) -> None:
    """``loadTransactionMetadata``: an ``UnknownKey`` is "Ignoring it", any other throw ends the
    load; the finding names the batch (path and byte position, 0 for the first batch)."""
    records = [(txn_key("a"), txn_value("Ongoing", 1))] if at else []
    log = read_log(write_partition(tmp_path, f"{TRANSACTION_STATE}-0", coordinator_records([*records, bad])))
    f = replay_transaction_state(log).findings[0]
    batch = log.batches[at]
    assert (at == 0) == (batch.position == 0)
    assert (f.path, f.position, f.message) == (batch.path, batch.position, message)


def test_the_metadata_names_its_coordinator_partition_and_source(tmp_path: Path) -> None:
    log = read_log(write_partition(tmp_path, f"{TRANSACTION_STATE}-3",
                                   coordinator_records([(txn_key("a"), txn_value("Ongoing", 1))])))
    state = replay_transaction_state(log)
    t = state.transactions[0]
    assert (state.coordinator_partition, t.coordinator_partition, t.source) == (3, 3, log.label)
    assert log.label


def test_a_directory_that_names_no_partition_is_coordinator_partition_minus_1(tmp_path: Path) -> None:
    state = _replay_batches(tmp_path, coordinator_records([(txn_key("a"), txn_value("Ongoing", 1))]),
                            name="stray")
    assert (state.coordinator_partition, state.transactions[0].coordinator_partition) == (-1, -1)


@pytest.mark.parametrize("count, present, stopped_at", [
    pytest.param(4, 3, 8, id="after the 3 records read: the next offset"),
    pytest.param(1, 0, 5, id="none read: the batch's base offset"),
])
def test_kafka_stops_inside_a_batch_it_cannot_read_whole(tmp_path: Path, count, present, stopped_at) -> None:
    """``DefaultRecordBatch``'s iterator throws after the records it can read; the loader's
    ``catch Throwable`` stops there; the records before are replayed and the batches after too."""
    records = [(txn_key(f"i{k}"), txn_value("Ongoing", k)) for k in range(present)]
    state = _replay_batches(tmp_path, [_batch(records, 5, count=count),
                                       *coordinator_records([(txn_key("z"), txn_value("Empty", 9))], start=9)])
    assert (state.kafka_stopped_at, sorted(_states(state))) == (stopped_at, [*(f"i{k}" for k in range(present)), "z"])


def test_an_earlier_stop_is_kept_past_a_broken_batch(tmp_path: Path) -> None:
    state = _replay_batches(tmp_path, [*coordinator_records([(txn_key("x"), txn_value("Ongoing", 9, status=9))]),
                                       _batch([(txn_key("b"), txn_value("Ongoing", 2))], 1, count=2)])
    assert state.kafka_stopped_at == 0


def test_an_unbroken_batch_after_a_stop_keeps_the_stop(tmp_path: Path) -> None:
    state = _replay_batches(tmp_path, [*coordinator_records([(txn_key("x"), txn_value("Ongoing", 9, status=9)),
                                                             (txn_key("b"), txn_value("Ongoing", 2))])])
    assert (state.kafka_stopped_at, sorted(_states(state))) == (0, ["b"])


def test_at_offset_inside_a_batch_stops_at_that_record(tmp_path: Path) -> None:
    """``--at-offset`` (inclusive) inside a batch: the end is the record after it, not the batch's
    next offset; the later batch is not replayed (its time is not the newest)."""
    state = _replay_batches(tmp_path, [_batch([(txn_key("a"), txn_value("Empty", 1)),
                                               (txn_key("a"), txn_value("Ongoing", 1)),
                                               (txn_key("a"), txn_value("CompleteCommit", 1))], 0),
                                       *coordinator_records([(txn_key("b"), txn_value("Empty", 2))], start=3,
                                                            ts=TS + 5000)], at_offset=1)
    assert (_states(state)["a"][0], set(_states(state)), state.records, state.end_offset,
            state.newest_timestamp) == ("Ongoing", {"a"}, 2, 2, TS)


def test_at_offset_before_every_batch_ends_at_the_log_start_offset(tmp_path: Path) -> None:
    part = write_partition(tmp_path, f"{TRANSACTION_STATE}-0",
                           coordinator_records([(txn_key("a"), txn_value("Ongoing", 1))], start=5), log_start=5)
    state = replay_transaction_state(read_log(part), at_offset=4)
    assert (state.transactions, state.records, state.end_offset, state.newest_timestamp) == ((), 0, 5, None)


def test_the_end_is_the_last_batch_s_next_offset(tmp_path: Path) -> None:
    """``currOffset = batch.nextOffset``: a batch the cleaner left records out of ends past its
    last record."""
    batch = build_batch([NewRecord(0, TS, txn_key("a"), txn_value("Ongoing", 1))], base_offset=0,
                        last_offset_delta=4)
    state = _replay_batches(tmp_path, [batch])
    assert (state.records, state.end_offset) == (1, 5)


def test_the_newest_timestamp_is_the_latest_batch_time(tmp_path: Path) -> None:
    state = _replay_batches(tmp_path, [_batch([(txn_key("a"), txn_value("Ongoing", 1))], 0, ts=TS + 5000),
                                       _batch([(txn_key("b"), txn_value("Ongoing", 2))], 1, ts=TS)])
    assert state.newest_timestamp == TS + 5000


@pytest.mark.parametrize("ends, expected", [
    pytest.param((2, 1), 0, id="the longer given first"),
    pytest.param((1, 2), 1, id="the longer given second"),
    pytest.param((2, 2), 0, id="equals: the first given"),
])
def test_latest_replicas_keeps_the_furthest_first_of_equals(tmp_path: Path, ends, expected) -> None:
    records = [(txn_key("a"), txn_value("Ongoing", 1)), (txn_key("a"), txn_value("CompleteCommit", 1))]
    parts = [write_partition(tmp_path / f"b{k}", f"{TRANSACTION_STATE}-0", coordinator_records(records[:n]))
             for k, n in enumerate(ends)]
    other = write_partition(tmp_path / "b9", f"{TRANSACTION_STATE}-1", coordinator_records(records))
    states = [replay_transaction_state(read_log(p)) for p in (*parts, other)]
    assert [s.path for s in latest_replicas(states)] == [str(parts[expected]), str(other)]
