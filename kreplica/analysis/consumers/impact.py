"""What a consumer group does on its next fetch after a truncation or an unclean election.

A replication event loses the records ``D``..``L_old - 1`` of the replica that led (``D`` the
divergence point); the new leader ends at ``L_new`` (``D <= L_new``) and holds other records, if
any, from ``D`` on. A group that committed offset ``C`` (with the leader epoch ``E`` of the last
record it consumed, KIP-320) resumes there after a restart or a rebalance
(``ConsumerUtils.refreshCommittedOffsets``: ``seekUnvalidated`` to ``(C, E)``; a running consumer's
position in memory may be further on). What its next fetch does depends on the client:

* before KIP-320 (clients before 2.3, a commit without a leader epoch, or a new leader older than
  2.3, which serves no OffsetsForLeaderEpoch v3 to consumers:
  ``OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion``; the position is then taken as
  valid): the fetch at ``C`` is OFFSET_OUT_OF_RANGE when ``C`` is above the log end or below the
  log start (``UnifiedLog.read``, ``LocalLog.read``), and ``FetchCollector.handleInitializeErrors``
  (``Fetcher`` before 3.5) resets by ``auto.offset.reset`` (earliest: the log start; latest: the log
  end) or, under ``none``, raises ``OffsetOutOfRangeException``. Otherwise it continues at ``C``
  and never reads the new leader's records below ``C``. When producers write past ``C`` before the
  consumer fetches, offsets ``L_new``..``C - 1`` hold new records it skips the same way;
* KIP-320 (clients 2.3+ with ``E``): ``SubscriptionState.maybeCompleteValidation`` on the new
  leader's OffsetForLeaderEpoch answer for ``E`` (kreplica's own,
  :func:`kreplica.analysis.replication.offset_for_epoch.answer`; FENCED/UNKNOWN_LEADER_EPOCH are
  retried after a metadata refresh, ``OffsetsForLeaderEpochUtils.handleResponse``, so the answer
  that counts is the unfenced one): an end offset below ``C`` is a detected truncation: the
  position moves to that end offset (the divergence point) under earliest or latest, and
  ``LogTruncationException`` is raised under ``none`` from 2.6. An undefined answer (epoch or
  offset -1) resets by ``auto.offset.reset`` or raises ``LogTruncationException`` from 2.6
  (KAFKA-9840, KAFKA-10113); 2.3 – 2.5 compare -1 with ``C`` like any end offset: the position
  becomes -1, whose fetch is out of range and resets. Under ``none`` 2.3 – 2.5 raise nothing: the
  ``LogTruncationException`` (or the ``IllegalArgumentException`` of building the divergent
  ``OffsetAndMetadata(-1)``) is thrown in ``Fetcher.validateOffsetsAsync``'s listener, which
  ``AsyncClient.sendAsyncRequest`` runs inside ``future.complete`` and whose exception it drops
  (``if (!future.isDone()) future.raise(e)``: the future is done); the partition stays awaiting
  validation, re-validated every ``request.timeout.ms``, and the consumer stalls: poll returns
  none of its records and ``position()`` times out (KAFKA-9840 made 2.6 raise it: "this exception
  was not getting raised properly until KAFKA-9840", KAFKA-10113).

Counts are offsets (one record each, fewer where compaction or transaction markers left gaps).
Records consumed and lost are those of the lost range below ``C`` when the group read them from
the replica that lost them (:func:`read_from`: by the committed epoch, by ``C`` above the new log
end, or by a commit older than the event): a downstream system holds them and the log does not.
A group that committed at or below ``D`` and that no client generation moves is unaffected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kreplica.analysis.log.replica_state import replica_state
from kreplica.analysis.replication.offset_for_epoch import OffsetForLeaderEpochAnswer, answer
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEntry, LeaderEpochCache
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion

#: ``auto.offset.reset`` (``OffsetResetStrategy``), in the order behaviours are listed.
EARLIEST, LATEST, NONE = "earliest", "latest", "none"
AUTO_OFFSET_RESETS = (EARLIEST, LATEST, NONE)

#: What the consumer does. ``continues``: fetches from its position, noticing nothing;
#: ``seeks_to_divergence``: KIP-320 detected the truncation and moved the position to the end
#: offset of its epoch; ``resets``: ``auto.offset.reset`` chose the position; ``fails``: the
#: consumer's poll raises ``exception`` until the application seeks; ``stalls``: its poll raises
#: nothing and returns none of the partition's records (validation never completes) until the
#: application seeks.
CONTINUES, SEEKS_TO_DIVERGENCE, RESETS, FAILS, STALLS = "continues", "seeks_to_divergence", "resets", "fails", "stalls"
#: Why it moved: the fetch was OFFSET_OUT_OF_RANGE; validation found the log truncated below the
#: position; validation got an undefined answer; the group has no committed offset (it expired).
OFFSET_OUT_OF_RANGE, LOG_TRUNCATION, UNDEFINED_END_OFFSET, NO_COMMITTED_OFFSET = (
    "offset_out_of_range", "log_truncation", "undefined_end_offset", "no_committed_offset")
#: The exceptions a consumer's poll raises (``org.apache.kafka.clients.consumer``; ``java.lang``).
OFFSET_OUT_OF_RANGE_EXCEPTION = "OffsetOutOfRangeException"
LOG_TRUNCATION_EXCEPTION = "LogTruncationException"
NO_OFFSET_EXCEPTION = "NoOffsetForPartitionException"
#: Before KIP-320, when the committed offset is above the new log end: the consumer fetches before
#: producers reach it (out of range), or producers write past it first (it continues, skipping them).
FETCHES_FIRST, WRITES_FIRST = "fetches_first", "writes_first"

#: Client generations whose next fetch differs, as (first version, first version after); a
#: representative version of each is what :func:`next_fetch` is asked.
VALIDATION = Feature.CONSUMER_POSITION_VALIDATION
UNDEFINED_RESETS = Feature.CONSUMER_UNDEFINED_END_OFFSET_RESETS
CLIENT_GENERATIONS: tuple[tuple[KafkaVersion | None, KafkaVersion | None], ...] = (
    (None, VALIDATION.since), (VALIDATION.since, UNDEFINED_RESETS.since), (UNDEFINED_RESETS.since, None))
#: Any client before KIP-320 fetches alike (the out-of-range handling is 0.9's).
PRE_VALIDATION_CLIENT = KafkaVersion(0, 9)


#: Whose records a group read last (the record before its committed offset): the replica that
#: loses them, or the new leader (which holds the same record: same offset, same epoch).
LOST_REPLICA, NEW_LEADER = "lost_replica", "new_leader"


@dataclass(frozen=True, slots=True)
class LostRange:
    """Offsets ``first_offset``..``end_offset - 1`` that ``replica`` held and the event discards;
    ``epochs`` is that replica's lineage (which epoch wrote which offsets), ``None`` unknown."""

    first_offset: int
    end_offset: int
    replica: str
    epochs: tuple[EpochEntry, ...] | None = None


