"""The timeline joined with replica data, on ``fixtures/timeline`` (written by fixtures/generate.py,
whose docstring tells the story): broker 1 led epoch 0 and wrote offsets 0-119 (high watermark
110), then 120-124 with epoch 1, which the metadata recorded with no leader (a zombie epoch);
broker 2, elected uncleanly at epoch 2, had only 0-99; broker 3 leads epoch 3 and wrote nothing."""

from __future__ import annotations

from kreplica.analysis.timeline.events import PartitionEvent
from kreplica.analysis.timeline.evidence import join_partition, lost_range
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from kreplica.model.zookeeper import find_zk_files
from tests.conftest import FIXTURES

ROOT = FIXTURES / "timeline"


def _replicas():
    out = {}
    for b in (1, 2, 3):
        log_dir = scan_log_dir(ROOT / f"broker-{b}")
        out[b] = read_partition_log(log_dir.partitions[0], log_dir)
    return out


def _events():
    return [ev for ev in iter_zookeeper_timeline(find_zk_files([ROOT / "zookeeper"]))
            if isinstance(ev, PartitionEvent)]


def test_epoch_evidence_zombie_and_empty_epochs():
    pe = join_partition(_events(), _replicas())
    assert [(e.epoch, e.leader, e.in_metadata, [(h.broker, h.start_offset, h.end_offset) for h in e.holdings])
            for e in pe.epochs] == [
        (0, 1, True, [(1, 0, 120), (2, 0, 100), (3, 0, 100)]),
        (1, -1, True, [(1, 120, 125)]),
        (2, 2, True, [(2, 100, 150), (3, 100, 150)]),
        (3, 3, True, []),
    ]
    assert pe.zombie_epochs == (1,) and pe.epochs_without_data == (3,) and pe.has_problems


def test_unclean_election_loss():
    (loss,) = join_partition(_events(), _replicas()).losses
    assert (loss.old_leader, loss.new_leader, loss.leader_epoch) == (1, 2, 2)
    assert (loss.first_lost_offset, loss.end_offset, loss.lost_offsets) == (100, 125, 25)
    assert (loss.old_high_watermark, loss.below_high_watermark) == (110, 10)


def test_loss_unknown_without_the_old_leaders_replica():
    replicas = _replicas()
    del replicas[1]
    (loss,) = join_partition(_events(), replicas).losses
    assert loss.lost_offsets is None and "broker 1" in loss.note
    assert join_partition(_events(), replicas).zombie_epochs == ()


def test_nothing_lost_when_the_new_leader_held_everything():
    r = _replicas()
    assert lost_range(r[2], r[3], 3) == (150, 150, 0)      # 3 holds all of 2's epochs 0 and 2
    assert lost_range(r[1], r[2], 2) == (100, 125, 25)
