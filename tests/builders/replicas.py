"""Replicas of one partition written in the test by the fixture generator's ``replica`` helper
(kreplica's writers, as ``fixtures/scenarios`` are written) and read back once as
:class:`~kreplica.model.log.partition_log.PartitionLog` values.

A batch is ``(first_offset, records, epoch, tag)``: the same tag at the same offsets gives the same
bytes on every broker (so the same CRC), another tag different data.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import PartitionLog, read_partition_log
from tests.conftest import FIXTURES


@functools.cache
def generator() -> ModuleType:
    """``fixtures/generate.py``, loaded once."""
    spec = importlib.util.spec_from_file_location("fixture_generator", FIXTURES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replica_log(root: Path, broker: int, batches: list[tuple], *, hw: int | None,
                checkpoint: list[tuple[int, int]] | bytes | None, cleaned_to: int | None = None,
                **options) -> PartitionLog:
    """``root/broker-<broker>/orders-0`` written with ``batches`` (``options``: ``clean``,
    ``log_start``, ``recovery_point``, ``legacy``, ``segment_base``, ``partition`` as the generator
    takes them), then read as the replication commands read it (labelled ``broker-<broker>``).
    ``checkpoint`` as bytes is written as the ``leader-epoch-checkpoint`` file as it is;
    ``cleaned_to`` writes a ``cleaner-offset-checkpoint`` (the log cleaner has compacted the
    partition below that offset)."""
    entries = None if isinstance(checkpoint, bytes) else checkpoint
    generator().replica(root, broker, batches, hw=hw, checkpoint=entries, **options)
    log_dir = scan_log_dir(root / f"broker-{broker}")
    if isinstance(checkpoint, bytes):
        (Path(log_dir.partitions[0].path) / "leader-epoch-checkpoint").write_bytes(checkpoint)
    if cleaned_to is not None:
        topic, _, partition = Path(log_dir.partitions[0].path).name.rpartition("-")
        (root / f"broker-{broker}" / "cleaner-offset-checkpoint").write_text(f"0\n1\n{topic} {partition} {cleaned_to}\n")
    if isinstance(checkpoint, bytes) or cleaned_to is not None:
        log_dir = scan_log_dir(root / f"broker-{broker}")
    return read_partition_log(log_dir.partitions[0], log_dir)
