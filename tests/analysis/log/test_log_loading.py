"""What a broker would do on restart (``LogLoader``), on partition directories built in the test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from kreplica.analysis.log.log_loading import load_partition
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.logdir.leader_epoch_checkpoint import build_leader_epoch_checkpoint
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
from kreplica.formats.log.default_records import build_batch
from kreplica.model.logdir.log_dir import scan_log_dir
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
         log_start=None, indexes=True) -> tuple:
    log_dir = tmp_path / "logs"
    part = log_dir / "t-0"
    part.mkdir(parents=True)
    for base, data in segments.items():
        (part / f"{base:020d}.log").write_bytes(data)
    if indexes:
        _write_indexes(part)
    if checkpoint is not None:
        (part / "leader-epoch-checkpoint").write_bytes(checkpoint)
    if clean:
        (log_dir / ".kafka_cleanshutdown").write_bytes(b"")
    if recovery_point is not None:
        (log_dir / "recovery-point-offset-checkpoint").write_bytes(build_offset_checkpoint({("t", 0): recovery_point}))
    if log_start is not None:
        (log_dir / "log-start-offset-checkpoint").write_bytes(build_offset_checkpoint({("t", 0): log_start}))
    ld = scan_log_dir(log_dir)
    return read_partition_log(ld.partitions[0], ld)


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
    """The offset is outside the v2 CRC, so a damaged one passes ensureValid; Kafka's epoch cache
    then throws IllegalArgumentException on (epoch, negative offset), which LogLoader does not
    catch: the broker fails to load the log. kreplica says so instead of failing itself."""
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
