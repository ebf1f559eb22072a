"""Minimal-movement reassignment plans: decommission, add brokers, replace a broker, change the
replication factor, rebalance; and Kafka's own ``--generate``.

Every replica that can stay, stays. A plan is built in steps, each of which moves only what its
goal needs and records why:

1. **Evict** what cannot stay: replicas on brokers that are not targets (``broker_removed`` when the
   user named the broker, ``broker_not_live`` when it is simply not a live broker), replicas
   replaced one for one (``broker_replaced``, same slot, so the preferred leader stays where it
   was), replicas beyond a lower replication factor, and, when asked (``rebalance``), the replicas
   that put more of a partition in one rack than ``ceil(rf / racks)`` (``rack_violation``; the one
   on the most loaded broker goes, a preferred leader last).
2. **Fill** each hole, in the slot it left (a preferred leader's replacement becomes the preferred
   leader), on the target broker that creates no rack violation and has the fewest replicas (below
   the even share first, then the fewest bytes when sizes are known); partitions largest first.
   New replicas for a higher replication factor go last in the list (``replication_factor``).
3. **Balance replica counts** (``rebalance``, ``add-brokers``): each broker's target is the even
   share (``floor`` or ``ceil``), the ``ceil`` going to the brokers that hold the most, which is the
   assignment of targets that needs the fewest moves; replicas then move one at a time from a broker
   above its target to one below (``replica_balance``), choosing the replica that also evens out
   bytes and preferred leaders, and never making a new rack violation. Every such move takes one
   replica off a broker that must lose it, so the count is the lower bound
   (:mod:`~kreplica.analysis.reassignment.bounds`) whenever no constraint blocks.
4. **Balance preferred leaders** by reordering replicas (no data moves, one leader change each):
   along the shortest chain of partitions from a broker with the most preferred leaderships to one
   with at least two fewer. ``rebalance`` and ``add-brokers`` reorder any partition; the other
   actions only choose the preferred leader of partitions whose leader replica moved.

The result is deterministic: every choice is ordered by counts, bytes, then broker id and
partition name, never by hash order or a clock.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kreplica.analysis.reassignment.placement import PlacementError, StartDraw, assign_replicas_to_brokers, draw_start
from kreplica.model.cluster.assignment import Assignment, TopicPartition

#: why a replica moves (``move.reason``) or a preferred leader changes (``leader_change.reason``)
REASONS = {
    "broker_removed": "the broker is being decommissioned",
    "broker_not_live": "the broker is not a live target broker",
    "broker_replaced": "the broker is replaced by another, slot for slot",
    "rack_violation": "more replicas of the partition in one rack than racks allow",
    "replication_factor": "the replication factor changes",
    "replica_balance": "the broker holds more replicas than its even share",
    "generate": "Kafka's AdminUtils placement puts the replica elsewhere",
    "leader_moved": "the preferred leader's replica moved",
    "leader_balance": "the broker is preferred leader of more partitions than its even share",
}

ACTIONS = ("generate", "decommission", "add-brokers", "replace-broker", "set-replication-factor", "rebalance",
           "verify")


class PlanError(ValueError):
    """The request cannot be planned (an unknown broker, a replication factor above the broker
    count, a topic that does not exist); the message says which and what to give instead."""


@dataclass(frozen=True, slots=True)
class Move:
    """One replica of ``topic``-``partition`` moving ``source`` → ``destination``; ``None`` on
    either side is a replica created or dropped (replication factor change). ``bytes`` is the
    partition's size when sizes are known."""

    topic: str
    partition: int
    source: int | None
    destination: int | None
    reason: str
    bytes: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """The preferred leader (first replica) of a partition changes ``source`` → ``destination``."""

    topic: str
    partition: int
    source: int
    destination: int
    reason: str


@dataclass(frozen=True, slots=True)
class PartitionChange:
    """A partition whose replica list changes: before and after, and the moves between them."""

    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]
    moves: tuple[Move, ...]
    leader_change: LeaderChange | None

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def bytes(self) -> int:
        return sum(m.bytes or 0 for m in self.moves if m.destination is not None)


