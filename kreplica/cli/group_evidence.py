"""Consumer group evidence for the commands that report consumer impact (``truncate-plan``,
``plan-elect --log-dirs``, ``timeline --log-dirs``), and their ``consumer_impact`` objects.

:func:`committed_offsets` is where the group loader (``kreplica.model.group_replay``) plugs in:
the ``__consumer_offsets`` partitions of the log directories a command reads already (and of
``--groups`` SOURCEs), replayed as the coordinator loads them. Until it is wired it reads nothing,
and a command with no group evidence writes exactly what it wrote before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from kreplica.model.groups import CommittedOffset
from kreplica.model.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion


def committed_offsets(log_dirs: Iterable[str], groups: Sequence[str] = ()) -> tuple[CommittedOffset, ...]:
    """Every group's committed offsets in the ``__consumer_offsets`` partitions of ``log_dirs``
    and ``groups`` (none until the group loader is wired)."""
    return ()


def truncation_objects(plans, replicas: Sequence[PartitionLog], offsets: Sequence[CommittedOffset],
                       kafka_version: KafkaVersion) -> list[dict]:
    """``truncate-plan``: the groups of the partition, for each follower that loses records."""
    if not offsets:
        return []
    from kreplica.analysis.consumers.truncation_impact import truncation_impacts
    from kreplica.report.consumer_impact import consumer_impact_object

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
