"""How good a reassignment plan is: the lower bound on moves, and a layout's balance figures.

**Lower bound.** No plan that reaches the request's goals can move fewer replicas than the larger
of two counts (both are exact minima of a relaxed problem, so their maximum is a valid bound):

* *per partition*: every replica on a broker that is not a target must move, and with rack
  awareness a partition keeps at most ``rack_cap`` replicas per rack (of those on targets); with a
  new replication factor ``rf'``, a partition keeping ``k`` of its ``rf`` replicas changes
  ``max(rf, rf') - k`` of them (moves, creations and drops each count one), and ``k`` is at most
  ``min(rf', keepable)``;
* *per broker* (when counts are balanced): each broker ends at its even share, ``floor`` or
  ``ceil`` of replicas over brokers, and a broker starting above its share loses the difference;
  the ``ceil`` shares go to the brokers holding the most
  (:func:`~kreplica.analysis.reassignment.planner.even_targets`), non-targets end at zero.

The same per-broker count bounds preferred-leader changes when leaders are balanced.

**Balance figures** (:func:`layout_stats`): replicas, preferred leaders and bytes per broker;
spreads (max − min) of replicas and leaders; partitions with a rack violation (a rack holding more
than ``rack_cap`` of a partition's replicas, counted over brokers with a known rack); disk
max/mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.analysis.reassignment.planner import (
    PlanError,
    PlanRequest,
    ReassignmentPlan,
    even_targets,
    generate_assignment,
    rack_aware_racks,
    rack_cap,
)
from kreplica.analysis.reassignment.placement import PlacementError
from kreplica.model.cluster.assignment import Assignment, TopicPartition


@dataclass(frozen=True, slots=True)
class LayoutStats:
    """Balance figures of one layout over ``brokers``."""

    brokers: tuple[int, ...]
    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    bytes: Mapping[int, int] | None
    rack_violations: int

    @property
    def replica_spread(self) -> int:
        return _spread(self.replicas, self.brokers)

    @property
    def leader_spread(self) -> int:
        return _spread(self.leaders, self.brokers)

    @property
    def disk_max_over_mean(self) -> float | None:
        if self.bytes is None or not self.brokers:
            return None
        total = sum(self.bytes.get(b, 0) for b in self.brokers)
        if total == 0:
            return None
        return max(self.bytes.get(b, 0) for b in self.brokers) / (total / len(self.brokers))


def _spread(values: Mapping[int, int], brokers: Iterable[int]) -> int:
    vals = [values.get(b, 0) for b in brokers]
    return max(vals) - min(vals) if vals else 0


def layout_stats(layout: Mapping[TopicPartition, tuple[int, ...]], brokers: Iterable[int],
                 racks: Mapping[int, str | None], n_racks: int,
                 sizes: Mapping[TopicPartition, int] | None) -> LayoutStats:
    """Replicas, preferred leaders and bytes per broker of ``layout`` (brokers outside ``brokers``
    are counted too, so a replica left on a removed broker shows), and its rack violations with
    ``n_racks`` racks."""
    brokers = tuple(sorted(set(brokers)))
    replicas: dict[int, int] = {b: 0 for b in brokers}
    leaders: dict[int, int] = {b: 0 for b in brokers}
    byts: dict[int, int] | None = {b: 0 for b in brokers} if sizes is not None else None
    violations = 0
    for key, reps in layout.items():
        size = sizes.get(key, 0) if sizes is not None else 0
        per_rack: dict[str, int] = {}
        for slot, b in enumerate(reps):
            replicas[b] = replicas.get(b, 0) + 1
            if slot == 0:
                leaders[b] = leaders.get(b, 0) + 1
            if byts is not None:
                byts[b] = byts.get(b, 0) + size
            r = racks.get(b)
            if r is not None:
                per_rack[r] = per_rack.get(r, 0) + 1
        if n_racks and per_rack and max(per_rack.values()) > rack_cap(len(reps), n_racks):
            violations += 1
    return LayoutStats(brokers, replicas, leaders, byts, violations)


def count_lower_bound(counts: Mapping[int, int], targets: Iterable[int], total: int) -> int:
    """Moves needed to reach even counts over ``targets`` from ``counts`` (non-targets end at 0)."""
    targets = list(targets)
    share = even_targets(counts, total, targets)
    return sum(max(0, c - share.get(b, 0)) for b, c in counts.items())


def lower_bound(assignment: Assignment, request: PlanRequest) -> int:
    """The lower bound on moves for ``request`` (see the module docstring); for ``generate``, the
    replicas on brokers that are not targets."""
    target_set = set(request.targets)
    racks = rack_aware_racks(request.targets, request.racks) if request.action != "generate" else None
    n_racks = len(set(racks.values())) if racks else 0
    topics = set(request.topics) if request.topics is not None else None
    per_partition = 0
    counts: dict[int, int] = {}
    total = 0
    for p in assignment.partitions:
        replicas = p.target
        rf = len(replicas)
        new_rf = rf
        if request.replication_factor is not None and (topics is None or p.topic in topics):
            new_rf = request.replication_factor
        on_targets = [b for b in replicas if b in target_set or b in request.replace]
        on_targets = [request.replace.get(b, b) for b in on_targets]
        if request.fix_racks and racks:
            cap = rack_cap(new_rf, n_racks)
            per_rack: dict[str, int] = {}
            for b in on_targets:
                per_rack[racks[b]] = per_rack.get(racks[b], 0) + 1
            keepable = sum(min(c, cap) for c in per_rack.values())
        else:
            keepable = len(on_targets)
        kept = min(new_rf, keepable)
        replaced = sum(1 for b in replicas if b in request.replace)
        per_partition += max(rf, new_rf) - kept + replaced
        for b in replicas:
            counts[b] = counts.get(b, 0) + 1
        total += new_rf
    if not request.balance_replicas:
        return per_partition
    return max(per_partition, count_lower_bound(counts, request.targets, total))


def leader_change_lower_bound(assignment: Assignment, request: PlanRequest) -> int:
    """Preferred-leader changes needed for even leader counts over the targets (when leaders are
    balanced), or the partitions whose preferred leader must move (when they are not)."""
    target_set = set(request.targets)
    forced = sum(1 for p in assignment.partitions if p.target[0] not in target_set
                 and p.target[0] not in request.replace)
    if not request.balance_leaders:
        return forced
    counts: dict[int, int] = {}
    for p in assignment.partitions:
        counts[p.target[0]] = counts.get(p.target[0], 0) + 1
    return max(forced, count_lower_bound(counts, request.targets, len(assignment.partitions)))


# -- the summary of a plan --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerFigures:
    """One broker before and after the plan: replicas, preferred leaderships and bytes held, and
    what moves in and out."""

    broker: int
    rack: str | None
    target: bool
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int | None
    bytes_after: int | None
    replicas_in: int
    replicas_out: int
    bytes_in: int | None
    bytes_out: int | None


@dataclass(frozen=True)
class PlanSummary:
    """What a plan costs and achieves, against the lower bound and Kafka's ``--generate``."""

    moves: int
    bytes_moved: int | None
    partitions_changed: int
    leader_changes: int
    lower_bound: int
    leader_change_lower_bound: int
    brokers: tuple[BrokerFigures, ...]
    before: LayoutStats
    after: LayoutStats
    kafka_generate_moves: int | None
    kafka_generate_bytes: int | None

    @property
    def ratio_to_lower_bound(self) -> float | None:
        if self.lower_bound == 0:
            return None if self.moves else 1.0
        return self.moves / self.lower_bound


