"""``kreplica epochs``: each replica's leader-epoch lineage, checkpoint and loaded cache."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.options import DebugOption, FormatOption, KafkaVersionOption
from kreplica.cli.replicas import HwOption, PartitionOption, load_replicas, log_has_errors
from kreplica.cli.runner import runs_command
from kreplica.model.versions import DEFAULT_VERSION
from kreplica.report.output import resolve_format

app = typer.Typer()


@app.command("epochs", short_help="Each replica's epoch lineage from batch headers, its checkpoint, and the cache a broker loads.")
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
    from kreplica.report import replication as report

    kafka_version = kafka_version or DEFAULT_VERSION
    logs = load_replicas(replicas, partition, hw)
    verdicts = [reconcile_epochs(r, kafka_version) for r in logs]
    errors = sum(f.is_error for v in verdicts for f in v.findings) or log_has_errors(logs)
    objs = [report.epochs_object(v.state, v.checkpoint, kafka_version) for v in verdicts]
    findings = {v.state.label: list(v.findings) for v in verdicts}
    report.write_epochs(objs, findings, resolve_format(output_format), logs)
    return ExitCode.PROBLEMS if errors else ExitCode.OK
