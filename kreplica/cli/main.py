"""The ``kreplica`` application: one sub-app per command module, merged at the top level.

Command modules are imported when their command runs (or when ``--help`` lists them), not
when the application is built: a run of ``inspect-log`` imports ``inspect_log`` and what it
needs, nothing of ZooKeeper, replication or rich text. :data:`COMMANDS` is the list; each
module's ``app`` is merged exactly as ``app.add_typer(module.app[, name=...])`` would.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup


#: command name -> (module in kreplica.cli.commands, the sub-app's name when it is a group), in the order
#: ``--help`` lists them
COMMANDS: dict[str, tuple[str, str | None]] = {
    "inspect-log": ("inspect_log", None),
    "inspect-index": ("inspect_index", None),
    "inspect-dir": ("inspect_dir", None),
    "epochs": ("epochs", None),
    "offset-for-epoch": ("offset_for_epoch", None),
    "truncate-plan": ("truncate_plan", None),
    "diverge": ("diverge", None),
    "groups": ("groups", None),
    "zk": ("zk", "zk"),
    "cluster-state": ("cluster_state", None),
    "plan-elect": ("plan_elect", None),
    "timeline": ("timeline", None),
    "fleet": ("fleet", "fleet"),
    "plan-reassign": ("plan_reassign", None),
    "transactions": ("transactions", None),
}


def _build(name: str) -> Any:
    """The click command of ``kreplica <name>``, built as the top-level app would build it."""
    module_name, group_name = COMMANDS[name]
    module = importlib.import_module(f"kreplica.cli.commands.{module_name}")
    holder = typer.Typer(**_APP_SETTINGS)
    holder.callback()(_noop)
    if group_name is None:
        holder.add_typer(module.app)
    else:
        holder.add_typer(module.app, name=group_name)
    return typer.main.get_command(holder).commands[name]


def _noop() -> None:
    """(forces a group, so that sub-apps merge as they do under the real app)"""


class _LazyCommands(MutableMapping):
    """``TyperGroup.commands`` whose values are built on first access; the names are known
    up front (``--help``, "did you mean" suggestions) without importing any command module."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}
        self._extra: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name in self._extra:
            return self._extra[name]
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = _build(name)
        return self._built[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        self._extra[name] = cmd

    def __delitem__(self, name: str) -> None:
        del self._extra[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (n for n in self._extra if n not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + len(self._extra.keys() - COMMANDS.keys())

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._extra


class LazyGroup(TyperGroup):
    """The top-level group: its commands are :class:`_LazyCommands`, and a mistake on the command
    line, click's own parse errors included, is one line on stderr and exit 2
    (:func:`~kreplica.cli.options.usage.usage_line`), never click's usage block."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        extra = self.commands
        self.commands = _LazyCommands()
        for name, cmd in extra.items():
            self.commands[name] = cmd

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from typer._click import exceptions as errors

        from kreplica.cli.exit_codes import ExitCode
        from kreplica.cli.options.usage import usage_line
        from kreplica.cli.runner import error_line
        from kreplica.formats.usage import UsageError

        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except errors.NoArgsIsHelpError as exc:   # the help, as asked for by giving nothing
            exc.show()
            sys.exit(exc.exit_code)
        except (errors.ClickException, UsageError) as exc:
            error_line(usage_line(exc))
            sys.exit(ExitCode.USAGE)
        except typer.Abort:
            error_line("Aborted!")
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else ExitCode.OK)


_APP_SETTINGS: dict[str, Any] = dict(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app = typer.Typer(
    name="kreplica",
    cls=LazyGroup,
    help="Offline forensics for Apache Kafka replication: read segments, indexes and checkpoints "
         "copied off brokers, and say what Kafka did or would do with them.",
    **_APP_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        from kreplica.cli.implementations import version_text

        typer.echo(version_text())
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version, the record decoder, ndjson renderer and CRC-32C in use "
                                                               "(compiled or pure Python, and why), and exit.")] = False,
) -> None:
    """Offline forensics for Apache Kafka replication."""


def run() -> None:
    """Console-script entry point.

    A closed stdout while typer itself writes (``kreplica --help | head -1``) ends quietly with
    exit 0, as it does inside a command (:mod:`kreplica.cli.runner`).
    """
    from kreplica.cli.runner import flush_stdout, is_closed_pipe, quiet_closed_stdout

    try:
        app()
    except OSError as exc:
        if not is_closed_pipe(exc):
            raise
        quiet_closed_stdout()
        raise SystemExit(0) from None
    finally:
        try:
            flush_stdout()
        except OSError:
            pass
