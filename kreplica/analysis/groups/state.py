"""The answer of ``kreplica groups`` for one ``__consumer_offsets`` partition: its replicas'
states joined into one, with expiry applied and the offsets checked against the data.

Per coordinator partition: the replicas compared (:mod:`~kreplica.analysis.groups.replicas`:
the one with the highest log end offset answers), expiry applied to the answer as of the
evaluation time (:mod:`kreplica.model.coordinator.expiry`), the groups asked for kept, and their
committed offsets checked against the data partitions (:mod:`~kreplica.analysis.groups.offset_fit`).

The evaluation time is the one given; else the point in time asked for (``--at-time``); else the
newest record timestamp the answering replica replayed: the moment its coordinator last wrote,
the nearest the evidence comes to "when the copy was taken". ``None`` when it replayed nothing
(no offset is then marked expired).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from kreplica.analysis.groups.offset_fit import check_offsets
from kreplica.analysis.groups.replicas import GroupDisagreement, compare_replicas
from kreplica.formats.findings import Finding
from kreplica.model.coordinator.expiry import MINUTE_MS, apply_expiry
from kreplica.model.coordinator.replay import GroupPartitionState
from kreplica.model.coordinator.sources import DataReplica
from kreplica.model.versions import KafkaVersion


@dataclass(frozen=True, slots=True)
class PartitionGroups:
    """One coordinator partition answered: ``chosen`` (expiry applied, the groups asked for),
    every replica as loaded, their disagreements, the expiry settings, and the findings of the
    offsets against the data."""

    chosen: GroupPartitionState
    replicas: tuple[GroupPartitionState, ...]
    disagreements: tuple[GroupDisagreement, ...]
    expiry_time: int | None
    retention_minutes: int
    fit: tuple[Finding, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The replicas' own findings, then the offsets'."""
        return tuple(f for s in self.replicas for f in s.findings) + self.fit

    @property
    def has_errors(self) -> bool:
        return any(f.is_error for f in self.findings)


def partition_groups(states: Sequence[GroupPartitionState], version: KafkaVersion, *, retention_minutes: int,
                     expiry_time: int | None = None, at_time: int | None = None,
                     groups: Collection[str] | None = None,
                     data: Callable[[str, int], Sequence[DataReplica]] = lambda topic, partition: ()
                     ) -> PartitionGroups:
    """The answer for the replicas ``states`` of one partition (module docstring); ``groups``
    keeps only those (``None``: all); ``data(topic, partition)`` gives the replicas of a data
    partition read (none: not judged)."""
    chosen, disagreements = compare_replicas(states)
    when = expiry_time if expiry_time is not None else at_time if at_time is not None else chosen.newest_timestamp
    if when is not None:
        chosen = apply_expiry(chosen, when, retention_minutes * MINUTE_MS, version)
    if groups is not None:
        wanted = set(groups)
        chosen = replace(chosen, groups=tuple(g for g in chosen.groups if g.group in wanted))
        disagreements = tuple(d for d in disagreements if d.group in wanted)
    needed = {(o.topic, o.partition) for g in chosen.groups for o in g.offsets}
    replicas = {key: data(*key) for key in sorted(needed)}
    fit = tuple(check_offsets(chosen.groups, replicas))
    return PartitionGroups(chosen, tuple(states), disagreements, when, retention_minutes, fit)
