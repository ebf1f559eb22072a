"""``kreplica epochs``: each replica's leader-epoch lineage, checkpoint and loaded cache."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption
from kreplica.cli.options.replicas import HwOption, PartitionOption, load_replicas
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.model.versions import DEFAULT_VERSION

app = typer.Typer()


@app.command("epochs", cls=command(), short_help="Each replica's epoch lineage from batch headers, its checkpoint, and the cache a broker loads.")
@runs_command
def epochs(
    replicas: Annotated[list[str], typer.Argument(metavar="REPLICA", show_default=False,
                                                  help="Partition directories, or log directories with --partition.")],
    partition: PartitionOption = None,
    hw: HwOption = None,
    kafka_version: KafkaVersionOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Per replica: the leader-epoch lineage rebuilt from batch headers (epoch, start offset, last offset,
    batch count and the time range of its batches), the leader-epoch-checkpoint entries, the cache a
    broker of --kafka-version would load from them, and every disagreement between them.

    The findings of a replica's log that bear on the lineage (errors such as a CRC mismatch or an offset a
    segment cannot hold, and warnings about epochs) come first, under the replica.

    Exit status: 0 they agree, 1 disagreements or error findings in a log, 2 bad usage or unreadable input, 3 internal error.
    """
    from kreplica.analysis.log.epoch_reconciliation import reconcile_epochs
    from kreplica.report.results.replication import EpochsReport

    kafka_version = kafka_version or DEFAULT_VERSION
    logs = load_replicas(replicas, partition, hw)
    verdicts = tuple(reconcile_epochs(r, kafka_version) for r in logs)
    return show(EpochsReport(tuple(logs), verdicts, kafka_version), output_format)
