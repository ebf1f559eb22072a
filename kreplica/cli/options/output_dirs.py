"""Directories a command writes its own files into (``plan-reassign --output-dir``,
``truncate-plan --output-dir``): checked before any work is done, and never written over silently.

A command's earlier output left in such a directory is a trap: an operator who runs
``phase-1.json`` of an old plan beside a new ``proposal.json`` executes the old plan. So a
command names what it would replace and refuses (exit 2) unless ``--overwrite``, which removes
only the files that command writes — recognised by name and being regular files — and nothing
else a user keeps there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from kreplica.cli.runner import error_line
from kreplica.formats.usage import UsageError

#: how many names a one-line refusal lists before "and N more"
LISTED_NAMES = 5

#: the one spelling of a directory a command writes into, and of writing over an earlier run there
OUTPUT_DIR_OPTION = "--output-dir"
OVERWRITE_OPTION = "--overwrite"


def require_writable_dir(path: Path, option: str) -> None:
    """``path`` is a directory this process may create files in, or can be created: else a
    one-line usage error (exit 2) naming it, before anything is read or written."""
    if path.exists():
        if not path.is_dir():
            raise UsageError("exists and is not a directory", path=str(path), option=option)
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError("is not writable (permission denied)", path=str(path), option=option)
        return
    parent = next((p for p in path.absolute().parents if p.exists()), None)
    if parent is None or not parent.is_dir():
        raise UsageError(f"cannot be created: {parent} is not a directory", path=str(path), option=option)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot be created: {parent} is not writable (permission denied)",
                          path=str(path), option=option)


def listing(names: Iterable[str]) -> str:
    """``a, b, c`` (sorted), at most :data:`LISTED_NAMES` of them and then ``and N more``."""
    names = sorted(names)
    shown = ", ".join(names[:LISTED_NAMES])
    return shown if len(names) <= LISTED_NAMES else f"{shown} and {len(names) - LISTED_NAMES} more"


def is_regular_file(path: Path) -> bool:
    """A regular file itself, not a symbolic link to one: the only kind ``--overwrite`` removes."""
    return path.is_file() and not path.is_symlink()


def own_files(named: Sequence[Path], directory: Path, option: str) -> tuple[Path, ...]:
    """``named`` (entries bearing the names of this command's files), each a regular file, as
    the command writes them; a directory, link or device under such a name is refused (exit 2):
    it is not a file the command wrote, and writing there would write through it."""
    others = [p.name for p in named if not is_regular_file(p)]
    if others:
        raise UsageError(f"holds {listing(others)} under the name of a file kreplica writes, but not as one; "
                          "choose another directory", path=str(directory), option=option)
    return tuple(named)


def remove_earlier(files: Iterable[Path]) -> None:
    """Remove an earlier run's ``files`` (``--overwrite``) and say which, on stderr."""
    removed = []
    for path in files:
        path.unlink(missing_ok=True)
        removed.append(str(path))
    if removed:
        error_line(f"kreplica: note: {OVERWRITE_OPTION} removed the earlier run's {', '.join(removed)}")
