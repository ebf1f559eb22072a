"""The ``kreplica`` application: one sub-app per command module, merged at the top level."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica import __version__
from kreplica.cli import (
    cluster_state,
    diverge,
    epochs,
    inspect_dir,
    inspect_index,
    inspect_log,
    offset_for_epoch,
    truncate_plan,
    zk,
)

app = typer.Typer(
    name="kreplica",
    help="Offline forensics for Apache Kafka replication: read segments, indexes and checkpoints "
         "copied off brokers, and say what Kafka did or would do with them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(inspect_log.app)
app.add_typer(inspect_index.app)
app.add_typer(inspect_dir.app)
app.add_typer(epochs.app)
app.add_typer(offset_for_epoch.app)
app.add_typer(truncate_plan.app)
app.add_typer(diverge.app)
app.add_typer(zk.app, name="zk")
app.add_typer(cluster_state.app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kreplica {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Offline forensics for Apache Kafka replication."""


def run() -> None:
    """Console-script entry point."""
    app()
