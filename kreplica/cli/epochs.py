"""``kreplica epochs``: each replica's leader-epoch lineage, checkpoint and loaded cache."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.options import DebugOption, FormatOption, KafkaVersionOption
from kreplica.cli.replicas import HwOption, PartitionOption, load_replicas
from kreplica.cli.runner import runs_command
from kreplica.model.versions import DEFAULT_VERSION
from kreplica.report.output import Emitter, OutputFormat, resolve_format

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

    Exit status: 0 they agree, 1 disagreements found, 2 bad usage or unreadable input, 3 internal error.
    """
    from kreplica.analysis.epoch_reconciliation import compare_checkpoint
    from kreplica.analysis.replica_state import replica_state
    from kreplica.formats.checkpoints import parse_leader_epoch_checkpoint
    from kreplica.formats.errors import FormatError
    from kreplica.formats.findings import Finding
    from kreplica.model.log_dir import read_bytes
    from kreplica.report import replication as report
    from kreplica.report.inspect_log import finding_object

    kafka_version = kafka_version or DEFAULT_VERSION
    loaded = load_replicas(replicas, partition, hw)
    objs, findings = [], {}
    errors = 0
    for r in loaded:
        state = replica_state(r, kafka_version=kafka_version)
        lines = None
        fs = []
        if r.partition.leader_epoch_checkpoint:
            try:
                lines = parse_leader_epoch_checkpoint(read_bytes(r.partition.leader_epoch_checkpoint),
                                                      path=r.partition.leader_epoch_checkpoint)
            except (FormatError, ValueError) as exc:
                fs.append(Finding("checkpoint_malformed", r.partition.leader_epoch_checkpoint, 0,
                                  f"leader-epoch-checkpoint cannot be read as Kafka reads it: {exc}"))
        if lines is not None:
            fs.extend(compare_checkpoint(r.partition, lines, r.batch_cache, r.log_end_offset, r.log_start_offset,
                                         state.restart))
        errors += sum(f.is_error for f in fs)
        findings[r.label] = fs
        objs.append(report.epochs_object(state, None if lines is None else [(x.epoch, x.start_offset) for x in lines],
                                         kafka_version))
    fmt = resolve_format(output_format)
    if fmt is OutputFormat.text:
        report.render_epochs(objs, findings, Console(file=sys.stdout, highlight=False, soft_wrap=True))
    else:
        emitter = Emitter(fmt)
        for o in objs:
            emitter.emit(o)
            for f in findings[o["replica"]]:
                emitter.emit(finding_object(f))
        emitter.close()
    return ExitCode.PROBLEMS if errors else ExitCode.OK
