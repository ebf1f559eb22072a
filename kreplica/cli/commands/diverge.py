"""``kreplica diverge``: where replicas of a partition hold different batches."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.options.common import DebugOption, FormatOption
from kreplica.cli.options.replicas import HwOption, PartitionOption, load_replicas
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError

app = typer.Typer()


@app.command("diverge", cls=command(), short_help="Compare replicas batch by batch over their whole logs.")
@runs_command
def diverge(
    replicas: Annotated[list[str], typer.Argument(metavar="REPLICA", show_default=False,
                                                  help="Two or more partition directories (or log directories "
                                                       "with --partition).")],
    partition: PartitionOption = None,
    hw: HwOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Compare replicas batch by batch (offsets, leader epoch, CRC) over their whole logs, not only the
    tail: the common prefix, the first divergent offset of each pair, every divergent range (a divergent
    middle with an identical tail included, the KAFKA-6880 case), and the ranges only one replica holds,
    each annotated with the replicas' high watermarks. Where the batches differ, their records decide:
    the same records in other batches (cut or compressed otherwise) are "same_records", not divergence.

    The findings of the replicas' logs that bear on the comparison (errors, warnings about epochs) come first.

    Exit status: 0 identical data (batches may differ), 1 divergence found or a log has error findings, 2 bad usage or unreadable
    input, 3 internal error.
    """
    from kreplica.analysis.replication.divergence import compare_all
    from kreplica.report.results.replication import DivergenceReport

    if len(replicas) < 2:
        raise UsageError(f"expected two or more replicas, got {len(replicas)}", option="REPLICA")
    loaded = load_replicas(replicas, partition, hw)
    return show(DivergenceReport(tuple(loaded), tuple(compare_all(loaded))), output_format)
