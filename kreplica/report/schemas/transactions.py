"""The ``transactions`` output: the logs' findings, then one ``hanging_transaction`` object per
hanging transaction, one ``transaction_log`` per ``__transaction_state`` partition replayed, one
``transaction`` per transactional id, one ``open_transaction`` per transaction open in a data
partition's replica (the text report, hanging transactions first, is
:mod:`kreplica.report.text.transactions`)::

    hanging_transaction  {type, topic, partition, source, path, producer_id, producer_epoch,
                          first_offset, last_offset, last_stable_offset, pins_lso, age_ms, aged_at,
                          first_timestamp, last_timestamp, reason, transactional_id,
                          coordinator_state, coordinator_producer_id, coordinator_producer_epoch,
                          find_hanging, stalled_groups: [{group, offset, leader_epoch,
                          coordinator_partition, source}]}
    transaction_log      {type, coordinator_partition, source, path, records, end_offset,
                          transactional_ids, kafka_stopped_at}
    transaction          {type, transactional_id, coordinator_partition, source, record_offset,
                          value_version, state, producer_id, producer_epoch, previous_producer_id,
                          next_producer_id, transaction_timeout_ms, partitions: [{topic, partition}],
                          transaction_start_timestamp_ms, transaction_last_update_timestamp_ms,
                          client_transaction_version, open_transactions: [{topic, partition, source,
                          producer_id, producer_epoch, first_offset, status, reason}]}
    open_transaction     {type, topic, partition, source, path, producer_id, producer_epoch,
                          first_offset, last_offset, batches, first_timestamp, last_timestamp,
                          age_ms, aged_at, from_snapshot, snapshot: {path, offset, current_txn_first_offset}
                          | null, last_stable_offset, lso_reason, status, reason, transactional_id,
                          find_hanging}

``age_ms`` is the time from the first batch's timestamp to ``aged_at``: ``--now``, else ``--at-time``,
else the newest batch timestamp in the evidence. ``status`` is ``hanging``, ``ongoing`` or ``undecided`` (the coordinator evidence does not
decide); ``reason`` names the rule (:mod:`kreplica.analysis.transactions.hanging`). ``find_hanging``
is whether ``kafka-transactions.sh find-hanging`` would list the transaction on a cluster in this
state (``null``: the answer lies in a ``__transaction_state`` partition not given). A
transaction's ``open_transactions`` are those of its producer id (current, or the one it moved on
from). ``stalled_groups`` are the groups whose committed offset is at or above the LSO: their
read_committed consumers wait there.
"""

from __future__ import annotations


from kreplica.analysis.log.open_transactions import OpenTransaction
from kreplica.analysis.transactions import hanging as rules
from kreplica.analysis.transactions.analysis import TransactionsAnalysis
from kreplica.model.coordinator.transactions import TransactionLogState, TransactionMetadata
from kreplica.report.output.findings import finding_object


def hanging_object(v: rules.TransactionVerdict, aged_at: int | None) -> dict:
    t, meta = v.transaction, v.coordinator
    return {
        "type": "hanging_transaction", "topic": v.topic, "partition": v.partition, "source": v.source,
        "path": v.path, "producer_id": t.producer_id, "producer_epoch": t.producer_epoch,
        "first_offset": t.first_offset, "last_offset": t.last_offset, "last_stable_offset": v.last_stable_offset,
        "pins_lso": v.pins_lso, "age_ms": v.age_ms, "aged_at": aged_at, "first_timestamp": t.first_timestamp,
        "last_timestamp": t.last_timestamp, "reason": v.reason, "transactional_id": v.transactional_id,
        "coordinator_state": meta.state if meta else None,
        "coordinator_producer_id": meta.producer_id if meta else None,
        "coordinator_producer_epoch": meta.producer_epoch if meta else None,
        "find_hanging": v.find_hanging,
        "stalled_groups": [{"group": c.group, "offset": c.offset, "leader_epoch": c.leader_epoch,
                            "coordinator_partition": c.coordinator_partition, "source": c.source} for c in v.stalled],
    }


def transaction_log_object(s: TransactionLogState) -> dict:
    return {"type": "transaction_log", "coordinator_partition": s.coordinator_partition, "source": s.source,
            "path": s.path, "records": s.records, "end_offset": s.end_offset,
            "transactional_ids": len(s.transactions), "kafka_stopped_at": s.kafka_stopped_at}


def transaction_object(meta: TransactionMetadata, verdicts: tuple[rules.TransactionVerdict, ...]) -> dict:
    mine = (meta.producer_id, meta.previous_producer_id)
    return {
        "type": "transaction", "transactional_id": meta.transactional_id,
        "coordinator_partition": meta.coordinator_partition, "source": meta.source,
        "record_offset": meta.record_offset, "value_version": meta.value_version, "state": meta.state,
        "producer_id": meta.producer_id, "producer_epoch": meta.producer_epoch,
        "previous_producer_id": meta.previous_producer_id, "next_producer_id": meta.next_producer_id,
        "transaction_timeout_ms": meta.transaction_timeout_ms,
        "partitions": [{"topic": t, "partition": p} for t, p in meta.partitions],
        "transaction_start_timestamp_ms": meta.transaction_start_timestamp_ms,
        "transaction_last_update_timestamp_ms": meta.transaction_last_update_timestamp_ms,
        "client_transaction_version": meta.client_transaction_version,
        "open_transactions": [{"topic": v.topic, "partition": v.partition, "source": v.source,
                               "producer_id": v.transaction.producer_id, "producer_epoch": v.transaction.producer_epoch,
                               "first_offset": v.transaction.first_offset, "status": v.status, "reason": v.reason}
                              for v in verdicts if v.transaction.producer_id in mine],
    }


def _snapshot(t: OpenTransaction) -> dict | None:
    s = t.snapshot
    return None if s is None else {"path": s.path, "offset": s.offset,
                                   "current_txn_first_offset": s.current_txn_first_offset}


def open_object(v: rules.TransactionVerdict, aged_at: int | None) -> dict:
    t = v.transaction
    return {
        "type": "open_transaction", "topic": v.topic, "partition": v.partition, "source": v.source, "path": v.path,
        "producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
        "last_offset": t.last_offset, "batches": t.batches, "first_timestamp": t.first_timestamp,
        "last_timestamp": t.last_timestamp, "age_ms": v.age_ms, "aged_at": aged_at, "from_snapshot": t.from_snapshot,
        "snapshot": _snapshot(t), "last_stable_offset": v.last_stable_offset, "lso_reason": v.lso_reason,
        "status": v.status, "reason": v.reason, "transactional_id": v.transactional_id,
        "find_hanging": v.find_hanging,
    }


def report_objects(a: TransactionsAnalysis, transactional_ids: frozenset[str] | None = None) -> list[dict]:
    """Every object in output order; ``transactional_ids`` keeps the transactions of those ids
    and the open transactions joined to them (``None``: all)."""
    verdicts = a.verdicts
    metas = a.view.transactions
    if transactional_ids is not None:
        metas = tuple(m for m in metas if m.transactional_id in transactional_ids)
        verdicts = tuple(v for v in verdicts if v.transactional_id in transactional_ids)
    return [*(finding_object(f) for f in a.findings),
            *(hanging_object(v, a.now) for v in verdicts if v.hanging),
            *(transaction_log_object(s) for s in a.view.states),
            *(transaction_object(m, a.verdicts) for m in metas),
            *(open_object(v, a.now) for v in verdicts)]
