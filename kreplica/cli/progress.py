"""Progress on stderr for work that reads many bytes: a rich bar when stderr is a terminal and
the input is big enough to take a while, nothing otherwise (pipelines and tests see no bar); and
the fleet commands' display of their Spark jobs (:class:`FleetProgress`), on a terminal only."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kreplica.cli.runner import stderr_console
from kreplica.report.text.numbers import count

#: Inputs smaller than this finish in well under a second; no bar for them.
PROGRESS_THRESHOLD = 64 * 1024 * 1024
#: The same for work that decodes every record (inspect-log --records), some 20 times slower a byte.
RECORDS_PROGRESS_THRESHOLD = 4 * 1024 * 1024


def _stderr_is_tty() -> bool:
    """A cheap check before rich is imported: a terminal, or rich told to act as one."""
    try:
        return sys.stderr.isatty() or bool(os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE"))
    except (AttributeError, ValueError):
        return False


@contextmanager
def byte_progress(label: str, total: int, *, records: bool = False) -> Iterator[Callable[[int], None] | None]:
    """Yield ``advance(n_bytes)`` driving a transient bar, or ``None`` when no bar is shown (less
    than the threshold of the work, ``records``: every record decoded, or stderr not a terminal)."""
    threshold = RECORDS_PROGRESS_THRESHOLD if records else PROGRESS_THRESHOLD
    if total < threshold or not (_stderr_is_tty() and stderr_console().is_terminal):
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


@contextmanager
def position_progress(label: str, total_bytes: int, span: Callable[[], tuple[int | None, int | None]]
                      ) -> Iterator[Callable[[int], None] | None]:
    """Yield ``reached(position)`` driving a transient bar over a history's positions (zxids or
    metadata offsets, which its events reach in order), or ``None`` when no bar is shown (files
    under :data:`RECORDS_PROGRESS_THRESHOLD` bytes, for a replay that decodes every entry, or
    stderr not a terminal). ``span()`` gives the first and last position; it is asked only when a
    bar is shown (it reads the newest file)."""
    if total_bytes < RECORDS_PROGRESS_THRESHOLD or not (_stderr_is_tty() and stderr_console().is_terminal):
        yield None
        return
    first, last = span()
    if first is None or last is None or last <= first:
        yield None
        return
    from rich.progress import BarColumn, Progress, TimeRemainingColumn

    progress = Progress("[progress.description]{task.description}", BarColumn(), TimeRemainingColumn(),
                        console=stderr_console(), transient=True)
    task = progress.add_task(label, total=last - first)
    progress.start()
    done = [0]

    def reached(position: int) -> None:
        at = min(max(position - first, 0), last - first)
        if at > done[0]:
            progress.advance(task, at - done[0])
            done[0] = at

    try:
        yield reached
    finally:
        progress.stop()


#: How often a fleet command's display asks Spark how far its jobs are.
FLEET_POLL_SECONDS = 0.5
_FLEET_STEPS = 1000  # the display's total: thousandths of the current job


class FleetProgress:
    """The one display of a fleet command on stderr: what runs (Spark starting, then each job),
    its files, bytes and partitions done out of the job's, and the time left. Spark reports how
    far a job is by tasks (:func:`~kreplica.pipeline.spark.job_progress.jobs_done`), so the counts
    done are the job's share of them; the display never goes back within a job."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                                  TextColumn("{task.fields[counts]}"), TimeRemainingColumn(),
                                  console=stderr_console(), transient=True,
                                  redirect_stdout=False, redirect_stderr=False)  # stdout is the data's alone
        self._task = self._progress.add_task("starting Spark", total=None, counts="")
        self._work = None
        self._done = 0.0
        self._stop = threading.Event()

    def job(self, work) -> None:
        """A job starts (:class:`~kreplica.pipeline.spark.job_progress.JobWork`)."""
        self._work, self._done = work, 0.0
        self._progress.reset(self._task, total=_FLEET_STEPS, description=work.what, counts=_counts(work, 0.0))

    def watch(self, done: Callable[[], float | None]) -> None:
        """Ask ``done`` (the share of the running jobs done) every :data:`FLEET_POLL_SECONDS`."""
        threading.Thread(target=self._poll, args=(done,), name="kreplica-progress", daemon=True).start()

    def _poll(self, done: Callable[[], float | None]) -> None:
        while not self._stop.wait(FLEET_POLL_SECONDS):
            try:
                share = done()
            except Exception:  # noqa: BLE001 - Spark stopping (Ctrl-C, a failed job): nothing left to show
                return
            if share is not None and self._work is not None and share > self._done:
                self._done = share
                self._progress.update(self._task, completed=share * _FLEET_STEPS, counts=_counts(self._work, share))

    def stop(self) -> None:
        self._stop.set()
        self._progress.stop()


def _counts(work, share: float) -> str:
    from rich.filesize import decimal

    parts = []
    if work.files:
        parts.append(f"{round(work.files * share):,}/{count(work.files, 'file')}")
    if work.bytes:
        parts.append(f"{decimal(round(work.bytes * share))}/{decimal(work.bytes)}")
    if work.partitions:  # with files, the partitions they belong to; alone, the partitions analysed
        parts.append(count(work.partitions, "partition") if work.files else
                     f"{round(work.partitions * share):,}/{count(work.partitions, 'partition')}")
    return ", ".join(parts)


@contextmanager
def fleet_progress(shown: bool = True) -> Iterator[FleetProgress | None]:
    """A :class:`FleetProgress` while the block runs, when stderr is a terminal and ``shown``
    (not when Spark's own log is written there too); ``None`` otherwise."""
    if not (shown and _stderr_is_tty() and stderr_console().is_terminal):
        yield None
        return
    display = FleetProgress()
    display._progress.start()
    try:
        yield display
    finally:
        display.stop()