def lost_range_of(log: PartitionLog, first_offset: int, end_offset: int) -> LostRange:
    """The range ``log``'s replica loses, with the lineage its batch headers give."""
    return LostRange(first_offset, end_offset, log.label, tuple(log.batch_cache))


@dataclass(frozen=True, slots=True)
class NewLeader:
    """The new leader as consumers meet it right after the event.

    ``epochs`` is the epoch cache it answers OffsetForLeaderEpoch from (``None``: a log without
    one, pre-v2 message format), its own epoch ``leader_epoch`` registered at ``log_end_offset``
    when known. ``later_log_end`` is the log end of a later copy of the same lineage (its own files
    written after the event, or another replica's), which shows records written since.
    """

    label: str
    log_start_offset: int
    log_end_offset: int
    epochs: tuple[EpochEntry, ...] | None
    leader_epoch: int | None
    kafka_version: KafkaVersion
    later_log_end: int | None = None

    def offset_for_epoch(self, epoch: int) -> OffsetForLeaderEpochAnswer:
        """Its OffsetForLeaderEpoch answer for ``epoch`` (no current leader epoch: not fenced)."""
        cache = None if self.epochs is None else LeaderEpochCache(entries=list(self.epochs))
        return answer(cache, self.log_end_offset, epoch, kafka_version=self.kafka_version)


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """Where the consumer goes and what it misses: it resumes at ``resumes_at`` (``None``: it
    fails) and reads everything from there. ``records_re_read`` it had consumed already;
    ``records_skipped`` are new records it never reads that the evidence shows,
    ``records_skipped_up_to`` the most it can skip (``None``: no bound, the records written before
    a reset to latest). ``validation`` is the OffsetForLeaderEpoch answer a KIP-320 client got."""

    action: str
    cause: str | None
    exception: str | None
    resumes_at: int | None
    records_re_read: int
    records_skipped: int
    records_skipped_up_to: int | None
    validation: OffsetForLeaderEpochAnswer | None = None


