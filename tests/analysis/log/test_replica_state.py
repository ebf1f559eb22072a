"""The replica as its broker holds it after loading (``replica_state``): log end, batches kept,
the epoch cache by source and as a new leader, and the high watermark.

Kafka's rules: ``LogLoader.load`` (the loaded cache and log end, see ``load_partition``);
``LogSegment.recover`` assigns a batch's epoch only for a v2 batch with an epoch >= 0 above the
cache's latest (the ``batches`` source follows that rule over every header); KAFKA-7415: a 2.1+
leader assigns (its epoch, LEO) when elected; ``Partition.createLog``: no checkpointed high
watermark means 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.log.replica_state import replica_state
from kreplica.model.versions import parse_kafka_version
from tests.builders.replicas import replica_log

# epochs 0, 1, 3 start at 0, 5, 10; the log ends at 15
BATCHES = [(0, 5, 0, "a"), (5, 5, 1, "a"), (10, 5, 3, "a")]


def entries(state) -> list[tuple[int, int]]:
    return [tuple(e) for e in state.cache.entries]


def corrupt_last_batch(log_path: str, base: int = 0) -> None:
    """Flip a byte inside the last batch's records (its CRC no longer matches)."""
    seg = Path(log_path) / f"{base:020d}.log"
    data = bytearray(seg.read_bytes())
    data[-2] ^= 0xFF
    seg.write_bytes(bytes(data))


def reread(tmp_path: Path, broker: int = 1):
    from kreplica.model.log.partition_log import read_partition_log
    from kreplica.model.logdir.log_dir import scan_log_dir

    ld = scan_log_dir(tmp_path / f"broker-{broker}")
    return read_partition_log(ld.partitions[0], ld)


@pytest.mark.parametrize("shutdown, loaded", [
    # a clean restart recovers nothing: the checkpoint's two entries stay
    pytest.param(None, [(0, 0), (1, 5)], id="default-follows-the-clean-shutdown-file"),
    pytest.param("clean", [(0, 0), (1, 5)], id="clean"),
    # unclean, recovery from 0: LogSegment.recover assigns epoch 3 (above the latest 1) at 10
    pytest.param("unclean", [(0, 0), (1, 5), (3, 10)], id="unclean-given-overrides-the-file"),
])
def test_the_shutdown_given_decides_what_the_load_recovers(tmp_path: Path, shutdown, loaded) -> None:
    log = replica_log(tmp_path, 1, BATCHES, hw=None, checkpoint=[(0, 0), (1, 5)], clean=True, recovery_point=0)
    state = replica_state(log, shutdown=shutdown)
    assert entries(state) == loaded
    assert state.restart.shutdown == (shutdown or "clean")


def test_the_kafka_version_given_reaches_the_load(tmp_path: Path) -> None:
    """KAFKA-10432: recovery by a 2.1.1-2.6 broker never re-adds an epoch-0 entry."""
    log = replica_log(tmp_path, 1, [(0, 5, 0, "a"), (5, 5, 2, "a")], hw=None, checkpoint=None, clean=False,
                      recovery_point=0)
    assert entries(replica_state(log, kafka_version=parse_kafka_version("2.5"))) == [(2, 5)]
    assert entries(replica_state(log)) == [(0, 0), (2, 5)]


def test_the_log_end_and_batches_are_those_left_after_recovery_truncates(tmp_path: Path) -> None:
    """``LogSegment.recover`` stops at the batch failing ``ensureValid`` and truncates there: the
    log end is that batch's base offset (5), and a batch whose last offset is exactly the log end
    (a one-record batch at 5) is no longer in the log."""
    log = replica_log(tmp_path, 1, [(0, 5, 0, "a"), (5, 1, 0, "a")], hw=None, checkpoint=[(0, 0)], clean=False,
                      recovery_point=0)
    corrupt_last_batch(log.path)
    log = reread(tmp_path)
    assert log.log_end_offset == 6          # the headers alone reach 6
    state = replica_state(log)
    assert state.log_end_offset == 5
    assert [(b.base_offset, b.last_offset) for b in state.batches] == [(0, 4)]


