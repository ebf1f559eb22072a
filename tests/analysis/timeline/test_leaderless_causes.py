"""``classify`` on a partition without a leader before and after whose epoch is bumped with the
ISR unchanged: the controller taking a shutting-down or gone ISR member out of an ISR that keeps
its last member (``PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded``; ZooKeeper's
``removeReplicasFromIsr``). Seen 686 times in real KRaft metadata (``../shared/oracle/wild``),
at the fencing that ends each controlled shutdown of a single broker."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import (
    CONTROLLED_SHUTDOWN,
    LEADER_ELECTION,
    REASSIGNMENT,
    UNKNOWN,
    ChangeContext,
    LeaderIsr,
    classify,
)

LEADERLESS = LeaderIsr(-1, 1, (1,))
BUMPED = LeaderIsr(-1, 2, (1,))
KRAFT = {"epoch_tells_writer": False, "shutdown_known": True}


@pytest.mark.parametrize(("before", "after", "ctx", "cause", "says"), [
    pytest.param(LEADERLESS, BUMPED, ChangeContext(alive=frozenset({1}), shutting_down=frozenset({1}), **KRAFT),
                 CONTROLLED_SHUTDOWN, "shutting down", id="kraft-fencing-at-the-end-of-a-controlled-shutdown"),
    pytest.param(LEADERLESS, BUMPED, ChangeContext(alive=frozenset(), shutting_down=frozenset({1}), **KRAFT),
                 CONTROLLED_SHUTDOWN, "shutting down", id="kraft-shutting-down-and-fenced-in-the-same-batch"),
    pytest.param(LEADERLESS, BUMPED, ChangeContext(alive=frozenset(), **KRAFT),
                 LEADER_ELECTION, "no longer live", id="kraft-fenced"),
    pytest.param(LeaderIsr(-1, 4, (2, 3)), LeaderIsr(-1, 5, (2, 3)),
                 ChangeContext(alive=frozenset({3}), gone_since=frozenset({2})),
                 LEADER_ELECTION, "[2] of the ISR [2,3] no longer live", id="zookeeper-last-isr-member-gone"),
    pytest.param(LEADERLESS, BUMPED, ChangeContext(alive=frozenset({1}), **KRAFT),
                 UNKNOWN, "unchanged", id="every-isr-member-live-and-not-shutting-down"),
    pytest.param(LEADERLESS, BUMPED, ChangeContext(alive=frozenset(), adding=(2,), **KRAFT),
                 REASSIGNMENT, "reassigned", id="reassigning-first"),
    pytest.param(LeaderIsr(1, 1, (1,)), LeaderIsr(1, 2, (1,)), ChangeContext(alive=frozenset(), **KRAFT),
                 UNKNOWN, "unchanged", id="a-leader-kept-is-not-leaderless"),
])
def test_leaderless_epoch_bump(before, after, ctx, cause, says) -> None:
    got = classify(before, after, ctx)
    assert (got.cause, got.by) == (cause, "controller")
    assert says in got.evidence
