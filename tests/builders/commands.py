"""The command line's shape, read off the application itself: which commands are groups of
subcommands (``kreplica zk dump``, ``kreplica fleet scan``), as the man pages name them."""

from __future__ import annotations

from kreplica.cli.main import COMMANDS

#: the commands that hold subcommands
GROUPS = frozenset(name for name, (_module, group) in COMMANDS.items() if group is not None)