@pytest.mark.parametrize("batches, loaded", [
    pytest.param(BATCHES, [(0, 0), (1, 5), (3, 10)], id="each-epoch-at-its-first-batch"),
    # an epoch below the latest (damaged header) is not assigned: LogSegment.recover's latestEpoch test
    pytest.param([(0, 5, 0, "a"), (5, 5, 2, "a"), (10, 5, 1, "a")], [(0, 0), (2, 5)], id="lower-epoch-ignored"),
    # the latest epoch again at a lower offset is not re-assigned either (> latest, not >=)
    pytest.param([(0, 5, 0, "a"), (10, 5, 1, "a"), (5, 5, 1, "a")], [(0, 0), (1, 10)],
                 id="same-epoch-at-a-lower-offset-ignored"),
    # NO_PARTITION_LEADER_EPOCH (-1) on a v2 batch is never assigned
    pytest.param([(0, 5, -1, "a"), (5, 5, 0, "a")], [(0, 5)], id="epoch-minus-one-ignored"),
])
def test_the_cache_rebuilt_from_batch_headers(tmp_path: Path, batches, loaded) -> None:
    # the checkpoint disagrees with every header, so only the batches source gives these entries
    log = replica_log(tmp_path, 1, batches, hw=None, checkpoint=[(7, 0)])
    assert entries(replica_state(log, cache_source="batches")) == loaded
    assert entries(replica_state(log)) == [(7, 0)]


def test_the_cache_rebuilt_from_batch_headers_is_truncated_to_the_log_start(tmp_path: Path) -> None:
    """``truncateFromStart(logStartOffset)``: epoch 1 (from 5) covers the log start 7 and starts at it."""
    log = replica_log(tmp_path, 1, BATCHES, hw=None, checkpoint=[(7, 0)], log_start=7)
    assert entries(replica_state(log, cache_source="batches")) == [(1, 7), (3, 10)]


def test_a_legacy_only_log_has_no_cache_from_2_1_1(tmp_path: Path) -> None:
    """KAFKA-7897 (2.1.1): a log with only pre-v2 batches has no epoch cache; the batches source of
    an older broker gives an empty one (no v2 batch to assign from)."""
    log = replica_log(tmp_path, 1, [(0, 5, 0, "a")], hw=None, checkpoint=None, legacy=True)
    assert replica_state(log, cache_source="batches").cache is None
    old = replica_state(log, kafka_version=parse_kafka_version("2.0"), cache_source="batches")
    assert old.cache is not None and entries(old) == []


@pytest.mark.parametrize("checkpoint, options, loaded", [
    # the checkpoint's newest epoch 4 was dropped (it starts at the log end 15); elected again, it is back
    pytest.param([(0, 0), (1, 5), (3, 10), (4, 15)], {}, [(0, 0), (1, 5), (3, 10), (4, 15)], id="re-registered"),
    # every entry dropped by the load (empty cache): the leader's epoch 4 still registers at the LEO
    pytest.param([(4, 20)], {}, [(4, 15)], id="into-an-empty-cache"),
    # recovery assigned epoch 3 above the checkpoint's newest 1: the leader's epoch 1 is not newer
    pytest.param([(0, 0), (1, 5)], {"clean": False, "recovery_point": 0}, [(0, 0), (1, 5), (3, 10)],
                 id="not-newer-than-the-cache"),
    # counter-case: equal to the latest cached epoch, nothing changes
    pytest.param([(0, 0), (1, 5), (3, 10)], {}, [(0, 0), (1, 5), (3, 10)], id="equal-to-the-latest"),
])
def test_a_leader_registers_its_epoch_at_the_log_end(tmp_path: Path, checkpoint, options, loaded) -> None:
    log = replica_log(tmp_path, 1, BATCHES, hw=None, checkpoint=checkpoint, **options)
    state = replica_state(log, as_leader=True)
    assert entries(state) == loaded and state.log_end_offset == 15


@pytest.mark.parametrize("hw, expected", [pytest.param(None, 0, id="no-checkpoint-means-0"),
                                          pytest.param(12, 12, id="checkpointed")])
def test_the_high_watermark(tmp_path: Path, hw, expected) -> None:
    """``Partition.createLog``: "No checkpointed highwatermark is found" → 0L."""
    log = replica_log(tmp_path, 1, BATCHES, hw=hw, checkpoint=[(0, 0), (1, 5), (3, 10)])
    assert replica_state(log).high_watermark == expected


def test_a_replica_without_segments_ends_at_its_log_start(tmp_path: Path) -> None:
    """``LogLoader.recoverLog``: no segment, so a new one is created at ``logStartOffsetCheckpoint``;
    the log end is 50, not 0, and the epoch covering it is moved up to it (truncateFromStart)."""
    from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint

    log = replica_log(tmp_path, 1, BATCHES, hw=None, checkpoint=[(0, 0), (1, 5), (3, 10)])
    for f in Path(log.path).glob("*.*index"):
        f.unlink()
    for f in Path(log.path).glob("*.log"):
        f.unlink()
    (tmp_path / "broker-1/log-start-offset-checkpoint").write_bytes(build_offset_checkpoint({("orders", 0): 50}))
    state = replica_state(reread(tmp_path))
    assert (state.log_start_offset, state.log_end_offset, state.batches) == (50, 50, [])
    assert entries(state) == [(3, 50)]
