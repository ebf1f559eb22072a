"""What an unclean election lost (``evidence.lost_range`` and the ``ElectionLoss`` that
``join_partition`` reports), table-driven on replicas written in the test.

Kafka's rule: after the election the old leader follows the new one and truncates by leader
epoch (``LeaderEpochFileCache.endOffsetFor`` answers ``OffsetsForLeaderEpoch``: an epoch ends
where the next epoch the new leader holds starts). Two replicas hold the same record when they
hold the same offset from the same epoch (log matching), and the new leader's log "when elected
at E" is what lies below its first batch of epoch E or later (``end_at_election``). So the old
leader loses its offsets from epochs before E, from the first one the new leader did not hold
with the same epoch, to its log end; ``below_high_watermark`` counts those under the old
leader's high watermark (acknowledged with ``acks=all``). A batch is ``(first, count, epoch, tag)``.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from kreplica.analysis.timeline.events import LEADER_ELECTION, UNCLEAN_LEADER_ELECTION, LeaderIsr, PartitionEvent
from kreplica.analysis.timeline.evidence import ElectionLoss, join_partition, lost_range
from tests.builders.replicas import replica_log

E = 2          # the unclean election's epoch


@pytest.fixture
def alarm():
    """A damaged log must not hang the walk: fail after 5 s instead."""
    def _fail(*_):
        raise AssertionError("lost_range did not return")
    old = signal.signal(signal.SIGALRM, _fail)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("old_batches, new_batches, expected", [
    # the new leader had 0-99 of epoch 0, the old leader 0-119: 100-119 lost
    pytest.param([(0, 120, 0, "a")], [(0, 100, 0, "a"), (100, 50, 2, "b")], (100, 120, 20), id="tail-lost"),
    # one offset more than the new leader: the old run's last offset is checked, and counted
    pytest.param([(0, 101, 0, "a")], [(0, 100, 0, "a"), (100, 50, 2, "b")], (100, 101, 1), id="last-offset-lost"),
    # the new leader holds 50-99 from epoch 1, the old leader from epoch 0: lost from 50, not 100
    pytest.param([(0, 120, 0, "a")], [(0, 50, 0, "a"), (50, 50, 1, "b"), (100, 10, 2, "c")], (50, 120, 70),
                 id="same-offsets-other-epoch"),
    # a one-offset run of epoch 0 (0-0) held by both: matched, the loss starts at 100
    pytest.param([(0, 1, 0, "a"), (1, 119, 1, "a")], [(0, 1, 0, "a"), (1, 99, 1, "a"), (100, 50, 2, "b")],
                 (100, 120, 20), id="one-offset-run-held"),
    # the old leader has since followed the new one: its epoch-2 offsets are not from before the election
    pytest.param([(0, 100, 0, "a"), (100, 50, 2, "b")], [(0, 100, 0, "a"), (100, 50, 2, "b")], (100, 100, 0),
                 id="old-followed-new"),
    # nothing from before the election on the old leader: nothing lost, end 0
    pytest.param([], [(0, 100, 0, "a"), (100, 50, 2, "b")], (0, 0, 0), id="old-leader-empty"),
    # a damaged new leader whose epoch-0 batch 0-25 overlaps its epoch-2 batch at 10 (offset regression):
    # elected at epoch 2 with its log ending at 10 (endOffsetFor(0) = 10), so 10-30 are lost
    pytest.param([(0, 31, 0, "a")], [(0, 26, 0, "a"), (10, 10, 2, "b")], (10, 31, 21), id="overlapping-new-runs"),
])
def test_lost_range(tmp_path: Path, alarm, old_batches, new_batches, expected) -> None:
    old = replica_log(tmp_path, 1, old_batches, hw=None, checkpoint=None)
    new = replica_log(tmp_path, 2, new_batches, hw=None, checkpoint=None)
    assert lost_range(old, new, E) == expected


# -- the ElectionLoss of join_partition --------------------------------------------------------

T0 = 1_700_000_000_000


def _events(*, before_leader: int | None = 1, first_leader: int | None = None) -> list[PartitionEvent]:
    """Optionally ``first_leader`` leading epoch 0; then the unclean election of broker 2 at epoch
    2 at zxid 0x30, from ``before_leader`` (``None``: no state before it; -1: no leader)."""
    out = []
    if first_leader is not None:
        out.append(PartitionEvent("orders", 0, 0x10, T0, 1, None, LeaderIsr(first_leader, 0, (1, 2)),
                                  LEADER_ELECTION, None, "", replicas=(1, 2)))
    before = LeaderIsr(before_leader, 1, (before_leader,)) if before_leader is not None else None
    out.append(PartitionEvent("orders", 0, 0x30, T0 + 5000, 1, before, LeaderIsr(2, E, (2,)),
                              UNCLEAN_LEADER_ELECTION, None, "", replicas=(1, 2)))
    return out


NEW = [(0, 100, 0, "a"), (100, 50, 2, "b")]
LOST_NOTE = "broker 1 holds offsets 100..119 from epochs before 2 that broker 2 did not have when it was elected"
HELD_NOTE = "broker 2 held everything broker 1 holds from before epoch 2"
FOLLOWED = "; broker 1 has since followed the new leader, so its copy may already be truncated"


@pytest.mark.parametrize("old_batches, hw, expected", [
    pytest.param([(0, 120, 0, "a")], 110, (100, 120, 20, 10, 110, LOST_NOTE), id="ten-acknowledged"),
    # no high watermark known: how many were acknowledged is unknown
    pytest.param([(0, 120, 0, "a")], None, (100, 120, 20, None, None, LOST_NOTE), id="no-high-watermark"),
    # the high watermark at or below the first lost offset: none acknowledged
    pytest.param([(0, 120, 0, "a")], 100, (100, 120, 20, 0, 100, LOST_NOTE), id="hw-at-first-lost"),
    pytest.param([(0, 120, 0, "a")], 90, (100, 120, 20, 0, 90, LOST_NOTE), id="hw-below-first-lost"),
    pytest.param([(0, 100, 0, "a")], 100, (100, 100, 0, 0, 100, HELD_NOTE), id="nothing-lost"),
    pytest.param([(0, 100, 0, "a")], None, (100, 100, 0, 0, None, HELD_NOTE), id="nothing-lost-no-hw"),
    # the old leader holds epoch 2 too: it has followed the new leader since
    pytest.param([(0, 100, 0, "a"), (100, 50, 2, "b")], 150, (100, 100, 0, 0, 150, HELD_NOTE + FOLLOWED),
                 id="old-followed-new"),
    # its epoch-2 offset 120 is not from before the election: the loss still ends at 120
    pytest.param([(0, 120, 0, "a"), (120, 1, 2, "b")], 110, (100, 120, 20, 10, 110, LOST_NOTE + FOLLOWED),
                 id="lost-and-followed"),
])
def test_election_loss(tmp_path: Path, old_batches, hw, expected) -> None:
    replicas = {1: replica_log(tmp_path, 1, old_batches, hw=hw, checkpoint=None),
                2: replica_log(tmp_path, 2, NEW, hw=None, checkpoint=None)}
    (loss,) = join_partition(_events(), replicas).losses
    first, end, count, below, old_hw, note = expected
    assert loss == ElectionLoss("orders", 0, 0x30, T0 + 5000, E, 1, 2, first, end, count, below, old_hw, note)


@pytest.mark.parametrize("events, brokers, old_leader, old_hw, note", [
    # no state before the election and no earlier leader in the history
    pytest.param(_events(before_leader=None), (1, 2), None, None, "the history does not say who led before",
                 id="who-led-unknown"),
    # recorded with no leader before it: the last leader the history names led before
    pytest.param(_events(before_leader=-1, first_leader=1), (2,), 1, None,
                 "no replica data for broker 1: give its log directory with --log-dirs", id="old-missing"),
    pytest.param(_events(), (1,), 1, 110, "no replica data for broker 2: give its log directory with --log-dirs",
                 id="new-missing-old-hw-kept"),
    pytest.param(_events(), (), 1, None,
                 "no replica data for broker 1 and broker 2: give its log directory with --log-dirs",
                 id="both-missing"),
])
def test_election_loss_unknown(tmp_path: Path, events, brokers, old_leader, old_hw, note) -> None:
    replicas = {1: replica_log(tmp_path, 1, [(0, 120, 0, "a")], hw=110, checkpoint=None),
                2: replica_log(tmp_path, 2, NEW, hw=None, checkpoint=None)}
    (loss,) = join_partition(events, {b: replicas[b] for b in brokers}).losses
    assert loss == ElectionLoss("orders", 0, 0x30, T0 + 5000, E, old_leader, 2, None, None, None, None, old_hw, note)
