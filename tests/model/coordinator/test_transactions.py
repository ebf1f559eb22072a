"""``__transaction_state`` replayed as ``TransactionStateManager.loadTransactionMetadata`` loads it
(core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala,
TransactionLog.scala ``readTxnRecordKey``/``readTxnRecordValue``); each rule with its counter-case."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.coordinator.records import TRANSACTION_STATE, build_value
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES
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
