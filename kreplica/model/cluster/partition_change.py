"""A KRaft partition registration: how a ``PartitionRecord`` starts one and how a
``PartitionChangeRecord`` changes it.

Sources: Kafka ``metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java``
(the ``PartitionRecord`` constructor and ``merge``), ``LeaderConstants.java`` and
``LeaderRecoveryState.java`` (``changeTo``) at apache/kafka trunk after 3.9. The one merge is used
by the one cluster image (:mod:`~kreplica.model.cluster.kraft_image`: cluster-state and the KRaft timeline) and
the KRaft election rules, which build a change as the controller does and merge it.

``merge``, field by field:

* ``replicas``, ``isr``, ``removing_replicas``, ``adding_replicas``, ``eligible_leader_replicas``,
  ``last_known_elr``: null (``None``) keeps the current list; a list, even an empty one,
  replaces it;
* ``leader``: :data:`NO_LEADER_CHANGE` keeps the leader and its epoch; any other value,
  :data:`~kreplica.model.cluster.state.NO_LEADER` and the current leader included, sets the
  leader and bumps the leader epoch by one;
* ``leader_recovery_state``: :data:`NO_RECOVERY_STATE_CHANGE` keeps it, any other value sets it
  (Kafka refuses a value other than RECOVERED or RECOVERING; it is kept as read here);
* ``directories`` (KIP-858): null keeps the current ones, a list replaces them; then, as
  ``defaultToMigrating`` does, directories that are all ``MIGRATING`` (or none at all) become one
  ``MIGRATING`` per replica of the new replica set. A ``PartitionRecord`` without directories
  (before version 1) is one ``MIGRATING`` per replica the same way. A partition state that did
  not come from a record and has no directories (ZooKeeper's, in the election rules) keeps none;
* the partition epoch (``PartitionState.version``) always moves by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kreplica.model.cluster.state import DIRECTORY_MIGRATING, PartitionState

#: ``LeaderConstants.NO_LEADER_CHANGE``: a change record that leaves the leader (and its epoch) alone.
NO_LEADER_CHANGE = -2
#: ``LeaderRecoveryState.NO_CHANGE``: a change record that leaves the leader recovery state alone.
NO_RECOVERY_STATE_CHANGE = -1


def _ints(values: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


@dataclass(frozen=True, slots=True)
class PartitionChange:
    """The fields of a ``PartitionChangeRecord`` that change a registration; the defaults are
    the record's own (nothing changes). ``elr`` is the record's ``eligible_leader_replicas``."""

    leader: int = NO_LEADER_CHANGE
    isr: tuple[int, ...] | None = None
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = NO_RECOVERY_STATE_CHANGE
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None
    directories: tuple[str, ...] | None = None

    @classmethod
    def from_record(cls, data: Mapping) -> PartitionChange:
        """The change a decoded ``PartitionChangeRecord`` carries (fields a version lacks count
        as null)."""
        return cls(leader=data["leader"], isr=_ints(data["isr"]), replicas=_ints(data["replicas"]),
                   removing_replicas=_ints(data["removing_replicas"]),
                   adding_replicas=_ints(data["adding_replicas"]),
                   leader_recovery_state=data["leader_recovery_state"],
                   elr=_ints(data.get("eligible_leader_replicas")),
                   last_known_elr=_ints(data.get("last_known_elr")),
                   directories=_ints(data.get("directories")))

    @property
    def is_noop(self) -> bool:
        """Nothing set (``PartitionChangeBuilder.changeRecordIsNoOp``): the controller writes no record."""
        return self == _NOOP

    @property
    def moves_replicas(self) -> bool:
        """Whether the record sets the replicas or the replicas being added or removed."""
        return self.replicas is not None or self.adding_replicas is not None or self.removing_replicas is not None


_NOOP = PartitionChange()


def _default_to_migrating(directories: tuple[str, ...], replicas: int) -> tuple[str, ...]:
    """``PartitionRegistration.defaultToMigrating``: no directory, or only ``MIGRATING`` ones, is
    one ``MIGRATING`` per replica."""
    if all(d == DIRECTORY_MIGRATING for d in directories):
        return (DIRECTORY_MIGRATING,) * replicas
    return directories


def partition_from_record(data: Mapping) -> PartitionState:
    """A registration from a decoded ``PartitionRecord`` (``new PartitionRegistration(record)``):
    no ELR fields (before version 2) means empty lists; directories as ``defaultToMigrating``
    gives them (module docstring)."""
    return PartitionState(
        partition=data["partition_id"], replicas=tuple(data["replicas"]),
        adding_replicas=tuple(data["adding_replicas"]), removing_replicas=tuple(data["removing_replicas"]),
        leader=data["leader"], leader_epoch=data["leader_epoch"], isr=tuple(data["isr"]), controller_epoch=None,
        leader_recovery_state=data["leader_recovery_state"], version=data["partition_epoch"],
        elr=tuple(data.get("eligible_leader_replicas") or ()),
        last_known_elr=tuple(data.get("last_known_elr") or ()),
        directories=_default_to_migrating(tuple(data.get("directories") or ()), len(data["replicas"])))


def merge_partition_change(partition: PartitionState, change: PartitionChange) -> PartitionState:
    """``PartitionRegistration.merge``: ``partition`` after ``change`` (rules in the module
    docstring). A partition without a partition epoch (``version`` ``None``) counts from 0."""
    changes: dict = {"version": (partition.version or 0) + 1}
    for name in ("replicas", "isr", "removing_replicas", "adding_replicas", "elr", "last_known_elr"):
        value = getattr(change, name)
        if value is not None:
            changes[name] = value
    if change.leader != NO_LEADER_CHANGE:
        changes["leader"] = change.leader
        changes["leader_epoch"] = partition.leader_epoch + 1
    if change.leader_recovery_state != NO_RECOVERY_STATE_CHANGE:
        changes["leader_recovery_state"] = change.leader_recovery_state
    directories = partition.directories if change.directories is None else change.directories
    if directories or change.directories is not None:
        changes["directories"] = _default_to_migrating(directories, len(changes.get("replicas", partition.replicas)))
    return replace(partition, **changes)
