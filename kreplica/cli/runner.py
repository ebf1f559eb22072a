"""One wrapper that turns whatever a command raises into the contract's exit codes.

- a usage error (:class:`~kreplica.formats.usage.UsageError`: what was typed cannot be run)
  prints its one line (:func:`~kreplica.cli.options.usage.usage_line`) and exits 2;
- bad input — a :class:`~kreplica.formats.errors.FormatError`, or an :class:`OSError` on a path
  (permission denied, a directory where a file belongs, a symlink loop, ...) — prints one line
  naming the file (and byte position where there is one) and exits 2, never 3;
- anything unexpected is an internal error, exit 3, with the traceback only under ``--debug``
  (or ``KREPLICA_DEBUG=1``); so is a command that returns something other than an
  :class:`ExitCode` (``None`` included: a body that forgot its ``return``);
- Ctrl-C is exit 130 (:attr:`ExitCode.INTERRUPTED`) with one line;
- a closed stdout (``kreplica ... | head -1``) ends the run with exit 0 and nothing on stderr,
  whichever write notices it: a command's own write, the final flush here, or the interpreter's
  flush at shutdown (stdout is pointed at ``/dev/null`` first, so that flush cannot fail), as
  pip's ``_run_wrapper`` and pyelftools' ``readelf.py`` do.

Diagnostics are plain lines on stderr; the rich stderr console (progress bars) is created on
first use, so a run with machine output never imports rich.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

import typer
from typer._click.exceptions import ClickException

from kreplica.cli.exit_codes import ExitCode

#: errno values that mean "the reader of stdout has gone" rather than "this failed"
_CLOSED_PIPE = frozenset({errno.EPIPE, errno.ESHUTDOWN, errno.ECONNRESET})


_stderr_console = None


def stderr_console():
    """The stderr console (rich) for progress bars, built on first use."""
    global _stderr_console
    if _stderr_console is None:
        from rich.console import Console

        _stderr_console = Console(stderr=True, highlight=False, soft_wrap=True)
    return _stderr_console


def debug_enabled(flag: bool = False) -> bool:
    return flag or os.environ.get("KREPLICA_DEBUG", "") not in ("", "0")


def error_line(text: str) -> None:
    """Print one diagnostic line to stderr (plain text: paths may hold ``[`` and ``]``)."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed too: nothing left to tell anyone


def is_closed_pipe(exc: BaseException) -> bool:
    """True when ``exc`` says stdout's reader went away (EPIPE and friends)."""
    return isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and exc.errno in _CLOSED_PIPE)


def quiet_closed_stdout() -> None:
    """Point stdout at ``/dev/null`` so no later write or flush (Python flushes ``sys.stdout``
    at shutdown and would print "Exception ignored ... BrokenPipeError") can fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def flush_stdout() -> None:
    """Flush stdout; a closed pipe is a normal end (see :func:`quiet_closed_stdout`)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if not is_closed_pipe(exc):
            raise
        quiet_closed_stdout()


def os_error_line(exc: OSError) -> str:
    """``path: reason`` for an OS error, in the words of the other input errors."""
    reason = (exc.strerror or type(exc).__name__).lower()
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return ": ".join([*paths, reason]) if paths else reason


def exit_status(value: object, command: str) -> ExitCode:
    """``value``, a command's return value, as an :class:`ExitCode`; anything else (``None``, a
    number outside the contract) is a bug in the command: :class:`TypeError`, an internal error."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return ExitCode(value)
        except ValueError:
            pass
    raise TypeError(f"{command} returned {value!r}, not an exit status")


def show(report, requested) -> ExitCode:
    """Render a command's result (a :class:`~kreplica.report.output.seam.Report`) through the one
    seam in the format asked for, and the exit status it comes to: :attr:`ExitCode.PROBLEMS` when
    the result says the evidence has problems, else :attr:`ExitCode.OK`."""
    from kreplica.report.output.seam import write

    write(report, requested)
    return ExitCode.PROBLEMS if report.has_problems() else ExitCode.OK


def runs_command(func: Callable[..., int]) -> Callable[..., None]:
    """Decorate a command body that returns an :class:`ExitCode` (or its int value)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from kreplica.formats.errors import FormatError
        from kreplica.formats.usage import UsageError

        debug = debug_enabled(bool(kwargs.get("debug", False)))
        if debug:
            from kreplica.cli.implementations import debug_line

            error_line(debug_line())
        try:
            status = func(*args, **kwargs)
            flush_stdout()
            raise typer.Exit(exit_status(status, func.__name__))
        except (typer.Exit, typer.Abort, ClickException):   # click's own: one line at the group
            raise
        except UsageError as exc:
            from kreplica.cli.options.usage import usage_line

            error_line(usage_line(exc))
            raise typer.Exit(ExitCode.USAGE) from None
        except FormatError as exc:
            if debug:
                traceback.print_exc()
            error_line(f"kreplica: error: {exc.one_line()}")
            raise typer.Exit(ExitCode.USAGE) from None
        except OSError as exc:
            if is_closed_pipe(exc):
                quiet_closed_stdout()
                raise typer.Exit(ExitCode.OK) from None
            if debug:
                traceback.print_exc()
            error_line(f"kreplica: error: {os_error_line(exc)}")
            raise typer.Exit(ExitCode.USAGE) from None
        except KeyboardInterrupt:
            error_line("kreplica: interrupted")
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except Exception as exc:  # noqa: BLE001 - the contract: never a traceback by default
            if debug:
                traceback.print_exc()
            error_line(f"kreplica: internal error: {type(exc).__name__}: {exc} "
                       "(run with --debug for the traceback)")
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper
