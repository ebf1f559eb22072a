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
from kreplica.analysis.replication.ranges import Range, extend
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, RecordBatch
from kreplica.model.log.epoch_cache import UNDEFINED_END_OFFSET, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EndOffset
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.log.replica import require_one_partition
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

#: ``out_of_range``: the follower's log end is above the leader's log end, or below its log start.
ABOVE_LEADER_LOG_END, BELOW_LEADER_LOG_START = "above_leader_log_end", "below_leader_log_start"
#: A bound on OffsetForLeaderEpoch rounds (each one cuts the follower's log or stops; real
#: exchanges take a few).
MAX_ROUNDS = 10_000


@dataclass(frozen=True, slots=True)
class Election:
    """The epoch a leader was modelled as elected at (``Partition.makeLeader``): a leader whose
    latest epoch is older than a follower's cannot lead as its files are, so it leads at a new
    epoch registered at its log end. ``given``: the epoch was the caller's (the controller's),
    not the lowest one possible (every replica's latest + 1)."""

    epoch: int
    start_offset: int
    given: bool
    previous_epoch: int | None     # the leader's latest epoch before it
    behind: bool                   # a follower's latest epoch was above that
    reason: str                    # the sentence that says so


@dataclass(frozen=True, slots=True)
class Round:
    requested_epoch: int
    leader_epoch: int
    end_offset: int


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
    never_refetched: list[Range] = field(default_factory=list)
    elected: Election | None = None

    @property
    def refetch_records(self) -> int:
        """Offsets the follower fetches from the leader after truncating (to the leader's log end)."""
        return max(self.leader_log_end - self.follower_log_end_after, 0)

    @property
    def heals(self) -> bool:
        """Whether truncation and refetching leave the follower identical to the leader: nothing
        kept differs, and no offset the leader holds is left below the follower's new log end."""
        return not self.still_divergent and not self.never_refetched

    @property
    def discarded_records(self) -> int:
        """Records in the discarded batches, as their headers give them (:attr:`RecordBatch.records_read`)."""
        return sum(b.records_read for b in self.discarded)

    @property
    def ranges(self) -> list[Range]:
        out: list[Range] = []
        for b in sorted(self.discarded, key=lambda b: b.base_offset):
            extend(out, b.base_offset, b.last_offset)
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


def _leader_answer(leader: ReplicaState, requested_epoch: int, version: KafkaVersion) -> EndOffset:
    """The leader's OffsetForLeaderEpoch answer (``endOffsetFor`` on its epoch cache); a leader
    without an epoch cache (pre-v2 message format) has no end offset for any epoch."""
    if leader.cache is None:
        return UNDEFINED_END_OFFSET
    return leader.cache.end_offset_for(requested_epoch, leader.log_end_offset, version)


def _decide(reply_epoch: int, reply_offset: int, follower: ReplicaState, fetch_offset: int,
            version: KafkaVersion) -> tuple[int, bool]:
    """The §3.3 table (``getOffsetTruncationState``): (truncate to, complete?)."""
    leo = follower.log_end_offset
    if reply_offset == UNDEFINED_EPOCH_OFFSET:
        return fetch_offset, True
    if reply_epoch == UNDEFINED_EPOCH:
        return min(reply_offset, leo), True
    own = (follower.cache.end_offset_for(reply_epoch, leo, version) if follower.cache is not None
           else UNDEFINED_END_OFFSET)
    if own.end_offset == UNDEFINED_EPOCH_OFFSET:
        return min(reply_offset, leo), True
    if own.leader_epoch != reply_epoch:
        return min(own.end_offset, leo), False
    return min(own.end_offset, reply_offset, leo), True


def _exchange(plan: TruncationPlan, leader: ReplicaState, follower: ReplicaState, protocol: Protocol,
              version: KafkaVersion) -> None:
    """How the follower finds where to truncate, and truncates there: to its high watermark
    (``hw``; a log without an epoch cache; a 2.1+ follower with an empty cache, KAFKA-6859),
    else by OffsetForLeaderEpoch (:func:`_kip101_round`, :func:`_epoch_rounds`)."""
    if protocol == HW or follower.cache is None:
        if follower.cache is None and protocol != HW:
            plan.notes.append("the follower's log has no epoch cache (pre-v2 message format): high-watermark "
                              "truncation applies")
        _truncate(follower, follower.high_watermark)
    elif not follower.cache.entries and version.has(Feature.NO_REQUEST_FOR_EMPTY_CACHE):
        plan.notes.append("the follower's epoch cache is empty: a 2.1+ follower sends no OffsetForLeaderEpoch "
                          "request (KAFKA-6859) and truncates to its high watermark")
        _truncate(follower, follower.high_watermark)
    elif protocol == KIP101:
        _kip101_round(plan, leader, follower, version)
    else:
        _epoch_rounds(plan, leader, follower, protocol, version)


def _kip101_round(plan: TruncationPlan, leader: ReplicaState, follower: ReplicaState, version: KafkaVersion) -> None:
    """KIP-101 (0.11 – 1.1): one request for the follower's latest epoch, the leader's end
    offset taken as is: none → the high watermark; at or past the follower's log end → nothing
    to cut; else that offset."""
    requested = follower.latest_epoch if follower.latest_epoch is not None else UNDEFINED_EPOCH
    epoch, offset = _leader_answer(leader, requested, version)
    plan.rounds.append(Round(requested, epoch, offset))
    if offset == UNDEFINED_EPOCH_OFFSET:
        target = follower.high_watermark
    elif offset >= follower.log_end_offset:
        target = follower.log_end_offset
    else:
        target = offset
    _truncate(follower, target)


def _epoch_rounds(plan: TruncationPlan, leader: ReplicaState, follower: ReplicaState, protocol: Protocol,
                  version: KafkaVersion) -> None:
    """KIP-279 (2.0 – 2.7) and diverging-epoch (2.8+): rounds of the §3.3 table
    (:func:`_decide`) for the follower's latest epoch.

    ``kip279`` fetches from the high watermark and repeats while the leader answers with an epoch
    the follower does not have, the fetch offset moving to each truncation point; a 2.0 follower
    with an empty cache asks for epoch -1 (2.1+ sends nothing and keeps its fetch offset).
    ``diverging-epoch`` fetches from the log end: an undefined answer is OFFSET_OUT_OF_RANGE, an
    answer at or beyond the follower's epoch and log end means no divergence, and the rounds stop
    once a truncation leaves the log end and latest epoch unchanged.
    """
    fetch_offset = follower.log_end_offset if protocol == DIVERGING else follower.high_watermark
    for _ in range(MAX_ROUNDS):
        requested = follower.latest_epoch
        if requested is None:
            if protocol == DIVERGING or version.has(Feature.NO_REQUEST_FOR_EMPTY_CACHE):
                break
            # 2.0: buildLeaderEpochRequest sends latestEpoch(), -1 for an empty cache
            requested = UNDEFINED_EPOCH
        epoch, offset = _leader_answer(leader, requested, version)
        if protocol == DIVERGING:
            if offset == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH:
                plan.rounds.append(Round(requested, epoch, offset))
                plan.notes.append(f"the leader has no end offset for epoch {requested}: OFFSET_OUT_OF_RANGE")
                break
            if not (epoch < requested or offset < follower.log_end_offset):
                if not plan.rounds or plan.rounds[-1] != Round(requested, epoch, offset):
                    # the fetch after a truncation, asking what the last round asked, is no new exchange
                    plan.rounds.append(Round(requested, epoch, offset))
                break  # no divergence: records follow
            fetch_offset = follower.log_end_offset
        plan.rounds.append(Round(requested, epoch, offset))
        target, complete = _decide(epoch, offset, follower, fetch_offset, version)
        before = (follower.log_end_offset, follower.latest_epoch)
        _truncate(follower, target)
        if protocol != DIVERGING:
            if complete:
                break
            fetch_offset = target  # the fetch state moves to the truncation offset
        elif (follower.log_end_offset, follower.latest_epoch) == before:
            break


def _handle_out_of_range(plan: TruncationPlan, leader: ReplicaState, follower: ReplicaState,
                         version: KafkaVersion) -> None:
    """``handleOutOfRangeError`` (§3.6) for the fetch from the follower's log end: above the
    leader's log end, truncate to it (a 0.10.1 – 2.0 follower exits instead when unclean election
    is off); below the leader's log start, delete the whole log and restart at that start."""
    if follower.log_end_offset > leader.log_end_offset:
        plan.out_of_range = ABOVE_LEADER_LOG_END
        plan.notes.append(f"fetching from {follower.log_end_offset} is out of range (the leader ends at "
                          f"{leader.log_end_offset}): the follower truncates to the leader's log end"
                          + ("" if version.has(Feature.OUT_OF_RANGE_NEVER_FATAL)
                             else "; a 0.10.1-2.0 follower exits instead when unclean.leader.election.enable is false"))
        _truncate(follower, leader.log_end_offset)
    elif follower.log_end_offset < leader.log_start_offset:
        plan.out_of_range = BELOW_LEADER_LOG_START
        plan.notes.append(f"the follower's log end {follower.log_end_offset} is below the leader's log start "
                          f"{leader.log_start_offset}: it deletes its whole log and restarts at "
                          f"{leader.log_start_offset} (truncateFullyAndStartAt)")
        _truncate_fully(follower, leader.log_start_offset)


def _record_discards(plan: TruncationPlan, original: list[RecordBatch], follower: ReplicaState) -> None:
    """The batches the follower held and no longer does, the segments cut (the first discarded
    batch's segment at its position, later ones whole), and a note when the cut, made at a batch
    boundary, takes offsets below the truncation point (not when the whole log goes:
    ``truncateFullyAndStartAt`` restarts at the leader's log start, below which it fetches nothing)."""
    kept = {(b.path, b.position) for b in follower.batches}
    plan.discarded = [b for b in original if (b.path, b.position) not in kept]
    if not plan.discarded:
        return
    first = min(plan.discarded, key=lambda b: (b.base_offset, b.position))
    plan.segments_cut.append((first.path, first.position))
    for seg in sorted({b.path for b in plan.discarded} - {first.path}):
        plan.segments_cut.append((seg, 0))
    if first.base_offset < plan.truncate_to and plan.out_of_range != BELOW_LEADER_LOG_START:
        plan.notes.append(f"the batch holding offset {plan.truncate_to} starts at {first.base_offset}: Kafka cuts "
                          "at batch boundaries, so offsets below the truncation point go with it, and the log "
                          f"end is set to {plan.truncate_to}: the follower does not fetch them again")


def simulate(leader: ReplicaState, follower: ReplicaState, *, protocol: Protocol, kafka_version: KafkaVersion,
             partition: str) -> TruncationPlan:
    """Run the exchange; ``follower`` is mutated to its state after truncation.

    The OffsetForLeaderEpoch exchange of the protocol (:func:`_exchange`), then the fetch from the
    new log end (:func:`_handle_out_of_range`), then what was discarded (:func:`_record_discards`).
    """
    protocol = Protocol(protocol)
    plan = TruncationPlan(partition, leader.label, follower.label, protocol.value, str(kafka_version))
    plan.follower_log_end_before = follower.log_end_offset
    original = list(follower.batches)
    if follower.replica.hw_source == "none":
        plan.notes.append("the follower's high watermark is unknown (no replication-offset-checkpoint entry): "
                          "Kafka uses 0")
    _exchange(plan, leader, follower, protocol, kafka_version)
    _handle_out_of_range(plan, leader, follower, kafka_version)
    plan.truncate_to = (follower.log_end_offset if plan.out_of_range != BELOW_LEADER_LOG_START
                        else leader.log_start_offset)
    _record_discards(plan, original, follower)
    plan.cache_after = tuple((e.epoch, e.start_offset) for e in follower.cache.entries) if follower.cache else ()
    plan.leader_log_end = leader.log_end_offset
    plan.follower_log_end_after = plan.truncate_to
    plan.still_divergent = _still_divergent(leader, follower)
    plan.never_refetched = _never_refetched(leader, follower)
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
        extend(out, b.base_offset, b.last_offset)
    return out


def _never_refetched(leader: ReplicaState, follower: ReplicaState) -> list[Range]:
    """Offsets the leader holds between the follower's last kept batch and its new log end.

    ``LocalLog.truncateTo`` removes the whole batch holding the target offset
    (``LogSegment.truncateTo``) yet sets the log end to the target (``updateLogEndOffset``); the
    follower fetches from there, so the offsets of the cut batch below the target are never
    fetched again. Offsets below the leader's log start are out of its reach and left out."""
    kept_end = max((b.next_offset for b in follower.batches), default=follower.log_start_offset)
    lo, hi = max(kept_end, leader.log_start_offset), follower.log_end_offset - 1
    out: list[Range] = []
    for b in sorted(leader.batches, key=lambda b: (b.base_offset, b.position)):
        if b.last_offset < lo or b.base_offset > hi:
            continue
        extend(out, max(b.base_offset, lo), min(b.last_offset, hi))
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


