"""Options and loading shared by the commands that take replicas (epochs, offset-for-epoch,
truncate-plan, diverge)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import require_paths
from kreplica.cli.options.names import unknown_name
from kreplica.formats.usage import UsageError

PartitionOption = Annotated[
    Optional[str],
    typer.Option("--partition", "-p", metavar="TOPIC-P",
                 help="The partition to read when a replica is given as a log directory (e.g. orders-0)."),
]
HwOption = Annotated[
    Optional[list[str]],
    typer.Option("--hw", metavar="LABEL=OFFSET",
                 help="Override a replica's high watermark (LABEL as shown in output: broker-N or the path). "
                      "Repeatable."),
]


def load_replicas(paths: list[str], partition: str | None, hw: list[str] | None) -> list:
    """Read every replica named on the command line once (:func:`kreplica.model.log.replica.read_replicas`).
    A missing path, or a log directory without the ``--partition`` named, is exit 2 (the latter
    with the partitions it does hold)."""
    from kreplica.cli.progress import byte_progress
    from kreplica.model.log.replica import parse_hw_overrides, read_replicas, replica_bytes

    require_paths(paths)
    if partition is not None:
        _check_partition(paths, partition)

    try:
        overrides = parse_hw_overrides(hw or [])
    except ValueError as exc:
        raise UsageError(str(exc), option="--hw") from None
    try:
        with byte_progress("reading replicas", replica_bytes(paths, partition)) as advance:
            return read_replicas(paths, partition, overrides, advance=advance)
    except KeyError as exc:
        raise UsageError(exc.args[0], option="--hw") from None


def _check_partition(paths: list[str], partition: str) -> None:
    """``--partition`` must name a partition directory of each log directory given (a partition
    directory given itself is that partition; the model refuses a mismatch)."""
    import os

    from kreplica.model.logdir.log_dir import find_log_dirs

    for raw in paths:
        if not os.path.isdir(raw) or os.path.isdir(os.path.join(raw, partition)):
            continue
        log_dir = find_log_dirs([raw])[0]
        if log_dir.is_whole:
            raise unknown_name("--partition", "partition directory", partition,
                               sorted(pd.name for pd in log_dir.partitions), where=raw)