@dataclass(frozen=True)
class PlanRequest:
    """What to plan. ``targets`` are the brokers that may hold replicas afterwards; ``racks`` holds
    every target's rack (all ``None``: rack-unaware). ``replication_factor`` and ``topics`` serve
    ``set-replication-factor`` and ``generate``; ``start``/``seed`` serve ``generate``."""

    action: str
    targets: tuple[int, ...]
    racks: Mapping[int, str | None]
    removed: frozenset[int] = frozenset()
    replace: Mapping[int, int] = field(default_factory=dict)
    replication_factor: int | None = None
    topics: tuple[str, ...] | None = None
    fix_racks: bool = False
    balance_replicas: bool = False
    balance_leaders: bool = False
    seed: int = 0
    start: StartDraw | None = None


@dataclass(frozen=True)
class ReassignmentPlan:
    """The plan: changed partitions (topic, partition order), the final replica lists of every
    partition (``after``), and warnings about goals a constraint kept it from reaching."""

    request: PlanRequest
    changes: tuple[PartitionChange, ...]
    after: Mapping[TopicPartition, tuple[int, ...]]
    warnings: tuple[str, ...] = ()

    @property
    def moves(self) -> tuple[Move, ...]:
        return tuple(m for c in self.changes for m in c.moves)

    @property
    def leader_changes(self) -> tuple[LeaderChange, ...]:
        return tuple(c.leader_change for c in self.changes if c.leader_change is not None)


def rack_aware_racks(targets: Iterable[int], racks: Mapping[int, str | None]) -> dict[int, str] | None:
    """The targets' racks when every target has one, ``None`` when none has; a mix is refused
    (Kafka's ``--generate`` refuses it too)."""
    targets = list(targets)
    have = {b: racks.get(b) for b in targets}
    if all(r is None for r in have.values()):
        return None
    missing = sorted(b for b, r in have.items() if r is None)
    if missing:
        raise PlanError(f"brokers {missing} have no rack while others do: give their racks with --racks "
                        "(e.g. --racks 7:use1-az1) or plan without racks (--disable-rack-aware)")
    return {b: str(r) for b, r in have.items()}


def rack_cap(rf: int, n_racks: int) -> int:
    """How many replicas of one partition a rack may hold: one when there are enough racks, else
    the even share ``ceil(rf / racks)``."""
    return max(1, math.ceil(rf / n_racks)) if n_racks else rf


# -- the working layout (mutable inside a plan; what leaves this module is frozen) ----------------


