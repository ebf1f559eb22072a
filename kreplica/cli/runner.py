"""One wrapper that turns whatever a command raises into the contract's exit codes.

Bad input (:class:`~kreplica.formats.errors.FormatError`, including unreadable paths) prints
one line naming the file and byte position and exits 2; anything unexpected is an internal
error, exit 3, with the traceback only under ``--debug`` (or ``KREPLICA_DEBUG=1``); a closed
stdout pipe (``| head``) ends the run quietly.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

from kreplica.cli.exit_codes import ExitCode
from kreplica.formats.errors import FormatError

stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def debug_enabled(flag: bool = False) -> bool:
    return flag or os.environ.get("KREPLICA_DEBUG", "") not in ("", "0")


def _quiet_broken_pipe() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def runs_command(func: Callable[..., int]) -> Callable[..., None]:
    """Decorate a command body that returns an :class:`ExitCode` (or int)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        debug = debug_enabled(bool(kwargs.get("debug", False)))
        try:
            status = func(*args, **kwargs)
            sys.stdout.flush()
        except typer.Exit:
            raise
        except (typer.BadParameter, typer.Abort):
            raise
        except BrokenPipeError:
            _quiet_broken_pipe()
            raise typer.Exit(ExitCode.OK) from None
        except FormatError as exc:
            if debug:
                traceback.print_exc()
            stderr.print(f"kreplica: error: {exc.one_line()}", markup=False)
            raise typer.Exit(ExitCode.USAGE) from None
        except KeyboardInterrupt:
            stderr.print("kreplica: interrupted", markup=False)
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001 - the contract: never a traceback by default
            if debug:
                traceback.print_exc()
            stderr.print(f"kreplica: internal error: {type(exc).__name__}: {exc} "
                         "(run with --debug for the traceback)", markup=False)
            raise typer.Exit(ExitCode.INTERNAL) from None
        raise typer.Exit(int(status))

    return wrapper
