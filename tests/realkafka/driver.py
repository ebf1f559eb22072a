"""Kafka's own clients, in one JVM per scenario: ``Driver.java`` read one JSON command a line.

``DriverSession.call("describe", topics=[...])`` sends a command and waits (with a timeout) for
its one-line answer; an error Kafka's client raised comes back as ``DriverError`` with Kafka's
exception name, so a scenario can expect one (``NotLeaderOrFollowerException`` after a kill).
"""

from __future__ import annotations

import json
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.realkafka.jars import Release, java

ANSWER_TIMEOUT_S = 120.0


class DriverError(Exception):
    """A command the driver ran failed in Kafka's client: its exception class and message."""


class DriverSession:
    """A running driver on one cluster's bootstrap servers; ``close()`` ends it."""

    def __init__(self, release: Release, bootstrap: str, log: Path) -> None:
        self._log = log.open("a", encoding="utf-8")
        self._popen = subprocess.Popen(
            [java(), "-Xmx256m", "-cp", release.classpath(release.classes),
             "-Dlog4j.configuration=file:/dev/null", "-Dlog4j2.configurationFile=/dev/null",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "Driver", bootstrap],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, start_new_session=True)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._popen.stdout, selectors.EVENT_READ)
        self._buffer = b""

    def call(self, op: str, timeout_s: float = ANSWER_TIMEOUT_S, **arguments: Any) -> Any:
        line = json.dumps({"op": op, **arguments})
        self._log.write(f"> {line}\n")
        self._log.flush()
        self._popen.stdin.write(line.encode() + b"\n")
        self._popen.stdin.flush()
        answer = json.loads(self._read_line(timeout_s))
        self._log.write(f"< {json.dumps(answer)[:2000]}\n")
        self._log.flush()
        if "error" in answer:
            raise DriverError(answer["error"])
        return answer["ok"]

    def _read_line(self, timeout_s: float) -> bytes:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self._popen.poll() is not None:
                raise DriverError(f"the driver gave no answer within {timeout_s:.0f} s "
                                  f"(exit {self._popen.poll()})")
            if self._selector.select(timeout=left):
                chunk = self._popen.stdout.read1(65536)
                if not chunk:
                    raise DriverError(f"the driver ended (exit {self._popen.wait(timeout=10)})")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        if self._popen.poll() is None:
            self._popen.stdin.close()
            try:
                self._popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait(timeout=30)
        self._selector.close()
        self._log.close()