@dataclass(frozen=True, slots=True)
class ClientBehaviour:
    """One outcome for clients from ``clients_from`` up to before ``clients_before`` (``None``: no
    bound), under the ``auto_offset_reset`` values listed and ``when`` (``None``: whatever the race
    between the consumer's fetch and new writes)."""

    clients_from: KafkaVersion | None
    clients_before: KafkaVersion | None
    auto_offset_reset: tuple[str, ...]
    when: str | None
    outcome: FetchOutcome


@dataclass(frozen=True, slots=True)
class ConsumerImpact:
    """One group, one topic-partition, one event.

    ``read_from``: whose record the group read last when it committed past the divergence point
    (:func:`read_from`; ``None``: at or below it, or the evidence cannot tell).
    ``consumed_and_lost``: offsets of the lost range below the committed offset — records the
    group consumed and the log no longer has when it read them from the lost replica, the most it
    can be when ``read_from`` is ``None``, 0 when it read the new leader's. ``reused_offsets``:
    offsets from the new log end up to the committed offset that new records take (``reused_seen``
    of them shown by a later copy; ``None`` without one). ``committed_after_event``: the commit
    carries the new leader's epoch or a later one, so it was made on the new leader's history and
    says nothing of what the group read before (no behaviours are given).
    """

    event: str
    committed: CommittedOffset
    lost: LostRange
    leader: NewLeader
    read_from: str | None
    consumed_and_lost: int
    reused_offsets: int
    reused_seen: int | None
    committed_after_event: bool
    behaviours: tuple[ClientBehaviour, ...]

    @property
    def at_risk(self) -> bool:
        """Whether the group lost (or may have lost) consumed records, or some client would move,
        fail, re-read or skip."""
        return self.consumed_and_lost > 0 or any(
            b.outcome.action != CONTINUES or b.outcome.records_re_read or b.outcome.records_skipped_up_to != 0
            for b in self.behaviours)

    @property
    def loses_consumed_records(self) -> bool:
        """Whether the group is known to have consumed records the log no longer has: it read
        the lost replica's records (``read_from``) and some of them are gone."""
        return self.read_from == LOST_REPLICA and self.consumed_and_lost > 0


def new_leader(log: PartitionLog, *, kafka_version: KafkaVersion = DEFAULT_VERSION, leader_epoch: int | None = None,
               log_end_offset: int | None = None, later: Sequence[PartitionLog] = ()) -> NewLeader:
    """The new leader from its files, loaded as a broker of ``kafka_version`` loads them.

    ``log_end_offset``: its log end at the event when the files hold records written since (the
    start of its leader epoch); the epochs after it are dropped and the files' own end is the later
    log end. ``leader_epoch``: the epoch it was elected with, which a 2.1+ leader registers at its
    log end (KAFKA-7415) when it is newer than its cache. ``later``: other copies; the longest
    whose epochs up to the log end match gives the later log end when the files do not.
    """
    state = replica_state(log, kafka_version=kafka_version, as_leader=True)
    end = state.log_end_offset if log_end_offset is None else min(log_end_offset, state.log_end_offset)
    epochs = None
    if state.cache is not None:
        kept = [e for e in state.cache.entries if e.start_offset <= end]
        newer = leader_epoch is not None and (not kept or leader_epoch > kept[-1].epoch)
        if newer and kafka_version.has(Feature.LEADER_REGISTERS_EPOCH_AT_LOG_END):
            kept.append(EpochEntry(leader_epoch, end))
        epochs = tuple(kept)
    later_end = state.log_end_offset if state.log_end_offset > end else None
    if later_end is None:
        ends = [s.log_end_offset for s in (replica_state(r, kafka_version=kafka_version) for r in later)
                if s.log_end_offset > end and _same_lineage(s.cache.entries if s.cache else (), epochs or (), end)]
        later_end = max(ends, default=None)
    return NewLeader(log.label, state.log_start_offset, end, epochs, leader_epoch, kafka_version, later_end)