class _Layout:
    def __init__(self, assignment: Assignment, request: PlanRequest, sizes: Mapping[TopicPartition, int] | None,
                 racks: dict[int, str] | None) -> None:
        self.keys: list[TopicPartition] = [p.key for p in assignment.partitions]
        # in-flight reassignments are planned from their target (they will have completed first)
        self.before: list[tuple[int, ...]] = [p.target for p in assignment.partitions]
        self.reps: list[list[int]] = [list(r) for r in self.before]
        self.size: list[int] = [(sizes or {}).get(k, 0) for k in self.keys]
        self.has_sizes = sizes is not None
        self.targets = tuple(request.targets)
        self.target_set = frozenset(self.targets)
        self.racks = racks
        self.n_racks = len(set(racks.values())) if racks else 0
        # the rack of every broker the evidence names, removed ones included (a replica leaving a
        # removed broker for one in its own rack adds no rack violation)
        self.known_racks = {**assignment.racks, **request.racks}
        self.count = {b: 0 for b in self.targets}
        self.leaders = {b: 0 for b in self.targets}
        self.bytes = {b: 0 for b in self.targets}
        self.on: dict[int, set[int]] = {b: set() for b in self.targets}
        for i, reps in enumerate(self.reps):
            for slot, b in enumerate(reps):
                if b in self.target_set:
                    self._add(i, b, slot == 0)
        # per partition: current broker -> (original broker or None, reason) for replicas that moved
        self.moved: list[dict[int | None, tuple[int | None, str]] | None] = [None] * len(self.reps)
        self.dropped: list[list[tuple[int, str]] | None] = [None] * len(self.reps)
        self.leader_reason: dict[int, str] = {}
        self.warnings: list[str] = []
        # each target's even share of the replicas after the plan, the ceil shares given to the
        # brokers holding the most now (the fewest moves); used by every step so that evictions
        # come off brokers above their share and holes fill brokers below it
        self.share: dict[int, int] = {}

    def set_share(self, request: PlanRequest, in_scope: list[bool]) -> None:
        counts: dict[int, int] = {}
        for reps in self.reps:
            for b in reps:
                counts[b] = counts.get(b, 0) + 1
        rf = request.replication_factor
        total = sum(rf if (rf is not None and in_scope[i]) else len(r) for i, r in enumerate(self.reps))
        self.share = even_targets(counts, total, self.targets, self.bytes if self.has_sizes else None)

    def _add(self, i: int, b: int, leader: bool) -> None:
        self.count[b] += 1
        self.bytes[b] += self.size[i]
        self.on[b].add(i)
        if leader:
            self.leaders[b] += 1

    def _remove(self, i: int, b: int, leader: bool) -> None:
        self.count[b] -= 1
        self.bytes[b] -= self.size[i]
        self.on[b].discard(i)
        if leader:
            self.leaders[b] -= 1

    def rack_of(self, b: int) -> str | None:
        return self.racks.get(b) if self.racks else None

    def cap(self, i: int, rf: int | None = None) -> int:
        return rack_cap(len(self.reps[i]) if rf is None else rf, self.n_racks)

    def rack_counts(self, i: int) -> dict[str | None, int]:
        out: dict[str | None, int] = {}
        for b in self.reps[i]:
            if b is not None and b in self.target_set:
                r = self.rack_of(b)
                out[r] = out.get(r, 0) + 1
        return out

    def record_move(self, i: int, source: int | None, destination: int | None, reason: str) -> None:
        moved = self.moved[i]
        if moved is None:
            moved = self.moved[i] = {}
        if source is not None and source in moved:
            origin, first_reason = moved.pop(source)
        else:
            origin, first_reason = source, reason
        if destination is None:
            if origin is not None:
                dropped = self.dropped[i]
                if dropped is None:
                    dropped = self.dropped[i] = []
                dropped.append((origin, first_reason))
            return
        if origin == destination:
            return   # back where it started: no move
        moved[destination] = (origin, first_reason)

    def relocate(self, i: int, slot: int, destination: int, reason: str) -> None:
        """Move the replica in ``slot`` of partition ``i`` to ``destination``."""
        source = self.reps[i][slot]
        if source in self.target_set:
            self._remove(i, source, slot == 0)
        self.reps[i][slot] = destination
        self._add(i, destination, slot == 0)
        self.record_move(i, source, destination, reason)

    def swap_leader(self, i: int, slot: int, reason: str) -> None:
        """Make the replica in ``slot`` the preferred leader of partition ``i`` (a reorder)."""
        reps = self.reps[i]
        old, new = reps[0], reps[slot]
        reps[0], reps[slot] = new, old
        self.leaders[old] -= 1
        self.leaders[new] += 1
        self.leader_reason.setdefault(i, reason)


def even_targets(counts: Mapping[int, int], total: int, brokers: Iterable[int],
                 tie: Mapping[int, int] | None = None) -> dict[int, int]:
    """The even share per broker (``floor`` or ``ceil`` of ``total / brokers``) with the ``ceil``
    given to the brokers holding the most now (ties: more ``tie`` value, then lower id): of all
    even distributions, the one reachable with the fewest moves."""
    brokers = list(brokers)
    n = len(brokers)
    if n == 0:
        return {}
    floor, extra = divmod(total, n)
    order = sorted(brokers, key=lambda b: (-counts.get(b, 0), -(tie or {}).get(b, 0), b))
    return {b: floor + (1 if k < extra else 0) for k, b in enumerate(order)}


