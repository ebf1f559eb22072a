"""The text report of ``kreplica transactions``: findings, hanging transactions (each with the
LSO it pins, why, and the groups it stalls), the coordinator's partitions, the transactional ids,
the open transactions and a verdict line, rendered from the objects of
:mod:`kreplica.report.schemas.transactions`."""

from __future__ import annotations

from rich.console import Console

from kreplica.analysis.transactions import hanging as rules
from kreplica.analysis.transactions.analysis import TransactionsAnalysis
from kreplica.formats.coordinator.records import TRANSACTION_STATE
from kreplica.report.text.layout import Column, Units, print_table, print_wrapped
from kreplica.report.text.numbers import count, duration
from kreplica.report.text.safe_text import escape


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
