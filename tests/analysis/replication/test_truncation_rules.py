"""Follower truncation rule by rule, per protocol generation, each with its counter-case; the
rules ``test_replication_scenarios.py`` does not pin. Through the public functions only
(``plan_truncations``, ``resolve_protocol``).

Expected values are worked out by hand from Kafka's code paths (kafka-algorithms spec §1.4, §2.4,
§3.1 – §3.6, appendix A), never from kreplica's output:

* ``hw`` (≤ 0.10.2): ``ReplicaManager.makeFollowers`` truncates to the high watermark;
* ``kip101`` (0.11 – 1.1): ``ReplicaFetcherThread.maybeTruncate``: O == -1 → HW, O ≥ LEO → no
  truncation, else O; no epoch comparison;
* ``kip279`` (2.0 – 2.7): ``AbstractFetcherThread.getOffsetTruncationState`` (§3.3 rows 1 – 5);
* ``diverging-epoch`` (2.8+): ``Partition.readRecords`` answers DivergingEpoch when
  ``e < lastFetchedEpoch or end < fetchOffset``, OFFSET_OUT_OF_RANGE when the epoch is unknown;
  then ``AbstractFetcherThread.handleOutOfRangeError`` (§3.6);
* ``UnifiedLog.truncateTo`` → ``LocalLog.truncateTo``: segments cut at the first batch holding an
  offset ≥ the target (``LogSegment.truncateTo``), the log end offset set to the target.

Logs are written ``(first_offset, records, epoch, tag)`` (``tests/builders/replicas.py``);
a round is ``(requested epoch, leader epoch, end offset)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.replication.truncation import plan_truncations, resolve_protocol
from kreplica.model.versions import KafkaVersion, Protocol
from tests.builders.replicas import replica_log

HW, KIP101, KIP279, DIVERGING = Protocol.HW, Protocol.KIP101, Protocol.KIP279, Protocol.DIVERGING_EPOCH
#: each generation at the version it is emulated at by default (PROTOCOL_VERSIONS)
ERA = {HW: KafkaVersion(0, 10, 2), KIP101: KafkaVersion(1, 1), KIP279: KafkaVersion(2, 7),
       DIVERGING: KafkaVersion(4, 0)}


def truncate(tmp_path: Path, leader: tuple, followers: list[tuple], protocol: Protocol,
             version: KafkaVersion | None = None):
    """Plans for each follower; a replica is ``(batches, checkpoint, hw, options)``."""
    logs = [replica_log(tmp_path, n, batches, hw=hw, checkpoint=checkpoint, **options)
            for n, (batches, checkpoint, hw, options) in enumerate([leader, *followers], start=1)]
    return plan_truncations(logs, protocol=protocol, kafka_version=version or ERA[protocol])


def outcome(plan) -> tuple:
    return ([(r.requested_epoch, r.leader_epoch, r.end_offset) for r in plan.rounds], plan.truncate_to,
            [(r.first, r.last) for r in plan.ranges])


# -- divergence at a batch boundary, or inside a follower batch --------------------------------------
# The leader wrote 0-3 in epoch 0 and 4-9 in epoch 2 (cache {0@0, 2@4}, LEO 10). Each follower led
# epoch 1 from a point of its own and wrote "x" there.
LEADER = ([(0, 2, 0, "a"), (2, 2, 0, "a"), (4, 6, 2, "b")], [(0, 0), (2, 4)], 10, {})
# epoch 1 from 4: a batch boundary of both logs
AT_BOUNDARY = ([(0, 2, 0, "a"), (2, 2, 0, "a"), (4, 2, 1, "x")], [(0, 0), (1, 4)], 4, {})
# epoch 1 from 2, one batch 2-5 across the leader's epoch-2 start at 4
ACROSS = ([(0, 2, 0, "a"), (2, 4, 1, "x")], [(0, 0), (1, 2)], 2, {})


@pytest.mark.parametrize("follower, protocol, expected", [
    # HW: 4, a boundary
    pytest.param(AT_BOUNDARY, HW, ([], 4, [(4, 5)]), id="boundary-hw"),
    # 1.1 leader: epoch 1 unknown, first epoch above is 2@4 -> offset 4 (epoch not sent: -1); 4 < LEO 6
    pytest.param(AT_BOUNDARY, KIP101, ([(1, -1, 4)], 4, [(4, 5)]), id="boundary-kip101"),
    # leader (0, 4); follower's own endOffsetFor(0) = (0, 4): row 5, min(4, 4, 6)
    pytest.param(AT_BOUNDARY, KIP279, ([(1, 0, 4)], 4, [(4, 5)]), id="boundary-kip279"),
    # DivergingEpoch (0, 4) as 0 < 1; then Fetch(4, lastFetchedEpoch 0): (0, 4), 4 >= 4, records follow
    pytest.param(AT_BOUNDARY, DIVERGING, ([(1, 0, 4), (0, 0, 4)], 4, [(4, 5)]), id="boundary-diverging"),
    # HW 2: the follower's epoch-1 batch goes whole
    pytest.param(ACROSS, HW, ([], 2, [(2, 5)]), id="across-hw"),
    # the pre-KIP-279 rule takes the leader's offset 4 as is: inside the batch 2-5, which goes whole,
    # and the log end becomes 4 (LocalLog.truncateTo): offsets 2-3 are never fetched again
    pytest.param(ACROSS, KIP101, ([(1, -1, 4)], 4, [(2, 5)]), id="across-kip101-cuts-inside-the-batch"),
    # leader (0, 4); follower's own endOffsetFor(0) = (0, 2), the start of its epoch 1: row 5 gives 2
    pytest.param(ACROSS, KIP279, ([(1, 0, 4)], 2, [(2, 5)]), id="across-kip279-cuts-at-the-epoch-start"),
    pytest.param(ACROSS, DIVERGING, ([(1, 0, 4), (0, 0, 4)], 2, [(2, 5)]), id="across-diverging"),
])
def test_divergence_at_a_batch_boundary_or_inside_a_batch(tmp_path: Path, follower, protocol, expected) -> None:
    (plan,) = truncate(tmp_path, LEADER, [follower], protocol)
    assert outcome(plan) == expected
    inside = any("Kafka cuts at batch boundaries" in n for n in plan.notes)
    assert inside == (follower is ACROSS and protocol == KIP101)
    assert plan.out_of_range is None


def test_a_cut_inside_a_batch_leaves_the_follower_short_of_the_leader(tmp_path: Path) -> None:
    (plan,) = truncate(tmp_path, LEADER, [ACROSS], KIP101)
    # truncateFromEnd(4) keeps 1@2: the epoch starts below the new end, though its data is gone
    assert plan.refetch_records == 6 and plan.follower_log_end_after == 4 and plan.cache_after == ((0, 0), (1, 2))
    assert plan.still_divergent == []


def test_a_cut_inside_a_batch_does_not_heal(tmp_path: Path) -> None:
    # LocalLog.truncateTo(4) cuts the follower's batch 2-5 whole (LogSegment.truncateTo) yet sets the
    # log end to 4 (updateLogEndOffset); the follower fetches from 4, so the leader's 2-3 never come
    (plan,) = truncate(tmp_path, LEADER, [ACROSS], KIP101)
    assert not plan.heals
    assert [(r.first, r.last) for r in plan.never_refetched] == [(2, 3)]


@pytest.mark.parametrize("follower, protocol", [
    pytest.param(AT_BOUNDARY, KIP101, id="cut-at-a-boundary"),
    pytest.param(ACROSS, KIP279, id="cut-at-the-batch-start"),
    pytest.param(ACROSS, HW, id="hw-at-the-batch-start"),
])
def test_a_cut_at_a_batch_start_leaves_nothing_unfetched(tmp_path: Path, follower, protocol) -> None:
    (plan,) = truncate(tmp_path, LEADER, [follower], protocol)
    assert plan.never_refetched == [] and plan.heals


# -- the leader's end offset for the follower's epoch equals the follower's log end -------------------
# The follower led epoch 1 from 2 and wrote 2-3 ("x"); the leader's epoch 0 ends at 4, its log end.
ENDS_WHERE_LEADERS_EPOCH_ENDS = ([(0, 2, 0, "a"), (2, 2, 1, "x")], [(0, 0), (1, 2)], 2, {})


@pytest.mark.parametrize("protocol, expected, heals", [
    pytest.param(HW, ([], 2, [(2, 3)]), True, id="hw"),
    # O = 4 >= LEO 4: the pre-KIP-279 rule keeps the follower's epoch-1 data (the fast fail-over bug)
    pytest.param(KIP101, ([(1, -1, 4)], 4, []), False, id="kip101-keeps-a-divergent-log"),
    # leader (0, 4); follower's own endOffsetFor(0) = (0, 2): row 5, min(2, 4, 4)
    pytest.param(KIP279, ([(1, 0, 4)], 2, [(2, 3)]), True, id="kip279-compares-epochs"),
    # 0 < lastFetchedEpoch 1 is divergence although the end offset is not below the fetch offset
    pytest.param(DIVERGING, ([(1, 0, 4), (0, 0, 4)], 2, [(2, 3)]), True, id="diverging-epoch-below-is-divergence"),
])
def test_leader_end_offset_at_the_followers_log_end(tmp_path: Path, protocol, expected, heals) -> None:
    (plan,) = truncate(tmp_path, LEADER, [ENDS_WHERE_LEADERS_EPOCH_ENDS], protocol)
    assert outcome(plan) == expected and plan.heals == heals


# -- KIP-279: several rounds ------------------------------------------------------------------------
# Leader {0@0, 2@3, 4@6}, LEO 8. Follower {0@0, 1@3, 3@5}, LEO 7: none of the leader's later epochs.
LEADER_0_2_4 = ([(0, 3, 0, "a"), (3, 3, 2, "b"), (6, 2, 4, "b")], [(0, 0), (2, 3), (4, 6)], 8, {})
OWN_1_3 = ([(0, 3, 0, "a"), (3, 2, 1, "x"), (5, 2, 3, "x")], [(0, 0), (1, 3), (3, 5)], 3, {})


@pytest.mark.parametrize("protocol, expected, heals", [
    pytest.param(HW, ([], 3, [(3, 6)]), True, id="hw"),
    # one round, offset only: 6 < 7, inside the batch 5-6; epoch-1 data at 3-4 survives
    pytest.param(KIP101, ([(3, -1, 6)], 6, [(5, 6)]), False, id="kip101-one-round"),
    # asks 3 -> (2, 6); own endOffsetFor(2) = (1, 5): row 4, truncate to 5, ask again;
    # asks 1 -> (0, 3); own endOffsetFor(0) = (0, 3): row 5, min(3, 3, 5) = 3, complete
    pytest.param(KIP279, ([(3, 2, 6), (1, 0, 3)], 3, [(3, 6)]), True, id="kip279-two-rounds"),
    # the same through DivergingEpoch, then Fetch(3, lastFetchedEpoch 0) finds no divergence
    pytest.param(DIVERGING, ([(3, 2, 6), (1, 0, 3), (0, 0, 3)], 3, [(3, 6)]), True, id="diverging-two-truncations"),
])
def test_rounds_repeat_until_the_follower_knows_the_leaders_epoch(tmp_path: Path, protocol, expected, heals) -> None:
    (plan,) = truncate(tmp_path, LEADER_0_2_4, [OWN_1_3], protocol)
    assert outcome(plan) == expected and plan.heals == heals


# -- the follower ahead of, behind, or level with the leader -----------------------------------------
# The leader: epochs 0@0, 1@5, LEO 10. The followers hold the leader's own batches.
SAME = [(0, 5, 0, "a"), (5, 5, 1, "a")]
LEVEL = (SAME, [(0, 0), (1, 5)], 10, {})
LEVEL_LOW_HW = (SAME, [(0, 0), (1, 5)], 5, {})
BEHIND = (SAME[:1], [(0, 0)], 5, {})
AHEAD = (SAME + [(10, 3, 1, "a")], [(0, 0), (1, 5)], 10, {})
AHEAD_HW_ABOVE_LEADER = (SAME + [(10, 3, 1, "a")], [(0, 0), (1, 5)], 13, {})


@pytest.mark.parametrize("follower, protocol, expected", [
    pytest.param(LEVEL, HW, ([], 10, []), id="level-hw"),
    pytest.param(LEVEL, KIP101, ([(1, -1, 10)], 10, []), id="level-kip101"),          # O 10 >= LEO 10
    pytest.param(LEVEL, KIP279, ([(1, 1, 10)], 10, []), id="level-kip279"),           # min(10, 10, 10)
    pytest.param(LEVEL, DIVERGING, ([(1, 1, 10)], 10, []), id="level-diverging"),     # 1 == 1, 10 >= 10
    # level, but the high watermark lags: only the HW rule truncates (and refetches)
    pytest.param(LEVEL_LOW_HW, HW, ([], 5, [(5, 9)]), id="level-low-hw-hw-truncates"),
    pytest.param(LEVEL_LOW_HW, KIP279, ([(1, 1, 10)], 10, []), id="level-low-hw-kip279-keeps"),
    pytest.param(LEVEL_LOW_HW, DIVERGING, ([(1, 1, 10)], 10, []), id="level-low-hw-diverging-keeps"),
    # behind: the leader's epoch 0 ends at 5, the follower's log end
    pytest.param(BEHIND, HW, ([], 5, []), id="behind-hw"),
    pytest.param(BEHIND, KIP101, ([(0, -1, 5)], 5, []), id="behind-kip101"),
    pytest.param(BEHIND, KIP279, ([(0, 0, 5)], 5, []), id="behind-kip279"),
    pytest.param(BEHIND, DIVERGING, ([(0, 0, 5)], 5, []), id="behind-diverging"),
    # ahead in the leader's latest epoch: the leader answers its log end 10
    pytest.param(AHEAD, HW, ([], 10, [(10, 12)]), id="ahead-hw"),
    pytest.param(AHEAD, KIP101, ([(1, -1, 10)], 10, [(10, 12)]), id="ahead-kip101"),   # 10 < 13
    pytest.param(AHEAD, KIP279, ([(1, 1, 10)], 10, [(10, 12)]), id="ahead-kip279"),    # min(13, 10, 13)
    # one divergence, one truncation: the next fetch asks what this one asked and is no new round
    # (a real 4.4 follower logs one "Truncating partition ... TruncationState(offset=…)" line)
    pytest.param(AHEAD, DIVERGING, ([(1, 1, 10)], 10, [(10, 12)]), id="ahead-diverging"),
])
def test_follower_ahead_behind_or_level(tmp_path: Path, follower, protocol, expected) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [follower], protocol)
    assert outcome(plan) == expected
    assert plan.out_of_range is None and plan.heals
    assert plan.refetch_records == 10 - plan.truncate_to


@pytest.mark.parametrize("version, exits", [
    pytest.param(KafkaVersion(0, 10, 2), True, id="0.10.2-exits-when-unclean-is-disabled"),
    pytest.param(KafkaVersion(2, 0), True, id="2.0-exits"),
    pytest.param(KafkaVersion(2, 1), False, id="2.1-never-fatal"),
])
def test_follower_ahead_with_its_hw_above_the_leaders_end_is_out_of_range(tmp_path: Path, version, exits) -> None:
    # HW 13 truncates nothing; fetching 13 from a leader ending at 10 is out of range: truncate to 10
    (plan,) = truncate(tmp_path, LEVEL, [AHEAD_HW_ABOVE_LEADER], HW, version)
    assert outcome(plan) == ([], 10, [(10, 12)]) and plan.out_of_range == "above_leader_log_end"
    assert any("exits instead" in n for n in plan.notes) == exits


# -- the leader does not know the follower's epoch -------------------------------------------------
# Leader: epoch 0 only, LEO 10. Follower: led epoch 1 from 5 (LEO 7), HW 5.
LEADER_EPOCH_0 = ([(0, 5, 0, "a"), (5, 5, 0, "a")], [(0, 0)], 10, {})
UNKNOWN_EPOCH = ([(0, 5, 0, "a"), (5, 2, 1, "x")], [(0, 0), (1, 5)], 5, {})


# A leader behind its follower's epoch leads only once elected at a newer epoch (2 here, the lowest
# possible), which a 2.1+ leader registers at its log end (Partition.makeLeader, KAFKA-7415): the
# follower's request for epoch 1 then finds the floor entry, (0, 10) (LeaderEpochFileCache.endOffsetFor),
# not the undefined answer of a cache without it. Before 2.1 nothing is registered until a write.
@pytest.mark.parametrize("protocol, version, expected, heals, elected", [
    pytest.param(HW, None, ([], 5, [(5, 6)]), True, None, id="hw"),
    pytest.param(KIP101, None, ([(1, -1, -1)], 5, [(5, 6)]), True, None, id="kip101-undefined-goes-to-hw"),
    # 2.0: no epoch registered at election; endOffsetFor(1) is undefined: §3.3 row 1, the HW
    pytest.param(KIP279, KafkaVersion(2, 0), ([(1, -1, -1)], 5, [(5, 6)]), True, None,
                 id="kip279-2.0-row-1-goes-to-hw"),
    # 2.7: (0, 10); the follower's own endOffsetFor(0) = (0, 5), the start of its epoch 1: row 5, min(5, 10)
    pytest.param(KIP279, None, ([(1, 0, 10)], 5, [(5, 6)]), True, (2, 10), id="kip279-elected-floor-epoch"),
    # DivergingEpoch (0, 10) as 0 < 1; truncated to 5, then Fetch(5, lastFetchedEpoch 0): (0, 10), records follow
    pytest.param(DIVERGING, None, ([(1, 0, 10), (0, 0, 10)], 5, [(5, 6)]), True, (2, 10),
                 id="diverging-elected-floor-epoch"),
])
def test_leader_without_the_followers_epoch(tmp_path: Path, protocol, version, expected, heals, elected) -> None:
    (plan,) = truncate(tmp_path, LEADER_EPOCH_0, [UNKNOWN_EPOCH], protocol, version)
    assert outcome(plan) == expected and plan.heals == heals
    assert (None if plan.elected is None else (plan.elected.epoch, plan.elected.start_offset)) == elected
    assert not any("OFFSET_OUT_OF_RANGE" in n for n in plan.notes)


@pytest.mark.parametrize("leader_epoch, elected", [
    # the controller's epoch, when above every replica's, is the one registered (truncation alike)
    pytest.param(9, (9, True), id="given-epoch"),
    # one a controller could not have elected at (not above the follower's 1): the lowest possible
    pytest.param(1, (2, False), id="given-too-low-takes-the-lowest-possible"),
    pytest.param(None, (2, False), id="none-given"),
])
def test_the_epoch_a_leader_behind_is_elected_at(tmp_path: Path, leader_epoch, elected) -> None:
    logs = [replica_log(tmp_path, n, batches, hw=hw, checkpoint=checkpoint, **options)
            for n, (batches, checkpoint, hw, options) in enumerate([LEADER_EPOCH_0, UNKNOWN_EPOCH], start=1)]
    (plan,) = plan_truncations(logs, protocol=DIVERGING, kafka_version=ERA[DIVERGING], leader_epoch=leader_epoch)
    assert ((plan.elected.epoch, plan.elected.given), plan.elected.behind, plan.elected.previous_epoch) == \
        (elected, True, 0)
    assert outcome(plan)[1:] == (5, [(5, 6)])


def test_a_leader_at_the_newest_epoch_leads_as_its_files_are(tmp_path: Path) -> None:
    # the counter-case: the follower is behind (epoch 1 < the leader's 2), nothing is modelled
    # unless a newer epoch is given, and a given one changes no truncation
    (plan,) = truncate(tmp_path, LEADER, [AT_BOUNDARY], DIVERGING)
    assert plan.elected is None and outcome(plan)[1] == 4
    logs = [replica_log(tmp_path / "given", n, batches, hw=hw, checkpoint=checkpoint, **options)
            for n, (batches, checkpoint, hw, options) in enumerate([LEADER, AT_BOUNDARY], start=1)]
    (given,) = plan_truncations(logs, protocol=DIVERGING, kafka_version=ERA[DIVERGING], leader_epoch=5)
    assert (given.elected.epoch, given.elected.behind) == (5, False) and outcome(given)[1:] == outcome(plan)[1:]


# -- the follower's own lookup: §3.3 row 3 (2.0) against row 5 (2.1+) ---------------------------------
# Leader {1@0, 4@8}, LEO 12. Follower: its log starts at 5 in epoch 3 ({3@5}), LEO 10.
LEADER_1_4 = ([(0, 8, 1, "a"), (8, 4, 4, "b")], [(1, 0), (4, 8)], 12, {})
FROM_5 = ([(5, 5, 3, "f")], [(3, 5)], 5, {"log_start": 5})


@pytest.mark.parametrize("protocol, version, expected", [
    # leader (1, 8); the 2.1+ follower's endOffsetFor(1), below its first epoch, echoes (1, 5): row 5, min(5, 8, 10)
    pytest.param(KIP279, KafkaVersion(2, 7), ([(3, 1, 8)], 5, [(5, 9)]), id="2.7-row-5"),
    pytest.param(KIP279, KafkaVersion(2, 1), ([(3, 1, 8)], 5, [(5, 9)]), id="2.1-row-5"),
    pytest.param(DIVERGING, KafkaVersion(4, 0), ([(3, 1, 8)], 5, [(5, 9)]), id="4.0-row-5"),
    # a 2.0 follower's lookup gives -1 there: row 3, min(8, 10) = 8, inside the batch 5-9
    pytest.param(KIP279, KafkaVersion(2, 0), ([(3, 1, 8)], 8, [(5, 9)]), id="2.0-row-3"),
])
def test_the_followers_own_lookup_below_its_first_epoch(tmp_path: Path, protocol, version, expected) -> None:
    (plan,) = truncate(tmp_path, LEADER_1_4, [FROM_5], protocol, version)
    assert outcome(plan) == expected
    assert plan.cache_after == (() if expected[1] == 5 else ((3, 5),))


# -- a follower with an empty epoch cache -----------------------------------------------------------
NO_CHECKPOINT = ([(0, 5, 0, "a"), (5, 3, 1, "b")], None, 5, {})
LEADER_NO_CHECKPOINT = ([(0, 5, 0, "a"), (5, 5, 0, "a")], None, 10, {})


@pytest.mark.parametrize("leader, protocol, version, expected", [
    # 2.1+ (KAFKA-6859): no request, truncate to the HW
    pytest.param(LEVEL, KIP279, KafkaVersion(2, 7), ([], 5, [(5, 7)]), id="2.7-no-request"),
    pytest.param(LEVEL, DIVERGING, KafkaVersion(4, 0), ([], 5, [(5, 7)]), id="4.0-no-request"),
    # 0.11-1.1 ask epoch -1; a leader with epochs answers -1: HW
    pytest.param(LEVEL, KIP101, KafkaVersion(1, 1), ([(-1, -1, -1)], 5, [(5, 7)]), id="1.1-leader-answers-undefined"),
    # ...but a leader with an empty cache answered its LEO for -1 (KAFKA-6857): 10 >= 8, nothing truncated
    pytest.param(LEADER_NO_CHECKPOINT, KIP101, KafkaVersion(1, 1), ([(-1, -1, 10)], 8, []),
                 id="1.1-empty-leader-answers-its-log-end"),
    # ...until KAFKA-6857, backported to 1.1.1: the leader answers -1 and the follower goes to its HW
    pytest.param(LEADER_NO_CHECKPOINT, KIP101, KafkaVersion(1, 1, 1), ([(-1, -1, -1)], 5, [(5, 7)]),
                 id="1.1.1-empty-leader-answers-undefined"),
    # a 2.0 follower still asks -1 (ReplicaFetcherThread.buildLeaderEpochRequest sends latestEpoch, -1
    # for an empty cache); the 2.0 leader answers (-1, -1): row 1, the HW
    pytest.param(LEVEL, KIP279, KafkaVersion(2, 0), ([(-1, -1, -1)], 5, [(5, 7)]), id="2.0-asks-undefined"),
    # 2.0.1 is the same (KAFKA-6859 is in 2.1 only)
    pytest.param(LEVEL, KIP279, KafkaVersion(2, 0, 1), ([(-1, -1, -1)], 5, [(5, 7)]), id="2.0.1-asks-undefined"),
])
def test_follower_with_an_empty_epoch_cache(tmp_path: Path, leader, protocol, version, expected) -> None:
    (plan,) = truncate(tmp_path, leader, [NO_CHECKPOINT], protocol, version)
    assert outcome(plan) == expected


# -- committed loss: below a high watermark, strictly ---------------------------------------------------
def at_boundary(hw: int) -> tuple:
    return (AT_BOUNDARY[0], AT_BOUNDARY[1], hw, {})


@pytest.mark.parametrize("others, follower_hw, lost, holders", [
    # the discarded batch 4-5 starts at 4
    pytest.param([], 4, False, (), id="own-hw-at-the-batch-start-is-not-loss"),
    pytest.param([], 5, True, (), id="own-hw-past-the-batch-start-is-loss"),
    # another replica holding the identical batch, with its HW past 4: acknowledged data
    pytest.param([at_boundary(5)], 4, True, ("broker-3",), id="identical-copy-below-its-hw"),
    pytest.param([at_boundary(4)], 4, False, ("broker-3",), id="identical-copy-at-its-hw"),
    # a different batch at the same offsets below another replica's HW: that replica's data, not this one's
    pytest.param([([(0, 2, 0, "a"), (2, 2, 0, "a"), (4, 2, 1, "y")], [(0, 0), (1, 4)], 10, {})], 4, False, (),
                 id="different-copy-below-its-hw"),
])
def test_committed_loss(tmp_path: Path, others, follower_hw, lost, holders) -> None:
    plan = truncate(tmp_path, LEADER, [at_boundary(follower_hw), *others], KIP279)[0]
    assert plan.truncate_to == 4 and [(r.first, r.last) for r in plan.ranges] == [(4, 5)]
    assert plan.committed_loss == lost
    offsets = plan.committed_loss_offsets
    assert (None if offsets is None else (offsets.first, offsets.last)) == ((4, 5) if lost else None)
    assert [(r.first, r.last, h) for r, h in plan.held_elsewhere] == [(4, 5, holders)]


# -- which protocol a version uses --------------------------------------------------------------------


@pytest.mark.parametrize("protocol, version, expected", [
    pytest.param("auto", KafkaVersion(0, 10, 2), (HW, KafkaVersion(0, 10, 2)), id="0.10.2-hw"),
    pytest.param("auto", KafkaVersion(0, 11), (KIP101, KafkaVersion(0, 11)), id="0.11-kip101"),
    pytest.param("auto", KafkaVersion(1, 1, 1), (KIP101, KafkaVersion(1, 1, 1)), id="1.1.1-kip101"),
    pytest.param("auto", KafkaVersion(2, 0), (KIP279, KafkaVersion(2, 0)), id="2.0-kip279"),
    pytest.param("auto", KafkaVersion(2, 7, 2), (KIP279, KafkaVersion(2, 7, 2)), id="2.7-kip279"),
    pytest.param("auto", KafkaVersion(2, 8), (DIVERGING, KafkaVersion(2, 8)), id="2.8-diverging"),
    pytest.param("auto", None, (DIVERGING, KafkaVersion(4, 0)), id="auto-is-current-kafka"),
    pytest.param("kip101", None, (KIP101, KafkaVersion(1, 1)), id="explicit-at-its-era"),
    pytest.param("hw", KafkaVersion(3, 9), (HW, KafkaVersion(3, 9)), id="explicit-with-version"),
])
def test_resolve_protocol(protocol, version, expected) -> None:
    assert resolve_protocol(protocol, version) == expected


# -- getOffsetTruncationState row 2: a leader answering the offset only ------------------------------
# AbstractFetcherThread.getOffsetTruncationState: leaderEpoch == UNDEFINED_EPOCH with a defined end
# offset ("either leader or follower or both use inter-broker protocol version < IBP_2_0_IV0") gives
# min(leader's offset, follower's LEO), truncation completed: one round, whatever the offset.
# Emulated as --protocol kip279 --kafka-version 1.1: a 1.1 leader's endOffsetFor reports epoch -1.
BEHIND_IN_EPOCH_1 = ([(0, 5, 0, "a"), (5, 3, 1, "a")], [(0, 0), (1, 5)], 5, {})   # LEO 8


@pytest.mark.parametrize("follower, expected", [
    # the 1.1 leader answers (-1, 10) for its latest epoch 1: min(10, LEO 13) = 10, completed
    pytest.param(AHEAD, ([(1, -1, 10)], 10, [(10, 12)]), id="leader-offset-below-the-follower-end"),
    # min(10, LEO 8) = 8: nothing to cut, completed all the same
    pytest.param(BEHIND_IN_EPOCH_1, ([(1, -1, 10)], 8, []), id="follower-end-below-the-leader-offset"),
])
def test_kip279_follower_with_an_offset_only_answer_truncates_once(tmp_path: Path, follower, expected) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [follower], KIP279, KafkaVersion(1, 1))
    assert outcome(plan) == expected and plan.out_of_range is None and plan.notes == []


# -- row 1 after an unfinished round: the fetch offset has moved -------------------------------------
# Leader {2@0, 4@6}, LEO 8. Follower {0@0, 1@3, 3@5}, LEO 7, HW 3.
LEADER_2_4 = ([(0, 6, 2, "b"), (6, 2, 4, "b")], [(2, 0), (4, 6)], 8, {})
OWN_0_1_3 = ([(0, 3, 0, "a"), (3, 2, 1, "x"), (5, 2, 3, "x")], [(0, 0), (1, 3), (3, 5)], 3, {})


@pytest.mark.parametrize("version, expected", [
    # asks 3 -> (2, 6); own endOffsetFor(2) = (1, 5): row 4, truncate to 5, not completed, and
    # partitionStates is updated with fetch offset 5 (AbstractFetcherThread.maybeTruncate);
    # asks 1 -> a 2.0 leader has nothing at or below epoch 1: (-1, -1), row 1 truncates to
    # "partitionStates.stateValue(tp).fetchOffset" = 5, not the high watermark 3
    pytest.param(KafkaVersion(2, 0), ([(3, 2, 6), (1, -1, -1)], 5, [(5, 6)]), id="2.0-row-1-at-the-moved-fetch-offset"),
    # a 2.1+ leader echoes (1, 0) below its first epoch: own endOffsetFor(1) = (1, 5), row 5 min(5, 0, 5)
    pytest.param(KafkaVersion(2, 7), ([(3, 2, 6), (1, 1, 0)], 0, [(0, 6)]), id="2.7-row-5-echoed-epoch"),
])
def test_kip279_second_round_after_an_unfinished_truncation(tmp_path: Path, version, expected) -> None:
    (plan,) = truncate(tmp_path, LEADER_2_4, [OWN_0_1_3], KIP279, version)
    assert outcome(plan) == expected and plan.out_of_range is None


# -- the leader's own answer is that of the emulated version -----------------------------------------
# Leader {3@5} from log start 5, LEO 10. Follower: one batch 0-9 in epoch 1, HW 7.
LEADER_FROM_5 = ([(5, 5, 3, "b")], [(3, 5)], 10, {"log_start": 5})
EPOCH_1_ONLY = ([(0, 10, 1, "a")], [(1, 0)], 7, {})


@pytest.mark.parametrize("version, expected", [
    # LeaderEpochFileCache.endOffsetFor at 2.0: epoch 1 below the first entry -> (-1, -1): row 1, HW 7,
    # inside the batch 0-9, which goes whole
    pytest.param(KafkaVersion(2, 0), ([(1, -1, -1)], 7, [(0, 9)]), id="2.0-leader-answers-undefined"),
    # 2.1+: (1, 5), the epoch echoed with the first start offset; own endOffsetFor(1) = (1, 10): row 5
    pytest.param(KafkaVersion(2, 7), ([(1, 1, 5)], 5, [(0, 9)]), id="2.7-leader-echoes-the-epoch"),
])
def test_leader_answers_below_its_first_epoch_as_its_version_does(tmp_path: Path, version, expected) -> None:
    (plan,) = truncate(tmp_path, LEADER_FROM_5, [EPOCH_1_ONLY], KIP279, version)
    assert outcome(plan) == expected and plan.out_of_range is None


# -- diverging-epoch: what the leader's check answers ------------------------------------------------
def test_diverging_epoch_with_an_offset_only_answer_is_out_of_range(tmp_path: Path) -> None:
    # Partition.readRecords: "epochEndOffset.endOffset == UNDEFINED_EPOCH_OFFSET || epochEndOffset.leaderEpoch
    # == UNDEFINED_EPOCH" throws OffsetOutOfRangeException; a 1.1 leader answers (-1, 10) for epoch 1.
    # handleOutOfRangeError: the leader ends at 10 < 13, truncate to 10 (1.1: fatal with unclean off)
    (plan,) = truncate(tmp_path, LEVEL, [AHEAD], DIVERGING, KafkaVersion(1, 1))
    assert outcome(plan) == ([(1, -1, 10)], 10, [(10, 12)]) and plan.out_of_range == "above_leader_log_end"
    assert plan.notes == [
        "the leader has no end offset for epoch 1: OFFSET_OUT_OF_RANGE",
        "fetching from 13 is out of range (the leader ends at 10): the follower truncates to the leader's log end; "
        "a 0.10.1-2.0 follower exits instead when unclean.leader.election.enable is false"]


def test_diverging_epoch_with_an_empty_cache_sends_no_epoch(tmp_path: Path) -> None:
    # a Fetch carries lastFetchedEpoch only when the follower has one (AbstractFetcherThread
    # latestEpoch); Partition.readRecords checks divergence only in "lastFetchedEpoch.ifPresent { ... }":
    # at 2.0 (no KAFKA-6859 high-watermark path) the follower fetches from its log end 8, no round
    (plan,) = truncate(tmp_path, LEVEL, [NO_CHECKPOINT], DIVERGING, KafkaVersion(2, 0))
    assert outcome(plan) == ([], 8, []) and plan.out_of_range is None and plan.notes == []


def test_diverging_epoch_end_offset_at_the_fetch_offset_in_the_same_epoch_is_no_divergence(tmp_path: Path) -> None:
    # DeleteRecords moved the follower's log start to its log end 5: truncateFromStart(5) moves
    # epoch 1 to 5, cache {1@5}. The new 4.0 leader registers epoch 2 at its log end 5 (KAFKA-7415):
    # {0@0, 1@3, 2@5}. Fetch(5, lastFetchedEpoch 1): the leader's (1, 5) is neither "leaderEpoch <
    # lastFetchedEpoch" nor "endOffset < fetchOffset" (Partition.readRecords): records follow, no
    # truncation, the follower's cache is left as it is
    leader = ([(0, 3, 0, "a"), (3, 2, 1, "a")], [(0, 0), (1, 3), (2, 5)], 5, {})
    follower = ([(0, 3, 0, "a"), (3, 2, 1, "a")], [(0, 0), (1, 3)], 5, {"log_start": 5})
    (plan,) = truncate(tmp_path, leader, [follower], DIVERGING)
    assert outcome(plan) == ([(1, 1, 5)], 5, []) and plan.cache_after == ((1, 5),) and plan.out_of_range is None


def test_diverging_epoch_rounds_stop_when_a_truncation_changes_nothing(tmp_path: Path) -> None:
    # emulated at 2.0 (no echo below the first epoch): asks 3 -> (1, 8), 1 < 3 diverges; own
    # endOffsetFor(1) is -1 (below {3@5}): row 3, min(8, 10) = 8. Asked again, the same answer and
    # min(8, 8) = 8 leave the log end and epoch unchanged: the rounds stop (the module's rule: the
    # leader would answer the same DivergingEpoch to every later fetch)
    (plan,) = truncate(tmp_path, LEADER_1_4, [FROM_5], DIVERGING, KafkaVersion(2, 0))
    assert outcome(plan) == ([(3, 1, 8), (3, 1, 8)], 8, [(5, 9)])
    assert plan.cache_after == ((3, 5),) and [(r.first, r.last) for r in plan.never_refetched] == [(5, 7)]


# -- KAFKA-7415: a 2.1+ leader registers its epoch at its log end when elected ------------------------
# Both checkpoints hold 1@10; the leader's log ends at 10, so loading drops the entry
# (truncateFromEnd); Partition.makeLeader on 2.1+ assigns (1, LEO 10) again.
LEADER_EPOCH_1_AT_END = ([(0, 5, 0, "a"), (5, 5, 0, "a")], [(0, 0), (1, 10)], 10, {})
AHEAD_IN_EPOCH_1 = ([(0, 5, 0, "a"), (5, 5, 0, "a"), (10, 2, 1, "x")], [(0, 0), (1, 10)], 5, {})


@pytest.mark.parametrize("version, expected", [
    # 2.0: the leader's cache is {0@0}; epoch 1 is above every entry -> (-1, -1): row 1, the HW 5
    pytest.param(KafkaVersion(2, 0), ([(1, -1, -1)], 5, [(5, 11)]), id="2.0-no-entry-for-epoch-1"),
    # 2.1: {0@0, 1@10}: the latest epoch answers the LEO 10; own (1, 12): row 5 min(12, 10, 12)
    pytest.param(KafkaVersion(2, 1), ([(1, 1, 10)], 10, [(10, 11)]), id="2.1-leader-registers-epoch-1"),
])
def test_leader_registers_its_epoch_at_its_log_end(tmp_path: Path, version, expected) -> None:
    (plan,) = truncate(tmp_path, LEADER_EPOCH_1_AT_END, [AHEAD_IN_EPOCH_1], KIP279, version)
    assert outcome(plan) == expected


# -- the follower's log start against the leader's (handleOutOfRangeError) ----------------------------
def test_follower_ending_at_the_leaders_log_start_is_not_out_of_range(tmp_path: Path) -> None:
    # Leader {2@5} from log start 5, LEO 10. Follower {0@0, 1@5}, LEO 8, HW 6. Asks 1: the leader echoes
    # (1, 5); own (1, 8): row 5, 5. The fetch from 5 is in range: handleOutOfRangeError truncates fully only
    # "if (leaderStartOffset > replicaEndOffset)".
    # Committed loss: the batch 5-5 starts below the follower's HW 6 and holds the leader's log start 5, so
    # it is not retention's (last offset 5 is not below 5); 6-7 starts at the HW, not below it.
    leader = ([(5, 5, 2, "b")], [(2, 5)], 10, {"log_start": 5})
    follower = ([(0, 5, 0, "a"), (5, 1, 1, "x"), (6, 2, 1, "x")], [(0, 0), (1, 5)], 6, {})
    (plan,) = truncate(tmp_path, leader, [follower], KIP279)
    assert outcome(plan) == ([(1, 1, 5)], 5, [(5, 7)]) and plan.out_of_range is None
    assert plan.cache_after == ((0, 0),) and plan.notes == []
    assert plan.committed_loss and (plan.committed_loss_offsets.first, plan.committed_loss_offsets.last) == (5, 5)
    assert plan.still_divergent == [] and plan.heals


def test_follower_below_the_leaders_log_start_starts_over_there(tmp_path: Path) -> None:
    # Leader {0@5, 2@8} from log start 5. Follower {0@0, 1@3}, LEO 7, HW 7. Asks 1 -> (0, 8); own
    # endOffsetFor(0) = (0, 3): row 5, min(3, 8, 7) = 3; the fetch from 3 is below the leader's log start:
    # truncateFullyAndStartAt(5) (UnifiedLog: leaderEpochCache clearAndFlush). The batch 0-2 lies below the
    # leader's log start (retention: not counted); 3-6 starts below the HW 7: committed loss.
    leader = ([(5, 3, 0, "a"), (8, 2, 2, "b")], [(0, 5), (2, 8)], 10, {"log_start": 5})
    follower = ([(0, 3, 0, "a"), (3, 4, 1, "x")], [(0, 0), (1, 3)], 7, {})
    (plan,) = truncate(tmp_path, leader, [follower], KIP279)
    assert outcome(plan) == ([(1, 0, 8)], 5, [(0, 6)]) and plan.out_of_range == "below_leader_log_start"
    assert plan.cache_after == () and plan.follower_log_end_after == 5
    assert plan.notes == [
        "the follower's log end 3 is below the leader's log start 5: it deletes its whole log and restarts at 5 "
        "(truncateFullyAndStartAt)",
        "offsets below 5 were deleted by retention on the leader; they are not counted as lost committed data"]
    assert plan.committed_loss and (plan.committed_loss_offsets.first, plan.committed_loss_offsets.last) == (3, 6)


# -- notes, exactly as printed ---------------------------------------------------------------------
OUT_OF_RANGE_NOTE = ("fetching from 13 is out of range (the leader ends at 10): the follower truncates to the "
                     "leader's log end")


@pytest.mark.parametrize("version, notes", [
    pytest.param(KafkaVersion(0, 10, 2), [OUT_OF_RANGE_NOTE + "; a 0.10.1-2.0 follower exits instead when "
                                          "unclean.leader.election.enable is false"], id="0.10.2"),
    # KAFKA-7414 (2.1): never fatal, nothing added
    pytest.param(KafkaVersion(2, 1), [OUT_OF_RANGE_NOTE], id="2.1"),
])
def test_out_of_range_above_the_leader_note(tmp_path: Path, version, notes) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [AHEAD_HW_ABOVE_LEADER], HW, version)
    assert plan.notes == notes


def test_empty_cache_note(tmp_path: Path) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [NO_CHECKPOINT], KIP279, KafkaVersion(2, 7))
    assert plan.notes == ["the follower's epoch cache is empty: a 2.1+ follower sends no OffsetForLeaderEpoch "
                          "request (KAFKA-6859) and truncates to its high watermark"]


LEGACY = ([(0, 5, 0, "a"), (5, 5, 0, "a")], None, 5, {"legacy": True})


@pytest.mark.parametrize("protocol, version, notes", [
    # KAFKA-7897 (2.1.1): a pre-v2 log has no epoch cache; an epoch protocol falls back to the HW, and says so
    pytest.param(KIP279, KafkaVersion(2, 7), ["the follower's log has no epoch cache (pre-v2 message format): "
                                              "high-watermark truncation applies"], id="kip279-falls-back"),
    pytest.param(DIVERGING, KafkaVersion(4, 0), ["the follower's log has no epoch cache (pre-v2 message format): "
                                                 "high-watermark truncation applies"], id="diverging-falls-back"),
    # the hw protocol is high-watermark truncation anyway: no note
    pytest.param(HW, KafkaVersion(3, 9), [], id="hw-says-nothing"),
])
def test_follower_without_an_epoch_cache(tmp_path: Path, protocol, version, notes) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [LEGACY], protocol, version)
    assert outcome(plan) == ([], 5, [(5, 9)]) and plan.notes == notes


@pytest.mark.parametrize("hw, notes, truncate_to", [
    # no replication-offset-checkpoint entry: the high watermark is 0 (Partition/Replica default)
    pytest.param(None, ["the follower's high watermark is unknown (no replication-offset-checkpoint entry): "
                        "Kafka uses 0"], 0, id="unknown-hw"),
    pytest.param(5, [], 5, id="known-hw"),
])
def test_plan_identity_and_unknown_high_watermark(tmp_path: Path, hw, notes, truncate_to) -> None:
    (plan,) = truncate(tmp_path, LEVEL, [(SAME, [(0, 0), (1, 5)], hw, {})], HW, KafkaVersion(2, 7))
    assert (plan.partition, plan.leader, plan.follower, plan.protocol, plan.kafka_version) == (
        "orders-0", "broker-1", "broker-2", "hw", "2.7.0")
    assert plan.notes == notes and plan.truncate_to == truncate_to


# -- what a cut takes: segments, kept ranges, transactions ------------------------------------------
def test_segments_cut_first_at_a_position_later_ones_whole(tmp_path: Path) -> None:
    # LocalLog.truncateTo: the segment holding the target is cut at the batch (LogSegment.truncateTo),
    # every later segment deleted whole. Follower: segment 0 holds 0-2 and 3-4, segment 5 holds 5-7; HW 3.
    from tests.builders.replicas import generator, replica_log
    generator().replica(tmp_path, 2, [(0, 3, 0, "a"), (3, 2, 1, "x")], hw=3, checkpoint=[(0, 0), (1, 3)])
    follower = replica_log(tmp_path, 2, [(5, 3, 1, "x")], hw=3, checkpoint=[(0, 0), (1, 3)])
    leader = replica_log(tmp_path, 1, *LEVEL[:1], hw=10, checkpoint=LEVEL[1])
    (plan,) = plan_truncations([leader, follower], protocol=HW, kafka_version=ERA[HW])
    at_3 = next(b for b in follower.batches if b.base_offset == 3)
    seg_5 = next(b.path for b in follower.batches if b.base_offset == 5)
    assert at_3.position > 0 and seg_5 != at_3.path and Path(seg_5).name == "00000000000000000005.log"
    assert plan.segments_cut == [(at_3.path, at_3.position), (seg_5, 0)]
    assert [(r.first, r.last) for r in plan.ranges] == [(3, 7)]


@pytest.mark.parametrize("follower, expected", [
    # the follower's batch 0-5 holds offset 5, the leader's log start: the leader holds 5 otherwise
    pytest.param(([(0, 6, 0, "x"), (6, 4, 0, "x")], [(0, 0)], 10, {}), [(0, 9)], id="batch-ending-at-the-log-start"),
    # the batch 0-4 lies wholly below the leader's log start: out of its reach, left out
    pytest.param(([(0, 5, 0, "x"), (5, 5, 0, "x")], [(0, 0)], 10, {}), [(5, 9)], id="batch-below-the-log-start"),
])
def test_still_divergent_from_the_leaders_log_start(tmp_path: Path, follower, expected) -> None:
    leader = ([(5, 5, 0, "a")], [(0, 5)], 10, {"log_start": 5})
    (plan,) = truncate(tmp_path, leader, [follower], HW)
    assert plan.truncate_to == 10 and plan.discarded == []
    assert [(r.first, r.last) for r in plan.still_divergent] == expected


@pytest.mark.parametrize("marker", ["commit", "abort"])
def test_discarded_markers_reopen_their_transactions(tmp_path: Path, marker) -> None:
    # the HW 5 cuts a transaction of producer 7000 (5-6) and its marker at 7: the marker's type is kept
    follower = ([(0, 5, 0, "a"), (5, 2, 1, "txn1"), (7, 1, 1, marker)], [(0, 0), (1, 5)], 5, {})
    (plan,) = truncate(tmp_path, LEVEL, [follower], HW)
    assert outcome(plan) == ([], 5, [(5, 7)])
    assert plan.reopened_transactions == [(7000, 7, marker)]


# -- a segment whose batches are out of offset order (offset_regression): ranges in offset order -----
def test_still_divergent_ranges_in_offset_order(tmp_path: Path) -> None:
    # the follower's segment holds 5-9 before 0-4, both other than the leader's: one range 0-9
    from tests.builders.replicas import replica_log
    leader = replica_log(tmp_path, 1, SAME, hw=10, checkpoint=[(0, 0)])
    follower = replica_log(tmp_path, 2, [(5, 5, 0, "x"), (0, 5, 0, "x")], hw=10, checkpoint=[(0, 0)], segment_base=0)
    (plan,) = plan_truncations([leader, follower], protocol=HW, kafka_version=ERA[HW])
    assert plan.truncate_to == 10 and [(r.first, r.last) for r in plan.still_divergent] == [(0, 9)]


def test_never_refetched_ranges_in_offset_order(tmp_path: Path) -> None:
    # HW 7 cuts the follower's one batch 0-9 whole, its log end set to 7: the leader's 0-6 never come
    # again; the leader's segment holds 3-6 before 0-2
    from tests.builders.replicas import replica_log
    leader = replica_log(tmp_path, 1, [(3, 4, 0, "a"), (0, 3, 0, "a"), (7, 3, 0, "a")], hw=10, checkpoint=[(0, 0)],
                         segment_base=0)
    follower = replica_log(tmp_path, 2, [(0, 10, 0, "a")], hw=7, checkpoint=[(0, 0)])
    (plan,) = plan_truncations([leader, follower], protocol=HW, kafka_version=ERA[HW])
    assert plan.truncate_to == 7 and [(r.first, r.last) for r in plan.never_refetched] == [(0, 6)]


def test_a_plan_names_the_leaders_partition(tmp_path: Path) -> None:
    # a follower copied to a directory whose name is no partition's ("saved-copy"): the replicas are
    # still compared (require_one_partition checks named partitions only); the plan is for orders-0
    from kreplica.model.log.replica import read_replicas
    from tests.builders.replicas import replica_log
    leader = replica_log(tmp_path, 1, SAME, hw=10, checkpoint=[(0, 0), (1, 5)])
    replica_log(tmp_path, 2, SAME, hw=10, checkpoint=[(0, 0), (1, 5)])
    (tmp_path / "broker-2" / "orders-0").rename(tmp_path / "broker-2" / "saved-copy")
    replicas = read_replicas([leader.path, str(tmp_path / "broker-2" / "saved-copy")], None, {})
    assert [r.name for r in replicas] == ["orders-0", "saved-copy"]
    (plan,) = plan_truncations(replicas, protocol=KIP279, kafka_version=ERA[KIP279])
    assert (plan.partition, plan.follower, plan.truncate_to) == ("orders-0", "broker-2", 10)
