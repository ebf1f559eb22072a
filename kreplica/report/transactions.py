"""The ``transactions`` output: the logs' findings, then one ``hanging_transaction`` object per
hanging transaction, one ``transaction_log`` per ``__transaction_state`` partition replayed, one
``transaction`` per transactional id, one ``open_transaction`` per transaction open in a data
partition's replica; and the text report, hanging transactions first::

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

from rich.console import Console

from kreplica.analysis.transactions import hanging as rules
from kreplica.analysis.transactions.analysis import TransactionsAnalysis
from kreplica.analysis.log.open_transactions import OpenTransaction
from kreplica.formats.coordinator.records import TRANSACTION_STATE
from kreplica.model.coordinator.transactions import TransactionLogState, TransactionMetadata
from kreplica.report.inspect_log import finding_object
from kreplica.report.numbers import count, duration
from kreplica.report.output import Emitter, OutputFormat, text_console
from kreplica.report.safe_text import escape
from kreplica.report.text_layout import Column, Units, print_table, print_wrapped


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


def write_report(a: TransactionsAnalysis, fmt: OutputFormat, transactional_ids: frozenset[str] | None = None) -> None:
    objs = report_objects(a, transactional_ids)
    if fmt is OutputFormat.text:
        render_text(objs, a, text_console())
        return
    emitter = Emitter(fmt)
    for obj in objs:
        emitter.emit(obj)
    emitter.close()


# -- text ----------------------------------------------------------------------------------------

#: how each rule reads, from the fields of a hanging_transaction or open_transaction object
_COORDINATOR_SAYS = {
    rules.PRODUCER_ID_REPLACED: "{tid} moved on from producer {pid} to producer {cpid} ({state}): no marker of "
                                "producer {pid} will come",
    rules.NO_TRANSACTIONAL_ID: "no transactional id uses producer {pid} (every __transaction_state partition read)",
    rules.PRODUCER_FENCED: "the producer was fenced: {tid} is at epoch {cepoch} ({state}), and the coordinator's "
                           "marker never reached this partition",
    rules.TRANSACTION_COMPLETE: "{tid}'s transaction of epoch {epoch} is over ({state} at epoch {cepoch}), and its "
                                "marker never reached this partition",
    rules.PARTITION_NOT_IN_TRANSACTION: "{tid}'s {state} transaction does not name this partition: no marker "
                                        "will come",
    rules.COORDINATOR_PARTITION_MISSING: "no transactional id in the __transaction_state partitions read uses "
                                         "producer {pid}: the coordinator evidence is missing",
    rules.COORDINATOR_BEHIND: "{tid}'s last record is of epoch {cepoch}, older than this transaction's: the "
                              "coordinator evidence is behind",
}


def _why(o: dict, meta: dict | None, max_timeout_ms: int) -> str:
    fields = {"pid": o["producer_id"], "epoch": o["producer_epoch"], "tid": escape(o["transactional_id"]),
              "state": meta["state"] if meta else None, "cpid": meta["producer_id"] if meta else None,
              "cepoch": meta["producer_epoch"] if meta else None}
    if o["reason"] == rules.TIMED_OUT:
        said = (f"{fields['tid']} is {fields['state']} at epoch {fields['cepoch']}" if meta else
                f"no transactional id in the evidence uses producer {o['producer_id']}")
        return (f"past transaction.max.timeout.ms ({duration(max_timeout_ms)}), when the coordinator aborts a "
                f"transaction; {said}")
    if o["reason"] is None:
        return f"{fields['tid']}'s {fields['state']} transaction names it: the coordinator will write its marker"
    return _COORDINATOR_SAYS[o["reason"]].format(**fields)


def render_text(objs: list[dict], a: TransactionsAnalysis, console: Console) -> None:
    """Findings, hanging transactions (each with the LSO it pins, why, and the groups it stalls),
    the transactional ids, the open transactions, and a verdict line."""
    metas = {o["transactional_id"]: o for o in objs if o["type"] == "transaction"}
    max_timeout = a.max_timeout_ms
    for o in objs:
        if o["type"] == "finding":
            style = "bold red" if o["severity"] == "error" else "yellow"
            print_wrapped(console, f"[{style}]{o['severity'].upper()} {o['kind']}[/] {escape(o['message'])}", 4)
    hanging = [o for o in objs if o["type"] == "hanging_transaction"]
    for o in hanging:
        print_wrapped(console, f"[bold red]HANGING[/] {escape(o['topic'])}-{o['partition']} ({escape(o['source'])}): "
                               f"producer {o['producer_id']} epoch {o['producer_epoch']} from offset "
                               f"{o['first_offset']}", 4)
        pins = (f"pins the last stable offset at {o['last_stable_offset']}" if o["pins_lso"] else
                f"the last stable offset is held at {o['last_stable_offset']}")
        print_wrapped(console, f"  open {duration(o['age_ms'])}, {pins}; "
                               f"{_why(o, metas.get(o['transactional_id']), max_timeout)}", 4)
        if o["stalled_groups"]:
            groups = ", ".join(f"{escape(g['group'])} at {g['offset']}" for g in o["stalled_groups"])
            print_wrapped(console, f"  read_committed consumers stalled at {o['last_stable_offset']}: {groups}", 4)
    _coordinator_line(objs, a, console)
    if metas:
        rows = [[escape(m["transactional_id"]), m["state"], f"{m['producer_id']} ({m['producer_epoch']})",
                 Units(tuple(f"{escape(p['topic'])}-{p['partition']}" for p in m["partitions"])),
                 Units(tuple(f"{escape(t['topic'])}-{t['partition']}@{t['first_offset']}"
                             for t in m["open_transactions"]))]
                for m in metas.values()]
        print_table(console, [Column("transactional id", wrap=True), Column("state", 5),
                              Column("producer (epoch)", 4), Column("partitions", 2, wrap=True),
                              Column("open at", 1, wrap=True)], rows,
                    title="transactional ids")
    opened = [o for o in objs if o["type"] == "open_transaction"]
    if opened:
        rows = [[f"{escape(o['topic'])}-{o['partition']}", escape(o["source"]),
                 f"{o['producer_id']} ({o['producer_epoch']})", f"{o['first_offset']}-{o['last_offset']}",
                 duration(o["age_ms"]),
                 str(o["last_stable_offset"]), o["status"], escape(o["transactional_id"] or "-")]
                for o in opened]
        styles = ["red" if o["status"] == rules.HANGING else None for o in opened]
        print_table(console, [Column("partition", wrap=True), Column("replica", 2, wrap=True),
                              Column("producer (epoch)", 6), Column("offsets", 5), Column("age", 5), Column("LSO", 5),
                              Column("status", 7), Column("transactional id", 3, wrap=True)], rows, styles,
                    title="open transactions")
    undecided = sum(o["status"] == rules.UNDECIDED for o in opened)
    parts = [count(len(hanging), "hanging transaction"),
             count(sum(o["status"] == rules.ONGOING_STATUS for o in opened), "ongoing transaction")]
    if undecided:
        parts.append(f"{count(undecided, 'open transaction')} the coordinator evidence does not decide")
    style = "bold red" if hanging else "bold green"
    print_wrapped(console, f"[{style}]{'; '.join(parts)}[/] ({count(len(metas), 'transactional id')})")


def _coordinator_line(objs: list[dict], a: TransactionsAnalysis, console: Console) -> None:
    """Which ``__transaction_state`` partitions the coordinator's state comes from."""
    logs = [o for o in objs if o["type"] == "transaction_log"]
    read = ", ".join(f"{TRANSACTION_STATE}-{o['coordinator_partition']} of {escape(o['source'])}" for o in logs)
    of = f"{len(logs)} of {count(a.view.partition_count, 'partition')}"
    print_wrapped(console, f"coordinator state: {read} ({of})" if logs
                  else f"coordinator state: no {TRANSACTION_STATE} partition in the evidence (0 of "
                       f"{count(a.view.partition_count, 'partition')})")
    for o in logs:
        if o["kafka_stopped_at"] is not None:
            print_wrapped(console, f"  [yellow]Kafka's coordinator stops loading {TRANSACTION_STATE}-"
                                   f"{o['coordinator_partition']} at offset {o['kafka_stopped_at']}[/]: the "
                                   "transactions after it are shown as the log holds them", 4)
