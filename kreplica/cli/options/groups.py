"""Consumer group evidence of the commands that join groups with what they find
(``truncate-plan``, ``plan-elect --log-dirs``, ``timeline --log-dirs``: consumer impact;
``transactions``: the groups a hanging transaction stalls): ``--groups SOURCE`` and the
``__consumer_offsets`` partitions of the log directories the command reads anyway, checked before
anything is written (:func:`check_group_sources`) and named for the loader
(:func:`group_paths`; :func:`~kreplica.analysis.groups.committed.committed_offsets` loads them as
``kreplica groups`` does). A command with no group evidence writes exactly what it wrote without.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Optional

import typer

GroupsOption = Annotated[Optional[list[str]], typer.Option(
    "--groups", metavar="SOURCE",
    help="Consumer group evidence beside the __consumer_offsets partitions of the log directories read: a broker "
         "log directory or a __consumer_offsets-N directory, as for kreplica groups (repeatable). Each group of a "
         "partition that loses records gets a consumer_impact.")]


def check_group_sources(groups: Sequence[str] | None) -> None:
    """Refuse (exit 2, as ``kreplica groups`` does) a ``--groups`` SOURCE that does not exist, or
    SOURCEs that hold no ``__consumer_offsets`` partition, before anything is written."""
    if not groups:
        return
    from kreplica.cli.options.common import require_paths
    from kreplica.model.coordinator.sources import find_group_sources

    require_paths(groups, "--groups")
    find_group_sources(list(groups))


def group_paths(log_dirs: Iterable[str], groups: Sequence[str] | None = ()) -> list[str]:
    """The group evidence: those of ``log_dirs`` that are or hold a ``__consumer_offsets``
    partition, then the ``--groups`` SOURCEs."""
    from kreplica.model.coordinator.sources import consumer_offsets_paths

    return [*consumer_offsets_paths(log_dirs), *(groups or ())]
