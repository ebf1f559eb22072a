"""The contract's exit statuses, one place for all commands."""

from __future__ import annotations

import enum


@enum.unique
class ExitCode(enum.IntEnum):
    OK = 0            #: the run completed and found nothing wrong
    PROBLEMS = 1      #: the run completed and found problems in the evidence
    USAGE = 2         #: bad usage, or unreadable / unrecognised input
    INTERNAL = 3      #: a bug in kreplica (``--debug`` shows the traceback)
    INTERRUPTED = 130  #: stopped by Ctrl-C (SIGINT): 128 + the signal number, as shells report it
