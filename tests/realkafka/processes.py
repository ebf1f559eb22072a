"""Processes the harness starts, each stopped by its own id: never by name, never left behind.

Every process is started in its own session with its output in a file, and remembered in the
owner's ``ProcessGroup``; ``ProcessGroup.close`` (in a ``finally``) sends SIGTERM to each one it
still has, then SIGKILL after a grace period, and waits for each with a timeout.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

GRACE_S = 30.0


class WaitTimedOut(Exception):
    """A condition the harness waited for did not hold within its timeout."""


def free_ports(count: int) -> list[int]:
    """Ports on 127.0.0.1 that nothing listens on now (held open together, so all differ)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def wait_until(what: str, check: Callable[[], object], timeout_s: float, every_s: float = 0.5) -> object:
    """``check()``'s first truthy value, or ``WaitTimedOut`` naming what did not happen."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while True:
        try:
            value = check()
            if value:
                return value
        except Exception as exc:  # the thing waited for is not up yet: try again until the deadline
            last_error = exc
        if time.monotonic() >= deadline:
            detail = f" (last: {last_error})" if last_error else ""
            raise WaitTimedOut(f"{what}: not within {timeout_s:.0f} s{detail}")
        time.sleep(every_s)


class Process:
    """One started process: its id, its output file, and the ways it ends."""

    def __init__(self, name: str, command: Sequence[str], output: Path, cwd: Path,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.output = output
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("ab") as sink:
            self.popen = subprocess.Popen(list(command), cwd=cwd, stdout=sink, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True,
                                          env={**os.environ, **(env or {})})

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL: the crash a scenario causes (``kill -9``)."""
        if self.alive:
            os.kill(self.pid, signal.SIGKILL)
        self.popen.wait(timeout=GRACE_S)

    def pause(self) -> None:
        """SIGSTOP: the process stops answering, as in a long GC pause, until ``resume``."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def stop(self, grace_s: float = GRACE_S) -> int:
        """SIGTERM (a clean shutdown), SIGKILL if it has not ended after ``grace_s``; the exit code."""
        if self.alive:
            os.kill(self.pid, signal.SIGCONT)  # a paused process cannot act on SIGTERM
            os.kill(self.pid, signal.SIGTERM)
            try:
                return self.popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
        return self.popen.wait(timeout=GRACE_S)


class ProcessGroup:
    """The processes one harness object owns; closing it stops every one still running."""

    def __init__(self) -> None:
        self.processes: list[Process] = []

    def start(self, name: str, command: Sequence[str], output: Path, cwd: Path,
              env: dict[str, str] | None = None) -> Process:
        process = Process(name, command, output, cwd, env)
        self.processes.append(process)
        return process

    def stop_together(self, processes: list[Process], grace_s: float = GRACE_S) -> None:
        """SIGTERM to each at once, then one grace period for all; SIGKILL to whatever still runs.
        (One at a time, each broker's controlled shutdown would wait on the next one's.)"""
        running = [p for p in processes if p.alive]
        for process in running:
            try:
                os.kill(process.pid, signal.SIGCONT)
                os.kill(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + grace_s
        for process in running:
            try:
                process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()

    def close(self, first: list[Process] = ()) -> None:
        """Stop ``first`` together (brokers, while the controllers still answer), then the rest."""
        try:
            self.stop_together([p for p in first if p in self.processes])
            self.stop_together([p for p in self.processes if p not in first])
        finally:
            for process in self.processes:  # never leave one behind, whatever failed above
                if process.alive:
                    process.kill()
            self.processes.clear()
