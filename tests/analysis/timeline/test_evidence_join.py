"""``join_partition`` as a whole: the epochs the metadata granted joined with the epochs each
replica holds (module docstring of ``analysis/timeline/evidence.py``), asserted field by field.

Kafka's rules behind the expected values: every v2 batch carries the epoch of the leader that
appended it (``RecordBatch.partitionLeaderEpoch``, set by ``Log.append`` as leader); an epoch's
grant is the metadata write that first names it with a leader (ZooKeeper's state znode written by
``PartitionStateMachine`` / KRaft's ``PartitionChangeBuilder``): a later write that keeps the epoch
(an ISR change by the leader, ``Partition.shrinkIsr``) does not grant it again, while a grant of a
leader to an epoch first recorded without one does. An epoch a replica holds that no leader was
granted, from the first epoch the history knows on, is a zombie. A batch is ``(first, count,
epoch, tag)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.timeline.events import (
    DELETED,
    ISR_SHRINK,
    LEADER_ELECTION,
    LeaderIsr,
    PartitionEvent,
)
from kreplica.analysis.timeline.evidence import EpochEvidence, EpochHolding, PartitionEvidence, join_partition
from tests.builders.replicas import replica_log

T0 = 1_700_000_000_000


def _ev(position: int, before, after, cause: str = LEADER_ELECTION) -> PartitionEvent:
    return PartitionEvent("orders", 3, position, T0 + position, 1, before, after, cause, None, "", replicas=(1, 2))


L1E1 = LeaderIsr(1, 1, (1, 2))


def test_epochs_grants_and_zombies(tmp_path: Path) -> None:
    events = [
        _ev(0x10, None, LeaderIsr(-1, 1, (1,))),               # epoch 1 first recorded with no leader
        _ev(0x20, LeaderIsr(-1, 1, (1,)), L1E1),               # ...then granted to 1 at the same epoch
        _ev(0x30, L1E1, LeaderIsr(1, 1, (1,)), ISR_SHRINK),    # the leader's ISR change keeps epoch 1
        _ev(0x40, LeaderIsr(1, 1, (1,)), LeaderIsr(2, 3, (2,))),
    ]
    replicas = {
        2: replica_log(tmp_path, 2, [(0, 10, 1, "a"), (10, 5, 3, "b")], hw=None, checkpoint=None, partition=3),
        # epoch 0 is older than the history; epoch 2 was never granted
        1: replica_log(tmp_path, 1, [(0, 5, 0, "z"), (5, 5, 1, "a"), (10, 2, 2, "c")], hw=None, checkpoint=None,
                       partition=3),
    }
    pe = join_partition(events, replicas)
    assert pe == PartitionEvidence("orders", 3, (1, 2), 1, (
        EpochEvidence("orders", 3, 0, None, None, None, False, (EpochHolding(1, 0, 5),)),
        EpochEvidence("orders", 3, 1, 1, 0x20, T0 + 0x20, True, (EpochHolding(1, 5, 10), EpochHolding(2, 0, 10))),
        EpochEvidence("orders", 3, 2, None, None, None, False, (EpochHolding(1, 10, 12),)),
        EpochEvidence("orders", 3, 3, 2, 0x40, T0 + 0x40, True, (EpochHolding(2, 10, 15),)),
    ), (), (2,), ())


@pytest.mark.parametrize("leaderless_first, zombies", [
    # the first epoch known (1) recorded with no leader and held: a zombie, at the boundary itself
    (True, (1,)),
    (False, ()),
])
def test_the_first_known_epoch_can_be_a_zombie(tmp_path: Path, leaderless_first, zombies) -> None:
    events = [_ev(0x10, None, LeaderIsr(-1 if leaderless_first else 1, 1, (1,)))]
    replicas = {1: replica_log(tmp_path, 1, [(0, 5, 1, "a")], hw=None, checkpoint=None, partition=3)}
    pe = join_partition(events, replicas)
    assert (pe.first_known_epoch, pe.zombie_epochs, pe.epochs_without_data) == (1, zombies, ())


def test_a_leaderless_write_keeps_the_epochs_grant(tmp_path: Path) -> None:
    events = [_ev(0x10, None, L1E1), _ev(0x20, L1E1, LeaderIsr(-1, 1, (1,)))]
    (ep,) = join_partition(events, {}).epochs
    assert (ep.epoch, ep.leader, ep.position) == (1, 1, 0x10)


def test_a_history_of_a_deletion_only_knows_no_epoch() -> None:
    pe = join_partition([_ev(0x10, L1E1, None, DELETED)], {})
    assert (pe.first_known_epoch, pe.epochs, pe.zombie_epochs, pe.epochs_without_data) == (None, (), (), ())


@pytest.mark.parametrize("batches, span", [
    # a damaged log whose epoch 1 comes back after epoch 2 (epoch regression): one holding from the
    # first to the last offset of epoch 1
    ([(0, 5, 1, "a"), (5, 5, 2, "b"), (10, 5, 1, "c")], (0, 15)),
    # ...and one whose epoch-1 batch at 0 follows its epoch-1 batch at 10 (offset regression)
    ([(10, 5, 1, "a"), (15, 5, 2, "b"), (0, 5, 1, "c")], (0, 15)),
])
def test_an_epoch_held_in_two_runs_spans_both(tmp_path: Path, batches, span) -> None:
    log = replica_log(tmp_path, 1, batches, hw=None, checkpoint=None, partition=3, segment_base=0)
    pe = join_partition([_ev(0x10, None, L1E1)], {1: log})
    assert [(h.start_offset, h.end_offset) for h in pe.epochs[0].holdings] == [span]
