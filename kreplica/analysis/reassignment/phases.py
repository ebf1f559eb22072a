"""Executing a plan: phases, the throttles Kafka's tool would set, and how long each phase takes.

**Phases.** A plan is split into steps that are executed one after another
(``kafka-reassign-partitions.sh --execute`` on ``phase-1.json``, wait for ``--verify``, then
``phase-2.json``...). A partition's moves stay in one phase, so each phase file holds final replica
lists and the phases are independent. Partitions go in plan order (moves the request demands
first: replicas leaving brokers, rack fixes, replication-factor changes; then balancing moves);
a phase closes before it would exceed ``max_moves`` or ``max_bytes``, and ``phases`` asks for at
least that many phases of even size. A partition that alone exceeds a cap is a phase of its own.
Preferred-leader reorders (no data moves) go in the last phase.

**Throttles** (kafka-algorithms spec §5.4). From 2.6 (the admin-API tool) Kafka builds a move map
over the cluster's in-flight reassignments and the file's partitions, then sets per topic
``leader.replication.throttled.replicas`` (``p:b`` for each source replica) and
``follower.replication.throttled.replicas`` (``p:b`` for each destination that is not a source),
both sorted as strings, and ``leader.replication.throttled.rate`` and
``follower.replication.throttled.rate`` on every broker of the map. Up to 2.5 (the ZooKeeper tool):
the leader list is every current replica of a partition that gains a broker, the follower list
the gained brokers, and the rates go to every broker hosting the proposal's topics and every
proposed broker (the lists are sorted here; that tool wrote them in map order).

**Duration.** With sizes, a phase lasts at least the largest number of bytes any one broker must
receive (follower throttle) or send as leader (leader throttle), over the rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kreplica.analysis.reassignment.planner import PartitionChange
from kreplica.model.cluster.assignment import PartitionReplicas, TopicPartition

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
ALTER_LOG_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
TOPIC_THROTTLE_CONFIGS = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)
BROKER_THROTTLE_CONFIGS = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, ALTER_LOG_DIRS_RATE)

#: demanded moves first, balancing after (the order phases are filled in)
REASON_ORDER = ("broker_removed", "broker_not_live", "broker_replaced", "rack_violation", "replication_factor",
                "generate", "replica_balance")


@dataclass(frozen=True, slots=True)
class Phase:
    """One executable step: its partitions' final replica lists."""

    number: int
    changes: tuple[PartitionChange, ...]

    @property
    def moves(self) -> int:
        return sum(len(c.moves) for c in self.changes)

    @property
    def bytes(self) -> int:
        return sum(c.bytes for c in self.changes)


@dataclass(frozen=True, slots=True)
class Throttle:
    """The configs ``--execute --throttle`` would set: per topic the two replica lists, per broker
    the two rates (bytes/s)."""

    topics: Mapping[str, Mapping[str, str]]
    brokers: Mapping[int, Mapping[str, int]]


def _priority(c: PartitionChange) -> tuple:
    if not c.moves:
        return (len(REASON_ORDER) + 1, c.topic, c.partition)
    rank = min(REASON_ORDER.index(m.reason) if m.reason in REASON_ORDER else len(REASON_ORDER) for m in c.moves)
    return (rank, c.topic, c.partition)


