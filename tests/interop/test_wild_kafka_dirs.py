"""Real broker log directories (``../shared/oracle/wild/``, see its README): a
``leader-epoch-checkpoint`` whose first entry Kafka moved to the log start offset after
DeleteRecords (Kafka Streams purging a repartition topic)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.interop.wild_cases import run, wild_dir

pytestmark = pytest.mark.interop

LOG_DIR = ("rjmfernandes__flink-on-prem", "43d3daa/data")
#: batches of epoch 0 from offset 0, log-start-offset-checkpoint 1734, leader-epoch-checkpoint "0 1734"
PURGED = "_confluent-controlcenter-7-6-0-1-aggregatedTopicPartitionTableWindows-ONE_MINUTE-repartition-0"
LOG_START = 1734


@pytest.mark.parametrize("command", ["epochs", "inspect-dir"])
def test_the_first_entry_moved_to_the_log_start_is_no_mismatch(command) -> None:
    ran = run(command, wild_dir(*LOG_DIR, PURGED))
    assert ran.exit_code == 0, ran.stdout
    assert "epoch_checkpoint_offset_mismatch" not in ran.finding_kinds


def _copy_with_log_start(tmp_path: Path, log_start: int) -> Path:
    """The purged partition in a log directory of its own whose log-start-offset-checkpoint says
    ``log_start``."""
    log_dir = tmp_path / "data"
    shutil.copytree(wild_dir(*LOG_DIR, PURGED), log_dir / PURGED)
    shutil.copy(wild_dir(*LOG_DIR) / "meta.properties", log_dir / "meta.properties")
    topic, partition = PURGED.rsplit("-", 1)
    (log_dir / "log-start-offset-checkpoint").write_text(f"0\n1\n{topic} {partition} {log_start}\n")
    return log_dir / PURGED


@pytest.mark.parametrize("command", ["epochs", "inspect-dir"])
def test_a_first_entry_elsewhere_than_the_log_start_is_still_a_mismatch(tmp_path, command) -> None:
    partition = _copy_with_log_start(tmp_path, LOG_START - 34)
    ran = run(command, partition)
    assert ran.exit_code == 1
    (mismatch,) = [f for f in ran.of_type("finding") if f["kind"] == "epoch_checkpoint_offset_mismatch"]
    assert (mismatch["checkpoint_start_offset"], mismatch["batch_start_offset"]) == (LOG_START, 0)
