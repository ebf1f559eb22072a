"""Read-only access to evidence files: the one place kreplica maps a file.

Evidence is never modified: files are opened with ``O_RDONLY`` and mapped with
``ACCESS_READ``, so even a bug cannot write through the mapping. Readers get a buffer
(an ``mmap``, or ``bytes`` for an empty file, which cannot be mapped) and walk it zero-copy.
The mapping is advised ``MADV_SEQUENTIAL``: every reader walks its file front to back, so the
kernel may read ahead aggressively and drop pages behind. ``-`` names stdin, which is spooled
to a temporary file so it can be mapped too and memory stays flat whatever its size.

A path that cannot be opened or mapped raises :class:`EvidenceError`, a
:class:`~kreplica.formats.errors.FormatError`, so the CLI reports it as bad input (exit 2)
with the path, never as an internal error.
"""

from __future__ import annotations

import mmap
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from kreplica.formats.errors import FormatError

STDIN = "-"

Buffer = bytes | mmap.mmap


class EvidenceError(FormatError):
    """An input path cannot be read: it does not exist, is not a file or directory of the
    expected kind, or the operating system refused to open it.

    Check the path and the permissions of the copy (kreplica only ever needs read access).
    """


@contextmanager
def open_buffer(path: str | os.PathLike) -> Iterator[Buffer]:
    """Yield a read-only buffer over ``path`` (``-`` = stdin, spooled to a temporary file).

    An empty file gives ``b""``. The mapping is closed on exit unless a consumer still holds a
    ``memoryview`` of it (then it goes when the last view does). Raises :class:`EvidenceError`
    when the file cannot be opened or mapped.
    """
    label = os.fspath(path)
    if label == STDIN:
        with tempfile.TemporaryFile(prefix="kreplica-stdin-") as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
            spool.flush()
            yield from _map_fd(spool.fileno(), STDIN)
        return
    try:
        fd = os.open(label, os.O_RDONLY)
    except OSError as exc:
        raise EvidenceError(exc.strerror or "cannot open", path=str(path)) from exc
    try:
        yield from _map_fd(fd, label)
    finally:
        os.close(fd)


def _map_fd(fd: int, label: str) -> Iterator[Buffer]:
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
