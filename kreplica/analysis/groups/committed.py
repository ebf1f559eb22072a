"""The committed offsets of every group, as ``kreplica groups`` answers them: what the commands
that report consumer impact (``truncate-plan``, ``plan-elect --log-dirs``, ``timeline
--log-dirs``) and ``transactions`` (the groups a hanging transaction stalls) join with.

The ``__consumer_offsets`` partitions of the paths given are loaded the way ``groups`` loads them
(the same resolution, :func:`~kreplica.model.coordinator.sources.find_group_sources`, and loader,
:func:`~kreplica.model.coordinator.fold.load_group_partition`) and answered by
:func:`~kreplica.analysis.groups.state.partition_groups`: the replica with the highest log end
answers, expiry marked as of its newest record.
"""

from __future__ import annotations

from collections.abc import Sequence

from kreplica.analysis.groups.state import partition_groups
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion


def committed_offsets(paths: Sequence[str], kafka_version: KafkaVersion = DEFAULT_VERSION) -> tuple[CommittedOffset, ...]:
    """Every group's committed offsets in the ``__consumer_offsets`` partitions of ``paths``
    (broker log directories or ``__consumer_offsets-N`` directories; none: nothing), loaded by
    the group coordinator of ``kafka_version`` (module docstring)."""
    if not paths:
        return ()
    from kreplica.model.coordinator.expiry import default_retention_minutes
    from kreplica.model.coordinator.fold import load_group_partition
    from kreplica.model.coordinator.replay import coordinator_for
    from kreplica.model.coordinator.sources import LogDirFiles, find_group_sources

    found = find_group_sources(list(paths))
    files = LogDirFiles()
    coordinator = coordinator_for(kafka_version)
    retention = default_retention_minutes(kafka_version)
    out: list[CommittedOffset] = []
    for replicas in found.replicas.values():
        states = [load_group_partition(p, d, coordinator, checkpoints=files.checkpoints(d)) for p, d in replicas]
        answer = partition_groups(states, kafka_version, retention_minutes=retention)
        out += [o for g in answer.chosen.groups for o in g.offsets]
    return tuple(out)
