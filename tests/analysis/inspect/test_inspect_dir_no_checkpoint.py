"""inspect-dir on a partition with no leader-epoch-checkpoint although its batches carry epochs
0, 1, 3 (starting at 0, 5, 10; log end 15): the ``epoch_checkpoint_stale`` finding says what the
restart does without it, in the words of its shutdown (the finding text is output, a contract).

Kafka's rule: ``LogLoader.load`` recovers segments only after an unclean shutdown (no
``.kafka_cleanshutdown``), and only ``logSegments(recoveryPoint, Long.MaxValue)``: the segment
holding the recovery point and every later one. ``LogSegment.recover`` re-adds each recovered
batch's epoch through ``LeaderEpochFileCache.assign``; a clean shutdown recovers nothing, so the
cache starts empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_dir import inspect_partition
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from tests.builders.replicas import replica_log

BATCHES = [(0, 5, 0, "a"), (5, 5, 1, "a"), (10, 5, 3, "a")]
PREFIX = "no leader-epoch-checkpoint although the batches carry epochs [0, 1, 3]: "
CLEAN = ("after a clean shutdown the broker recovers no segment and starts with an empty epoch cache; "
         "only recovery after an unclean shutdown re-adds epochs")
UNCLEAN = ("after an unclean shutdown the broker re-adds only the epochs of the segments it recovers "
           "(from the recovery point on): its epoch cache would be ")


@pytest.mark.parametrize("options, empty_segment_at_end, message", [
    pytest.param({}, False, CLEAN, id="clean-shutdown"),
    # the recovery point lies in segment 0: recovery re-reads all three epochs
    pytest.param({"clean": False, "recovery_point": 10}, False, UNCLEAN + "0@0, 1@5, 3@10", id="unclean-recovers-all"),
    # the recovery point is the (empty) active segment 15: segment 0 is not recovered, no epoch comes back
    pytest.param({"clean": False, "recovery_point": 15}, True, UNCLEAN + "empty", id="unclean-recovers-none"),
])
def test_no_checkpoint_finding_says_what_the_restart_rebuilds(tmp_path: Path, options, empty_segment_at_end,
                                                             message) -> None:
    replica_log(tmp_path, 1, BATCHES, hw=None, checkpoint=None, **options)
    if empty_segment_at_end:
        (tmp_path / "broker-1" / "orders-0" / "00000000000000000015.log").write_bytes(b"")
    log_dir = scan_log_dir(tmp_path / "broker-1")
    report = inspect_partition(read_partition_log(log_dir.partitions[0], log_dir))
    assert [f.message for f in report.findings if f.kind == "epoch_checkpoint_stale"] == [PREFIX + message]