def split_phases(changes: Sequence[PartitionChange], *, max_moves: int | None = None,
                 max_bytes: int | None = None, phases: int | None = None) -> tuple[Phase, ...]:
    """The plan's partitions in phases (see the module docstring). No caps and no ``phases``: one
    phase."""
    ordered = sorted(changes, key=_priority)
    movers = [c for c in ordered if c.moves]
    reorders = [c for c in ordered if not c.moves]
    # --phases N: cut the ordered moves at every N-th of the total (a partition stays whole)
    split: list[list[PartitionChange]] = [movers]
    if phases and phases > 1 and movers:
        total = sum(len(c.moves) for c in movers)
        split = [[] for _ in range(phases)]
        done = 0
        for c in movers:
            split[min(phases - 1, done * phases // total)].append(c)
            done += len(c.moves)
    # caps: close a phase before it would exceed them
    groups: list[list[PartitionChange]] = []
    for part in split:
        groups.append([])
        moves = size = 0
        for c in part:
            n, b = len(c.moves), c.bytes
            over = (max_moves is not None and moves + n > max_moves) or \
                   (max_bytes is not None and size + b > max_bytes)
            if over and groups[-1]:
                groups.append([])
                moves = size = 0
            groups[-1].append(c)
            moves += n
            size += b
    groups = [g for g in groups if g] or [[]]
    groups[-1].extend(reorders)
    return tuple(Phase(k + 1, tuple(g)) for k, g in enumerate(groups) if g or k == 0)


def throttle_configs(proposal: Mapping[TopicPartition, tuple[int, ...]],
                     current: Mapping[TopicPartition, PartitionReplicas], rate: int, *,
                     in_flight: Iterable[PartitionReplicas] = (), admin_api: bool = True) -> Throttle:
    """The throttle configs Kafka's tool sets for ``proposal`` (``admin_api``: the 2.6+ move map
    with the cluster's ``in_flight`` reassignments; otherwise the ZooKeeper tool's rule)."""
    sources: dict[TopicPartition, tuple[int, ...]] = {}
    destinations: dict[TopicPartition, tuple[int, ...]] = {}
    if admin_api:
        for p in in_flight:
            if p.adding or p.removing:
                sources[p.key] = tuple(b for b in p.replicas if b not in p.adding)
                destinations[p.key] = tuple(p.adding)
        for key, target in proposal.items():
            src = sources[key] if key in sources else current[key].replicas
            sources[key] = src
            destinations[key] = tuple(b for b in target if b not in src)
        brokers = {b for v in (*sources.values(), *destinations.values()) for b in v}
    else:
        topics = {t for t, _ in proposal}
        for key, target in proposal.items():
            cur = current[key].replicas
            gained = tuple(b for b in target if b not in cur)
            if gained:
                sources[key] = cur
            destinations[key] = gained
        brokers = {b for p in current.values() if p.topic in topics for b in p.replicas}
        brokers |= {b for target in proposal.values() for b in target}
    leader: dict[str, set[str]] = {}
    follower: dict[str, set[str]] = {}
    for (topic, part), src in sources.items():
        leader.setdefault(topic, set()).update(f"{part}:{b}" for b in src)
    for (topic, part), dst in destinations.items():
        src = sources.get((topic, part), ())
        follower.setdefault(topic, set()).update(f"{part}:{b}" for b in dst if b not in src)
    topics_cfg = {t: {LEADER_THROTTLED_REPLICAS: ",".join(sorted(leader.get(t, ()))),
                      FOLLOWER_THROTTLED_REPLICAS: ",".join(sorted(follower.get(t, ())))}
                  for t in sorted(set(leader) | set(follower))}
    brokers_cfg = {b: {LEADER_THROTTLED_RATE: rate, FOLLOWER_THROTTLED_RATE: rate} for b in sorted(brokers)}
    return Throttle(topics_cfg, brokers_cfg)


def phase_seconds(phase: Phase, current: Mapping[TopicPartition, PartitionReplicas], rate: int) -> float | None:
    """The least time ``phase`` takes at ``rate`` bytes/s per broker, or ``None`` without sizes:
    the most bytes one broker receives, or sends as the partitions' leader, over the rate."""
    if rate <= 0:
        return None
    inbound: dict[int, int] = {}
    outbound: dict[int, int] = {}
    sized = False
    for c in phase.changes:
        p = current[c.key]
        leader = p.leader if p.leader is not None and p.leader >= 0 else p.replicas[0]
        for m in c.moves:
            if m.destination is None or m.bytes is None:
                continue
            sized = True
            inbound[m.destination] = inbound.get(m.destination, 0) + m.bytes
            outbound[leader] = outbound.get(leader, 0) + m.bytes
    if not sized:
        return None
    return max(max(inbound.values(), default=0), max(outbound.values(), default=0)) / rate
