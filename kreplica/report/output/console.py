"""The console every text report prints to (rich, imported only when text is written)."""

from __future__ import annotations

import sys
from typing import IO


class _TextConsole:
    """Builds the rich console for text output on first use (rich is imported only then)."""

    cls = None

    @classmethod
    def make(cls, stream: IO | None, soft_wrap: bool):
        if cls.cls is None:
            from rich.console import Console

            class _Console(Console):
                def on_broken_pipe(self) -> None:
                    # rich's own handler exits 1; a closed stdout is a normal end (exit 0,
                    # silent), which the command runner does for a BrokenPipeError
                    self.quiet = True
                    raise BrokenPipeError(32, "Broken pipe")

            cls.cls = _Console
        return cls.cls(file=stream if stream is not None else sys.stdout, highlight=False, soft_wrap=soft_wrap)


def text_console(stream: IO | None = None, *, soft_wrap: bool = False):
    """The console every text report prints to: stdout (or ``stream``), no highlighting, as wide
    as the terminal (``COLUMNS``, else 80 when there is none), a line longer than that wrapped
    at spaces (reports lay out their own lines with :mod:`kreplica.report.text.layout`; with
    ``soft_wrap=True`` rich leaves long lines as they are); a closed pipe raises
    :class:`BrokenPipeError` for the runner instead of rich's exit 1."""
    return _TextConsole.make(stream, soft_wrap)