# -- planning ----------------------------------------------------------------------------------


def plan_reassignment(assignment: Assignment, request: PlanRequest,
                      sizes: Mapping[TopicPartition, int] | None = None) -> ReassignmentPlan:
    """A minimal-movement plan for ``request`` on ``assignment`` (see the module docstring).

    ``sizes`` maps a partition to the bytes a new replica of it copies. Raises :class:`PlanError`
    for requests that cannot be met (replication factor above the target broker count, no target
    brokers) and :class:`PlacementError` for a mix of brokers with and without racks.
    """
    if request.action == "generate":
        return plan_generate(assignment, request, sizes)
    if not request.targets:
        raise PlanError("no target brokers: every broker would be removed (give --brokers)")
    racks = rack_aware_racks(request.targets, request.racks)
    lay = _Layout(assignment, request, sizes, racks)
    in_scope = _scope(assignment, request)
    rf_target = request.replication_factor
    if rf_target is not None and rf_target > len(request.targets):
        raise PlanError(f"replication factor {rf_target} is larger than the {len(request.targets)} target brokers")
    too_big = max((len(r) for r in lay.reps), default=0)
    if rf_target is None and too_big > len(request.targets):
        raise PlanError(f"a partition has {too_big} replicas but only {len(request.targets)} target brokers remain")

    lay.set_share(request, in_scope)
    holes = _evict(lay, request, in_scope)
    _fill(lay, holes)
    if request.balance_replicas:
        _balance_counts(lay)
    if request.balance_leaders:
        _balance_leaders(lay, range(len(lay.reps)))
    return _result(lay, request)


def _scope(assignment: Assignment, request: PlanRequest) -> list[bool]:
    if request.topics is None:
        return [True] * len(assignment.partitions)
    topics = set(request.topics)
    return [p.topic in topics for p in assignment.partitions]


def _evict(lay: _Layout, request: PlanRequest, in_scope: list[bool]) -> list[tuple[int, int, str]]:
    """Take out what cannot stay; returns the holes ``(partition, slot, reason)`` to fill."""
    holes: list[tuple[int, int, str]] = []
    removed = request.removed
    replace = request.replace
    rf_target = request.replication_factor
    for i, reps in enumerate(lay.reps):
        # replaced brokers: slot for slot, when the new broker is not already a replica
        for slot, b in enumerate(reps):
            new = replace.get(b)
            if new is not None and new not in reps:
                lay.relocate(i, slot, new, "broker_replaced")
        if rf_target is not None and in_scope[i] and rf_target < len(reps):
            _drop_replicas(lay, i, len(reps) - rf_target)
        for slot, b in enumerate(reps):
            if b not in lay.target_set:
                reason = "broker_replaced" if b in replace else \
                    "broker_removed" if b in removed else "broker_not_live"
                holes.append((i, slot, reason))
        if rf_target is not None and in_scope[i] and rf_target > len(reps):
            for _ in range(rf_target - len(reps)):
                reps.append(None)   # type: ignore[arg-type]  # a hole at the end of the list
                holes.append((i, len(reps) - 1, "replication_factor"))
        if request.fix_racks and lay.racks:
            _evict_rack_excess(lay, i, holes)
    # a hole is refilled; its old broker, if a target, gives up the replica now
    for i, slot, _ in holes:
        b = lay.reps[i][slot]
        if b is not None and b in lay.target_set:
            lay._remove(i, b, slot == 0)
    return holes


