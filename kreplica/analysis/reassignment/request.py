"""From what a user asked to a :class:`~kreplica.analysis.reassignment.planner.PlanRequest`: which
brokers are targets, which racks count, and which goals each action pursues.

Targets default to the source's live brokers, less the brokers being removed and plus the brokers
being added; ``brokers`` (``--brokers``) replaces the live list. Racks come from the source and
``racks`` (``--racks``) adds or overrides; ``rack_aware=False`` plans without racks. Goals:

| action | fixes rack violations | balances replica counts | reorders for leader balance |
| --- | --- | --- | --- |
| ``decommission``, ``replace-broker``, ``set-replication-factor`` | no (creates none) | no (fills the least loaded) | only partitions whose leader moved |
| ``add-brokers`` | no (creates none) | yes | yes |
| ``rebalance`` | yes | yes | yes |
| ``generate`` | Kafka's placement | | |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreplica.analysis.reassignment.planner import PlanError, PlanRequest
from kreplica.analysis.reassignment.placement import StartDraw
from kreplica.model.cluster.assignment import Assignment


def _known(assignment: Assignment) -> set[int]:
    return set(assignment.live) | set(assignment.racks) | {b for p in assignment.partitions for b in p.replicas}


def build_request(assignment: Assignment, action: str, *, brokers: Iterable[int] | None = None,
                  racks: Mapping[int, str] | None = None, rack_aware: bool = True,
                  removed: Iterable[int] = (), added: Iterable[int] = (), replace: Mapping[int, int] | None = None,
                  replication_factor: int | None = None, topics: Iterable[str] | None = None,
                  seed: int = 0, start_index: int | None = None) -> PlanRequest:
    """The request for ``action`` (see the module docstring). Raises :class:`PlanError` for a
    broker to remove or replace that the source does not know, a broker both added and removed,
    a topic the source does not have, or a replication factor below 1."""
    known = _known(assignment)
    removed = frozenset(removed)
    added = frozenset(added)
    replace = dict(replace or {})
    unknown = sorted((removed | set(replace)) - known)
    if unknown:
        raise PlanError(f"unknown broker(s) {unknown}: " + (f"the source knows brokers {_ranges(sorted(known))}"
                                                           if known else _NO_BROKER))
    if removed & added:
        raise PlanError(f"broker(s) {sorted(removed & added)} both added and removed")
    for old, new in replace.items():
        if old == new:
            raise PlanError(f"replace-broker {old}={new}: a broker cannot replace itself")
    if replication_factor is not None and replication_factor < 1:
        raise PlanError(f"replication factor must be at least 1, got {replication_factor}")
    topic_list = None
    if topics is not None:
        topic_list = tuple(dict.fromkeys(topics))
        missing = [t for t in topic_list if t not in set(assignment.topics)]
        if missing:
            raise PlanError(f"unknown topic(s) {missing}: the source has {len(assignment.topics)} topics "
                            f"({', '.join(assignment.topics[:5])}{', ...' if len(assignment.topics) > 5 else ''})")
    base = set(brokers) if brokers is not None else set(assignment.live)
    targets = tuple(sorted((base | added | set(replace.values())) - removed - set(replace)))
    if not targets and not base:
        # nothing to plan onto, and not because the request removes every broker: say so
        down = sorted(known)
        raise PlanError((f"no live broker in the evidence (known but not alive: {_ranges(down)})" if down
                         else _NO_BROKER) + ": give the target brokers with --brokers")
    rack_map: dict[int, str | None] = {}
    if rack_aware:
        rack_map = {b: assignment.racks.get(b) for b in targets}
        rack_map.update({b: r for b, r in (racks or {}).items()})
    else:
        rack_map = {b: None for b in targets}
    balance = action in ("add-brokers", "rebalance")
    return PlanRequest(
        action=action, targets=targets, racks=rack_map, removed=removed, replace=replace,
        replication_factor=replication_factor, topics=topic_list, fix_racks=action == "rebalance",
        balance_replicas=balance, balance_leaders=balance, seed=seed,
        start=StartDraw(start_index, start_index) if start_index is not None else None)


_NO_BROKER = "the source knows no broker (none is registered, alive or holds a replica)"


def _ranges(ids: list[int]) -> str:
    """``1-6,9`` for [1,2,3,4,5,6,9]."""
    out = []
    for b in ids:
        if out and out[-1][1] == b - 1:
            out[-1][1] = b
        else:
            out.append([b, b])
    return ",".join(str(a) if a == z else f"{a}-{z}" for a, z in out)
