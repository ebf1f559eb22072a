"""Options and loading shared by the commands that take replicas (epochs, offset-for-epoch,
truncate-plan, diverge)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer


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
    """Read every replica named on the command line; labels are made unique."""
    from kreplica.model.replica import load_replica, parse_hw_overrides, resolve_replica_paths

    try:
        overrides = parse_hw_overrides(hw or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--hw") from None
    replicas = []
    seen: dict[str, int] = {}
    for pdir, log_dir in resolve_replica_paths(paths, partition):
        r = load_replica(pdir, log_dir)
        if r.label in seen:
            seen[r.label] += 1
            r.label = f"{r.label}#{seen[r.label]}"
        else:
            seen[r.label] = 1
        for key in (r.label, r.path):
            if key in overrides:
                r.high_watermark, r.hw_source = overrides[key], "override"
        replicas.append(r)
    unknown = set(overrides) - {r.label for r in replicas} - {r.path for r in replicas}
    if unknown:
        raise typer.BadParameter(f"no replica labelled {sorted(unknown)}; labels are "
                                 f"{[r.label for r in replicas]}", param_hint="--hw")
    return replicas