def plan_truncations(replicas: list[PartitionLog], *, protocol: Protocol, kafka_version: KafkaVersion,
                     leader_epoch: int | None = None) -> list[TruncationPlan]:
    """``truncate-plan``: the first replica leads (and registers its epoch at its log end as a newly
    elected leader does, :func:`elect`); each other one follows it. Every plan is annotated with
    committed loss, the replicas that still hold what it discards, and the transactions it
    reopens. ``leader_epoch``: the epoch the controller elected the leader at, when known."""
    require_one_partition(replicas)
    states = [replica_state(r, kafka_version=kafka_version, as_leader=(i == 0)) for i, r in enumerate(replicas)]
    lead, rest = states[0], states[1:]
    elected = elect(lead, rest, leader_epoch, kafka_version)
    plans = []
    for f in rest:
        before = replica_state(f.replica, kafka_version=kafka_version)
        plan = simulate(lead, f, protocol=protocol, kafka_version=kafka_version, partition=replicas[0].name)
        annotate(plan, before, [lead, *[s for s in rest if s is not f]], leader_log_start=lead.log_start_offset)
        plan.elected = elected
        plans.append(plan)
    return plans


def elect(lead: ReplicaState, followers: list[ReplicaState], leader_epoch: int | None,
          kafka_version: KafkaVersion) -> Election | None:
    """The leader as Kafka would have made it leader, its cache extended in place; ``None`` when it
    leads as its files are.

    A partition's leader epochs only grow: the controller elects every new leader at an epoch
    above any used before (``LeaderAndIsr.newLeader``, the KRaft ``PartitionChangeBuilder``), and
    a 2.1+ leader registers it at its log end when elected (``Partition.makeLeader`` →
    ``maybeAssignEpochStartOffset``, KAFKA-7415). So a leader whose latest epoch is older than a
    follower's leads at a new one, and the follower's OffsetForLeaderEpoch then finds the leader's
    epoch below its own (``LeaderEpochFileCache.endOffsetFor``: the floor entry, ending where the
    new epoch starts) instead of no answer. The epoch is ``leader_epoch`` when that is above every
    replica's latest (any such epoch truncates alike), else the lowest possible, the highest latest
    epoch + 1. A leader already at the highest epoch leads as it is unless a newer
    ``leader_epoch`` is given. Before 2.1 a new leader registered its epoch only with its first
    write: nothing is registered.
    """
    if lead.cache is None:
        return None
    latest = [s.latest_epoch for s in followers if s.latest_epoch is not None]
    own = lead.latest_epoch if lead.latest_epoch is not None else UNDEFINED_EPOCH
    highest = max([own, *latest])
    if leader_epoch is not None and leader_epoch > highest:
        epoch, given = leader_epoch, True
    elif own < highest:
        epoch, given = highest + 1, False
    else:
        return None
    if not kafka_version.has(Feature.LEADER_REGISTERS_EPOCH_AT_LOG_END):
        return None
    previous = None if own == UNDEFINED_EPOCH else own
    behind = own < max(latest, default=UNDEFINED_EPOCH)
    reason = _elected_reason(lead, followers, epoch, given, previous, behind, leader_epoch)
    lead.cache.assign(epoch, lead.log_end_offset)
    return Election(epoch, lead.log_end_offset, given, previous, behind, reason)


def _elected_reason(lead: ReplicaState, followers: list[ReplicaState], epoch: int, given: bool,
                    previous: int | None, behind: bool, leader_epoch: int | None) -> str:
    """Why the leader leads at ``epoch`` (the replicas as loaded, before any truncation)."""
    where = f"registered at its log end {lead.log_end_offset} (Partition.makeLeader)"
    if not behind:
        return f"{lead.label} is elected at epoch {epoch}, as given, {where}"
    ahead = max((s for s in followers if s.latest_epoch is not None), key=lambda s: s.latest_epoch)
    own = "no epoch" if previous is None else f"latest epoch {previous}"
    how = "as given" if given else "the lowest a controller could give (--leader-epoch sets it)"
    refused = (f"; epoch {leader_epoch} is not above every replica's latest epoch, no controller elects at it"
               if leader_epoch is not None and not given else "")
    return (f"{lead.label} ({own}) is behind {ahead.label}'s epoch {ahead.latest_epoch}: it leads only once "
            f"elected at a newer epoch, modelled at epoch {epoch}, {how}, {where}{refused}")