def _drop_replicas(lay: _Layout, i: int, n: int) -> None:
    """Lower the replication factor of partition ``i`` by ``n``: replicas that would have to move
    anyway go first, then the one whose rack holds most of the partition, on the most loaded broker;
    the preferred leader last."""
    reps = lay.reps[i]
    for _ in range(n):
        def key(s: int) -> tuple:
            b = reps[s]
            if b not in lay.target_set:
                return (0, 0, 0, 0, 0, s)
            rc = lay.rack_counts(i).get(lay.rack_of(b), 0)
            return (1, s == 0, -rc, -lay.count[b], -lay.bytes[b], -b)

        s = min(range(len(reps)), key=key)
        b = reps[s]
        if b in lay.target_set:
            lay._remove(i, b, s == 0)
        if s == 0 and len(reps) > 1 and reps[1] in lay.target_set:
            lay.leaders[reps[1]] += 1
        lay.record_move(i, b, None, "replication_factor")
        del reps[s]


def _evict_rack_excess(lay: _Layout, i: int, holes: list[tuple[int, int, str]]) -> None:
    reps = lay.reps[i]
    holed = {s for (j, s, _) in holes if j == i}
    cap = lay.cap(i)
    counts: dict[str, list[int]] = {}
    for s, b in enumerate(reps):
        if s not in holed and b is not None and b in lay.target_set:
            counts.setdefault(lay.rack_of(b), []).append(s)
    # an evicted replica needs a target broker without one in a rack below the cap (the partition's
    # other holes take theirs first): with none, the violation stays and is named
    room = -len(holed)
    free: dict[str | None, int] = {}
    for b in lay.targets:
        if b not in reps:
            free[lay.rack_of(b)] = free.get(lay.rack_of(b), 0) + 1
    for rack, n in free.items():
        room += max(0, min(n, cap - len(counts.get(rack, ()))))
    for rack in sorted(counts, key=str):
        slots = counts[rack]
        excess = len(slots) - cap
        if excess <= 0:
            continue
        take = max(0, min(excess, room))
        room -= take
        if take < excess:
            t, p = lay.keys[i]
            lay.warnings.append(f"{t}-{p}: rack {rack} keeps {len(slots) - take} replicas (at most {cap} allowed): "
                                "no broker without a replica in a rack with room can take one")
        # evict from the brokers furthest above their share (the move then also balances counts);
        # among equals keep the preferred leader
        order = sorted(slots, key=lambda s: (lay.share[reps[s]] - lay.count[reps[s]], s == 0, -lay.bytes[reps[s]],
                                             -reps[s]))
        for s in order[:take]:
            holes.append((i, s, "rack_violation"))


def _fill(lay: _Layout, holes: list[tuple[int, int, str]]) -> None:
    """Place every hole on the best target broker (see the module docstring, step 2)."""
    if not holes:
        return
    share = lay.share
    n = len(lay.targets)
    mean_count = max(1.0, sum(share.values()) / n)
    mean_bytes = max(1.0, (sum(lay.bytes.values()) + sum(lay.size[i] for i, _, _ in holes)) / n)
    # NOTE: a heap of brokers by load with lazy re-keying: placing 60,000 holes on 1,000 brokers
    # would otherwise compare every broker for every hole (bench/bench_reassign.py).
    def load_key(b: int) -> tuple:
        c = lay.count[b]
        if lay.has_sizes:   # the larger of the two loads, each relative to its mean
            return (c >= share[b], max(c / mean_count, lay.bytes[b] / mean_bytes), c, b)
        return (c >= share[b], c - share[b], c, b)

    heap = [(load_key(b), b) for b in lay.targets]
    heapq.heapify(heap)
    order = sorted(holes, key=lambda h: (-lay.size[h[0]], lay.keys[h[0]], h[1]))
    for i, slot, reason in order:
        reps = lay.reps[i]
        present = {b for s, b in enumerate(reps) if s != slot and b is not None and b in lay.target_set}
        rack_counts: dict[str | None, int] = {}
        for b in present:
            r = lay.rack_of(b)
            rack_counts[r] = rack_counts.get(r, 0) + 1
        cap = lay.cap(i)
        old = reps[slot]
        old_rack = lay.known_racks.get(old) if old is not None and lay.racks else None
        chosen = None
        skipped = []
        while heap:
            key, b = heapq.heappop(heap)
            if key != load_key(b):
                heapq.heappush(heap, (load_key(b), b))
                continue
            skipped.append((key, b))
            if b in present or b == old:
                continue
            if lay.racks and rack_counts.get(lay.rack_of(b), 0) >= cap:
                continue
            chosen = b
            break
        for entry in skipped:
            heapq.heappush(heap, entry)
        if chosen is None:
            chosen = _fallback_broker(lay, present, old, old_rack, rack_counts, cap, i)
        # the old broker (if a target) gave the replica up in _evict
        lay.reps[i][slot] = chosen
        lay._add(i, chosen, slot == 0)
        lay.record_move(i, old, chosen, reason)
        heapq.heappush(heap, (load_key(chosen), chosen))
        if slot == 0:
            _choose_leader(lay, i, "leader_moved")


