"""OffsetForLeaderEpoch answered by a replica as leader, rule by rule with its counter-case.

Expected values come from Kafka, not from kreplica:

* fencing: ``Partition.checkCurrentLeaderEpoch`` (2.1+, KIP-320), reached through
  ``Partition.lastOffsetForLeaderEpoch``: local > current → FENCED_LEADER_EPOCH, local < current →
  UNKNOWN_LEADER_EPOCH, equal → the lookup. ``ReplicaManager.lastOffsetForLeaderEpoch`` treats only
  ``current_leader_epoch == -1`` (``RecordBatch.NO_PARTITION_LEADER_EPOCH``) as "not sent";
* the lookup: ``LeaderEpochFileCache.endOffsetFor`` and its vectors in ``LeaderEpochFileCacheTest``
  (current tree and the 2.0.0 tag), with the history table of kafka-algorithms spec §1.4 for
  0.11 – 1.1 (the offset only; the v0 response has no epoch, read as -1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.replication.offset_for_epoch import (
    ERROR_CODES,
    FENCED_LEADER_EPOCH,
    NONE,
    UNKNOWN_LEADER_EPOCH,
    answer,
    answer_queries,
)
from kreplica.model.log.epoch_cache import EpochEntry, LeaderEpochCache
from kreplica.model.versions import KafkaVersion, parse_kafka_version
from tests.builders.replicas import replica_log

V4_0 = KafkaVersion(4, 0)
V2_1 = KafkaVersion(2, 1)
V2_0_1 = KafkaVersion(2, 0, 1)
V2_0 = KafkaVersion(2, 0)
V1_1 = KafkaVersion(1, 1)
V0_11 = KafkaVersion(0, 11)


def cache(*entries: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache(entries=[EpochEntry(e, s) for e, s in entries])


def reply(a) -> tuple[int, int, str]:
    return a.leader_epoch, a.end_offset, a.error


def test_error_codes_are_kafkas() -> None:
    # org.apache.kafka.common.protocol.Errors: FENCED_LEADER_EPOCH(74), UNKNOWN_LEADER_EPOCH(75)
    assert ERROR_CODES == {NONE: 0, FENCED_LEADER_EPOCH: 74, UNKNOWN_LEADER_EPOCH: 75}


# -- fencing (KIP-320) ------------------------------------------------------------------------------
# The leader of kip279-fast-failover: cache {1@0, 4@3}, LEO 4; the request asks epoch 1, whose
# answer when not fenced is (1, 3): floor 1@0, next higher 4@3.
FAST_FAILOVER = ((1, 0), (4, 3))
FENCED = (-1, -1, FENCED_LEADER_EPOCH)
UNKNOWN = (-1, -1, UNKNOWN_LEADER_EPOCH)
ANSWERED = (1, 3, NONE)


@pytest.mark.parametrize("current, local, version, expected", [
    pytest.param(3, None, V4_0, FENCED, id="current-below-local-is-fenced"),
    pytest.param(4, None, V4_0, ANSWERED, id="current-equal-to-local-is-answered"),
    pytest.param(5, None, V4_0, UNKNOWN, id="current-above-local-is-unknown"),
    pytest.param(None, None, V4_0, ANSWERED, id="no-current-epoch-sent"),
    pytest.param(-1, None, V4_0, ANSWERED, id="current-minus-1-means-not-sent"),
    # the local epoch is the partition's, which a newly elected leader has before it writes
    pytest.param(6, 6, V4_0, ANSWERED, id="explicit-local-equal"),
    pytest.param(5, 6, V4_0, FENCED, id="explicit-local-above-current"),
    pytest.param(7, 6, V4_0, UNKNOWN, id="explicit-local-below-current"),
    pytest.param(4, 6, V4_0, FENCED, id="explicit-local-wins-over-the-cache"),
    # KIP-320 arrived in 2.1: OffsetForLeaderEpoch v0/v1 carry no current epoch, so no fencing
    pytest.param(3, None, V2_1, FENCED, id="2.1-fences"),
    pytest.param(5, None, V2_1, UNKNOWN, id="2.1-unknown"),
    pytest.param(3, None, V2_0_1, ANSWERED, id="2.0.1-does-not-fence"),
    pytest.param(5, None, V2_0, ANSWERED, id="2.0-no-unknown-either"),
    # only -1 means "not sent" (ReplicaManager.lastOffsetForLeaderEpoch); -2 reaches
    # Partition.checkCurrentLeaderEpoch, where local 4 > -2 gives FENCED_LEADER_EPOCH
    pytest.param(-2, None, V4_0, FENCED, id="current-minus-2-is-sent-and-fenced"),
])
def test_fencing(current, local, version, expected) -> None:
    a = answer(cache(*FAST_FAILOVER), 4, 1, current_leader_epoch=current, local_leader_epoch=local,
               kafka_version=version)
    assert reply(a) == expected
    assert (a.requested_epoch, a.current_leader_epoch) == (1, current)


@pytest.mark.parametrize("requested", [pytest.param(-1, id="undefined-requested"),
                                       pytest.param(9, id="above-latest")])
def test_fencing_comes_before_the_lookup(requested: int) -> None:
    # checkCurrentLeaderEpoch runs before localLog.endOffsetForEpoch: the error wins even where
    # the lookup would answer (-1, -1)
    assert reply(answer(cache(*FAST_FAILOVER), 4, requested, current_leader_epoch=3)) == FENCED
    assert reply(answer(cache(*FAST_FAILOVER), 4, requested, current_leader_epoch=4)) == (-1, -1, NONE)


@pytest.mark.parametrize("current, expected", [
    pytest.param(2, FENCED, id="fenced"),
    pytest.param(3, (-1, -1, NONE), id="equal-answers-undefined"),
    pytest.param(4, UNKNOWN, id="unknown"),
])
def test_log_without_an_epoch_cache_is_fenced_first_then_answers_undefined(current, expected) -> None:
    # a pre-v2 log has no cache: UnifiedLog.endOffsetForEpoch gives None -> (NONE, -1, -1)
    assert reply(answer(None, 10, 1, current_leader_epoch=current, local_leader_epoch=3)) == expected


# -- the lookup: LeaderEpochFileCache.endOffsetFor, per version -------------------------------------
FIRST_5 = ((5, 11), (6, 12), (7, 13))          # FirstEpochIfRequestedEpochLessThanFirstEpoch
GAPS = ((0, 10), (2, 13), (4, 17))             # NextAvailableEpochIfThereIsNoExactEpochForTheOneRequested


@pytest.mark.parametrize("entries, leo, requested, version, expected", [
    # requested below the first entry: 2.1+ echoes it with the first start; 2.0 and 0.11-1.1 answer -1
    pytest.param(FIRST_5, 20, 4, V4_0, (4, 11), id="below-first-echoed"),
    pytest.param(FIRST_5, 20, 4, V2_1, (4, 11), id="below-first-echoed-2.1"),
    pytest.param(FIRST_5, 20, 4, V2_0, (-1, -1), id="below-first-2.0-undefined"),
    pytest.param(FIRST_5, 20, 4, V1_1, (-1, -1), id="below-first-1.1-undefined"),
    pytest.param(FIRST_5, 20, 5, V4_0, (5, 12), id="equal-to-first-is-not-below"),
    # between entries: the greatest epoch <= requested, ended by the next higher entry's start
    pytest.param(GAPS, 20, 1, V4_0, (0, 13), id="between-entries"),
    pytest.param(GAPS, 20, 2, V4_0, (2, 17), id="exact-entry"),
    pytest.param(GAPS, 20, 3, V4_0, (2, 17), id="between-entries-floor-2"),
    pytest.param(GAPS, 20, 1, V2_0, (0, 13), id="between-entries-2.0"),
    pytest.param(GAPS, 20, 1, V1_1, (-1, 13), id="between-entries-1.1-offset-only"),
    pytest.param(GAPS, 20, 0, V4_0, (0, 13), id="first-entry-exactly"),
    # the latest epoch ends at the log end offset, not at its own start
    pytest.param(GAPS, 20, 4, V4_0, (4, 20), id="latest-gives-log-end"),
    pytest.param(GAPS, 20, 4, V1_1, (-1, 20), id="latest-gives-log-end-1.1"),
    pytest.param(((2, 11),), 14, 2, V4_0, (2, 14), id="only-entry-is-latest"),
    # above the latest: nothing ends it
    pytest.param(GAPS, 20, 5, V4_0, (-1, -1), id="above-latest"),
    pytest.param(((2, 100),), 100, 3, V4_0, (-1, -1), id="above-latest-InvalidOffsetIfEpochNotTracked"),
    pytest.param(GAPS, 20, 5, V1_1, (-1, -1), id="above-latest-1.1"),
    # undefined requested epoch
    pytest.param(((2, 11), (3, 12)), 0, -1, V4_0, (-1, -1), id="undefined-requested"),
    pytest.param(((2, 11), (3, 12)), 5, -1, V1_1, (-1, -1), id="undefined-requested-1.1-non-empty"),
    # empty cache: undefined; 0.11-1.1 matched -1 == latestEpoch (-1) and answered the LEO (KAFKA-6857)
    pytest.param((), 0, 0, V4_0, (-1, -1), id="empty-UnsupportedIfNoEpochRecorded"),
    pytest.param((), 73, -1, V4_0, (-1, -1), id="empty-undefined-requested"),
    pytest.param((), 73, -1, V2_0, (-1, -1), id="empty-undefined-requested-2.0"),
    pytest.param((), 73, -1, V1_1, (-1, 73), id="empty-undefined-requested-1.1-answers-leo"),
    pytest.param((), 73, -1, V0_11, (-1, 73), id="empty-undefined-requested-0.11-answers-leo"),
    pytest.param((), 73, 0, V1_1, (-1, -1), id="empty-defined-requested-1.1"),
    # KAFKA-6857 was backported: 0.11.0.3, 1.0.2 and 1.1.1 answer -1 (kafka-algorithms spec errata 1)
    pytest.param((), 73, -1, KafkaVersion(1, 1, 1), (-1, -1), id="empty-undefined-requested-1.1.1-fixed"),
    pytest.param((), 73, -1, KafkaVersion(1, 0, 2), (-1, -1), id="empty-undefined-requested-1.0.2-fixed"),
    pytest.param((), 73, -1, KafkaVersion(1, 0, 1), (-1, 73), id="empty-undefined-requested-1.0.1-answers-leo"),
    # pre-1.0 versions keep their leading 0: 0.11.0.3 is KafkaVersion(0, 11, 0, 3)
    pytest.param((), 73, -1, KafkaVersion(0, 11, 0, 3), (-1, -1), id="empty-undefined-requested-0.11.0.3-fixed"),
    pytest.param((), 73, -1, KafkaVersion(0, 11, 0, 2), (-1, 73), id="empty-undefined-requested-0.11.0.2-answers-leo"),
    # the backport is to the undefined request only: the latest epoch still answers the LEO, offset only
    pytest.param(((2, 11),), 14, 2, KafkaVersion(1, 1, 1), (-1, 14), id="latest-1.1.1-offset-only"),
])
def test_lookup(entries, leo, requested, version, expected) -> None:
    assert reply(answer(cache(*entries), leo, requested, kafka_version=version)) == (*expected, NONE)


@pytest.mark.parametrize("requested", [pytest.param(-1, id="undefined"), pytest.param(0, id="zero"),
                                       pytest.param(7, id="any")])
def test_log_without_a_cache_answers_undefined(requested: int) -> None:
    # UnifiedLog.endOffsetForEpoch: no leaderEpochCache -> None -> (NONE, -1, -1)
    assert reply(answer(None, 50, requested)) == (-1, -1, NONE)


@pytest.mark.parametrize("cache_entries", [pytest.param(None, id="no-cache"), pytest.param(GAPS, id="cache"),
                                           pytest.param((), id="empty-cache")])
def test_every_answer_echoes_the_requested_and_current_epochs(cache_entries) -> None:
    # OffsetForLeaderEpochResponse's EpochEndOffset carries the partition's request back; the
    # answer without a cache too (a survivor of bench/mutation.sh: those fields went unchecked)
    c = None if cache_entries is None else cache(*cache_entries)
    a = answer(c, 20, 2, current_leader_epoch=4, local_leader_epoch=4)
    assert (a.requested_epoch, a.current_leader_epoch) == (2, 4)


def test_the_cache_is_not_changed_by_a_lookup() -> None:
    c = cache(*GAPS)
    answer(c, 20, 1, current_leader_epoch=4)
    assert c.entries == [EpochEntry(*e) for e in GAPS]


# -- from the replica's files ---------------------------------------------------------------------


def test_queries_are_answered_with_the_cache_and_log_end_the_broker_loads(tmp_path: Path) -> None:
    # checkpoint {1@0, 4@3, 6@9}: 6@9 starts beyond the log end 4, so LogLoader drops it
    # (truncateFromEnd(4)); the loaded cache {1@0, 4@3} makes 4 the local epoch and LEO 4.
    log = replica_log(tmp_path, 1, [(0, 3, 1, "a"), (3, 1, 4, "y")], hw=4, checkpoint=[(1, 0), (4, 3), (6, 9)])
    got = [reply(a) for a in answer_queries(log, [(1, None), (4, None), (6, None), (1, 4), (1, 3), (1, 6)])]
    assert got == [(1, 3, NONE), (4, 4, NONE), (-1, -1, NONE), (1, 3, NONE), FENCED, UNKNOWN]


def test_queries_answer_as_the_version_given(tmp_path: Path) -> None:
    log = replica_log(tmp_path, 1, [(0, 3, 1, "a"), (3, 1, 4, "y")], hw=4, checkpoint=[(1, 0), (4, 3)])
    got = [reply(a) for a in answer_queries(log, [(0, None), (0, 9)], kafka_version=V2_0)]
    assert got == [(-1, -1, NONE), (-1, -1, NONE)]     # 2.0: below-first undefined, no fencing
    got = [reply(a) for a in answer_queries(log, [(0, None), (0, 9)], kafka_version=V4_0)]
    assert got == [(0, 0, NONE), UNKNOWN]


@pytest.mark.parametrize("version, expected", [
    pytest.param("2.1.0", (0, 6, NONE), id="2.1.0-loads-the-checkpoint"),
    pytest.param("2.1.1", (-1, -1, NONE), id="2.1.1-has-no-cache"),
])
def test_a_legacy_format_log_is_loaded_as_the_version_given(tmp_path: Path, version, expected) -> None:
    # KAFKA-7897 (2.1.1): a log whose record format is below v2 gets no epoch cache, so the leader
    # answers UNDEFINED; 2.1.0 still loads the checkpoint. The replica is loaded as the version
    # the queries are answered by (a mutmut survivor: answer_queries dropped the version there).
    log = replica_log(tmp_path, 1, [(0, 6, -1, "a")], hw=6, checkpoint=[(0, 0)], legacy=True)
    (got,) = answer_queries(log, [(0, None)], kafka_version=parse_kafka_version(version))
    assert reply(got) == expected
