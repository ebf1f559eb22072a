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

Readers that pass through more than a few megabytes of one mapping (a segment walk, a search over
damage, the CRC or records of a huge batch) hand the pages behind them back to the kernel with
:class:`PageReleaser` (``MADV_DONTNEED``): file pages mapped read-only are dropped from the
process and fault in again from the page cache if read again, so resident memory stays flat
whatever the size of the file or of one batch. Searches over long runs of zeros also skip the
holes of a sparse file (:func:`data_extent`, ``SEEK_DATA``/``SEEK_HOLE``) instead of faulting
in their pages: a hole reads as zeros, so skipping it changes no finding.
"""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from kreplica.formats.errors import FormatError

STDIN = "-"
#: The largest small file (checkpoint, properties, metadata) read whole; a bigger one is refused.
SMALL_FILE_LIMIT = 256 << 20
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))

Buffer = bytes | mmap.mmap

PAGE = mmap.PAGESIZE
#: How far a reader inside one span (a batch's CRC or records) gets ahead of the pages it releases.
RELEASE_WINDOW = 16 << 20


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
    fd = open_regular(label)
    try:
        yield from _map_fd(fd, label)
    finally:
        os.close(fd)


def open_regular(path: str | os.PathLike) -> int:
    """A read-only descriptor of a regular file. Opened non-blocking, so a named pipe cannot
    hang the run; anything but a regular file (directory, pipe, socket, device) raises
    :class:`EvidenceError` naming what it is."""
    label = os.fspath(path)
    try:
        fd = os.open(label, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise EvidenceError(exc.strerror or "cannot open", path=label) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise EvidenceError(f"is {what}, not a regular file", path=label)
    return fd


def refuse_special(path: str | os.PathLike) -> None:
    """Raise :class:`EvidenceError` when ``path`` exists and is neither a regular file nor a
    directory (a named pipe, socket or device given as evidence); stdin ``-`` is left alone."""
    label = os.fspath(path)
    if label == STDIN:
        return
    try:
        mode = os.stat(label).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise EvidenceError(f"is {what}, not a regular file or directory", path=label)


def read_small_file(path: str | os.PathLike, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """The whole content of a small evidence file (checkpoints, properties), read-only; a
    regular file only, and at most ``limit`` bytes (a bigger one is refused, not read)."""
    label = os.fspath(path)
    fd = open_regular(label)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise EvidenceError(f"is {size} bytes, more than a file of this kind can hold ({limit})", path=label)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)[:limit]
    finally:
        os.close(fd)


class PageReleaser:
    """Hands pages of an mmap back to the kernel (``MADV_DONTNEED``) once a reader has passed them.

    ``mapping`` is the ``mmap`` under the reader's buffer; for anything else (``bytes``, a
    ``memoryview``, ``None``, or a platform without ``MADV_DONTNEED``) every call is a no-op.
    ``start`` is where the reader begins: nothing before its page is released.
    """

    __slots__ = ("advise", "done")

    def __init__(self, mapping=None, start: int = 0) -> None:
        self.advise = getattr(mapping, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
        self.done = max(start, 0) & ~(PAGE - 1)

    @property
    def active(self) -> bool:
        """True when calls release anything (the buffer is an mmap)."""
        return self.advise is not None

    def upto(self, pos: int, step: int | None = None) -> None:
        """Release the pages wholly before the page preceding ``pos``, once ``step`` bytes of them
        are pending (default :data:`RELEASE_WINDOW`; ``0``: whatever is pending). The page before
        ``pos`` is kept because readers look a few bytes back."""
        if self.advise is None:
            return
        end = (pos - PAGE) & ~(PAGE - 1)
        if end - self.done >= max(RELEASE_WINDOW if step is None else step, PAGE):
            self.advise(mmap.MADV_DONTNEED, self.done, end - self.done)
            self.done = end

    def next_due(self, step: int | None = None) -> int:
        """The first ``pos`` at which :meth:`upto` (``pos``, ``step``) releases anything (beyond
        any file when calls are no-ops), so a loop over many small items compares one int per
        item and calls :meth:`upto` only when it will act."""
        if self.advise is None:
            return sys.maxsize
        return self.done + max(RELEASE_WINDOW if step is None else step, PAGE) + PAGE

    def checksum(self, crc, buf, start: int, end: int) -> int:
        """``crc(buf[start:end])`` computed :data:`RELEASE_WINDOW` bytes at a time, releasing each
        window's pages once it is summed. ``crc(data, value)`` continues a running checksum (as
        :func:`~kreplica.formats.checksums.crc32c` does); ``buf`` is a buffer over the mapping."""
        window = RELEASE_WINDOW
        value = 0
        for w in range(start, end, window):
            value = crc(buf[w:min(end, w + window)], value)
            self.upto(min(end, w + window) + PAGE, window)
        return value


class _FileMap(mmap.mmap):
    """The mapping :func:`open_buffer` yields: an ``mmap`` that also knows the open descriptor of
    its file while the file is open (``fd``; ``None`` after), for :func:`data_extent`."""

    fd: int | None = None


def data_extent(mapping, pos: int, end: int) -> tuple[int, int]:
    """``(start, stop)``: the first stretch at or after ``pos`` and before ``end`` that may hold
    data, as the file system tells (``lseek`` with ``SEEK_DATA`` and ``SEEK_HOLE``). The bytes
    from ``pos`` to ``start``, and from ``stop`` up to the next such stretch, lie in holes of a
    sparse file and read as zeros; a stretch that may hold data can hold zeros too. Gives
    ``(end, end)`` when only holes are left, and ``(pos, end)`` when ``mapping`` is not one
    :func:`open_buffer` made or the file system cannot tell.
    """
    fd = getattr(mapping, "fd", None) if isinstance(mapping, _FileMap) else None
    if fd is None or pos >= end or not hasattr(os, "SEEK_DATA"):
        return pos, end
    try:
        start = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError as exc:  # ENXIO: no data from pos to the end of the file
        return (end, end) if exc.errno == errno.ENXIO else (pos, end)
    if start >= end:
        return end, end
    try:
        stop = os.lseek(fd, start, os.SEEK_HOLE)
    except OSError:
        return start, end
    return (start, min(stop, end)) if stop > start else (start, end)


def _map_fd(fd: int, label: str) -> Iterator[Buffer]:
    size = os.fstat(fd).st_size
    if size == 0:
        yield b""
        return
    try:
        mm = _FileMap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise EvidenceError(f"cannot map the file: {exc}", path=label) from exc
    try:
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
            mm.madvise(mmap.MADV_SEQUENTIAL)
        mm.fd = fd
        yield mm
    finally:
        mm.fd = None  # the descriptor is closed next; a view kept past this must not seek it
        try:
            mm.close()
        except BufferError:  # a consumer still holds a view; the mapping goes with it
            pass