def _fallback_broker(lay: _Layout, present: set[int], old: int | None, old_rack: str | None,
                     rack_counts: dict, cap: int, i: int) -> int:
    """No broker without a rack violation is free: the least-loaded broker in the rack with the
    fewest replicas of the partition (a violation no worse than before when that is the old rack)."""
    free = [b for b in lay.targets if b not in present and b != old]
    if not free:
        raise PlanError(f"no target broker can take a replica of {lay.keys[i][0]}-{lay.keys[i][1]}: "
                        "every target already holds one")
    best = min(free, key=lambda b: (rack_counts.get(lay.rack_of(b), 0) - (1 if lay.rack_of(b) == old_rack else 0),
                                    lay.count[b], lay.bytes[b], b))
    if lay.racks and rack_counts.get(lay.rack_of(best), 0) >= cap and lay.rack_of(best) != old_rack:
        lay.warnings.append(f"{lay.keys[i][0]}-{lay.keys[i][1]}: no broker in a free rack can take a replica; "
                            f"broker {best} adds a rack violation")
    return best


def _choose_leader(lay: _Layout, i: int, reason: str) -> None:
    """Give the partition's preferred leadership to its replica with the fewest leaderships."""
    reps = lay.reps[i]
    slots = [s for s in range(len(reps)) if reps[s] is not None and reps[s] in lay.target_set]
    if 0 not in slots:
        return
    best = min(slots, key=lambda s: (lay.leaders[reps[s]] - (1 if s == 0 else 0), s))
    if best != 0 and lay.leaders[reps[best]] < lay.leaders[reps[0]] - 1:
        lay.swap_leader(i, best, reason)


def _balance_counts(lay: _Layout) -> None:
    """Step 3: move replicas from brokers above their even share to brokers below it."""
    target = lay.share
    lead_total = sum(lay.leaders.values())
    lead_target = even_targets(lay.leaders, lead_total, lay.targets)
    blocked: set[int] = set()
    while True:
        donors = sorted((b for b in lay.targets if lay.count[b] > target[b] and b not in blocked),
                        key=lambda b: (-(lay.count[b] - target[b]), -lay.bytes[b], b))
        if not donors:
            break
        donor = donors[0]
        receivers = sorted((b for b in lay.targets if lay.count[b] < target[b]),
                           key=lambda b: (lay.count[b] - target[b], lay.bytes[b], b))
        move = _best_donation(lay, donor, receivers, lead_target)
        if move is None:
            blocked.add(donor)
            lay.warnings.append(f"broker {donor} keeps {lay.count[donor] - target[donor]} replica(s) above its even "
                                "share: no replica of it can move to an underloaded broker without a rack "
                                "violation or a duplicate")
            continue
        i, slot, receiver = move
        lay.relocate(i, slot, receiver, "replica_balance")


