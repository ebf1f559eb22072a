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
    pytest.param(AHEAD, DIVERGING, ([(1, 1, 10), (1, 1, 10)], 10, [(10, 12)]), id="ahead-diverging"),
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


@pytest.mark.parametrize("protocol, expected, heals", [
    pytest.param(HW, ([], 5, [(5, 6)]), True, id="hw"),
    pytest.param(KIP101, ([(1, -1, -1)], 5, [(5, 6)]), True, id="kip101-undefined-goes-to-hw"),
    pytest.param(KIP279, ([(1, -1, -1)], 5, [(5, 6)]), True, id="kip279-row-1-goes-to-hw"),
    # OFFSET_OUT_OF_RANGE; the leader's LEO 10 >= 7 and LSO 0 <= 7: fetch from 7, nothing truncated
    pytest.param(DIVERGING, ([(1, -1, -1)], 7, []), False, id="diverging-out-of-range-keeps"),
])
def test_leader_without_the_followers_epoch(tmp_path: Path, protocol, expected, heals) -> None:
    (plan,) = truncate(tmp_path, LEADER_EPOCH_0, [UNKNOWN_EPOCH], protocol)
    assert outcome(plan) == expected and plan.heals == heals
    assert any("OFFSET_OUT_OF_RANGE" in n for n in plan.notes) == (protocol == DIVERGING)


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
