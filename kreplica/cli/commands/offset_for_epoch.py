"""``kreplica offset-for-epoch``: OffsetForLeaderEpoch answered as a replica would as leader."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.options.replicas import PartitionOption, load_replicas
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.model.versions import DEFAULT_VERSION

app = typer.Typer()


@app.command("offset-for-epoch", cls=command(exclusive=[("--epoch", "--epochs-from"),
                                                           ("--current-leader-epoch", "--epochs-from")]),
             short_help="Answer OffsetForLeaderEpoch as a replica would as leader.")
@runs_command
def offset_for_epoch(
    replica: Annotated[str, typer.Argument(metavar="REPLICA", show_default=False,
                                           help="A partition directory, or a log directory with --partition.")],
    epoch: Annotated[Optional[int], typer.Option("--epoch", "-e", help="The requested leader epoch.")] = None,
    current_leader_epoch: Annotated[Optional[int], typer.Option(
        "--current-leader-epoch", help="The caller's current leader epoch (enables KIP-320 fencing).")] = None,
    epochs_from: Annotated[Optional[str], typer.Option(
        "--epochs-from", metavar="FILE|-",
        help="Answer a stream of ndjson queries {\"epoch\": N, \"current_leader_epoch\": M} (one per line).")] = None,
    partition: PartitionOption = None,
    kafka_version: KafkaVersionOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Answer OffsetForLeaderEpoch (leader_epoch, end_offset, error) exactly as the replica would if it
    were the leader, for the chosen Kafka version: fencing errors (FENCED_LEADER_EPOCH,
    UNKNOWN_LEADER_EPOCH) when --current-leader-epoch is given, and the version differences (2.1+ echoes
    an epoch older than the first entry with the first start offset; 2.0 answers -1; 0.11-1.1 answers an
    offset only).

    The findings of the replica's log that bear on the answer (errors, warnings about epochs) come first.

    Exit status: 0 answered without error, 1 an answer carries an error or the log has error findings, 2 bad usage or unreadable
    input, 3 internal error.
    """
    from kreplica.analysis.replication.offset_for_epoch import answer_queries
    from kreplica.formats.errors import Malformed
    from kreplica.formats.usage import UsageError
    from kreplica.report.results.replication import OffsetForEpochReport

    if epoch is None and epochs_from is None:
        raise UsageError("missing: give one of --epoch and --epochs-from", option="--epoch")
    kafka_version = kafka_version or DEFAULT_VERSION
    if epochs_from is not None:
        require_paths([epochs_from], "--epochs-from", stdin=True)
    (r,) = load_replicas([replica], partition, None)
    queries: list[tuple[int, int | None]] = []
    if epoch is not None:
        queries.append((epoch, current_leader_epoch))
    else:
        stream = sys.stdin if epochs_from == "-" else open(epochs_from, encoding="utf-8")
        with stream:
            for n, line in enumerate(stream, 1):
                if not line.strip():
                    continue
                try:
                    q = json.loads(line)
                    queries.append((int(q.get("epoch", q.get("requested_epoch"))),
                                    None if q.get("current_leader_epoch") is None else int(q["current_leader_epoch"])))
                except (ValueError, TypeError, AttributeError) as exc:
                    raise Malformed(f"query is not an object with an integer \"epoch\": {exc}",
                                    path=epochs_from, position=n, field="line") from None
    answers = answer_queries(r, queries, kafka_version=kafka_version)
    return show(OffsetForEpochReport((r,), tuple(answers), kafka_version), output_format)