def _same_lineage(other: Iterable[EpochEntry], ours: Sequence[EpochEntry], end: int) -> bool:
    """Whether another copy's cache holds ours (every epoch starting at or below our log ``end``,
    the epoch we were elected with included) as the start of its own."""
    theirs = [e for e in other if e.start_offset <= end]
    return theirs[:len(ours)] == list(ours)


def next_fetch(committed: CommittedOffset, lost: LostRange, leader: NewLeader, *, client_version: KafkaVersion,
               auto_offset_reset: str, writes_first: bool = False) -> FetchOutcome:
    """What a consumer of ``client_version`` resuming from ``committed`` does against ``leader``.

    ``writes_first``: producers wrote past the committed offset before the consumer fetched (only
    a client that does not validate can tell). An expired offset is no offset: the consumer starts
    where ``auto.offset.reset`` says (``NoOffsetForPartitionException`` under ``none``).
    """
    _check_policy(auto_offset_reset)
    if committed.expired:
        return _reset(committed, lost, leader, auto_offset_reset, NO_COMMITTED_OFFSET, NO_OFFSET_EXCEPTION)
    position = committed.offset
    validates = (committed.leader_epoch is not None and client_version.has(VALIDATION)
                 and leader.kafka_version.has(VALIDATION))
    if not validates:
        return _fetch(committed, lost, leader, position, auto_offset_reset, writes_first=writes_first)
    reply = leader.offset_for_epoch(committed.leader_epoch)
    undefined = reply.end_offset == UNDEFINED_EPOCH_OFFSET or reply.leader_epoch == UNDEFINED_EPOCH
    if undefined and client_version.has(UNDEFINED_RESETS):
        return _reset(committed, lost, leader, auto_offset_reset, UNDEFINED_END_OFFSET, LOG_TRUNCATION_EXCEPTION,
                      reply)
    if reply.end_offset < position:
        cause = UNDEFINED_END_OFFSET if undefined else LOG_TRUNCATION
        if auto_offset_reset == NONE:
            if not client_version.has(UNDEFINED_RESETS):
                # 2.3 – 2.5: the LogTruncationException (IllegalArgumentException for -1) is lost
                return FetchOutcome(STALLS, cause, None, None, 0, 0, 0, reply)
            return FetchOutcome(FAILS, cause, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0, reply)
        return _fetch(committed, lost, leader, reply.end_offset, auto_offset_reset, reply=reply, cause=cause)
    return _fetch(committed, lost, leader, position, auto_offset_reset, reply=reply)


def _check_policy(auto_offset_reset: str) -> None:
    if auto_offset_reset not in AUTO_OFFSET_RESETS:
        raise ValueError(f"auto.offset.reset is one of {', '.join(AUTO_OFFSET_RESETS)}, not {auto_offset_reset!r}")


def _fetch(committed: CommittedOffset, lost: LostRange, leader: NewLeader, position: int, policy: str, *,
           writes_first: bool = False, reply: OffsetForLeaderEpochAnswer | None = None,
           cause: str | None = None) -> FetchOutcome:
    """The fetch at ``position``: out of range below the log start or above the log end (which
    producers have moved past the committed offset when ``writes_first``), else records from there;
    ``cause`` is set when validation moved the position."""
    end = max(leader.log_end_offset, committed.offset) if writes_first else leader.log_end_offset
    if position < leader.log_start_offset or position > end:
        return _reset(committed, lost, leader, policy, cause or OFFSET_OUT_OF_RANGE, OFFSET_OUT_OF_RANGE_EXCEPTION,
                      reply)
    action = SEEKS_TO_DIVERGENCE if cause == LOG_TRUNCATION else CONTINUES
    return _resume(committed, lost, leader, position, action, cause, reply)


