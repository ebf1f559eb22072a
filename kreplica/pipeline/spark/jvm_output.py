"""What Spark's driver JVM writes to its stdout and stderr: kept off the terminal unless the run
asks for Spark's log (``--debug``, ``--spark-log``).

Most of it is log4j's, which the shipped configuration (``log4j2.properties``) already keeps at
the level asked for. The rest never passes through log4j: the JVM's own warnings before Spark
starts (``WARNING: Using incubator modules: jdk.incubator.vector``, which Spark 4's launcher
always asks for and no JVM flag silences), uncaught exceptions, and the stderr of the Python
workers, which Spark copies to the JVM's (the tracebacks of workers stopped by Ctrl-C among
them). PySpark starts the JVM with the driver's stdout and stderr, so while it starts,
:meth:`JvmOutput.launching` points both at a pipe: the JVM keeps the pipe for its life, and a
thread copies what comes through to kreplica's stderr when :attr:`JvmOutput.show` says so, and
drops it otherwise. kreplica's own stdout and stderr are restored before anything else runs.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_CHUNK = 1 << 16


class JvmOutput:
    """The pipe a driver JVM writes into, and whether what comes through reaches stderr. One per
    process: PySpark keeps its JVM for the life of the process, across sessions."""

    def __init__(self) -> None:
        self.show = False
        self._stderr = 2  # where shown output goes: the process's stderr, or a copy while fd 2 is the pipe
        self._lock = threading.Lock()

    @contextmanager
    def launching(self) -> Iterator[None]:
        """Around the start of the JVM: the process's stdout and stderr (file descriptors 1 and
        2, which the JVM inherits) are the pipe until the block ends."""
        read_end, write_end = os.pipe()
        threading.Thread(target=self._copy, args=(read_end,), name="kreplica-jvm-output", daemon=True).start()
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        saved = (os.dup(1), os.dup(2))
        with self._lock:
            self._stderr = saved[1]
        try:
            os.dup2(write_end, 1)
            os.dup2(write_end, 2)
            os.close(write_end)
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                _flush(stream)
            with self._lock:
                for fd, copy in zip((1, 2), saved):
                    os.dup2(copy, fd)
                    os.close(copy)
                self._stderr = 2

    def _copy(self, read_end: int) -> None:
        """Until the JVM (the last holder of the write end) exits."""
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while chunk := pipe.read(_CHUNK):
                if self.show:
                    with self._lock:
                        _write_all(self._stderr, chunk)


def _write_all(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass  # stderr closed: nobody left to tell


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass


#: The process's JVM output (PySpark starts at most one driver JVM per process).
JVM_OUTPUT = JvmOutput()
