"""inspect-dir's account of one partition directory and of its log directory, field by field and
finding by finding, each with its counter-case.

The rules are the broker's: ``LocalLog.parseTopicPartitionName`` (the ``-delete``, ``-future`` and
``-stray`` directories), ``LogLoader.removeTempFilesAndCollectSwapFiles`` (``.deleted``,
``.cleaned``, ``.swap`` and orphaned index files at start), ``PartitionMetadataFile.read`` and
``CheckpointFile.read`` (an unreadable file is a ``KafkaStorageException``), ``LogLoader.recoverLog``
(an unclean shutdown recovers from the recovery point; a segment that truncates deletes every
later one; a segment without its offset index is recovered whatever the shutdown) and
``ProducerStateManager`` (a transaction is open from its first data batch until its marker).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_dir import (LogDirReport, OpenTransaction, PartitionReport,
                                                   inspect_log_dirs, inspect_partition)
from kreplica.formats.logdir.partition_metadata import build_partition_metadata
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from tests.builders.replicas import generator, replica_log

#: producer 7000 aborts the transaction it opened at 5, then opens another at 9 (two batches)
TXN_BATCHES = [(0, 5, 0, "a"), (5, 3, 2, "txn1"), (8, 1, 2, "abort"), (9, 2, 2, "txn2"), (11, 1, 2, "txn3")]
UNIQUE = "0123456789abcdef0123456789abcdef"


def report_of(part: Path) -> PartitionReport:
    log_dir = scan_log_dir(part.parent)
    partition = next(p for p in log_dir.partitions if p.path == str(part))
    return inspect_partition(read_partition_log(partition, log_dir))


def written(root: Path, batches=TXN_BATCHES, *, hw: int | None = 9, checkpoint=((0, 0), (2, 5)),
            **options) -> Path:
    replica_log(root, 1, batches, hw=hw, checkpoint=list(checkpoint) if checkpoint else None, **options)
    return root / "broker-1" / "orders-0"


def kinds(report: PartitionReport) -> list[str]:
    return [f.kind for f in report.findings if f.kind != "index_preallocated"]


def test_a_healthy_partition_is_reported_fact_by_fact(tmp_path: Path) -> None:
    part = written(tmp_path, log_start=0)
    generator().write_indexes(part, interval=100)   # an index entry after every 100 bytes
    (part / "partition.metadata").write_bytes(build_partition_metadata("AAAAAAAAAAAAAAAAAAAAAQ"))
    r = report_of(part)
    assert (r.name, r.topic, r.partition, r.suffix, r.topic_id) == ("orders-0", "orders", 0, None,
                                                                     "AAAAAAAAAAAAAAAAAAAAAQ")
    assert r.log_dir == str(tmp_path / "broker-1") and r.path == str(part)
    assert (r.log_start_offset, r.log_end_offset, r.high_watermark, r.recovery_point) == (0, 12, 9, 12)
    assert r.epoch_checkpoint == ((0, 0), (2, 5))
    assert [(e.epoch, e.start_offset, e.last_offset, e.batches) for e in r.lineage] == [(0, 0, 4, 1), (2, 5, 11, 4)]
    # the transaction opened at 9 is still open (its second batch at 11 does not move its start)
    assert r.open_transactions == (OpenTransaction(7000, 0, 9),)
    (seg,) = r.segments
    size = os.path.getsize(part / "00000000000000000000.log")
    assert (seg.base_offset, seg.size, seg.batches, seg.first_offset, seg.last_offset, seg.valid_bytes) == (
        0, size, 5, 0, 11, size)
    assert (seg.index, seg.timeindex, seg.txnindex) == tuple(
        str(part / f"00000000000000000000.{ext}") for ext in ("index", "timeindex", "txnindex"))
    # three offset-index entries (after 100 bytes, three times), one aborted transaction indexed
    assert (seg.index_entries, seg.time_index_entries, seg.txn_index_entries) == (3, 3, 1)
    assert kinds(r) == [] and r.problems == 0 and not r.restart.refuses_to_start


def test_a_segment_without_indexes_counts_none_and_no_open_transaction_without_one(tmp_path: Path) -> None:
    part = written(tmp_path, [(0, 5, 0, "a"), (5, 2, 0, "txn1"), (7, 1, 0, "commit")], checkpoint=((0, 0),))
    (part / "00000000000000000000.timeindex").unlink()
    r = report_of(part)
    (seg,) = r.segments
    assert (seg.index_entries, seg.timeindex, seg.time_index_entries, seg.txnindex, seg.txn_index_entries) == (
        0, None, None, None, None)
    assert r.open_transactions == ()
    assert r.topic_id is None


@pytest.mark.parametrize("suffix, meaning, severity", [
    # StopReplica with deletion (LogManager.asyncDelete: a topic deleted, or a replica a
    # reassignment removed, as a real 4.4 cluster left orders-0.<id>-delete) and an alter-log-dirs
    # move are Kafka's normal course: information; a KRaft stray replica is a warning
    ("delete", "scheduled for asynchronous deletion", "info"),
    ("future", "the destination of an intra-broker move", "info"),
    ("stray", "a replica the broker decided no longer belongs to it", "warning"),
])
def test_a_suffixed_directory_says_what_the_broker_does_with_it(tmp_path: Path, suffix: str, meaning: str,
                                                                severity: str) -> None:
    part = written(tmp_path)
    moved = part.with_name(f"orders-0.{UNIQUE}-{suffix}")
    part.rename(moved)
    r = report_of(moved)
    assert (r.topic, r.partition, r.suffix) == ("orders", 0, suffix)
    (f,) = [f for f in r.findings if f.kind == "partition_dir_state"]
    assert (f.path, f.position, f.details) == (str(moved), 0, {"suffix": suffix})
    assert f.message.startswith(f"orders-0.{UNIQUE}-{suffix}: -{suffix} directory, {meaning}")
    assert f.severity == severity


def test_a_plain_directory_has_no_directory_state(tmp_path: Path) -> None:
    assert "partition_dir_state" not in kinds(report_of(written(tmp_path)))


def test_leftovers_and_orphaned_indexes_are_named_and_unknown_files_are_not(tmp_path: Path) -> None:
    part = written(tmp_path)
    for name in ("00000000000000000000.log.deleted", "00000000000000000000.index.cleaned",
                 "00000000000000000012.log.swap", "leader-epoch-checkpoint.tmp", "notes.txt",
                 "00000000000000000100.index", "00000000000000000100.timeindex"):
        (part / name).write_bytes(b"")
    r = report_of(part)
    got = [(Path(f.path).name, f.details["file_kind"]) for f in r.findings if f.kind == "leftover_file"]
    assert got == [("00000000000000000000.index.cleaned", "cleaned"), ("00000000000000000000.log.deleted", "deleted"),
                   ("00000000000000000012.log.swap", "swap"), ("leader-epoch-checkpoint.tmp", "tmp"),
                   ("00000000000000000100.index", "orphan_index"), ("00000000000000000100.timeindex", "orphan_index")]
    messages = {Path(f.path).name: f.message for f in r.findings if f.kind == "leftover_file"}
    assert messages["00000000000000000000.log.deleted"].endswith("removed file.delete.delay.ms later or at the next "
                                                                 "start; the data in it may still be recoverable")
    # a .deleted file is a step of Kafka's own retention, compaction and truncation
    # (LocalLog.deleteSegmentFiles renames, the delete follows file.delete.delay.ms later):
    # information; the others are interrupted work, warnings
    severities = {Path(f.path).name: f.severity for f in r.findings if f.kind == "leftover_file"}
    assert severities["00000000000000000000.log.deleted"] == "info"
    assert {severities[n] for n in severities if not n.endswith(".deleted")} == {"warning"}
    assert messages["00000000000000000100.index"].endswith("the broker deletes it at start (\"Found an orphaned "
                                                           "index file\")")
    assert all(f.position == 0 and f.path.startswith(str(part)) for f in r.findings if f.kind == "leftover_file")


def test_an_unreadable_partition_metadata_is_malformed_and_refuses_the_start(tmp_path: Path) -> None:
    part = written(tmp_path)
    (part / "partition.metadata").write_bytes(b"version: 0\ntopic_id: not-a-uuid")
    r = report_of(part)
    assert r.topic_id is None
    (f,) = [f for f in r.findings if f.kind == "checkpoint_malformed"]
    assert (f.path, f.position) == (str(part / "partition.metadata"), 0)
    assert f.message.startswith("partition.metadata cannot be read as Kafka reads it: ")
    assert kinds(r)[-1] == "restart_refused"
    assert r.findings[-1].message.startswith("the broker would not load this partition: partition.metadata cannot "
                                             "be read")


def test_an_unreadable_epoch_checkpoint_is_malformed_at_its_byte(tmp_path: Path) -> None:
    part = written(tmp_path, checkpoint=None)
    (part / "leader-epoch-checkpoint").write_bytes(b"0\n2\n0 0\n")   # two entries announced, one present
    r = report_of(part)
    assert r.epoch_checkpoint is None
    (f,) = [f for f in r.findings if f.kind == "checkpoint_malformed"]
    assert f.path == str(part / "leader-epoch-checkpoint") and f.position > 0
    assert f.message.startswith("leader-epoch-checkpoint cannot be read as Kafka reads it: ")
    assert f.message.endswith("; the broker marks the whole log directory offline")
    assert "epoch_checkpoint_stale" not in kinds(r)
    assert r.restart.refuses_to_start and kinds(r)[-1] == "restart_refused"


def test_a_high_watermark_beyond_the_log_end_is_named_and_one_at_it_is_not(tmp_path: Path) -> None:
    beyond = report_of(written(tmp_path / "beyond", hw=13))
    (f,) = [f for f in beyond.findings if f.kind == "high_watermark_beyond_log_end"]
    assert f.details == {"high_watermark": 13, "log_end_offset": 12}
    assert f.message.startswith("the high watermark 13 (replication-offset-checkpoint) is beyond the log end offset 12")
    assert f.path == str(tmp_path / "beyond" / "broker-1" / "orders-0") and f.position == 0
    assert "high_watermark_beyond_log_end" not in kinds(report_of(written(tmp_path / "at", hw=12)))


def test_an_unclean_restart_cuts_a_zero_tail_where_it_starts_and_loses_no_record(tmp_path: Path) -> None:
    # LogSegment.recover stops at the zeros ('record size 0 smaller than minimum record overhead')
    # and truncates there: no record goes (zeros are not data), so a note, not the error
    part = written(tmp_path, clean=False, recovery_point=0)
    log = part / "00000000000000000000.log"
    size = os.path.getsize(log)
    with open(log, "ab") as out:
        out.write(b"\x00" * 10)
    r = report_of(part)
    (f,) = [f for f in r.findings if f.kind == "restart_trims"]
    assert (f.path, f.position, f.details, f.severity) == (str(log), size, {"truncated_bytes": 10,
                                                                            "truncated_records": 0}, "info")
    assert f.message == f"an unclean restart would cut 10 bytes from byte {size} of {log}, holding no record"
    assert "restart_truncation" not in kinds(r)


def test_an_unclean_restart_truncates_the_records_from_a_damaged_batch_on(tmp_path: Path) -> None:
    # the counter-case: a CRC that does not match stops recovery at that batch
    # (LogSegment.recover: CorruptRecordException), and its records and every later one go
    part = written(tmp_path, [(0, 5, 0, "a"), (5, 5, 0, "b"), (10, 2, 0, "c")], checkpoint=((0, 0),), clean=False,
                   recovery_point=0)
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")   # the first batch's offset, length and body
    data[second + 70] ^= 0xFF     # a byte of the second batch's records: its CRC no longer matches
    log.write_bytes(bytes(data))
    r = report_of(part)
    (f,) = [f for f in r.findings if f.kind == "restart_truncation"]
    assert (f.position, f.details["first_offset"], f.details["last_offset"], f.details["truncated_records"]) == \
        (second, 5, 11, 7)
    assert f.message == (f"an unclean restart would truncate offsets 5-11 (7 records, {len(data) - second} bytes) "
                         f"from byte {second} of {log}")


def test_a_truncating_segment_deletes_the_later_ones(tmp_path: Path) -> None:
    part = written(tmp_path, [(0, 5, 0, "a")], checkpoint=((0, 0),), clean=False, recovery_point=0)
    first = part / "00000000000000000000.log"
    size = os.path.getsize(first)
    replica_log(tmp_path / "later", 1, [(5, 5, 0, "b")], hw=None, checkpoint=None)
    later = tmp_path / "later" / "broker-1" / "orders-0" / "00000000000000000005.log"
    (part / later.name).write_bytes(later.read_bytes())
    with open(first, "ab") as out:
        out.write(b"\x00" * 7)
    r = report_of(part)
    # the zeros hold no record, but LogLoader.recoverLog deletes the later segment and its 5 records
    (f,) = [f for f in r.findings if f.kind == "restart_truncation"]
    assert f.details == {"truncated_bytes": 7 + os.path.getsize(later), "truncated_records": 5,
                         "first_offset": 5, "last_offset": 9}
    assert f.message == (f"an unclean restart would truncate offsets 5-9 (5 records, {7 + os.path.getsize(later)} "
                         f"bytes) from byte {size} of {first} and delete 1 later segment(s)")


def test_a_clean_restart_recovers_and_cuts_a_segment_without_its_offset_index(tmp_path: Path) -> None:
    part = written(tmp_path)
    log = part / "00000000000000000000.log"
    size = os.path.getsize(log)
    with open(log, "ab") as out:
        out.write(b"\x00" * 5)
    (part / "00000000000000000000.index").unlink()
    r = report_of(part)
    (f,) = [f for f in r.findings if f.kind == "restart_trims"]
    assert f.message == f"a clean restart would cut 5 bytes from byte {size} of {log}, holding no record"


def test_a_clean_restart_of_a_torn_tail_with_its_index_truncates_nothing(tmp_path: Path) -> None:
    part = written(tmp_path)
    with open(part / "00000000000000000000.log", "ab") as out:
        out.write(b"\x00" * 5)
    assert not {"restart_truncation", "restart_trims"} & set(kinds(report_of(part)))


def meta(root: Path, fields: dict[str, str] | None) -> Path:
    part = written(root)
    log_dir = part.parent
    if fields is None:
        (log_dir / "meta.properties").unlink()
    else:
        (log_dir / "meta.properties").write_bytes(generator().build_meta_properties(fields))
    return log_dir


@pytest.mark.parametrize("fields, broker_id, cluster_id, directory_id", [
    ({"version": "0", "broker.id": "4", "cluster.id": "c-zk"}, 4, "c-zk", None),
    ({"version": "1", "node.id": "5", "cluster.id": "c-kraft", "directory.id": "wgXfgVYfQZWvy5TUnTZjzA"}, 5,
     "c-kraft", "wgXfgVYfQZWvy5TUnTZjzA"),
    (None, None, None, None),
])
def test_the_log_directory_report_names_its_broker(tmp_path: Path, fields, broker_id, cluster_id,
                                                   directory_id) -> None:
    log_dir = meta(tmp_path, fields)
    (report, partition) = list(inspect_log_dirs([scan_log_dir(log_dir)]))
    assert isinstance(report, LogDirReport) and isinstance(partition, PartitionReport)
    assert (report.path, report.broker_id, report.cluster_id, report.directory_id) == (
        str(log_dir), broker_id, cluster_id, directory_id)
    assert (report.clean_shutdown, report.partitions) == (True, 1)
    assert partition.name == "orders-0"


def test_an_unclean_log_directory_with_a_directory_kafka_cannot_parse(tmp_path: Path) -> None:
    log_dir = meta(tmp_path, {"version": "0", "broker.id": "4", "cluster.id": "c"})
    (log_dir / ".kafka_cleanshutdown").unlink()
    (log_dir / "orders").mkdir()
    (report, _) = list(inspect_log_dirs([scan_log_dir(log_dir)]))
    assert report.clean_shutdown is False
    (f,) = [f for f in report.findings if f.kind == "restart_refused"]
    assert (f.path, f.position) == (str(log_dir / "orders"), 0)
    assert f.message == ("'orders' is not in the form of topic-partition or topic-partition.uniqueId-delete: the "
                         "broker fails to start (KafkaException)")


def test_a_log_directory_whose_subdirectories_all_parse_refuses_nothing(tmp_path: Path) -> None:
    log_dir = meta(tmp_path, {"version": "0", "broker.id": "4", "cluster.id": "c"})
    (report, _) = list(inspect_log_dirs([scan_log_dir(log_dir)]))
    assert [f.kind for f in report.findings if f.kind == "restart_refused"] == []