def _reset(committed: CommittedOffset, lost: LostRange, leader: NewLeader, policy: str, cause: str,
           exception: str, reply: OffsetForLeaderEpochAnswer | None = None) -> FetchOutcome:
    """``auto.offset.reset``: earliest reads from the log start, latest from the log end (the
    records written before the reset are skipped, no bound known), none raises ``exception``."""
    if policy == NONE:
        return FetchOutcome(FAILS, cause, exception, None, 0, 0, 0, reply)
    position = leader.log_start_offset if policy == EARLIEST else leader.log_end_offset
    outcome = _resume(committed, lost, leader, position, RESETS, cause, reply)
    if policy == LATEST:
        return FetchOutcome(outcome.action, cause, None, position, outcome.records_re_read, outcome.records_skipped,
                            None, reply)
    return outcome


def _resume(committed: CommittedOffset, lost: LostRange, leader: NewLeader, position: int, action: str,
            cause: str | None, reply: OffsetForLeaderEpochAnswer | None) -> FetchOutcome:
    """Reading on from ``position``: the records it had consumed that the new leader holds come
    again (those below the divergence point; all below the committed offset when it read the new
    leader's); the new leader's other records below ``position`` never come (the evidence shows
    those below the new log end and those a later copy holds)."""
    d = min(lost.first_offset, leader.log_end_offset)
    if read_from(committed, lost, leader) == NEW_LEADER:
        d = committed.offset
    re_read = max(0, min(committed.offset, d) - position)
    if position <= d:
        return FetchOutcome(action, cause, None, position, re_read, 0, 0, reply)
    shown = min(position, leader.log_end_offset) - d
    if position > leader.log_end_offset and leader.later_log_end is not None:
        shown += max(0, min(position, leader.later_log_end) - leader.log_end_offset)
    return FetchOutcome(action, cause, None, position, re_read, shown, position - d, reply)


def _epoch_at(entries: Sequence[EpochEntry] | None, offset: int, end: int) -> int | None:
    """The epoch that wrote ``offset`` in a lineage ending at ``end`` (``None``: not held)."""
    if entries is None or not 0 <= offset < end:
        return None
    return LeaderEpochCache(entries=list(entries)).epoch_for_offset(offset)


def read_from(committed: CommittedOffset, lost: LostRange, leader: NewLeader, *,
              event_time: int | None = None) -> str | None:
    """Whose record a group that committed past the divergence point read last (offset ``C - 1``).

    The new leader's when the commit carries its epoch or a later one, or when it holds
    ``C - 1`` from the committed epoch (the same record: Kafka's log matching), or when the
    committed epoch is in its lineage and not in the lost replica's (only it ever led at that
    epoch: a record it wrote since the event), or when only it held ``C - 1`` (the lost replica
    ended below and it did not). The lost replica's likewise: it holds ``C - 1`` from that epoch,
    the epoch is in its lineage alone, or it alone held ``C - 1``; or the commit is older than the
    event (``event_time``, by the coordinator's clock). Otherwise ``None``: a commit without epoch
    that both held, or above both logs' ends, may follow either history.
    """
    offset, epoch = committed.offset, committed.leader_epoch
    if offset <= lost.first_offset:
        return None
    if epoch is not None and leader.leader_epoch is not None and epoch >= leader.leader_epoch:
        return NEW_LEADER
    if epoch is not None:
        if _epoch_at(leader.epochs, offset - 1, leader.log_end_offset) == epoch:
            return NEW_LEADER
        if _epoch_at(lost.epochs, offset - 1, lost.end_offset) == epoch:
            return LOST_REPLICA
        alone = _lineage_alone(epoch, lost, leader)
        if alone is not None:
            return alone
    above_new, above_lost = offset > leader.log_end_offset, offset > lost.end_offset
    if above_new and not above_lost:
        return LOST_REPLICA
    if above_lost and not above_new:
        return NEW_LEADER
    if event_time is not None and committed.commit_timestamp < event_time:
        return LOST_REPLICA
    return None