def _best_donation(lay: _Layout, donor: int, receivers: list[int], lead_target: Mapping[int, int]
                   ) -> tuple[int, int, int] | None:
    donor_rack = lay.rack_of(donor)
    lead_excess = lay.leaders[donor] > lead_target[donor]
    for receiver in receivers:
        recv_rack = lay.rack_of(receiver)
        recv_wants_lead = lay.leaders[receiver] < lead_target[receiver]
        gap = lay.bytes[donor] - lay.bytes[receiver]
        best = None
        best_key = None
        for i in lay.on[donor]:
            reps = lay.reps[i]
            if receiver in reps:
                continue
            if lay.racks and recv_rack != donor_rack:
                rc = sum(1 for b in reps if b in lay.target_set and lay.rack_of(b) == recv_rack)
                if rc >= lay.cap(i):
                    continue
            slot = reps.index(donor)
            is_leader = slot == 0
            lead_fit = 0 if is_leader == (lead_excess and recv_wants_lead) else 1
            size = lay.size[i]
            byte_fit = abs(gap - 2 * size) if lay.has_sizes else 0
            key = (lead_fit, byte_fit, lay.keys[i])
            if best_key is None or key < best_key:
                best, best_key = (i, slot), key
        if best is not None:
            return best[0], best[1], receiver
    return None


def _balance_leaders(lay: _Layout, scope: Iterable[int]) -> None:
    """Step 4: reorder replicas along the shortest chain from a broker with the most preferred
    leaderships to one with at least two fewer, until no such chain exists."""
    scope = set(scope)
    led: dict[int, list[int]] = {b: [] for b in lay.targets}
    for i in sorted(scope, key=lambda i: lay.keys[i]):
        led[lay.reps[i][0]].append(i)
    while True:
        hi = max(lay.leaders[b] for b in lay.targets)
        lo = min(lay.leaders[b] for b in lay.targets)
        if hi - lo <= 1:
            return
        sources = sorted(b for b in lay.targets if lay.leaders[b] == hi)
        path = _leader_path(lay, led, sources, hi)
        if path is None:
            lay.warnings.append(f"preferred leaders stay uneven ({lo}..{hi} per broker): no chain of "
                                "partitions links the busiest brokers to the idlest")
            return
        for i, slot in path:
            a = lay.reps[i][0]
            b = lay.reps[i][slot]
            lay.swap_leader(i, slot, "leader_balance")
            led[a].remove(i)
            led[b].append(i)


def _leader_path(lay: _Layout, led: dict[int, list[int]], sources: list[int], hi: int
                 ) -> list[tuple[int, int]] | None:
    """Breadth-first over "a leads a partition that b holds": the partitions (and slots) of the
    shortest chain from a source to a broker with at most ``hi - 2`` leaderships."""
    parent: dict[int, tuple[int, int, int] | None] = {s: None for s in sources}
    frontier = list(sources)
    while frontier:
        nxt = []
        for a in frontier:
            for i in led[a]:
                reps = lay.reps[i]
                for slot in range(1, len(reps)):
                    b = reps[slot]
                    if b in parent or b not in lay.target_set:
                        continue
                    parent[b] = (a, i, slot)
                    if lay.leaders[b] <= hi - 2:
                        path = []
                        node = b
                        while parent[node] is not None:
                            prev, pi, ps = parent[node]
                            path.append((pi, ps))
                            node = prev
                        return path[::-1]
                    nxt.append(b)
        frontier = nxt
    return None


def _result(lay: _Layout, request: PlanRequest) -> ReassignmentPlan:
    changes = []
    after: dict[TopicPartition, tuple[int, ...]] = {}
    for i, key in enumerate(lay.keys):
        reps = tuple(lay.reps[i])
        after[key] = reps
        before = lay.before[i]
        if reps == before:
            continue
        moves = []
        size = lay.size[i] if lay.has_sizes else None
        added = [(dest, origin, reason) for dest, (origin, reason) in (lay.moved[i] or {}).items()]
        added.sort(key=lambda m: reps.index(m[0]))
        for dest, origin, reason in added:
            moves.append(Move(key[0], key[1], origin, dest, reason, size))
        for origin, reason in lay.dropped[i] or ():
            moves.append(Move(key[0], key[1], origin, None, reason, None))
        leader = None
        if reps[0] != before[0]:
            reason = "leader_moved" if before[0] not in reps else lay.leader_reason.get(i, "leader_moved")
            leader = LeaderChange(key[0], key[1], before[0], reps[0], reason)
        changes.append(PartitionChange(key[0], key[1], before, reps, tuple(moves), leader))
    return ReassignmentPlan(request, tuple(changes), after, tuple(dict.fromkeys(lay.warnings)))


