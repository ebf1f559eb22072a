"""Read-only access to evidence files.

Evidence is never modified: files are opened with ``O_RDONLY`` and mapped with
``ACCESS_READ``, so even a bug cannot write through the mapping. Readers get a buffer
(an ``mmap``, or ``bytes`` for empty files) and walk it zero-copy.
"""

from __future__ import annotations

import mmap
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kreplica.formats.errors import FormatError

STDIN = "-"


class EvidenceError(FormatError):
    """An input path cannot be read: it does not exist, is not a file or directory of the
    expected kind, or the operating system refused to open it.

    Check the path and the permissions of the copy (kreplica only ever needs read access).
    """


@contextmanager
def open_buffer(path: str | Path) -> Iterator[object]:
    """Yield a read-only buffer over ``path`` (``-`` = stdin, spooled to a temporary file so it
    can be mapped and memory stays flat whatever its size)."""
    if str(path) == STDIN:
        with tempfile.TemporaryFile(prefix="kreplica-stdin-") as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
            spool.flush()
            yield from _map_fd(spool.fileno(), STDIN)
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise EvidenceError(exc.strerror or "cannot open", path=str(path)) from exc
    try:
        yield from _map_fd(fd, str(path))
    finally:
        os.close(fd)


def _map_fd(fd: int, label: str) -> Iterator[object]:
    size = os.fstat(fd).st_size
    if size == 0:
        yield b""
        return
    try:
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise EvidenceError(f"cannot map the file: {exc}", path=label) from exc
    try:
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
            mm.madvise(mmap.MADV_SEQUENTIAL)
        yield mm
    finally:
        try:
            mm.close()
        except BufferError:  # a consumer still holds a view; the mapping goes with it
            pass
