"""Names in a log directory (spec §9): Kafka's parseTopicPartitionName exactly, and what each
file name in a partition directory is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreplica.formats.logdir.naming import (
    FileKind,
    PartitionDirName,
    PartitionFile,
    classify_partition_file,
    classify_remote_index_file,
    parse_partition_dir,
    segment_base_offset,
    segment_file_name,
)

UID = "0123456789abcdef0123456789abcdef"


def test_segment_names():
    assert segment_file_name(262) == "00000000000000000262.log"
    assert segment_base_offset("00000000000000000262.log") == 262
    assert segment_base_offset("262.log") is None
    assert segment_base_offset("00000000000000000262.index") is None


@pytest.mark.parametrize("name, expected", [
    pytest.param("orders-0", PartitionDirName("orders", 0), id="simple"),
    pytest.param("my.topic-with-dash-12", PartitionDirName("my.topic-with-dash", 12), id="dots-and-dashes"),
    pytest.param("__consumer_offsets-49", PartitionDirName("__consumer_offsets", 49), id="internal-topic"),
    pytest.param("__cluster_metadata-0", PartitionDirName("__cluster_metadata", 0), id="kraft-log-parses"),
    pytest.param("orders-007", PartitionDirName("orders", 7), id="leading-zeros"),
    pytest.param("orders-+1", PartitionDirName("orders", 1), id="plus-sign-parses-in-java"),
    pytest.param("a--1", PartitionDirName("a-", 1), id="last-dash-splits"),
    pytest.param("my topic-0", PartitionDirName("my topic", 0), id="live-name-may-hold-spaces"),
    pytest.param(f"orders-3.{UID}-delete", PartitionDirName("orders", 3, "delete", UID), id="delete"),
    pytest.param(f"orders-3.{UID}-future", PartitionDirName("orders", 3, "future", UID), id="future"),
    pytest.param(f"orders-3.{UID}-stray", PartitionDirName("orders", 3, "stray", UID), id="stray"),
    pytest.param(f"my.topic-3.{UID}-delete", PartitionDirName("my.topic", 3, "delete", UID), id="delete-dotted-topic"),
    pytest.param("orders-3.x-delete", PartitionDirName("orders", 3, "delete", "x"), id="any-non-space-id"),
    pytest.param(f"ord-3.{UID}-delete", PartitionDirName("ord", 3, "delete", UID), id="truncated-topic"),
])
def test_kafka_accepts(name, expected):
    assert parse_partition_dir(name) == expected


@pytest.mark.parametrize("name", [
    pytest.param("", id="empty"),
    pytest.param("orders", id="no-dash"),
    pytest.param("-0", id="empty-topic"),
    pytest.param("orders-", id="empty-partition"),
    pytest.param("orders-x", id="partition-not-a-number"),
    pytest.param("orders-2147483648", id="partition-overflow"),
    pytest.param("orders-1.5", id="dotted-partition"),
    pytest.param("orders-0-delete", id="delete-without-unique-id"),
    pytest.param(f"orders 1-0.{UID}-delete", id="space-in-delete-name"),
    pytest.param("orders-0.a.b-delete", id="dot-in-unique-id"),
    pytest.param(f".{UID}-future", id="future-without-partition"),
    pytest.param("remote-log-index-cache", id="remote-index-cache"),
    pytest.param("lost+found", id="lost-and-found"),
])
def test_kafka_refuses(name):
    assert parse_partition_dir(name) is None


def test_name_property():
    assert parse_partition_dir(f"orders-007.{UID}-future").name == "orders-7"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1, max_size=40),
       st.integers(0, 2**31 - 1), st.sampled_from([None, "delete", "future", "stray"]))
def test_round_trip(topic, partition, suffix):
    name = f"{topic}-{partition}" + (f".{UID}-{suffix}" if suffix else "")
    assert parse_partition_dir(name) == PartitionDirName(topic, partition, suffix, UID if suffix else None)


@given(st.text(max_size=40))
def test_any_text(name):
    got = parse_partition_dir(name)
    assert got is None or isinstance(got, PartitionDirName)


@pytest.mark.parametrize("name, kind, base, inner", [
    pytest.param("00000000000000000262.log", FileKind.LOG, 262, None, id="log"),
    pytest.param("00000000000000000262.index", FileKind.INDEX, 262, None, id="index"),
    pytest.param("00000000000000000262.timeindex", FileKind.TIMEINDEX, 262, None, id="timeindex"),
    pytest.param("00000000000000000262.txnindex", FileKind.TXNINDEX, 262, None, id="txnindex"),
    pytest.param("00000000000000000300.snapshot", FileKind.SNAPSHOT, 300, None, id="producer-snapshot"),
    pytest.param("leader-epoch-checkpoint", FileKind.LEADER_EPOCH_CHECKPOINT, None, None, id="epoch-checkpoint"),
    pytest.param("partition.metadata", FileKind.PARTITION_METADATA, None, None, id="partition-metadata"),
    pytest.param("00000000000000000262.log.deleted", FileKind.DELETED, 262, FileKind.LOG, id="deleted-log"),
    pytest.param("00000000000000000300.snapshot.deleted", FileKind.DELETED, 300, FileKind.SNAPSHOT,
                 id="deleted-snapshot"),
    pytest.param("00000000000000000262.log.cleaned", FileKind.CLEANED, 262, FileKind.LOG, id="cleaned"),
    pytest.param("00000000000000000262.timeindex.swap", FileKind.SWAP, 262, FileKind.TIMEINDEX, id="swap"),
    pytest.param("leader-epoch-checkpoint.tmp", FileKind.TMP, None, FileKind.LEADER_EPOCH_CHECKPOINT, id="tmp-epochs"),
    pytest.param("partition.metadata.tmp", FileKind.TMP, None, FileKind.PARTITION_METADATA, id="tmp-metadata"),
    pytest.param("262.log", FileKind.LOG, 262, None, id="unpadded-offset-parses-like-kafka"),
    pytest.param("abc.log", FileKind.LOG, None, None, id="non-numeric-segment-name"),
    pytest.param("quorum-state", FileKind.QUORUM_STATE, None, None, id="quorum-state"),
    pytest.param("00000000000000012345-0000000007.checkpoint", FileKind.KRAFT_SNAPSHOT, 12345, None,
                 id="kraft-snapshot"),
    pytest.param("00000000000000012345-0000000007.checkpoint.deleted", FileKind.DELETED, 12345,
                 FileKind.KRAFT_SNAPSHOT, id="kraft-snapshot-deleted"),
    pytest.param("00000000000000012345-0000000007-123456.checkpoint.part", FileKind.KRAFT_SNAPSHOT_PART, None,
                 None, id="kraft-snapshot-part"),
    pytest.param("notes.txt", FileKind.OTHER, None, None, id="other"),
    pytest.param(".deleted", FileKind.OTHER, None, None, id="bare-suffix"),
])
def test_classify_partition_file(name, kind, base, inner):
    got = classify_partition_file(name)
    assert (got.name, got.kind, got.base_offset, got.inner_kind) == (name, kind, base, inner)
    assert got.kind == kind.value                         # string constants compare equal


def test_kraft_snapshot_epoch():
    assert classify_partition_file("00000000000000012345-0000000007.checkpoint") == PartitionFile(
        "00000000000000012345-0000000007.checkpoint", FileKind.KRAFT_SNAPSHOT, 12345, None, 7)


@given(st.text(max_size=60))
def test_classify_any_name(name):
    assert isinstance(classify_partition_file(name), PartitionFile)


# -- remote-log-index-cache (RemoteIndexCache.init, 4.4.0) -------------------------------------------

_SEG = "AAECAwQFBgcICQoLDA0ODw"   # Uuid.toString of bytes 0..15


@pytest.mark.parametrize(("name", "kind", "inner", "offset", "error"), [
    pytest.param(f"45_{_SEG}.index", "index", None, 45, False, id="offset-index"),
    pytest.param(f"45_{_SEG}.timeindex", "timeindex", None, 45, False, id="time-index"),
    pytest.param(f"0_{_SEG}.txnindex", "txnindex", None, 0, False, id="txn-index"),
    pytest.param(f"45_{_SEG}.index.deleted", "deleted", "index", 45, False, id="evicted"),
    pytest.param(f"45_{_SEG}.txnindex.tmp", "tmp", "txnindex", 45, False, id="fetch-cut-short"),
    pytest.param(f"45_{_SEG}.log", "other", None, 45, False, id="other-suffix-still-parses"),
    pytest.param(f"x_{_SEG}.index", "index", None, None, False, id="offset-not-a-long"),
    pytest.param("45_orders.index", "index", None, None, True, id="id-not-a-uuid"),
    pytest.param(f"{_SEG}.index", "index", None, None, False, id="no-underscore-the-whole-prefix-is-the-id"),
    pytest.param(f"45_{_SEG}", "other", None, None, True, id="no-dot"),
    pytest.param("a.b_c", "other", None, None, True, id="underscore-after-dot"),
])
def test_remote_index_cache_names_as_init_reads_them(name, kind, inner, offset, error):
    f = classify_remote_index_file(name)
    assert (f.kind, f.inner_kind, f.start_offset, f.error is not None) == (kind, inner, offset, error)
    if not error:
        assert f.segment_id == _SEG