def _lineage_alone(epoch: int, lost: LostRange, leader: NewLeader) -> str | None:
    """The replica whose lineage alone holds ``epoch`` (a partition's epochs are led by one
    leader each, so a record of that epoch came from it); ``None`` when both or neither hold it,
    or a lineage is unknown."""
    if lost.epochs is None or leader.epochs is None:
        return None
    in_new = any(e.epoch == epoch for e in leader.epochs)
    in_lost = any(e.epoch == epoch for e in lost.epochs)
    if in_new == in_lost:
        return None
    return NEW_LEADER if in_new else LOST_REPLICA


def consumer_impact(committed: CommittedOffset, lost: LostRange, leader: NewLeader, *, event: str,
                    event_time: int | None = None) -> ConsumerImpact:
    """The group's impact: whose records it read, its consumed-and-lost records and, per client
    generation, ``auto.offset.reset`` and race where they differ, what its next fetch does."""
    offset = committed.offset
    source = read_from(committed, lost, leader, event_time=event_time)
    consumed_and_lost = 0 if source == NEW_LEADER else max(0, min(offset, lost.end_offset) - lost.first_offset)
    reused = 0 if committed.expired else max(0, offset - leader.log_end_offset)
    seen = None
    if reused and leader.later_log_end is not None:
        seen = max(0, min(offset, leader.later_log_end) - leader.log_end_offset)
    after = (committed.leader_epoch is not None and leader.leader_epoch is not None
             and committed.leader_epoch >= leader.leader_epoch and not committed.expired)
    behaviours = () if after else _behaviours(committed, lost, leader)
    if after:
        reused, seen = 0, None
    return ConsumerImpact(event, committed, lost, leader, source, consumed_and_lost, reused, seen, after, behaviours)


def _behaviours(committed: CommittedOffset, lost: LostRange, leader: NewLeader) -> tuple[ClientBehaviour, ...]:
    """Every generation × race × policy, folded: a race that changes nothing for any policy,
    policies with the same outcome, and adjacent generations with the same rows are written once."""
    per_generation: list[tuple[KafkaVersion | None, KafkaVersion | None, tuple]] = []
    for first, before in CLIENT_GENERATIONS:
        client = first if first is not None else PRE_VALIDATION_CLIENT
        by_race = {w: [next_fetch(committed, lost, leader, client_version=client, auto_offset_reset=policy,
                                  writes_first=w) for policy in AUTO_OFFSET_RESETS] for w in (False, True)}
        races = ((None, by_race[False]),) if by_race[False] == by_race[True] else (
            (FETCHES_FIRST, by_race[False]), (WRITES_FIRST, by_race[True]))
        rows = []
        for when, outcomes in races:
            policies: dict[FetchOutcome, list[str]] = {}
            for policy, o in zip(AUTO_OFFSET_RESETS, outcomes):
                policies.setdefault(o, []).append(policy)
            rows.extend((tuple(names), when, o) for o, names in policies.items())
        if per_generation and per_generation[-1][2] == tuple(rows):
            per_generation[-1] = (per_generation[-1][0], before, tuple(rows))
        else:
            per_generation.append((first, before, tuple(rows)))
    return tuple(ClientBehaviour(first, before, policy, when, o)
                 for first, before, rows in per_generation for policy, when, o in rows)


def impacts(offsets: Iterable[CommittedOffset], topic: str, partition: int, lost: LostRange, leader: NewLeader, *,
            event: str, event_time: int | None = None) -> list[ConsumerImpact]:
    """The impact on every group that committed an offset for ``topic``-``partition``: the groups
    at risk first (those known to have read the lost records first, most consumed-and-lost
    records first), then the rest, each by group name."""
    found = [consumer_impact(c, lost, leader, event=event, event_time=event_time) for c in offsets
             if c.topic == topic and c.partition == partition]
    return sorted(found, key=lambda i: (not i.at_risk, i.read_from != LOST_REPLICA, -i.consumed_and_lost,
                                        i.committed.group))
