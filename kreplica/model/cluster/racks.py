"""Which brokers a cluster state knows, and their racks: the lookups placement and elections share.

Kept apart from :mod:`~kreplica.model.cluster.state` so that planners (``plan-reassign``,
``plan-elect``) ask one place. A ZooKeeper broker is "live" when its ``/brokers/ids/<id>``
registration exists (``alive``); a KRaft broker when it is registered and not fenced.
"""

from __future__ import annotations

from kreplica.model.cluster.state import ClusterState


def broker_racks(state: ClusterState) -> dict[int, str | None]:
    """``broker id -> rack`` (``None`` when the broker registered no rack), every registered broker."""
    return {b.id: b.rack for b in sorted(state.brokers, key=lambda b: b.id)}


def live_broker_ids(state: ClusterState) -> tuple[int, ...]:
    """The ids of the brokers that can hold replicas now, ascending: registered, alive, not fenced."""
    return tuple(sorted(b.id for b in state.brokers if b.alive and not b.fenced))
