"""Follower truncation against a chosen leader, for each protocol generation.

Sources: ``AbstractFetcherThread`` (``maybeTruncate``, ``getOffsetTruncationState``,
``handleOutOfRangeError``), ``ReplicaFetcherThread``, ``UnifiedLog.truncateTo`` (apache/kafka
3.9) and their history; kafka-algorithms spec §3 and appendix A.

Protocols:

* ``hw`` (≤ 0.10.2): truncate to the follower's high watermark when it becomes a follower.
* ``kip101`` (0.11 – 1.1): one OffsetForLeaderEpoch round; the leader's end offset for the
  follower's latest epoch is taken as is (no epoch comparison) — the rule that let logs diverge.
* ``kip279`` (2.0 – 2.7): the §3.3 decision table, repeated while the leader answers with an
  epoch the follower does not have.
* ``diverging-epoch`` (2.8+, IBP ≥ 2.7-IV1): the same decisions driven by ``DivergingEpoch``
  in Fetch responses, the fetch offset being the follower's log end.

After truncation the follower fetches from its log end; an offset the leader does not have
(above its log end, or below its log start) takes the out-of-range path (§3.6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kreplica.analysis.log.replica_state import ReplicaState, replica_state
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, RecordBatch
from kreplica.model.partition_log import PartitionLog
from kreplica.model.replica import require_one_partition
from kreplica.model.versions import (
    DEFAULT_VERSION,
    PROTOCOL_VERSIONS,
    Feature,
    KafkaVersion,
    Protocol,
    protocol_for,
)

HW, KIP101, KIP279, DIVERGING = Protocol.HW, Protocol.KIP101, Protocol.KIP279, Protocol.DIVERGING_EPOCH
AUTO = "auto"
#: What ``--protocol`` accepts: a generation, or ``auto`` (chosen by the Kafka version).
PROTOCOLS = (*(p.value for p in Protocol), AUTO)


@dataclass(frozen=True, slots=True)
class Round:
    requested_epoch: int
    leader_epoch: int
    end_offset: int


@dataclass(frozen=True, slots=True)
class Range:
    first: int
    last: int


@dataclass
class TruncationPlan:
    """The outcome for one follower: the exchange, where it truncates, and what goes."""

    partition: str
    leader: str
    follower: str
    protocol: str
    kafka_version: str
    rounds: list[Round] = field(default_factory=list)
    follower_log_end_before: int = 0
    truncate_to: int = 0
    out_of_range: str | None = None
    discarded: list[RecordBatch] = field(default_factory=list)
    segments_cut: list[tuple[str, int]] = field(default_factory=list)
    committed_loss: bool = False
    committed_loss_offsets: Range | None = None
    held_elsewhere: list[tuple[Range, tuple[str, ...]]] = field(default_factory=list)
    reopened_transactions: list[tuple[int, int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cache_after: tuple[tuple[int, int], ...] = ()
    leader_log_end: int = 0
    follower_log_end_after: int = 0
    still_divergent: list[Range] = field(default_factory=list)

    @property
    def refetch_records(self) -> int:
        """Offsets the follower fetches from the leader after truncating (to the leader's log end)."""
        return max(self.leader_log_end - self.follower_log_end_after, 0)

    @property
    def heals(self) -> bool:
        """Whether truncation and refetching leave the follower identical to the leader."""
        return not self.still_divergent

    @property
    def discarded_records(self) -> int:
        """Records in the discarded batches (a legacy wrapper counts its offset range)."""
        return sum(b.count if b.count is not None else b.last_offset - b.base_offset + 1 for b in self.discarded)

    @property
    def ranges(self) -> list[Range]:
        out: list[Range] = []
        for b in sorted(self.discarded, key=lambda b: b.base_offset):
            if out and b.base_offset <= out[-1].last + 1:
                out[-1] = Range(out[-1].first, max(out[-1].last, b.last_offset))
            else:
                out.append(Range(b.base_offset, b.last_offset))
        return out


def _truncate(state: ReplicaState, offset: int) -> None:
    """``UnifiedLog.truncateTo``: cut at the first batch holding an offset >= ``offset``."""
    if offset < state.log_end_offset:
        state.batches = [b for b in state.batches if b.last_offset < offset]
        state.log_end_offset = offset
        if state.cache is not None:
            state.cache.truncate_from_end(offset)
        if offset < state.log_start_offset:
            state.log_start_offset = offset
    elif state.cache is not None:
        state.cache.truncate_from_end(state.log_end_offset)


def _truncate_fully(state: ReplicaState, start: int) -> None:
    state.batches = []
    state.log_end_offset = state.log_start_offset = start
    if state.cache is not None:
        state.cache.clear()


def _decide(reply_epoch: int, reply_offset: int, follower: ReplicaState, fetch_offset: int,
            version: KafkaVersion) -> tuple[int, bool]:
    """The §3.3 table (``getOffsetTruncationState``): (truncate to, complete?)."""
    leo = follower.log_end_offset
    if reply_offset == -1:
        return fetch_offset, True
    if reply_epoch == -1:
        return min(reply_offset, leo), True
    own = follower.cache.end_offset_for(reply_epoch, leo, version) if follower.cache is not None else (-1, -1)
    if own[1] == -1:
        return min(reply_offset, leo), True
    if own[0] != reply_epoch:
        return min(own[1], leo), False
    return min(own[1], reply_offset, leo), True


def simulate(leader: ReplicaState, follower: ReplicaState, *, protocol: Protocol, kafka_version: KafkaVersion,
             partition: str) -> TruncationPlan:
    """Run the exchange; ``follower`` is mutated to its state after truncation."""
    protocol = Protocol(protocol)
    plan = TruncationPlan(partition, leader.label, follower.label, protocol.value, str(kafka_version))
    plan.follower_log_end_before = follower.log_end_offset
    original = list(follower.batches)
    v = kafka_version
    hw = follower.high_watermark
    if follower.replica.hw_source == "none":
        plan.notes.append("the follower's high watermark is unknown (no replication-offset-checkpoint entry): "
                          "Kafka uses 0")
    if protocol == HW or follower.cache is None:
        if follower.cache is None and protocol != HW:
            plan.notes.append("the follower's log has no epoch cache (pre-v2 message format): high-watermark "
                              "truncation applies")
        _truncate(follower, hw)
    elif not follower.cache.entries and v.has(Feature.NO_REQUEST_FOR_EMPTY_CACHE):
        plan.notes.append("the follower's epoch cache is empty: a 2.1+ follower sends no OffsetForLeaderEpoch "
                          "request (KAFKA-6859) and truncates to its high watermark")
        _truncate(follower, hw)
    elif protocol == KIP101:
        requested = follower.latest_epoch if follower.latest_epoch is not None else -1
        e, o = leader.cache.end_offset_for(requested, leader.log_end_offset, v) if leader.cache else (-1, -1)
        plan.rounds.append(Round(requested, e, o))
        if o == -1:
            target = hw
        elif o >= follower.log_end_offset:
            target = follower.log_end_offset
        else:
            target = o
        _truncate(follower, target)
    else:
        fetch_offset = follower.log_end_offset if protocol == DIVERGING else hw
        for _ in range(10_000):
            requested = follower.latest_epoch
            if requested is None:
                break
            e, o = leader.cache.end_offset_for(requested, leader.log_end_offset, v) if leader.cache else (-1, -1)
            if protocol == DIVERGING:
                if o == -1 or e == -1:
                    plan.rounds.append(Round(requested, e, o))
                    plan.notes.append(f"the leader has no end offset for epoch {requested}: OFFSET_OUT_OF_RANGE")
                    break
                if not (e < requested or o < follower.log_end_offset):
                    plan.rounds.append(Round(requested, e, o))
                    break  # no divergence: records follow
                fetch_offset = follower.log_end_offset
            plan.rounds.append(Round(requested, e, o))
            target, complete = _decide(e, o, follower, fetch_offset, v)
            before = (follower.log_end_offset, follower.latest_epoch)
            _truncate(follower, target)
            if protocol != DIVERGING:
                if complete:
                    break
                fetch_offset = target  # the fetch state moves to the truncation offset
            elif (follower.log_end_offset, follower.latest_epoch) == before:
                break
    # fetch from the log end: out of range?
    if follower.log_end_offset > leader.log_end_offset:
        plan.out_of_range = "above_leader_log_end"
        plan.notes.append(f"fetching from {follower.log_end_offset} is out of range (the leader ends at "
                          f"{leader.log_end_offset}): the follower truncates to the leader's log end"
                          + ("" if v.has(Feature.OUT_OF_RANGE_NEVER_FATAL) else "; a 0.10.1-2.0 follower exits instead when "
                             "unclean.leader.election.enable is false"))
        _truncate(follower, leader.log_end_offset)
    elif follower.log_end_offset < leader.log_start_offset:
        plan.out_of_range = "below_leader_log_start"
        plan.notes.append(f"the follower's log end {follower.log_end_offset} is below the leader's log start "
                          f"{leader.log_start_offset}: it deletes its whole log and restarts at "
                          f"{leader.log_start_offset} (truncateFullyAndStartAt)")
        _truncate_fully(follower, leader.log_start_offset)
    plan.truncate_to = follower.log_end_offset if plan.out_of_range != "below_leader_log_start" else leader.log_start_offset
    kept = {(b.path, b.position) for b in follower.batches}
    plan.discarded = [b for b in original if (b.path, b.position) not in kept]
    if plan.discarded:
        first = min(plan.discarded, key=lambda b: (b.base_offset, b.position))
        plan.segments_cut.append((first.path, first.position))
        for seg in sorted({b.path for b in plan.discarded} - {first.path}):
            plan.segments_cut.append((seg, 0))
        if first.base_offset < plan.truncate_to:
            plan.notes.append(f"the batch holding offset {plan.truncate_to} starts at {first.base_offset}: Kafka cuts "
                              "at batch boundaries, so offsets below the truncation point go with it")
    plan.cache_after = tuple((e.epoch, e.start_offset) for e in follower.cache.entries) if follower.cache else ()
    plan.leader_log_end = leader.log_end_offset
    plan.follower_log_end_after = plan.truncate_to
    plan.still_divergent = _still_divergent(leader, follower)
    return plan


def _still_divergent(leader: ReplicaState, follower: ReplicaState) -> list[Range]:
    """Offset ranges the follower keeps that the leader holds differently (or not at all): data
    the truncation leaves inconsistent, as when a divergent middle is followed by an identical
    tail (KAFKA-6880). Offsets below the leader's log start are out of its reach and left out."""
    have = {b.identity for b in leader.batches}
    out: list[Range] = []
    for b in sorted(follower.batches, key=lambda b: (b.base_offset, b.position)):
        if b.last_offset < leader.log_start_offset or b.identity in have:
            continue
        if out and b.base_offset <= out[-1].last + 1:
            out[-1] = Range(out[-1].first, max(out[-1].last, b.last_offset))
        else:
            out.append(Range(b.base_offset, b.last_offset))
    return out


def annotate(plan: TruncationPlan, follower_before: ReplicaState, others: list[ReplicaState],
             leader_log_start: int = 0) -> None:
    """Committed loss, which other replicas still hold identical batches, and transactions the cut
    reopens.

    A discarded batch counts as committed when it lies below the follower's own high watermark,
    or below the high watermark of another replica that holds the identical batch (same offsets,
    epoch and CRC): data a leader acknowledged. A follower's divergent suffix below some other
    replica's high watermark is not counted — the committed data at those offsets is the other
    replica's, which the follower fetches.
    """
    keyed = {r.label: {b.identity for b in r.replica.batches} for r in others}
    hws = {r.label: r.replica.high_watermark for r in others}
    own_hw = follower_before.replica.high_watermark
    lost = []
    retained_elsewhere_not = [b for b in plan.discarded if b.last_offset < leader_log_start]
    if retained_elsewhere_not:
        plan.notes.append(f"offsets below {leader_log_start} were deleted by retention on the leader; they are not "
                          "counted as lost committed data")
    for b in plan.discarded:
        if b.last_offset < leader_log_start:
            continue
        marks = [own_hw] + [hws[label] for label, have in keyed.items() if b.identity in have]
        if any(hw is not None and b.base_offset < hw for hw in marks):
            lost.append(b)
    if lost:
        plan.committed_loss = True
        plan.committed_loss_offsets = Range(min(b.base_offset for b in lost), max(b.last_offset for b in lost))
    for rng in plan.ranges:
        in_range = [b for b in plan.discarded if rng.first <= b.base_offset <= rng.last]
        holders = tuple(label for label, have in keyed.items()
                        if all(b.identity in have for b in in_range))
        plan.held_elsewhere.append((rng, holders))
    for b in plan.discarded:
        marker = follower_before.replica.marker(b) if b.is_control else None
        if marker is not None and marker.control_type in (CONTROL_COMMIT, CONTROL_ABORT):
            kind = "commit" if marker.control_type == CONTROL_COMMIT else "abort"
            plan.reopened_transactions.append((b.producer_id, b.base_offset, kind))


def resolve_protocol(protocol: str, kafka_version: KafkaVersion | None) -> tuple[Protocol, KafkaVersion]:
    """(protocol, version to emulate) from the options: ``auto`` picks by version (default
    current Kafka); an explicit protocol without a version is emulated at its own era."""
    if protocol == AUTO:
        version = kafka_version or DEFAULT_VERSION
        return protocol_for(version), version
    generation = Protocol(protocol)
    return generation, kafka_version or PROTOCOL_VERSIONS[generation]


def plan_truncations(replicas: list[PartitionLog], *, protocol: Protocol,
                     kafka_version: KafkaVersion) -> list[TruncationPlan]:
    """``truncate-plan``: the first replica leads (and registers its epoch at its log end as a newly
    elected leader does); each other one follows it. Every plan is annotated with committed loss,
    the replicas that still hold what it discards, and the transactions it reopens."""
    require_one_partition(replicas)
    states = [replica_state(r, kafka_version=kafka_version, as_leader=(i == 0)) for i, r in enumerate(replicas)]
    lead, rest = states[0], states[1:]
    plans = []
    for f in rest:
        before = replica_state(f.replica, kafka_version=kafka_version)
        plan = simulate(lead, f, protocol=protocol, kafka_version=kafka_version, partition=replicas[0].name)
        annotate(plan, before, [lead, *[s for s in rest if s is not f]], leader_log_start=lead.log_start_offset)
        plans.append(plan)
    return plans

