"""What a broker would do on restart (``LogLoader``), on partition directories built in the test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kreplica.analysis.log.log_loading import load_partition
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.logdir.leader_epoch_checkpoint import build_leader_epoch_checkpoint
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.log.txn_index import build_txn_index
from kreplica.model.logdir.log_dir import scan_log_dir, scan_partition_dir
from kreplica.model.log.partition_log import read_partition_log
from tests.conftest import FIXTURES

TS = 1_700_000_000_000


def _write_indexes(part: Path) -> None:
    spec = importlib.util.spec_from_file_location("fixture_generator", FIXTURES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_indexes(part, interval=4096, preallocate=1024)


def batch(first: int, n: int, epoch: int) -> bytes:
    return build_batch([NewRecord(first + k, TS, b"k", b"v" * 20) for k in range(n)], base_offset=first,
                       partition_leader_epoch=epoch)


def make(tmp_path: Path, segments: dict[int, bytes], *, checkpoint=None, clean=False, recovery_point=None,
         log_start=None, indexes=True, name="t-0", files=None, remove=()) -> tuple:
    """``files``: other files of the partition directory (name → bytes), written after the
    indexes; ``remove``: names deleted after the indexes are written."""
    log_dir = tmp_path / "logs"
    part = log_dir / name
    part.mkdir(parents=True)
    for base, data in segments.items():
        (part / f"{base:020d}.log").write_bytes(data)
    if indexes:
        _write_indexes(part)
    for file_name, data in (files or {}).items():
        (part / file_name).write_bytes(data)
    for file_name in remove:
        (part / file_name).unlink()
    if checkpoint is not None:
        (part / "leader-epoch-checkpoint").write_bytes(checkpoint)
    if clean:
        (log_dir / ".kafka_cleanshutdown").write_bytes(b"")
    if recovery_point is not None:
        (log_dir / "recovery-point-offset-checkpoint").write_bytes(build_offset_checkpoint({("t", 0): recovery_point}))
    if log_start is not None:
        (log_dir / "log-start-offset-checkpoint").write_bytes(build_offset_checkpoint({("t", 0): log_start}))
    ld = scan_log_dir(log_dir)
    return read_partition_log(ld.partitions[0] if ld.partitions else scan_partition_dir(part), ld)


def test_clean_shutdown_drops_a_checkpoint_entry_beyond_the_log_end(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0) + batch(5, 5, 1)},
                     checkpoint=build_leader_epoch_checkpoint([(0, 0), (1, 5), (3, 12)]), clean=True)
    v = load_partition(log)
    assert v.shutdown == "clean" and v.recovered_segments == ()
    assert v.epoch_cache == ((0, 0), (1, 5)) and v.log_end_offset == 10
    assert any("epoch 3 at 12 is dropped" in c for c in v.epoch_cache_changes)


def test_unclean_recovery_starts_at_the_segment_holding_the_recovery_point(tmp_path: Path) -> None:
    segs = {0: batch(0, 5, 0), 5: batch(5, 5, 0), 10: batch(10, 5, 1)}
    log = make(tmp_path, segs, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), recovery_point=7)
    v = load_partition(log)
    assert [Path(p).name for p in v.recovered_segments] == ["00000000000000000005.log", "00000000000000000010.log"]
    # recovery re-assigns epoch 1 from the batches of the last segment
    assert v.epoch_cache == ((0, 0), (1, 10)) and v.truncated_bytes == 0


def test_a_corrupt_batch_truncates_and_deletes_later_segments(tmp_path: Path) -> None:
    bad = bytearray(batch(5, 5, 0))
    bad[-2] ^= 0xFF
    segs = {0: batch(0, 5, 0), 5: batch(5, 2, 0)[:0] + bytes(bad), 10: batch(10, 5, 1)}
    log = make(tmp_path, segs, checkpoint=build_leader_epoch_checkpoint([(0, 0), (1, 10)]), recovery_point=0)
    v = load_partition(log)
    assert v.truncate_at == (str(log.partition.segments[1].log), 0)
    assert [Path(p).name for p in v.deleted_segments] == ["00000000000000000010.log"]
    assert v.log_end_offset == 5 and v.epoch_cache == ((0, 0),)
    assert v.truncated_bytes == len(bad) + len(segs[10])


def test_missing_offset_index_is_recovered_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
                     indexes=False)
    v = load_partition(log)
    assert len(v.recovered_segments) == 1 and any("no offset index" in c for c in v.epoch_cache_changes)
    assert any(p.endswith(".timeindex") for p in v.created_files)


def test_malformed_epoch_checkpoint_takes_the_log_directory_offline(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=b"0\n2\n0 0\n", clean=True)
    v = load_partition(log)
    assert v.refuses_to_start and "offline" in v.reasons[0]


def test_log_end_below_the_checkpointed_log_start_deletes_everything(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
                     log_start=50)
    v = load_partition(log)
    assert len(v.deleted_segments) == 1 and v.epoch_cache == () and v.log_end_offset == 50


def test_version_2_1_1_to_2_6_does_not_re_add_epoch_zero(tmp_path: Path) -> None:
    from kreplica.model.versions import parse_kafka_version

    log = make(tmp_path, {0: batch(0, 5, 0) + batch(5, 5, 2)}, checkpoint=None, recovery_point=0)
    assert load_partition(log).epoch_cache == ((0, 0), (2, 5))
    assert load_partition(log, kafka_version=parse_kafka_version("2.5")).epoch_cache == ((2, 5),)


def test_missing_index_recovery_after_clean_shutdown_truncates_only_that_segment(tmp_path: Path) -> None:
    bad = bytearray(batch(0, 5, 0))
    bad[-2] ^= 0xFF
    log = make(tmp_path, {0: bytes(bad), 5: batch(5, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
                     clean=True)
    (pdir_path := Path(log.path))
    (pdir_path / f"{0:020d}.index").unlink()
    from kreplica.model.logdir.log_dir import scan_partition_dir

    v = load_partition(read_partition_log(scan_partition_dir(pdir_path), log.log_dir))
    assert v.truncate_at == (str(pdir_path / f"{0:020d}.log"), 0) and v.truncated_bytes == len(bad)
    assert v.deleted_segments == () and v.log_end_offset == 10


def test_a_negative_base_offset_refuses_the_load_and_every_command_reports_it(tmp_path: Path) -> None:
    """The offset is outside the v2 CRC, so a damaged one passes ensureValid; LogSegment.recover's
    ensureOffsetInRange then throws LogSegmentOffsetOverflowException (-5 is below the base 0), and
    LogLoader.retryOnOffsetOverflow's split of the segment fails its require(hasOverflow) with an
    IllegalArgumentException, which nothing catches: the broker fails to load the log. (Before
    2.0, without the range check, the epoch cache threw IllegalArgumentException on (epoch,
    negative offset) the same way.) kreplica says so instead of failing itself."""
    import struct

    from typer.testing import CliRunner

    from kreplica.cli.main import app

    bad = bytearray(batch(0, 1, 0))
    struct.pack_into(">q", bad, 0, -5)
    log = make(tmp_path, {0: bytes(bad) + batch(1, 1, 0)}, checkpoint=None, recovery_point=0)
    v = load_partition(log)
    assert v.refuses_to_start and any("IllegalArgumentException" in r for r in v.reasons)
    part = log.path
    for args in (["inspect-log", part], ["inspect-log", part, "--records"], ["inspect-dir", part], ["epochs", part],
                 ["truncate-plan", "--leader", part, "--follower", part], ["offset-for-epoch", part, "--epoch", "0"]):
        result = CliRunner().invoke(app, [*args, "-f", "ndjson"])
        assert result.exit_code in (0, 1), (args, result.output)


# -- every decision of LogLoader.load, with its counter-case (i27 §7) ----------------------------


def seg(base: int, ext: str = "log") -> str:
    return f"{base:020d}.{ext}"


def rel(tmp_path: Path, paths) -> list[str]:
    return [str(Path(p).relative_to(tmp_path / "logs")) for p in paths]


def test_a_directory_not_named_topic_partition_refuses_the_start(tmp_path: Path) -> None:
    """``LocalLog.parseTopicPartitionName`` throws KafkaException; ``LogManager.loadLog`` does not
    catch it, and the broker stops. No checkpoint entry can name the directory: recovery point and
    log start offset are the defaults (0)."""
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), name="orders-x",
               recovery_point=3, log_start=3)
    v = load_partition(log)
    assert v.refuses_to_start is True
    assert v.reasons == (f"Found directory {tmp_path / 'logs' / 'orders-x'}, 'orders-x' is not in the form of "
                         "topic-partition or topic-partition.uniqueId-delete (if marked for deletion): the broker "
                         "fails to start",)
    assert (v.shutdown, v.recovery_point, v.log_start_offset) == ("unclean", 0, 0)
    assert rel(tmp_path, v.recovered_segments) == ["orders-x/" + seg(0)]


def test_a_topic_partition_directory_starts(tmp_path: Path) -> None:
    v = load_partition(make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
                            clean=True))
    assert (v.refuses_to_start, v.reasons) == (False, ())


def test_leftovers_are_deleted_or_swapped_in(tmp_path: Path) -> None:
    """``LogLoader.removeTempFilesAndCollectSwapFiles``: ``.deleted`` and ``.cleaned`` files are
    deleted, ``.swap`` files completed; an index without its segment is deleted too."""
    files = {seg(0, "log.deleted"): b"", seg(3, "index.cleaned"): b"", seg(5, "log.swap"): b"", seg(9, "index"): b""}
    v = load_partition(make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
                            clean=True, files=files))
    assert rel(tmp_path, v.deleted_files) == ["t-0/" + seg(0, "log.deleted"), "t-0/" + seg(3, "index.cleaned"),
                                              "t-0/" + seg(9, "index")]
    assert v.epoch_cache_changes == (f"{tmp_path / 'logs/t-0' / seg(5, 'log.swap')} would be swapped in, replacing "
                                     "the segments it covers",)


def test_a_malformed_epoch_checkpoint_reason(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=b"0\n2\n0 0\n", clean=True)
    v = load_partition(log)
    assert v.reasons == (f"leader-epoch-checkpoint cannot be read ({log.epoch_checkpoint.error}): "
                         "KafkaStorageException, the whole log directory goes offline",)


def test_each_invalid_checkpoint_line_is_named_and_the_valid_ones_still_load(tmp_path: Path) -> None:
    """``LeaderEpochFileCache.assign`` throws IllegalArgumentException("Received invalid partition
    leader epoch entry") on a negative epoch or offset; every such line is reported."""
    log = make(tmp_path, {0: batch(0, 5, 0) + batch(5, 5, 1)}, checkpoint=b"0\n4\n0 -1\n0 0\n-2 3\n1 5\n", clean=True)
    v = load_partition(log)
    assert v.refuses_to_start is True
    assert v.reasons == (
        "leader-epoch-checkpoint line 3 (0 -1): Received invalid partition leader epoch entry (IllegalArgumentException)",
        "leader-epoch-checkpoint line 5 (-2 3): Received invalid partition leader epoch entry (IllegalArgumentException)")
    assert v.epoch_cache == ((0, 0), (1, 5))


def test_out_of_order_checkpoint_lines_are_repaired_and_repeats_ignored(tmp_path: Path) -> None:
    """``LeaderEpochFileCache.assign``: (1 5) after (2 3) removes it (``maybeTruncateNonMonotonicEntries``);
    (1 7) after (1 5) is no update (``isUpdateNeeded``: same epoch, not a lower offset)."""
    log = make(tmp_path, {0: batch(0, 5, 0) + batch(5, 5, 1)},
               checkpoint=build_leader_epoch_checkpoint([(0, 0), (2, 3), (1, 5), (1, 7)]), clean=True)
    v = load_partition(log)
    assert v.epoch_cache_changes == (
        "checkpoint line 5 (1 5) removes earlier entries [(2, 3)] (out of order: the later line wins)",
        "checkpoint line 6 (1 7) is ignored")
    assert v.epoch_cache == ((0, 0), (1, 5)) and v.refuses_to_start is False


def test_an_unreadable_partition_metadata_refuses_the_start(tmp_path: Path) -> None:
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
               files={"partition.metadata": b"garbage"})
    v = load_partition(log)
    assert v.refuses_to_start is True
    assert v.reasons == (f"partition.metadata cannot be read ({log.partition_metadata.error})",)