# -- Kafka's --generate ---------------------------------------------------------------------------


def generate_assignment(assignment: Assignment, topics: Iterable[str], brokers: list[int],
                        racks: Mapping[int, str | None] | None, *, seed: int = 0,
                        start: StartDraw | None = None) -> dict[TopicPartition, tuple[int, ...]]:
    """What ``kafka-reassign-partitions.sh --generate`` proposes for ``topics`` on ``brokers``:
    per topic, the replication factor of its first partition and its partition count, placed by
    ``AdminUtils`` with a fresh (start, shift) per topic drawn from ``random.Random(seed)`` (or
    the fixed ``start`` for every topic, as Kafka's fixed start index does)."""
    rng = random.Random(seed)
    by_topic: dict[str, list] = {}
    for p in assignment.partitions:
        by_topic.setdefault(p.topic, []).append(p)
    out: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in topics:
        parts = sorted(by_topic.get(topic, ()), key=lambda p: p.partition)
        if not parts:
            raise PlanError(f"topic {topic!r} is not in the source")
        rf = len(parts[0].target)
        draw = start if start is not None else draw_start(rng, len(brokers))
        try:
            placed = assign_replicas_to_brokers(brokers, len(parts), rf, racks=racks, start=draw)
        except PlacementError as exc:
            raise PlanError(f"{topic}: {exc}") from None
        for p in parts:
            if p.partition in placed:
                out[(topic, p.partition)] = tuple(placed[p.partition])
    return out


def plan_generate(assignment: Assignment, request: PlanRequest,
                  sizes: Mapping[TopicPartition, int] | None = None) -> ReassignmentPlan:
    """``generate``: Kafka's placement for the requested topics (all topics when none are named)."""
    topics = request.topics or assignment.topics
    racks = rack_aware_racks(request.targets, request.racks)
    proposal = generate_assignment(assignment, topics, sorted(request.targets), racks,
                                   seed=request.seed, start=request.start)
    return plan_from_proposal(assignment, request, proposal, "generate", sizes)


def plan_from_proposal(assignment: Assignment, request: PlanRequest,
                       proposal: Mapping[TopicPartition, tuple[int, ...]], reason: str,
                       sizes: Mapping[TopicPartition, int] | None = None) -> ReassignmentPlan:
    """A plan whose partitions get the replica lists of ``proposal``: replicas leaving and arriving
    are paired in list order as moves."""
    changes = []
    after: dict[TopicPartition, tuple[int, ...]] = {}
    for p in assignment.partitions:
        old = p.target
        new = tuple(proposal.get(p.key, old))
        after[p.key] = new
        if new == old:
            continue
        size = (sizes or {}).get(p.key) if sizes is not None else None
        gone = [b for b in old if b not in new]
        came = [b for b in new if b not in old]
        moves = [Move(p.topic, p.partition, gone[k] if k < len(gone) else None,
                      came[k] if k < len(came) else None, reason, size if k < len(came) else None)
                 for k in range(max(len(gone), len(came)))]
        leader = None if new[0] == old[0] else LeaderChange(
            p.topic, p.partition, old[0], new[0], "leader_moved" if old[0] not in new else reason)
        changes.append(PartitionChange(p.topic, p.partition, old, new, tuple(moves), leader))
    return ReassignmentPlan(request, tuple(changes), after)
