"""Progress on stderr for work that reads many bytes: a rich bar when stderr is a terminal and
the input is big enough to take a while, nothing otherwise (pipelines and tests see no bar)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kreplica.cli.runner import stderr_console

#: Inputs smaller than this finish in well under a second; no bar for them.
PROGRESS_THRESHOLD = 64 * 1024 * 1024


def _stderr_is_tty() -> bool:
    """A cheap check before rich is imported: a terminal, or rich told to act as one."""
    try:
        return sys.stderr.isatty() or bool(os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE"))
    except (AttributeError, ValueError):
        return False


@contextmanager
def byte_progress(label: str, total: int) -> Iterator[Callable[[int], None] | None]:
    """Yield ``advance(n_bytes)`` driving a transient bar, or ``None`` when no bar is shown."""
    if total < PROGRESS_THRESHOLD or not (_stderr_is_tty() and stderr_console().is_terminal):
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    progress = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                        TransferSpeedColumn(), TimeRemainingColumn(), console=stderr_console(), transient=True)
    task = progress.add_task(label, total=total)
    progress.start()
    try:
        yield lambda n: progress.advance(task, n)
    finally:
        progress.stop()
