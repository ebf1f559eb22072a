"""``kreplica inspect-dir``: a whole partition or broker log directory, read together."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.options.names import require_choice
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.model.versions import DEFAULT_VERSION

app = typer.Typer()

SHUTDOWNS = ("clean", "unclean")


@app.command("inspect-dir", cls=command(), short_help="Read partition or log directories together and say what a restart would do.")
@runs_command
def inspect_dir(
    dirs: Annotated[list[str], typer.Argument(
        metavar="DIR", show_default=False,
        help="Partition directories or broker log directories (one per log.dirs entry).")],
    output_format: FormatOption = None,
    shutdown: Annotated[Optional[str], typer.Option(
        "--shutdown", metavar="clean|unclean",
        help="Judge a restart after this kind of shutdown (default: clean when the log directory holds "
             ".kafka_cleanshutdown, unclean otherwise).")] = None,
    kafka_version: KafkaVersionOption = None,
    debug: DebugOption = False,
) -> int:
    """For every partition: segments and sizes, log start and end offsets, high watermark and recovery
    point from the checkpoints, the leader-epoch lineage rebuilt from batch headers next to the
    leader-epoch-checkpoint with every disagreement named, producer state, open transactions, topic id,
    index files checked against their segments, leftovers of deletion and compaction, and what a broker
    restart would do: which segments it recovers, what it truncates, which indexes it rebuilds, the epoch
    cache it loads, and whether it would refuse to start.

    A directory is read as a partition only when it holds partition files (segments, indexes,
    checkpoints): a ZooKeeper data directory, a configuration directory or an empty one is exit 2,
    saying what it is.

    Exit status: 0 nothing wrong, 1 problems found, 2 bad usage or unreadable input (a path that is
    not a log or partition directory), 3 internal error.
    """
    from kreplica.analysis.inspect.inspect_dir import inspect_log_dirs
    from kreplica.cli.progress import byte_progress
    from kreplica.model.logdir.log_dir import find_log_dirs
    from kreplica.report.results.inspect_dir import InspectDirReport

    if shutdown is not None:
        require_choice("--shutdown", shutdown, SHUTDOWNS)
    kafka_version = kafka_version or DEFAULT_VERSION
    require_paths(dirs)
    log_dirs = find_log_dirs(dirs)
    total = sum(seg.size for d in log_dirs for p in d.partitions for seg in p.segments)
    with byte_progress("inspect-dir", total) as advance:
        reports = inspect_log_dirs(log_dirs, shutdown=shutdown, kafka_version=kafka_version, advance=advance)
        return show(InspectDirReport(reports), output_format)
