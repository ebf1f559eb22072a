"""Consumer group evidence for the commands that report consumer impact (``truncate-plan``,
``plan-elect --log-dirs``, ``timeline --log-dirs``), and their ``consumer_impact`` objects; the
committed offsets ``transactions`` names the groups a hanging transaction stalls with.

:func:`committed_offsets` loads the ``__consumer_offsets`` partitions of the log directories a
command reads already and of its ``--groups`` SOURCEs the way ``kreplica groups`` does (the same
source resolution, :func:`~kreplica.model.coordinator.sources.find_group_sources`, and loader,
:func:`~kreplica.model.coordinator.fold.load_group_partition`; the replica with the highest log end
answers, expiry marked as of its newest record). A command with no group evidence writes exactly
what it wrote before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence

from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.logdir.log_dir import LogDir
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion


def check_group_sources(groups: Sequence[str]) -> None:
    """Refuse (exit 2, as ``kreplica groups`` does) a ``--groups`` SOURCE that does not exist, or
    SOURCEs that hold no ``__consumer_offsets`` partition, before anything is written."""
    if not groups:
        return
    from kreplica.cli.options import require_paths
    from kreplica.model.coordinator.sources import find_group_sources

    require_paths(groups, "--groups")
    find_group_sources(list(groups))


def _holding_offsets(log_dirs: Iterable[str]) -> list[str]:
    """The paths among ``log_dirs`` that are or hold a ``__consumer_offsets`` partition (one that
    cannot be listed holds none: the command reports its own reading of it)."""
    import os

    from kreplica.formats.coordinator.records import CONSUMER_OFFSETS

    prefix = CONSUMER_OFFSETS + "-"

    def is_partition(name: str) -> bool:
        return name.startswith(prefix) and name[len(prefix):].isdigit()

    out = []
    for path in log_dirs:
        if is_partition(os.path.basename(os.path.normpath(path))):
            out.append(path)
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        if any(map(is_partition, names)):
            out.append(path)
    return out


def given_paths(log_dirs: Iterable[LogDir]) -> list[str]:
    """What the user gave for these log directories: a whole one's path, else the partition
    directories given in it (a partition directory given alone does not bring its siblings)."""
    return [d.path for d in log_dirs if d.is_whole] + [p.path for d in log_dirs if not d.is_whole
                                                       for p in d.partitions]


def committed_offsets(log_dirs: Iterable[str], groups: Sequence[str] = (),
                      kafka_version: KafkaVersion = DEFAULT_VERSION) -> tuple[CommittedOffset, ...]:
    """Every group's committed offsets in the ``__consumer_offsets`` partitions of ``log_dirs``
    and ``groups``, loaded by the group coordinator of ``kafka_version`` (module docstring)."""
    paths = [*_holding_offsets(log_dirs), *groups]
    if not paths:
        return ()
    from kreplica.analysis.groups.state import partition_groups
    from kreplica.model.coordinator.expiry import default_retention_minutes
    from kreplica.model.coordinator.fold import load_group_partition
    from kreplica.model.coordinator.replay import coordinator_for
    from kreplica.model.coordinator.sources import LogDirFiles, find_group_sources

    found = find_group_sources(paths)
    files = LogDirFiles()
    coordinator = coordinator_for(kafka_version)
    retention = default_retention_minutes(kafka_version)
    out: list[CommittedOffset] = []
    for replicas in found.replicas.values():
        states = [load_group_partition(p, d, coordinator, checkpoints=files.checkpoints(d)) for p, d in replicas]
        answer = partition_groups(states, kafka_version, retention_minutes=retention)
        out += [o for g in answer.chosen.groups for o in g.offsets]
    return tuple(out)


def truncation_objects(plans, replicas: Sequence[PartitionLog], load_offsets: Callable[[], Sequence[CommittedOffset]],
                       kafka_version: KafkaVersion) -> list[dict]:
    """``truncate-plan``: the groups of the partition, for each follower that loses records;
    ``load_offsets`` is called only when one does (the group evidence can be large)."""
    from kreplica.analysis.consumers.truncation_impact import plan_loss, truncation_impacts
    from kreplica.report.consumer_impact import consumer_impact_object

    by_label = {r.label: r for r in replicas}
    if not any(plan_loss(p, by_label[p.follower]) is not None for p in plans):
        return []
    offsets = load_offsets()
    if not offsets:
        return []

    return [consumer_impact_object(i) for i in truncation_impacts(plans, replicas, offsets,
                                                                  kafka_version=kafka_version)]


def election_objects(elections, evidence: Mapping[tuple, Mapping[int, PartitionLog]],
                     offsets: Sequence[CommittedOffset], kafka_version: KafkaVersion) -> list[dict]:
    """``plan-elect --log-dirs``: per partition with replica evidence, from the leader before the
    scenario's first election to the leader after its last (an unclean election anywhere makes
    it unclean)."""
    if not offsets:
        return []
    from kreplica.analysis.election.consumer_impact import election_impacts
    from kreplica.report.consumer_impact import consumer_impact_object

    per_key: dict[tuple, list] = {}
    for e in elections:
        per_key.setdefault(e.key, []).append(e)
    out = []
    for key, chain in per_key.items():
        if key not in evidence:
            continue
        whole = dataclasses.replace(chain[-1], before=chain[0].before, unclean=any(e.unclean for e in chain))
        out += [consumer_impact_object(i) for i in election_impacts(whole, evidence[key], offsets,
                                                                    kafka_version=kafka_version)]
    return out


def timeline_objects(evidence, replicas: Mapping[str, Mapping[int, PartitionLog]],
                     offsets: Sequence[CommittedOffset]) -> list[dict]:
    """``timeline --log-dirs``: each unclean election that lost records, per partition."""
    if not offsets:
        return []
    from kreplica.analysis.timeline.consumer_impact import election_impacts
    from kreplica.report.consumer_impact import consumer_impact_object

    out = []
    for pe in evidence:
        logs = replicas.get(f"{pe.topic}-{pe.partition}", {})
        for loss in pe.losses:
            out += [consumer_impact_object(i) for i in election_impacts(loss, logs, offsets)]
    return out


def loses_consumed_records(objs: Iterable[dict]) -> bool:
    """Whether some group is known to have consumed records the log no longer has."""
    from kreplica.analysis.consumers.impact import LOST_REPLICA

    return any(o["read_from"] == LOST_REPLICA and o["consumed_and_lost"] for o in objs)