def summarize_plan(assignment: Assignment, plan: ReassignmentPlan,
                   sizes: Mapping[TopicPartition, int] | None) -> PlanSummary:
    """The figures of ``plan`` (before: over the live brokers and every broker holding a replica;
    after: over the targets; rack violations with the targets' racks)."""
    request = plan.request
    try:
        racks = rack_aware_racks(request.targets, request.racks) or {}
    except PlanError:
        racks = {}
    n_racks = len(set(racks.values()))
    rack_of = {**{b: r for b, r in assignment.racks.items() if r is not None}, **racks} if racks else {}
    current = {p.key: p.target for p in assignment.partitions}
    before_brokers = set(assignment.live) | {b for r in current.values() for b in r}
    before = layout_stats(current, before_brokers, rack_of, n_racks, sizes)
    after = layout_stats(plan.after, request.targets, rack_of, n_racks, sizes)
    moves = plan.moves
    r_in: dict[int, int] = {}
    r_out: dict[int, int] = {}
    b_in: dict[int, int] = {}
    b_out: dict[int, int] = {}
    for m in moves:
        if m.destination is not None:
            r_in[m.destination] = r_in.get(m.destination, 0) + 1
            b_in[m.destination] = b_in.get(m.destination, 0) + (m.bytes or 0)
        if m.source is not None:
            r_out[m.source] = r_out.get(m.source, 0) + 1
            b_out[m.source] = b_out.get(m.source, 0) + (m.bytes or 0)
    sized = sizes is not None
    figures = tuple(BrokerFigures(
        b, rack_of.get(b, assignment.racks.get(b)), b in set(request.targets),
        before.replicas.get(b, 0), after.replicas.get(b, 0), before.leaders.get(b, 0), after.leaders.get(b, 0),
        before.bytes.get(b, 0) if sized else None, after.bytes.get(b, 0) if sized else None,
        r_in.get(b, 0), r_out.get(b, 0), b_in.get(b, 0) if sized else None, b_out.get(b, 0) if sized else None)
        for b in sorted(before_brokers | set(request.targets)))
    gen_moves = gen_bytes = None
    try:
        topics = request.topics or assignment.topics
        generated = generate_assignment(assignment, topics, sorted(request.targets), racks or None,
                                        seed=request.seed, start=request.start)
        gen_moves, gen_bytes = 0, 0
        for key, new in generated.items():
            came = [b for b in new if b not in current[key]]
            gen_moves += max(len(came), len(current[key]) - (len(new) - len(came)))
            gen_bytes += len(came) * (sizes or {}).get(key, 0)
        if not sized:
            gen_bytes = None
    except (PlanError, PlacementError):
        pass
    return PlanSummary(len(moves), sum(m.bytes or 0 for m in moves if m.destination is not None) if sized else None,
                       len(plan.changes), len(plan.leader_changes), lower_bound(assignment, request),
                       leader_change_lower_bound(assignment, request), figures, before, after, gen_moves, gen_bytes)