def test_a_readable_partition_metadata_does_not(tmp_path: Path) -> None:
    from kreplica.formats.logdir.partition_metadata import build_partition_metadata

    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
               files={"partition.metadata": build_partition_metadata("vJCz3vYpQvOK8l5RzVBxgw")})
    assert load_partition(log).refuses_to_start is False


def test_a_txn_index_entry_below_the_base_offset_recovers_that_segment_after_a_clean_shutdown(tmp_path: Path) -> None:
    """``LogLoader.loadSegmentFiles``: ``segment.sanityCheck`` fails (``TransactionIndex.sanityCheck``:
    an aborted transaction's last offset below the base offset), so the segment is recovered."""
    log = make(tmp_path, {0: batch(0, 5, 0), 5: batch(5, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
               clean=True, files={seg(5, "txnindex"): build_txn_index([(1, 0, 3, 0)])})
    v = load_partition(log)
    part = tmp_path / "logs/t-0"
    assert v.recovered_segments == (str(part / seg(5)),)
    assert v.rebuilt_indexes == (str(part / seg(5, "index")), str(part / seg(5, "timeindex")),
                                 str(part / seg(5, "txnindex")))
    assert v.epoch_cache_changes == (f"{part / seg(5, 'txnindex')} fails its sanity check (an entry below the base "
                                     "offset): the segment is recovered while loading",)


def test_missing_indexes_are_rebuilt_and_a_missing_time_index_created(tmp_path: Path) -> None:
    """``LogLoader.loadSegmentFiles``: no offset index → ``recoverSegment``, which writes both
    indexes; a missing time index file is created (``timeIndexFileNewlyCreated``)."""
    log = make(tmp_path, {0: batch(0, 5, 0), 5: batch(5, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
               clean=True, remove=(seg(0, "index"), seg(0, "timeindex"), seg(5, "timeindex")))
    v = load_partition(log)
    part = tmp_path / "logs/t-0"
    assert v.recovered_segments == (str(part / seg(0)),)
    assert v.rebuilt_indexes == (str(part / seg(0, "index")), str(part / seg(0, "timeindex")))
    assert v.created_files == (str(part / seg(0, "timeindex")), str(part / seg(5, "timeindex")))
    assert v.epoch_cache_changes == (f"{part / seg(0)} has no offset index: recovered while loading",)


@pytest.mark.parametrize("recovery_point, recovered", [
    # LogSegments.values(recoveryPoint, MAX): from the segment holding the recovery point (floor)
    pytest.param(5, [5, 10], id="at-a-segment-base"),
    pytest.param(4, [0, 5, 10], id="just-below-it"),
    pytest.param(None, [0, 5, 10], id="no-entry-means-0"),
])
def test_unclean_recovery_starts_at_the_segment_holding_the_recovery_point_inclusive(tmp_path: Path, recovery_point,
                                                                                     recovered) -> None:
    """``LogManager.loadLog``: ``recoveryPoints.getOrDefault(topicPartition, 0L)``."""
    log = make(tmp_path, {0: batch(0, 5, 0), 5: batch(5, 5, 0), 10: batch(10, 5, 0)},
               checkpoint=build_leader_epoch_checkpoint([(0, 0)]), recovery_point=recovery_point)
    v = load_partition(log)
    assert v.recovery_point == (recovery_point or 0)
    assert v.recovered_segments == tuple(str(tmp_path / "logs/t-0" / seg(b)) for b in recovered)


def test_a_recovery_point_below_the_first_segment_recovers_every_segment(tmp_path: Path) -> None:
    """``LogSegments.values(0, MAX)`` when the first segment starts at 10: all of them."""
    log = make(tmp_path, {10: batch(10, 5, 0), 15: batch(15, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 10)]),
               recovery_point=0)
    assert load_partition(log).recovered_segments == (str(tmp_path / "logs/t-0" / seg(10)),
                                                      str(tmp_path / "logs/t-0" / seg(15)))


@pytest.mark.parametrize("tail, truncated, deleted", [
    pytest.param(b"\x00", 1, True, id="one-byte-truncated-deletes-later-segments"),
    pytest.param(b"", 0, False, id="counter-case-nothing-truncated"),
])
def test_a_one_byte_truncation_ends_recovery(tmp_path: Path, tail: bytes, truncated: int, deleted: bool) -> None:
    """``LogLoader.recoverLog``: ``if (truncatedBytes > 0)`` every later segment is deleted."""
    first, later = batch(0, 5, 0), batch(5, 5, 0)
    log = make(tmp_path, {0: first + tail, 5: later}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]),
               recovery_point=0)
    v = load_partition(log)
    part = tmp_path / "logs/t-0"
    if deleted:
        assert v.truncate_at == (str(part / seg(0)), len(first))
        assert v.deleted_segments == (str(part / seg(5)),)
        assert v.truncated_bytes == truncated + len(later)
    else:
        assert (v.truncate_at, v.deleted_segments, v.truncated_bytes) == (None, (), 0)
        assert v.recovered_segments == (str(part / seg(0)), str(part / seg(5)))


def test_truncations_of_segments_recovered_while_loading_add_up(tmp_path: Path) -> None:
    """Each segment without an offset index is recovered on its own (clean shutdown); the bytes
    each truncates add up, and no later segment is deleted."""
    log = make(tmp_path, {0: batch(0, 5, 0) + b"\x00", 5: batch(5, 5, 0) + b"\x00\x00"},
               checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True, indexes=False)
    v = load_partition(log)
    assert (v.truncated_bytes, v.deleted_segments, v.log_end_offset) == (3, (), 10)
    assert v.truncate_at == (str(tmp_path / "logs/t-0" / seg(0)), len(batch(0, 5, 0)))


def test_the_epoch_cache_is_truncated_once_at_the_recovered_log_end_not_per_segment(tmp_path: Path) -> None:
    """``LogLoader.load`` calls ``truncateFromEnd(nextOffset)`` once, after ``recoverLog``;
    ``LogSegment.recover`` never truncates the cache. So (2, 12), inside the log, stays."""
    log = make(tmp_path, {0: batch(0, 5, 0), 5: batch(5, 5, 1), 10: batch(10, 5, 1)},
               checkpoint=build_leader_epoch_checkpoint([(0, 0), (1, 5), (2, 12)]), recovery_point=0)
    v = load_partition(log)
    assert (v.epoch_cache, v.log_end_offset, v.epoch_cache_changes) == (((0, 0), (1, 5), (2, 12)), 15, ())


def test_a_segment_whose_batches_lie_below_its_base_offset_ends_at_its_base_offset(tmp_path: Path) -> None:
    """Clean shutdown, no recovery: the log end is ``LogSegment.readNextOffset`` of the last
    segment, which finds no batch reaching the base offset (``translateOffset`` → null) and
    answers the base offset, 10. The log start offset is max(checkpoint 0, first base 10)."""
    log = make(tmp_path, {10: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
               files={seg(10, "index"): b"", seg(10, "timeindex"): b""})
    v = load_partition(log)
    assert (v.log_end_offset, v.log_start_offset, v.recovered_segments) == (10, 10, ())


@pytest.mark.parametrize("log_start, end, cache, changes", [
    # LogLoader.recoverLog: no segments, a new one is created at logStartOffsetCheckpoint
    pytest.param(50, 50, ((0, 50),), ("entries below the log start offset 50 are folded into (0, 50) "
                                      "(truncateFromStart)",), id="at-the-log-start-checkpoint"),
    pytest.param(None, 0, (), ("epoch 0 at 0 is dropped: it starts at or beyond the log end offset 0 "
                               "(truncateFromEnd)",), id="at-0"),
])
def test_a_partition_without_segments_starts_a_new_one_at_the_log_start(tmp_path: Path, log_start, end, cache,
                                                                        changes) -> None:
    log = make(tmp_path, {}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True, log_start=log_start)
    v = load_partition(log)
    assert (v.log_end_offset, v.log_start_offset, v.recovery_point) == (end, end, end)
    assert (v.epoch_cache, v.epoch_cache_changes, v.deleted_segments) == (cache, changes, ())


@pytest.mark.parametrize("log_start, deleted", [pytest.param(6, True, id="log-end-below-the-log-start"),
                                                pytest.param(5, False, id="counter-case-equal")])
def test_every_segment_is_deleted_when_the_log_ends_below_the_log_start(tmp_path: Path, log_start, deleted) -> None:
    """``LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd``: ``logEndOffset >= logStartOffsetCheckpoint``
    keeps the log; below it every segment goes and the cache is cleared."""
    log = make(tmp_path, {0: batch(0, 5, 0)}, checkpoint=build_leader_epoch_checkpoint([(0, 0)]), clean=True,
               log_start=log_start)
    v = load_partition(log)
    if deleted:
        assert v.deleted_segments == (str(tmp_path / "logs/t-0" / seg(0)),)
        assert v.epoch_cache_changes == (
            "log end offset 5 is below the checkpointed log start offset 6: every segment is deleted (\"This could "
            "happen if segment files were deleted from the file system.\")",)
        assert (v.epoch_cache, v.log_end_offset) == ((), 6)
    else:
        assert v.deleted_segments == ()
        assert (v.epoch_cache, v.log_end_offset) == (((0, 5),), 5)


@pytest.mark.parametrize("log_start, cache, changes", [
    pytest.param(7, ((1, 7),), ("entries below the log start offset 7 are folded into (1, 7) (truncateFromStart)",),
                 id="folded"),
    # truncateFromStart(0) changes nothing, so nothing is said
    pytest.param(None, ((0, 0), (1, 5)), (), id="counter-case-unchanged"),
])
def test_entries_below_the_log_start_are_folded_into_the_one_covering_it(tmp_path: Path, log_start, cache,
                                                                         changes) -> None:
    """``LeaderEpochFileCache.truncateFromStartAsyncFlush``: the last entry at or below the log
    start is kept, moved to start at it."""
    log = make(tmp_path, {0: batch(0, 5, 0) + batch(5, 5, 1)}, checkpoint=build_leader_epoch_checkpoint([(0, 0), (1, 5)]),
               clean=True, log_start=log_start)
    v = load_partition(log)
    assert (v.epoch_cache, v.epoch_cache_changes) == (cache, changes)


@pytest.mark.parametrize("version, refuses", [pytest.param("1.1", False, id="1.1-no-range-check"),
                                              pytest.param("2.0", True, id="2.0-KAFKA-6264")])
def test_a_batch_below_its_segments_base_fails_the_load_from_2_0(tmp_path: Path, version: str, refuses: bool) -> None:
    """Offsets 0-4 in the segment named 5 (an unclean shutdown recovers it): from 2.0
    ``LogSegment.recover`` checks each batch's last offset against the base
    (``ensureOffsetInRange``) and the split that follows fails, so the broker does not load the log;
    before, the batch was recovered like any other."""
    from kreplica.model.versions import parse_kafka_version

    log = make(tmp_path, {5: batch(0, 5, 0) + batch(5, 5, 0)}, recovery_point=0)
    v = load_partition(log, kafka_version=parse_kafka_version(version))
    assert v.refuses_to_start is refuses
    assert any("LogSegmentOffsetOverflowException: offset 4 is below the segment's base offset 5" in r
               for r in v.reasons) is refuses


@pytest.mark.parametrize("version, named", [pytest.param("2.5", "2.5.0", id="major-minor-patch"),
                                            pytest.param("0.10.2.1", "0.10.2.1", id="four-part-release")])
def test_the_verdict_names_the_version_whose_loading_it_emulates(tmp_path: Path, version: str, named: str) -> None:
    """The version as Kafka names its releases (``gradle.properties`` ``version=``, what
    ``AppInfoParser.getVersion`` logs as "Kafka version"): 2.5 is "2.5.0", a bug-fix release of the
    0.x lines keeps its fourth part. The same log loads differently under 2.5 (the epoch-0 rule of
    test_version_2_1_1_to_2_6_does_not_re_add_epoch_zero), so the verdict says which it is."""
    from kreplica.model.versions import DEFAULT_VERSION, parse_kafka_version

    log = make(tmp_path, {0: batch(0, 5, 0)}, recovery_point=0)
    assert load_partition(log, kafka_version=parse_kafka_version(version)).kafka_version == named
    assert load_partition(log).kafka_version == str(DEFAULT_VERSION) != named
