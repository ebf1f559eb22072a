"""The what-if sweep: every combination of up to N failed brokers (or racks), ranked by impact.

For each combination the broker-failure handling of the chosen rule set runs (ZooKeeper:
``onBrokerFailure``'s offline elections; KRaft: ``handleBrokerFenced`` per broker — see
:mod:`~kreplica.analysis.election.zk`, :mod:`~kreplica.analysis.election.legacy`,
:mod:`~kreplica.analysis.election.kraft`), and the partitions it leaves offline, elects uncleanly
or leaves under ``min.insync.replicas`` are listed. A partition already offline or under min
ISR before any failure is reported in the baseline, not in every combination.

Cost: a partition's outcome depends only on which of *its* replicas fail, so each partition is
evaluated once per subset of its replicas (or racks) of size ≤ N — not once per combination —
and a combination ``F`` collects the partitions whose failed subset is exactly ``F ∩ replicas``.
For 100 brokers, 100,000 partitions of replication factor 3 and N = 2 that is 600,000
evaluations and 5,050 combinations (``bench/`` has the figure).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from kreplica.analysis.election.common import ControllerView, Key, pname
from kreplica.analysis.election.kraft import E_ONLINE, E_UNCLEAN, KraftRules, build
from kreplica.analysis.election.scenarios import elr_enabled, rules_for
from kreplica.model.cluster import NO_LEADER, ClusterState
from kreplica.model.versions import Feature, KafkaVersion

NO_RACK = "-"

OFFLINE_FLAG, UNCLEAN_FLAG, MIN_ISR_FLAG = 1, 2, 4


@dataclass(frozen=True, slots=True)
class SweepResult:
    """One combination: the units failed (broker ids, or rack names with ``by_rack``), the
    brokers that means, and the partitions that become offline, unclean or under min ISR."""

    units: tuple
    brokers: tuple[int, ...]
    offline: tuple[str, ...]
    unclean: tuple[str, ...]
    under_min_isr: tuple[str, ...]

    @property
    def impact(self) -> tuple[int, int, int]:
        return len(self.offline), len(self.unclean), len(self.under_min_isr)


@dataclass(frozen=True)
class Sweep:
    rules: str
    kafka_version: KafkaVersion
    max_failures: int
    by_rack: bool
    combinations: int
    results: tuple[SweepResult, ...]       # harmful combinations, highest impact first
    baseline_offline: tuple[str, ...]
    baseline_under_min_isr: tuple[str, ...]


class _Evaluator:
    """A partition's outcome when a set of its replicas' brokers fails."""

    def __init__(self, state: ClusterState, kafka_version: KafkaVersion | None, unclean: str) -> None:
        cls, self.version = rules_for(state, kafka_version)
        self.view = ControllerView(state, self.version, unclean, elr_enabled(state, self.version))
        self.rules = cls(self.view)
        self.kraft = isinstance(self.rules, KraftRules)
        self.base_alive = frozenset(self.view.alive)
        self.deleting = set(state.pending.topic_deletions)

    def flags(self, key: Key, failed: Iterable[int]) -> int:
        v = self.view
        failed = set(failed)
        v.alive = set(self.base_alive - failed)
        try:
            return self._kraft(key, failed) if self.kraft else self._zk(key)
        finally:
            v.alive = set(self.base_alive)

    def _zk(self, key: Key) -> int:
        v = self.view
        p = v.partitions[key]
        min_isr = v.min_isr(key[0])
        if p.leader != NO_LEADER and v.online(p.leader):
            live = sum(1 for r in p.isr if v.online(r))
            return MIN_ISR_FLAG if live < min_isr else 0
        if key[0] in self.deleting:
            return OFFLINE_FLAG | MIN_ISR_FLAG
        if p.version is None:
            leader, isr = self.rules.new_partition_leader(p)
            unclean = False
        else:
            leader, isr, unclean, _ = self.rules.offline_leader(key, p)
        if leader is None:
            return OFFLINE_FLAG | MIN_ISR_FLAG
        live = sum(1 for r in isr if v.online(r))
        return (UNCLEAN_FLAG if unclean else 0) | (MIN_ISR_FLAG if live < min_isr else 0)

    def _kraft(self, key: Key, failed: set[int]) -> int:
        v = self.view
        p = v.partitions[key]
        min_isr = v.min_isr(key[0])
        alive_before = self.base_alive
        unclean_seen = False
        # fences one broker at a time (handleBrokerFenced), each excluded from then on
        gone: set[int] = set()
        for broker in sorted(failed):
            gone.add(broker)
            if broker not in p.isr:
                continue
            res = build(p, acceptable=lambda r, g=frozenset(gone): r not in g and r in alive_before
                        and r not in v.shutting_down,
                        election=E_UNCLEAN if v.unclean_enabled(key[0]) else E_ONLINE,
                        elr_enabled=v.elr_enabled, min_isr=self.rules._min_isr(key),
                        leader_recovery=self.version.has(Feature.LEADER_RECOVERY_STATE),
                        isr_shrink_bumps_epoch=self.version.has(Feature.KRAFT_ISR_SHRINK_BUMPS_EPOCH),
                        target_isr=[r for r in p.isr if r != broker])
            if res.after is not None:
                unclean_seen = unclean_seen or res.unclean
                p = res.after
        offline = p.leader == NO_LEADER or not v.online(p.leader)
        live = sum(1 for r in p.isr if v.online(r))
        return ((OFFLINE_FLAG if offline else 0) | (UNCLEAN_FLAG if unclean_seen and not offline else 0)
                | (MIN_ISR_FLAG if live < min_isr else 0))


def sweep(state: ClusterState, max_failures: int, *, by_rack: bool = False,
          kafka_version: KafkaVersion | None = None, unclean: str = "config") -> Sweep:
    """Every combination of 1 … ``max_failures`` live brokers (racks) failing; see the module
    docstring. ``max_failures`` must be at least 1."""
    ev = _Evaluator(state, kafka_version, unclean)
    v = ev.view
    alive = sorted(ev.base_alive)
    rack_of = {b.id: (b.rack if b.rack is not None else NO_RACK) for b in state.brokers}
    if by_rack:
        units = sorted({rack_of[b] for b in alive})
        members = {u: tuple(b for b in alive if rack_of[b] == u) for u in units}
    else:
        units = alive
        members = {b: (b,) for b in alive}
    unit_of = {b: (rack_of[b] if by_rack else b) for b in alive}
    baseline: dict[Key, int] = {key: ev.flags(key, ()) for key in v.partitions}
    index: dict[frozenset, list[tuple[str, int, frozenset]]] = defaultdict(list)
    for key, p in v.partitions.items():
        mine = frozenset(unit_of[b] for b in set(p.replicas) | set(p.isr) if b in unit_of)
        base = baseline[key]
        name = pname(key)
        for size in range(1, min(max_failures, len(mine)) + 1):
            for combo in combinations(sorted(mine, key=_unit_order), size):
                failed = [b for u in combo for b in members[u]]
                new = ev.flags(key, failed) & ~base
                if new:
                    index[frozenset(combo)].append((name, new, mine))
    results = []
    total = 0
    for size in range(1, max_failures + 1):
        for combo in combinations(units, size):
            total += 1
            f = frozenset(combo)
            off, unc, low = [], [], []
            for k in range(1, size + 1):
                for sub in combinations(combo, k):
                    entries = index.get(frozenset(sub))
                    if not entries:
                        continue
                    subset = frozenset(sub)
                    for name, flag, mine in entries:
                        if mine & f != subset:
                            continue
                        if flag & OFFLINE_FLAG:
                            off.append(name)
                        elif flag & UNCLEAN_FLAG:
                            unc.append(name)
                        if flag & MIN_ISR_FLAG:
                            low.append(name)
            if off or unc or low:
                brokers = tuple(sorted(b for u in combo for b in members[u]))
                results.append(SweepResult(tuple(combo), brokers, tuple(sorted(off)), tuple(sorted(unc)),
                                           tuple(sorted(low))))
    results.sort(key=lambda r: (tuple(-x for x in r.impact), len(r.units), [_unit_order(u) for u in r.units]))
    return Sweep(ev.rules.name, ev.version, max_failures, by_rack, total, tuple(results),
                 tuple(pname(k) for k, f in baseline.items() if f & OFFLINE_FLAG),
                 tuple(pname(k) for k, f in baseline.items() if f & MIN_ISR_FLAG))


def _unit_order(unit: int | str) -> tuple[int, int, str]:
    """Units in a readable order: brokers by id (2 before 10), racks by name."""
    return (0, unit, "") if isinstance(unit, int) else (1, 0, str(unit))
