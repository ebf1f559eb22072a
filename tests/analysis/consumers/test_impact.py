"""What a consumer group does on its next fetch after a replication event, rule by rule with its
counter-case. Expected values come from Kafka's client and broker code (apache/kafka trunk of
September 2024 and the 2.2.0 – 2.7.0 tags), not from kreplica:

* the fetch: ``UnifiedLog.read`` / ``LocalLog.read`` answer OFFSET_OUT_OF_RANGE below the log start
  or above the log end (an offset equal to the log end is an empty read);
  ``FetchCollector.handleInitializeErrors`` (``Fetcher`` up to 3.4) then calls
  ``requestOffsetReset`` when ``auto.offset.reset`` is not ``none``, else throws
  ``OffsetOutOfRangeException``;
* validation (2.3+): ``SubscriptionState.maybeValidatePositionForCurrentLeader`` validates only a
  position with an offset epoch (``validatePosition``) against a broker serving
  OffsetsForLeaderEpoch v3 (``OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion``, Kafka 2.3);
  ``SubscriptionState.maybeCompleteValidation``: an undefined answer resets or returns a
  ``LogTruncation`` without divergent offset (2.6+, KAFKA-9840/KAFKA-10113); an end offset below
  the position seeks there (``seekValidated``) or returns the divergent offset; otherwise
  ``completeValidation`` — the returned epoch is never compared with the requested one. In 2.3 – 2.5
  the undefined answer is an end offset of -1 below the position: ``seekValidated(-1)`` under a
  reset policy, ``new OffsetAndMetadata(-1, ...)`` (``IllegalArgumentException``) under ``none``;
  under ``none`` 2.3 – 2.5 never raise what validation throws (``LogTruncationException`` or that
  ``IllegalArgumentException``): ``Fetcher.validateOffsetsAsync`` throws it in its listener, run
  inside ``future.complete`` in ``AsyncClient.sendAsyncRequest``, whose catch raises it only
  ``if (!future.isDone())`` (2.3.0 – 2.5.1 tags); 2.6 keeps it for poll (KAFKA-9840/KAFKA-10113);
* the answer itself: ``LeaderEpochFileCache.endOffsetFor`` through
  :func:`kreplica.analysis.replication.offset_for_epoch.answer` (tested against Kafka's vectors in
  ``test_offset_for_epoch.py``).

The running example is ``fixtures/scenarios/unclean-shorter-leader``: broker 2 led epoch 1 and wrote
100-119; broker 1, elected uncleanly at epoch 2 with 0-99, leads (cache 0@0, 2@100).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.consumers.impact import (
    CONTINUES,
    EARLIEST,
    FAILS,
    FETCHES_FIRST,
    LATEST,
    LOG_TRUNCATION,
    LOST_REPLICA,
    NEW_LEADER,
    LOG_TRUNCATION_EXCEPTION,
    NO_COMMITTED_OFFSET,
    NO_OFFSET_EXCEPTION,
    NONE,
    OFFSET_OUT_OF_RANGE,
    OFFSET_OUT_OF_RANGE_EXCEPTION,
    RESETS,
    SEEKS_TO_DIVERGENCE,
    STALLS,
    UNDEFINED_END_OFFSET,
    WRITES_FIRST,
    LostRange,
    NewLeader,
    consumer_impact,
    impacts,
    lost_range_of,
    new_leader,
    next_fetch,
    read_from,
)
from kreplica.model.log.epoch_cache import EpochEntry
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.versions import KafkaVersion
from tests.builders.replicas import replica_log

V2_2, V2_3, V2_5, V2_6, V4_0 = (KafkaVersion(2, 2), KafkaVersion(2, 3), KafkaVersion(2, 5), KafkaVersion(2, 6),
                                KafkaVersion(4, 0))
LOST = LostRange(100, 120, "broker-2")


def leader(*, start: int = 0, end: int = 100, epochs=((0, 0), (2, 100)), epoch: int | None = 2,
           version: KafkaVersion = V4_0, later: int | None = None) -> NewLeader:
    cache = None if epochs is None else tuple(EpochEntry(e, s) for e, s in epochs)
    return NewLeader("broker-1", start, end, cache, epoch, version, later)


LEADER = leader()


def committed(offset: int, epoch: int | None = None, *, group: str = "g", expired: bool = False,
              topic: str = "orders", partition: int = 0) -> CommittedOffset:
    return CommittedOffset(group, topic, partition, offset, epoch, "", 1_700_000_000_000, None, 0, 7, "broker-1",
                           3 if epoch is not None else 2, expired=expired)


def outcome(o) -> tuple:
    return o.action, o.cause, o.exception, o.resumes_at, o.records_re_read, o.records_skipped, o.records_skipped_up_to


# -- before KIP-320: the fetch at the committed offset --------------------------------------------
@pytest.mark.parametrize("offset, policy, expected", [
    # 115 > log end 100: OFFSET_OUT_OF_RANGE; earliest re-reads 0-99 (consumed before)
    pytest.param(115, EARLIEST, (RESETS, OFFSET_OUT_OF_RANGE, None, 0, 100, 0, 0), id="above-end-earliest"),
    # latest: the log end; nothing of the new leader's is below it here, later writes are unbounded
    pytest.param(115, LATEST, (RESETS, OFFSET_OUT_OF_RANGE, None, 100, 0, 0, None), id="above-end-latest"),
    pytest.param(115, NONE, (FAILS, OFFSET_OUT_OF_RANGE, OFFSET_OUT_OF_RANGE_EXCEPTION, None, 0, 0, 0),
                 id="above-end-none"),
    # counter-cases: at the log end is an empty read (LocalLog.read: startOffset > endOffset only)
    pytest.param(100, NONE, (CONTINUES, None, None, 100, 0, 0, 0), id="at-end-continues"),
    pytest.param(101, NONE, (FAILS, OFFSET_OUT_OF_RANGE, OFFSET_OUT_OF_RANGE_EXCEPTION, None, 0, 0, 0),
                 id="one-above-end-fails"),
    pytest.param(50, EARLIEST, (CONTINUES, None, None, 50, 0, 0, 0), id="below-divergence-continues"),
])
def test_pre_kip320_fetch(offset: int, policy: str, expected: tuple) -> None:
    got = next_fetch(committed(offset), LOST, LEADER, client_version=V2_2, auto_offset_reset=policy)
    assert outcome(got) == expected and got.validation is None


# The new leader diverged: it wrote 100-109 at epoch 2 where broker 2 held epoch 1's records.
DIVERGED = leader(end=110, epochs=((0, 0), (2, 100)))


@pytest.mark.parametrize("offset, policy, expected", [
    # continues at 105 silently: never reads the new leader's 100-104 (other records than it consumed)
    pytest.param(105, NONE, (CONTINUES, None, None, 105, 0, 5, 5), id="inside-divergence-skips-new-records"),
    pytest.param(110, NONE, (CONTINUES, None, None, 110, 0, 10, 10), id="at-new-end-skips-all-new-records"),
    # above: latest lands on 110 and skips 100-109, plus whatever is written before the reset
    pytest.param(115, LATEST, (RESETS, OFFSET_OUT_OF_RANGE, None, 110, 0, 10, None), id="latest-skips-divergence"),
    # earliest re-reads the 100 records below the divergence point, then reads 100-109 for the first time
    pytest.param(115, EARLIEST, (RESETS, OFFSET_OUT_OF_RANGE, None, 0, 100, 0, 0), id="earliest-re-reads"),
    # counter-case: at the divergence point nothing is skipped
    pytest.param(100, NONE, (CONTINUES, None, None, 100, 0, 0, 0), id="at-divergence-skips-nothing"),
])
def test_pre_kip320_against_a_diverged_leader(offset: int, policy: str, expected: tuple) -> None:
    got = next_fetch(committed(offset), LOST, DIVERGED, client_version=V2_2, auto_offset_reset=policy)
    assert outcome(got) == expected


@pytest.mark.parametrize("offset, expected", [
    pytest.param(40, (RESETS, OFFSET_OUT_OF_RANGE, None, 50, 0, 0, 0), id="below-log-start-is-out-of-range"),
    pytest.param(50, (CONTINUES, None, None, 50, 0, 0, 0), id="at-log-start-continues"),
])
def test_pre_kip320_below_the_log_start(offset: int, expected: tuple) -> None:
    # UnifiedLog.checkLogStartOffset: offset < logStartOffset is OFFSET_OUT_OF_RANGE
    got = next_fetch(committed(offset), LOST, leader(start=50), client_version=V2_2, auto_offset_reset=EARLIEST)
    assert outcome(got) == expected


@pytest.mark.parametrize("later, expected", [
    # producers wrote 100-117 before the consumer fetched at 118: it continues and skips all 18
    pytest.param(130, (CONTINUES, None, None, 118, 0, 18, 18), id="later-copy-shows-all"),
    # a later copy ending at 110 shows 10 of them; up to 18
    pytest.param(110, (CONTINUES, None, None, 118, 0, 10, 18), id="later-copy-shows-some"),
    pytest.param(None, (CONTINUES, None, None, 118, 0, 0, 18), id="no-later-copy-up-to"),
])
def test_pre_kip320_writes_first_reuses_offsets(later: int | None, expected: tuple) -> None:
    got = next_fetch(committed(118), LOST, leader(later=later), client_version=V2_2, auto_offset_reset=NONE,
                     writes_first=True)
    assert outcome(got) == expected


def test_writes_first_does_not_matter_at_or_below_the_log_end() -> None:
    for w in (False, True):
        got = next_fetch(committed(100), LOST, LEADER, client_version=V2_2, auto_offset_reset=NONE, writes_first=w)
        assert outcome(got) == (CONTINUES, None, None, 100, 0, 0, 0)


@pytest.mark.parametrize("client, epoch, broker, validates", [
    pytest.param(V2_3, 1, V4_0, True, id="2.3-client-with-epoch-validates"),
    pytest.param(V2_2, 1, V4_0, False, id="2.2-client-does-not"),
    pytest.param(V4_0, None, V4_0, False, id="no-committed-epoch-skips-validation"),
    # OffsetsForLeaderEpoch v3 arrived with 2.3 brokers; older ones: completeValidation unchecked
    pytest.param(V4_0, 1, V2_2, False, id="broker-2.2-serves-no-v3"),
    pytest.param(V4_0, 1, V2_3, True, id="broker-2.3-serves-v3"),
])
def test_who_validates(client: KafkaVersion, epoch: int | None, broker: KafkaVersion, validates: bool) -> None:
    got = next_fetch(committed(115, epoch), LOST, leader(version=broker), client_version=client,
                     auto_offset_reset=NONE)
    assert (got.validation is not None) == validates
    assert got.cause == (LOG_TRUNCATION if validates else OFFSET_OUT_OF_RANGE)


# -- KIP-320: validation with the committed leader epoch ------------------------------------------
@pytest.mark.parametrize("offset, epoch, policy, expected", [
    # OffsetForLeaderEpoch(1) on {0@0, 2@100}: (0, 100); 100 < 115: truncation detected, seek to 100
    pytest.param(115, 1, EARLIEST, (SEEKS_TO_DIVERGENCE, LOG_TRUNCATION, None, 100, 0, 0, 0), id="detected-earliest"),
    pytest.param(115, 1, LATEST, (SEEKS_TO_DIVERGENCE, LOG_TRUNCATION, None, 100, 0, 0, 0), id="detected-latest"),
    pytest.param(115, 1, NONE, (FAILS, LOG_TRUNCATION, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0), id="detected-none"),
    # counter-case: end offset 100 is not below the position 100: completeValidation
    pytest.param(100, 0, NONE, (CONTINUES, None, None, 100, 0, 0, 0), id="end-equal-to-position-continues"),
    # the answer's epoch (0) is below the requested one (1), but the client compares offsets only
    pytest.param(100, 1, NONE, (CONTINUES, None, None, 100, 0, 0, 0), id="older-epoch-answer-is-not-compared"),
])
def test_kip320_validation(offset: int, epoch: int, policy: str, expected: tuple) -> None:
    got = next_fetch(committed(offset, epoch), LOST, LEADER, client_version=V4_0, auto_offset_reset=policy)
    assert outcome(got) == expected
    assert (got.validation.leader_epoch, got.validation.end_offset) == (0, 100)


# An epoch above every epoch the leader knows (its cache ends at epoch 2, no registration): (-1, -1)
UNDEFINED_LEADER = leader(epochs=((0, 0), (2, 100)), epoch=None)


@pytest.mark.parametrize("client, policy, expected", [
    # 2.6+: hasUndefinedEpochOrOffset -> requestOffsetReset / LogTruncation without divergent offset
    pytest.param(V2_6, EARLIEST, (RESETS, UNDEFINED_END_OFFSET, None, 0, 100, 0, 0), id="2.6-earliest"),
    pytest.param(V2_6, LATEST, (RESETS, UNDEFINED_END_OFFSET, None, 100, 0, 0, None), id="2.6-latest"),
    pytest.param(V2_6, NONE, (FAILS, UNDEFINED_END_OFFSET, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0), id="2.6-none"),
    # 2.3-2.5: -1 < 115: seekValidated(-1), whose fetch is out of range and resets the same way...
    pytest.param(V2_5, EARLIEST, (RESETS, UNDEFINED_END_OFFSET, None, 0, 100, 0, 0), id="2.5-earliest"),
    pytest.param(V2_3, LATEST, (RESETS, UNDEFINED_END_OFFSET, None, 100, 0, 0, None), id="2.3-latest"),
    # ...and under none OffsetAndMetadata(-1) throws "Invalid negative offset" in the listener,
    # where AsyncClient drops it: the consumer stalls
    pytest.param(V2_5, NONE, (STALLS, UNDEFINED_END_OFFSET, None, None, 0, 0, 0), id="2.5-none"),
])
def test_kip320_undefined_answer(client: KafkaVersion, policy: str, expected: tuple) -> None:
    got = next_fetch(committed(115, 7), LOST, UNDEFINED_LEADER, client_version=client, auto_offset_reset=policy)
    assert (got.validation.leader_epoch, got.validation.end_offset) == (-1, -1)
    assert outcome(got) == expected


@pytest.mark.parametrize("client, expected", [
    # 2.3 - 2.5: the LogTruncationException thrown in validateOffsetsAsync's listener is dropped by
    # AsyncClient.sendAsyncRequest (the future is done): no exception, no records (a real 2.5.1
    # consumer against 3.9 and 4.4 brokers: fixtures/real-kafka/consumer-after-unclean-*)
    pytest.param(V2_3, (STALLS, LOG_TRUNCATION, None, None, 0, 0, 0), id="2.3-stalls"),
    pytest.param(V2_5, (STALLS, LOG_TRUNCATION, None, None, 0, 0, 0), id="2.5-stalls"),
    # counter-case: 2.6 keeps it (cachedOffsetForLeaderException) and poll raises it
    pytest.param(V2_6, (FAILS, LOG_TRUNCATION, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0), id="2.6-fails"),
    # and a client before validation fetches at 115, above the log end 100: out of range
    pytest.param(V2_2, (FAILS, OFFSET_OUT_OF_RANGE, OFFSET_OUT_OF_RANGE_EXCEPTION, None, 0, 0, 0), id="2.2-fails"),
])
def test_a_detected_truncation_under_none_per_generation(client: KafkaVersion, expected: tuple) -> None:
    got = next_fetch(committed(115, 1), LOST, LEADER, client_version=client, auto_offset_reset=NONE)
    assert outcome(got) == expected


def test_a_log_without_epoch_cache_answers_undefined() -> None:
    # pre-v2 message format: no epoch cache, the leader answers (-1, -1)
    got = next_fetch(committed(115, 1), LOST, leader(epochs=None), client_version=V4_0, auto_offset_reset=NONE)
    assert outcome(got) == (FAILS, UNDEFINED_END_OFFSET, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0)


# Retention moved the log start to 100 and the cache's first entry to 5@100: an epoch-3 commit is
# older than every entry, and a 2.1+ endOffsetFor echoes it with the first start offset (3, 100).
RETAINED = leader(start=100, end=200, epochs=((5, 100),), epoch=5)
LATE_LOSS = LostRange(180, 200, "broker-2")


@pytest.mark.parametrize("offset, expected", [
    # 100 < 150: "truncation" detected below the divergence point: the group re-reads 100-149
    pytest.param(150, (SEEKS_TO_DIVERGENCE, LOG_TRUNCATION, None, 100, 50, 0, 0), id="older-epoch-seeks-back"),
    pytest.param(100, (CONTINUES, None, None, 100, 0, 0, 0), id="at-first-start-continues"),
])
def test_kip320_epoch_older_than_the_leaders_first(offset: int, expected: tuple) -> None:
    got = next_fetch(committed(offset, 3), LATE_LOSS, RETAINED, client_version=V4_0, auto_offset_reset=EARLIEST)
    assert (got.validation.leader_epoch, got.validation.end_offset) == (3, 100)
    assert outcome(got) == expected


@pytest.mark.parametrize("policy, expected", [
    pytest.param(EARLIEST, (RESETS, NO_COMMITTED_OFFSET, None, 0, 100, 0, 0), id="earliest"),
    pytest.param(NONE, (FAILS, NO_COMMITTED_OFFSET, NO_OFFSET_EXCEPTION, None, 0, 0, 0), id="none"),
])
def test_an_expired_offset_is_no_offset(policy: str, expected: tuple) -> None:
    # the coordinator dropped it: OffsetFetch returns none, the reset policy starts the consumer
    got = next_fetch(committed(115, 1, expired=True), LOST, LEADER, client_version=V4_0, auto_offset_reset=policy)
    assert outcome(got) == expected
    # it resumes nowhere near 115, so no reused offset is skipped
    assert consumer_impact(committed(115, 1, expired=True), LOST, LEADER, event="e").reused_offsets == 0


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="auto.offset.reset is one of earliest, latest, none, not 'by_duration'"):
        next_fetch(committed(1), LOST, LEADER, client_version=V4_0, auto_offset_reset="by_duration")


# -- the group's impact ----------------------------------------------------------------------------
@pytest.mark.parametrize("offset, expected", [
    pytest.param(115, 15, id="inside-lost-range"),
    pytest.param(130, 20, id="above-old-end-counts-the-whole-range"),
    pytest.param(101, 1, id="one-above-divergence"),
    pytest.param(100, 0, id="at-divergence"),
    pytest.param(50, 0, id="below"),
])
def test_consumed_and_lost(offset: int, expected: int) -> None:
    assert consumer_impact(committed(offset), LOST, LEADER, event="e").consumed_and_lost == expected


# -- whose records the group read: the record before its committed offset -------------------------
# The diverged case: broker 2 wrote 100-119 at epoch 1; broker 1 wrote 100-109 at epoch 2 and leads
# (its election epoch unknown here, so no commit counts as "after"). Same offset and epoch is the
# same record (log matching).
LOST_WITH_EPOCHS = LostRange(100, 120, "broker-2", (EpochEntry(0, 0), EpochEntry(1, 100)))
DIVERGED_UNKNOWN_EPOCH = leader(end=110, epochs=((0, 0), (2, 100)), epoch=None)


@pytest.mark.parametrize("offset, epoch, commit_time, event_time, lost_end, expected", [
    pytest.param(105, 2, 0, None, 120, NEW_LEADER, id="epoch-of-the-new-leaders-record"),
    pytest.param(105, 1, 0, None, 120, LOST_REPLICA, id="epoch-of-the-lost-replicas-record"),
    pytest.param(105, 0, 0, None, 120, None, id="epoch-neither-holds-there"),
    pytest.param(115, None, 0, None, 120, LOST_REPLICA, id="above-the-new-log-end"),
    # above both logs' ends without an epoch: either history may have written C - 1 since
    pytest.param(125, None, 0, None, 120, None, id="above-both-ends-no-epoch-cannot-tell"),
    # ... unless the commit is older than the event: the lost replica's history then
    pytest.param(125, None, 1000, 2000, 120, LOST_REPLICA, id="above-both-ends-committed-before-the-event"),
    pytest.param(110, None, 0, None, 120, None, id="no-epoch-at-the-new-log-end-cannot-tell"),
    pytest.param(105, None, 1000, 2000, 120, LOST_REPLICA, id="committed-before-the-event"),
    pytest.param(105, None, 2000, 2000, 120, None, id="committed-at-the-event-time-cannot-tell"),
    pytest.param(100, 1, 0, None, 120, None, id="at-the-divergence-point-nothing-to-tell"),
    # a lost replica ending at 108: a commit at 109 read offset 108, which only the new leader held
    pytest.param(109, None, 0, None, 108, NEW_LEADER, id="past-the-lost-replicas-end"),
    pytest.param(108, None, 0, None, 108, None, id="at-the-lost-replicas-end-cannot-tell"),
])
def test_read_from(offset: int, epoch: int | None, commit_time: int, event_time: int | None, lost_end: int,
                   expected) -> None:
    c = CommittedOffset("g", "orders", 0, offset, epoch, "", commit_time, None, 0, 7, "b", 3)
    lost = LostRange(100, lost_end, "broker-2", LOST_WITH_EPOCHS.epochs)
    assert read_from(c, lost, DIVERGED_UNKNOWN_EPOCH, event_time=event_time) == expected


def test_a_group_that_read_the_new_leaders_record_lost_nothing() -> None:
    got = consumer_impact(committed(105, 2), LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e")
    assert (got.read_from, got.consumed_and_lost) == (NEW_LEADER, 0)
    got = consumer_impact(committed(105, 1), LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e")
    assert (got.read_from, got.consumed_and_lost) == (LOST_REPLICA, 5)
    # without an epoch the count is the most it can be
    got = consumer_impact(committed(105), LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e")
    assert (got.read_from, got.consumed_and_lost) == (None, 5)


@pytest.mark.parametrize("epoch, skipped", [
    pytest.param(2, 0, id="read-the-new-leaders-100-104"),
    pytest.param(1, 5, id="read-the-lost-100-104-so-the-new-ones-are-skipped"),
])
def test_records_a_group_read_on_the_new_leader_are_not_skipped(epoch: int, skipped: int) -> None:
    got = next_fetch(committed(105, epoch), LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, client_version=V2_2,
                     auto_offset_reset=NONE)
    assert outcome(got) == (CONTINUES, None, None, 105, 0, skipped, skipped)


def test_lost_range_takes_the_replicas_lineage(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 2, [(0, 100, 0, "a"), (100, 20, 1, "b")], hw=110, checkpoint=[(0, 0), (1, 100)])
    assert lost_range_of(log, 100, 120) == LOST_WITH_EPOCHS


def test_reused_offsets_count_what_a_later_copy_shows() -> None:
    got = consumer_impact(committed(118), LOST, leader(later=110), event="e")
    assert (got.reused_offsets, got.reused_seen) == (18, 10)
    got = consumer_impact(committed(118), LOST, LEADER, event="e")
    assert (got.reused_offsets, got.reused_seen) == (18, None)
    assert consumer_impact(committed(100), LOST, leader(later=110), event="e").reused_offsets == 0


def rows(impact) -> list[tuple]:
    def span(v):
        return None if v is None else str(v)
    return [(span(b.clients_from), span(b.clients_before), b.auto_offset_reset, b.when, b.outcome.action)
            for b in impact.behaviours]


def test_behaviours_per_generation_policy_and_race() -> None:
    got = consumer_impact(committed(115, 1), LOST, LEADER, event="e")
    assert got.at_risk and not got.committed_after_event
    assert rows(got) == [
        (None, "2.3.0", (EARLIEST,), FETCHES_FIRST, RESETS),
        (None, "2.3.0", (LATEST,), FETCHES_FIRST, RESETS),
        (None, "2.3.0", (NONE,), FETCHES_FIRST, FAILS),
        (None, "2.3.0", (EARLIEST, LATEST, NONE), WRITES_FIRST, CONTINUES),
        # 2.3-2.5 and 2.6+ agree on a defined answer under a reset policy; under none 2.3-2.5 stall
        ("2.3.0", "2.6.0", (EARLIEST, LATEST), None, SEEKS_TO_DIVERGENCE),
        ("2.3.0", "2.6.0", (NONE,), None, STALLS),
        ("2.6.0", None, (EARLIEST, LATEST), None, SEEKS_TO_DIVERGENCE),
        ("2.6.0", None, (NONE,), None, FAILS),
    ]


def test_behaviours_split_where_2_3_and_2_6_differ() -> None:
    got = consumer_impact(committed(115, 7), LOST, UNDEFINED_LEADER, event="e")
    assert [r for r in rows(got) if r[0] is not None] == [
        ("2.3.0", "2.6.0", (EARLIEST,), None, RESETS),
        ("2.3.0", "2.6.0", (LATEST,), None, RESETS),
        ("2.3.0", "2.6.0", (NONE,), None, STALLS),
        ("2.6.0", None, (EARLIEST,), None, RESETS),
        ("2.6.0", None, (LATEST,), None, RESETS),
        ("2.6.0", None, (NONE,), None, FAILS),
    ]


def test_a_commit_without_epoch_behaves_alike_for_every_client() -> None:
    got = consumer_impact(committed(100), LOST, LEADER, event="e")
    assert rows(got) == [(None, None, (EARLIEST, LATEST, NONE), None, CONTINUES)]
    assert not got.at_risk


def test_below_the_divergence_point_is_unaffected_with_validation_too() -> None:
    got = consumer_impact(committed(50, 0), LOST, LEADER, event="e")
    assert not got.at_risk and got.consumed_and_lost == 0
    assert {b.outcome.action for b in got.behaviours} == {CONTINUES}


@pytest.mark.parametrize("epoch, after", [
    pytest.param(2, True, id="new-leader-epoch-is-after"),
    pytest.param(3, True, id="later-epoch-is-after"),
    pytest.param(1, False, id="older-epoch-is-before"),
    pytest.param(None, False, id="no-epoch-cannot-tell"),
])
def test_a_commit_in_the_new_leaders_epoch_was_made_after_the_event(epoch: int | None, after: bool) -> None:
    got = consumer_impact(committed(115, epoch), LOST, LEADER, event="e")
    assert got.committed_after_event == after
    assert (got.behaviours == ()) == after and (got.consumed_and_lost == 0) == after
    assert got.reused_offsets == (0 if after else 15)


def test_impacts_lead_with_groups_at_risk_and_keep_to_the_partition() -> None:
    offsets = [committed(50, 0, group="a-below"), committed(105, 1, group="b-some"),
               committed(119, 1, group="c-most"), committed(115, 1, group="d-other", partition=1)]
    got = impacts(offsets, "orders", 0, LOST, LEADER, event="e")
    assert [(i.committed.group, i.at_risk) for i in got] == [("c-most", True), ("b-some", True), ("a-below", False)]


# -- the new leader from its files ----------------------------------------------------------------
def test_new_leader_registers_its_epoch_at_its_log_end(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 1, [(0, 90, 0, "a")], hw=90, checkpoint=[(0, 0)])
    # without the new epoch the cache ends at epoch 0: epoch 1 is above it, (-1, -1)
    bare = new_leader(log)
    assert bare.offset_for_epoch(1).end_offset == -1
    # elected at epoch 2 (KAFKA-7415): 2@90 is registered, epoch 1 ends at 90
    elected = new_leader(log, leader_epoch=2)
    assert elected.epochs == (EpochEntry(0, 0), EpochEntry(2, 90))
    assert (elected.offset_for_epoch(1).leader_epoch, elected.offset_for_epoch(1).end_offset) == (0, 90)
    # a 2.0 leader does not register it
    assert new_leader(log, leader_epoch=2, kafka_version=KafkaVersion(2, 0)).epochs == (EpochEntry(0, 0),)


def test_new_leader_at_the_event_keeps_later_records_as_the_later_copy(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 1, [(0, 100, 0, "a"), (100, 10, 2, "b")], hw=110, checkpoint=[(0, 0), (2, 100)])
    at_event = new_leader(log, log_end_offset=100, leader_epoch=2)
    assert (at_event.log_end_offset, at_event.later_log_end) == (100, 110)
    assert at_event.epochs == (EpochEntry(0, 0), EpochEntry(2, 100))
    now = new_leader(log)
    assert (now.log_end_offset, now.later_log_end) == (110, None)


@pytest.mark.parametrize("other_epochs, later_end", [
    pytest.param([(0, 0, 2, "b")], 120, id="same-lineage-later-copy"),
    pytest.param([(0, 0, 1, "z")], None, id="other-lineage-is-not"),
])
def test_a_later_copy_must_share_the_lineage(tmp_path: Path, other_epochs, later_end) -> None:
    log = replica_log(tmp_path, 1, [(0, 100, 0, "a")], hw=100, checkpoint=[(0, 0), (2, 100)])
    first, _, epoch, tag = other_epochs[0]
    cp = [(0, 0), (epoch, 100)]
    other = replica_log(tmp_path, 3, [(0, 100, 0, "a"), (100, 20, epoch, tag)], hw=120, checkpoint=cp)
    assert new_leader(log, leader_epoch=2, later=[other]).later_log_end == later_end


# -- boundaries the mutation run found unguarded ---------------------------------------------------
def test_a_divergent_offset_of_0_is_a_log_truncation() -> None:
    # epochs {0@0, 2@0}: epoch 0 ends at 0, below 5; OffsetAndMetadata(0) is valid, so none raises
    # LogTruncationException (2.6+; 2.3-2.5 lose it and stall, as they lose the -1 case's
    # IllegalArgumentException)
    zero = leader(end=20, epochs=((0, 0), (2, 0)))
    for client, expected in ((V2_5, (STALLS, LOG_TRUNCATION, None, None, 0, 0, 0)),
                             (V4_0, (FAILS, LOG_TRUNCATION, LOG_TRUNCATION_EXCEPTION, None, 0, 0, 0))):
        got = next_fetch(committed(5, 0), LostRange(0, 20, "broker-2"), zero, client_version=client,
                         auto_offset_reset=NONE)
        assert outcome(got) == expected


@pytest.mark.parametrize("policy, resumes_at", [
    pytest.param(EARLIEST, 100, id="earliest"),
    pytest.param(LATEST, 200, id="latest"),
])
def test_a_validated_position_below_the_log_start_is_out_of_range(policy: str, resumes_at: int) -> None:
    # epoch 5 is the leader's latest: (5, 200) >= 80, validation completes; the fetch at 80 is below
    # the log start 100: OFFSET_OUT_OF_RANGE, and the policy decides
    got = next_fetch(committed(80, 5), LATE_LOSS, RETAINED, client_version=V4_0, auto_offset_reset=policy)
    assert (got.action, got.cause, got.resumes_at) == (RESETS, OFFSET_OUT_OF_RANGE, resumes_at)


def test_a_seek_past_the_divergence_point_skips_the_records_between() -> None:
    # epoch 1 ends at 110 on this leader, 10 past the divergence point 100
    odd = leader(end=120, epochs=((0, 0), (1, 100), (2, 110)))
    got = next_fetch(committed(115, 1), LOST, odd, client_version=V4_0, auto_offset_reset=EARLIEST)
    assert outcome(got) == (SEEKS_TO_DIVERGENCE, LOG_TRUNCATION, None, 110, 0, 10, 10)


def test_skipped_records_add_the_new_leaders_and_the_later_copys() -> None:
    # 100-109 on the new leader and 110-117 shown by a later copy: 18 of up to 18
    got = next_fetch(committed(118), LOST, leader(end=110, later=130), client_version=V2_2,
                     auto_offset_reset=NONE, writes_first=True)
    assert outcome(got) == (CONTINUES, None, None, 118, 0, 18, 18)


@pytest.mark.parametrize("offset, epoch, expected", [
    # the new leader holds 0 at epoch 2: a commit at 1 read it
    pytest.param(1, 2, NEW_LEADER, id="first-offset"),
    # 110 is the new leader's log end, which it does not hold; but epoch 2 is in its lineage only
    # (the lost replica led epoch 1 alone): only the new leader ever led epoch 2, so the group read
    # a record it wrote since the event, not the lost replica's 110
    pytest.param(111, 2, NEW_LEADER, id="one-past-the-new-log-end-at-the-new-leaders-epoch"),
    # the counter-case: at the lost replica's epoch, the lost replica's 110 was read
    pytest.param(111, 1, LOST_REPLICA, id="one-past-the-new-log-end-at-the-lost-replicas-epoch"),
    # above both logs' ends: the epoch still tells whose lineage wrote it
    pytest.param(125, 2, NEW_LEADER, id="above-both-ends-new-leaders-epoch"),
    pytest.param(125, 1, LOST_REPLICA, id="above-both-ends-lost-replicas-epoch"),
])
def test_read_from_at_the_ends_of_the_logs(offset: int, epoch: int, expected) -> None:
    new = leader(end=110, epochs=((2, 0),), epoch=None)
    lost = LostRange(0, 120, "broker-2", (EpochEntry(1, 0),))
    assert read_from(committed(offset, epoch), lost, new) == expected


@pytest.mark.parametrize("offset, epoch, lost_end, expected", [
    # the record before the committed offset decides, not the one at it nor two before
    pytest.param(101, 2, 120, NEW_LEADER, id="new-leaders-first-record-of-epoch-2"),
    pytest.param(110, 2, 120, NEW_LEADER, id="new-leaders-last-record"),
    pytest.param(101, 1, 120, LOST_REPLICA, id="lost-replicas-first-record-of-epoch-1"),
    pytest.param(110, 1, 110, LOST_REPLICA, id="lost-replicas-last-record"),
])
def test_read_from_looks_at_the_record_before_the_committed_offset(offset: int, epoch: int, lost_end: int,
                                                                    expected) -> None:
    lost = LostRange(100, lost_end, "broker-2", LOST_WITH_EPOCHS.epochs)
    assert read_from(committed(offset, epoch), lost, DIVERGED_UNKNOWN_EPOCH) == expected


def test_the_event_time_reaches_read_from_through_impacts() -> None:
    c = CommittedOffset("g", "orders", 0, 105, None, "", 1000, None, 0, 7, "b", 2)
    assert consumer_impact(c, LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e", event_time=2000).read_from \
        == LOST_REPLICA
    (found,) = impacts([c], "orders", 0, LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e", event_time=2000)
    assert found.read_from == LOST_REPLICA
    (found,) = impacts([c], "orders", 0, LOST_WITH_EPOCHS, DIVERGED_UNKNOWN_EPOCH, event="e")
    assert found.read_from is None


def test_new_leader_registers_the_epoch_its_checkpoint_names(tmp_path: Path) -> None:
    # elected at epoch 2 and written nothing since: the checkpoint holds 2@90, which a 2.1+ leader
    # keeps (KAFKA-7415: it registers its epoch at its log end), a 2.0 one drops with the load
    log = replica_log(tmp_path, 1, [(0, 90, 0, "a")], hw=90, checkpoint=[(0, 0), (2, 90)])
    got = new_leader(log)
    assert (got.label, got.epochs) == ("broker-1", (EpochEntry(0, 0), EpochEntry(2, 90)))
    assert new_leader(log, kafka_version=KafkaVersion(2, 0)).epochs == (EpochEntry(0, 0),)
    # at the event 90, its epoch 2 that starts there stays
    assert new_leader(log, log_end_offset=90).epochs == (EpochEntry(0, 0), EpochEntry(2, 90))


def test_a_legacy_log_has_no_epochs(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 1, [(0, 6, -1, "a")], hw=6, checkpoint=None, legacy=True)
    assert new_leader(log).epochs is None


def test_a_later_copy_must_end_past_the_log_end(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 1, [(0, 100, 0, "a")], hw=100, checkpoint=[(0, 0)])
    same = replica_log(tmp_path, 3, [(0, 100, 0, "a")], hw=100, checkpoint=[(0, 0)])
    legacy = replica_log(tmp_path / "l", 4, [(0, 120, -1, "a")], hw=120, checkpoint=None, legacy=True)
    assert new_leader(log, later=[same]).later_log_end is None
    assert new_leader(log, later=[legacy]).later_log_end is None


def test_a_commit_of_the_new_leader_that_producers_reached_continues_skipping_nothing() -> None:
    """Before KIP-320 the fetch at 115, which producers wrote past on the new leader first, is
    served (``LocalLog.read``: only an offset above the log end is out of range); the commit carries
    the new leader's epoch 2, so the group read the new leader's records up to it: none skipped,
    none re-read."""
    got = next_fetch(committed(115, 2), LOST, LEADER, client_version=V2_2, auto_offset_reset=NONE, writes_first=True)
    assert outcome(got) == (CONTINUES, None, None, 115, 0, 0, 0)
