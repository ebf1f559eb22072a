"""Kafka's replica placement: ``AdminUtils.assignReplicasToBrokers``, rack-unaware and rack-aware.

Kafka's class: ``server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java`` (3.6+;
``core/src/main/scala/kafka/admin/AdminUtils.scala`` before, the same algorithm since 0.8),
tests in ``core/src/test/scala/unit/kafka/admin/AdminRackAwareTest.scala`` (kafka-algorithms
spec §5.1–5.3). ZooKeeper-mode topic creation and ``kafka-reassign-partitions.sh --generate``
use it; KRaft's controller creates topics with ``StripedReplicaPlacer`` instead, which this
does not reproduce.

Kafka draws ``startIndex`` and ``shift`` independently at random (a fresh pair per topic in
``--generate``); a fixed start index pins both to the same value. Here the caller gives both
(``start_index``, ``shift``), or a :class:`random.Random` to draw them from, so a plan is
reproducible (``--seed``); the draws are Python's, not the JVM's, so a seed reproduces kreplica's
own run, not a particular run of Kafka.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class PlacementError(ValueError):
    """Kafka would refuse this placement (``InvalidReplicationFactorException``,
    ``InvalidPartitionsException``, ``AdminOperationException``); the message says why."""


@dataclass(frozen=True, slots=True)
class StartDraw:
    """The two numbers Kafka draws per call: where the first leader is, and the follower shift."""

    start_index: int
    shift: int


def draw_start(rng: random.Random, n_brokers: int) -> StartDraw:
    """A random ``(startIndex, shift)`` as ``assignReplicasToBrokers`` draws them (two
    independent ``nextInt(n)`` calls, in that order)."""
    start = rng.randrange(n_brokers)
    return StartDraw(start, rng.randrange(n_brokers))


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """``AdminUtils.getRackAlternatedBrokerList``: brokers grouped by rack (each group by id),
    racks in name order, one broker from each rack in turn until all are placed."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    groups = [sorted(by_rack[r]) for r in sorted(by_rack)]
    out: list[int] = []
    depth = 0
    while len(out) < len(racks):
        for g in groups:
            if depth < len(g):
                out.append(g[depth])
        depth += 1
    return out


def _check(n_brokers: int, n_partitions: int, rf: int) -> None:
    if n_partitions <= 0:
        raise PlacementError("number of partitions must be larger than 0")
    if rf <= 0:
        raise PlacementError("replication factor must be larger than 0")
    if rf > n_brokers:
        raise PlacementError(f"replication factor: {rf} larger than available brokers: {n_brokers}")


def assign_replicas_to_brokers(brokers: Sequence[int], n_partitions: int, rf: int, *,
                               racks: Mapping[int, str | None] | None = None,
                               start: StartDraw | None = None, rng: random.Random | None = None,
                               start_partition_id: int = -1) -> dict[int, list[int]]:
    """``partition id -> replicas`` exactly as ``AdminUtils.assignReplicasToBrokers`` places them.

    ``brokers`` is used in the order given (Kafka's callers sort by id, or keep the admin API's
    order). When any broker has a rack (``racks``), the rack-aware variant runs, and then every
    broker must have one (:class:`PlacementError`, as Kafka's ``AdminOperationException``). Either
    ``start`` (a fixed draw) or ``rng`` (random draws) is needed; ``start_partition_id`` is the
    first partition id (adding partitions to a topic), ``-1`` meaning 0.
    """
    n = len(brokers)
    _check(n, n_partitions, rf)
    if start is None:
        if rng is None:
            raise ValueError("give a fixed start draw or a random generator")
        start = draw_start(rng, n)
    rack_of = {b: (racks or {}).get(b) for b in brokers}
    with_rack = [b for b in brokers if rack_of[b] is not None]
    if not with_rack:
        return _unaware(list(brokers), n_partitions, rf, start, start_partition_id)
    if len(with_rack) != n:
        missing = sorted(b for b in brokers if rack_of[b] is None)
        raise PlacementError(f"not all brokers have rack information (no rack: {missing}); "
                             "give every broker a rack or plan without racks")
    return _aware({b: rack_of[b] for b in brokers}, n_partitions, rf, start, start_partition_id)


def _walk(n: int, n_partitions: int, start: StartDraw, start_pid: int):
    """``(pid, first, shift)`` per partition: the leader walks round-robin from the start index and
    the shift grows by one each time the absolute partition id crosses a multiple of ``n``."""
    shift = start.shift
    pid = max(0, start_pid)
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        yield pid, (pid + start.start_index) % n, shift
        pid += 1


def _unaware(brokers: list[int], n_partitions: int, rf: int, start: StartDraw, start_pid: int) -> dict[int, list[int]]:
    n = len(brokers)
    return {pid: [brokers[first]] + [brokers[(first + 1 + (shift + j) % (n - 1)) % n] for j in range(rf - 1)]
            for pid, first, shift in _walk(n, n_partitions, start, start_pid)}


def _aware(racks: dict[int, str], n_partitions: int, rf: int, start: StartDraw, start_pid: int) -> dict[int, list[int]]:
    alternated = rack_alternated_brokers(racks)
    n = len(alternated)
    n_racks = len(set(racks.values()))
    out: dict[int, list[int]] = {}
    for pid, first, shift in _walk(n, n_partitions, start, start_pid):
        leader = alternated[first]
        chosen = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0                       # shared by all follower slots of this partition
        for _ in range(rf - 1):
            while True:
                b = alternated[(first + 1 + (shift * n_racks + k) % (n - 1)) % n]
                k += 1
                if (racks[b] not in racks_used or len(racks_used) == n_racks) \
                        and (b not in brokers_used or len(brokers_used) == n):
                    chosen.append(b)
                    racks_used.add(racks[b])
                    brokers_used.add(b)
                    break
        out[pid] = chosen
    return out
