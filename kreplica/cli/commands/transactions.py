"""``kreplica transactions``: every transactional id's state, the transactions open in the data
partitions, and which of them hang."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, require_paths
from kreplica.cli.options.sources import check_point, offset_option, time_option
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show

app = typer.Typer()

TransactionalIdOption = Annotated[Optional[list[str]], typer.Option(
    "--transactional-id", metavar="ID",
    help="Only this transactional id: its state and the transactions open under its producer id. Repeatable.")]
MaxTimeoutOption = Annotated[int, typer.Option(
    "--transaction-max-timeout-ms", metavar="MS", min=1,
    help="The brokers' transaction.max.timeout.ms: a transaction open longer is hanging (Kafka's default, "
         "15 minutes).")]
PartitionsOption = Annotated[int, typer.Option(
    "--transaction-state-log-num-partitions", metavar="N", min=1,
    help="The brokers' transaction.state.log.num.partitions (Kafka's default, 50): with all N partitions of "
         "__transaction_state in the evidence, a producer id no transactional id uses is hanging; with fewer, the "
         "coordinator evidence is said to be missing.")]
NowOption = Annotated[Optional[str], typer.Option(
    "--now", metavar="TIMESTAMP",
    help="The time transactions are aged at: epoch milliseconds or ISO-8601 (UTC when no offset is given). "
         "Default: --at-time, else the newest batch timestamp in the evidence.")]


@app.command("transactions", cls=command(exclusive=[("--at-offset", "--at-time")]),
             short_help="Transactional ids, open transactions, and the hanging ones with the "
                                        "offsets they pin.")
@runs_command
def transactions(
    sources: Annotated[list[str], typer.Argument(
        metavar="SOURCE", show_default=False,
        help="Broker log directories, or partition directories (__transaction_state-N, __consumer_offsets-N and "
             "data partitions).")],
    transactional_id: TransactionalIdOption = None,
    transaction_max_timeout_ms: MaxTimeoutOption = 900_000,
    transaction_state_log_num_partitions: PartitionsOption = 50,
    now: NowOption = None,
    at_offset: Annotated[Optional[str], typer.Option(
        "--at-offset", metavar="OFFSET",
        help="Replay __transaction_state up to this offset (inclusive); the evidence must hold exactly one of its "
             "partitions. Data partitions are read to their end. Default: the end.")] = None,
    at_time: Annotated[Optional[str], typer.Option(
        "--at-time", metavar="TIMESTAMP",
        help="Every log up to the last batch before one stamped after this time: epoch milliseconds, or ISO-8601 "
             "(UTC when no offset is given).")] = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Every transactional id's state as the transaction coordinator loads it from __transaction_state
    (producer id and epoch, the previous and next producer ids of KIP-890, timeout, state, partitions,
    timestamps), joined with the data partitions of the same log directories: for each replica, the
    transactions open at the end of its log as its broker rebuilds them (first and last offset,
    producer id and epoch, age, what its producer snapshot says) and its last stable offset.

    An open transaction is hanging when no marker will close it: the coordinator's transaction of that
    producer is complete or Dead, the producer was fenced by a newer epoch or its transactional id moved
    on to a newer producer id, the coordinator's transaction does not name the partition, no transactional
    id uses the producer id (with every __transaction_state partition in the evidence), or it has been open
    longer than transaction.max.timeout.ms. The rules are those of kafka-transactions.sh find-hanging,
    applied offline; each hanging transaction says which, the last stable offset it pins, and the groups
    whose read_committed consumers it stalls (their committed offsets at or above it, from the
    __consumer_offsets partitions among the SOURCEs, loaded as kreplica groups loads them). Hanging
    transactions come first.

    Exit status: 0 no hanging transaction, 1 a hanging transaction or an error finding in a log, 2 bad
    usage or unreadable input (an unknown --transactional-id lists the ones there are; a point outside the
    evidence names where it ends), 3 internal error.
    """
    from kreplica.analysis.groups.committed import committed_offsets
    from kreplica.analysis.transactions.analysis import analyze_transactions, coordinator_partitions
    from kreplica.cli.options.groups import group_paths
    from kreplica.cli.options.names import require_known
    from kreplica.cli.progress import byte_progress
    from kreplica.formats.usage import UsageError
    from kreplica.model.logdir.log_dir import find_log_dirs, given_paths
    from kreplica.report.results.transactions import TransactionsReport

    offset = offset_option(at_offset)
    when = time_option(at_time)
    aged_at = time_option(now, "--now")
    require_paths(sources)
    log_dirs = find_log_dirs(sources)
    if offset is not None:
        held = sorted(coordinator_partitions(log_dirs))
        if len(held) != 1:
            raise UsageError(f"needs one __transaction_state partition in the evidence, which holds {len(held)}"
                              + (f" ({', '.join(map(str, held))})" if held else ""), option="--at-offset")
    total = sum(seg.size for d in log_dirs for p in d.partitions for seg in p.segments)
    with byte_progress("transactions", total) as advance:
        result = analyze_transactions(log_dirs, at_offset=offset, at_time=when, now=aged_at,
                                      max_timeout_ms=transaction_max_timeout_ms,
                                      partition_count=transaction_state_log_num_partitions, advance=advance,
                                      committed=committed_offsets(group_paths(given_paths(log_dirs))))
    if offset is not None:
        check_point(result.coordinator_span, "--at-offset", position=offset)
    if when is not None:
        check_point(result.time_span, "--at-time", time=when)
    wanted = None
    if transactional_id:
        known = {t.transactional_id for t in result.view.transactions}
        require_known("--transactional-id", "transactional id", transactional_id, known)
        wanted = frozenset(transactional_id)
    return show(TransactionsReport(result, wanted), output_format)
