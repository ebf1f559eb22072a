"""How far a control-plane SOURCE's evidence reaches (:mod:`kreplica.model.cluster.span`): the first
and last position a state can be had at, and the first and last time recorded, for ZooKeeper
snapshots and logs and for KRaft snapshots and segments, written with kreplica's own writers."""

from __future__ import annotations

from pathlib import Path

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.cluster.span import evidence_span
from kreplica.model.evidence_span import EvidenceSpan
from tests.builders.zk_dir import write_zk_dir
from tests.conftest import FIXTURES
from tests.builders.kraft_metadata import write_metadata_dir

T0 = 1_700_000_001_000   # the first entry of write_zk_dir's log
SESSION = 0x100000000000001


def _entries(zxids, t0: int = T0) -> bytes:
    return zkl.build_txnlog([zkl.build_entry(client_id=SESSION, cxid=i, zxid=z, time=t0 + 1000 * i,
                                             txn_type=zkl.OP_SET_DATA, body=zkl.SetDataTxn("/", b"x", i))
                             for i, z in enumerate(zxids)], preallocate=4096)


def _snapshot(d: Path, zxid: int) -> None:
    (d / f"snapshot.{zxid:x}").write_bytes(zks.build_snapshot(
        [zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0)], acls={}))


def test_zookeeper_snapshot_then_log(tmp_path: Path) -> None:
    # snapshot.5, then log.6 with zxids 6..10 a second apart
    assert evidence_span([write_zk_dir(tmp_path)]) == EvidenceSpan("zookeeper", 5, 10, T0, T0 + 4000)


def test_zookeeper_fixture_of_the_readme() -> None:
    span = evidence_span([FIXTURES / "timeline" / "zookeeper"])
    assert (span.first_position, span.last_position) == (0xF, 0x1B)


def test_zookeeper_logs_from_the_ensembles_first_transaction_start_at_the_empty_tree(tmp_path: Path) -> None:
    d = tmp_path / "version-2"
    d.mkdir()
    _snapshot(d, 2)
    (d / "log.1").write_bytes(_entries([1, 2, 3]))
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", 0, 3, T0, T0 + 2000)


def test_zookeeper_snapshots_alone_date_nothing(tmp_path: Path) -> None:
    _snapshot(tmp_path, 0x20)
    _snapshot(tmp_path, 0x30)
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", 0x20, 0x30, None, None)


def test_zookeeper_newest_snapshot_and_empty_newest_log(tmp_path: Path) -> None:
    _snapshot(tmp_path, 0x5)
    (tmp_path / "log.6").write_bytes(_entries([6, 7]))
    (tmp_path / "log.8").write_bytes(b"")              # a crash before the header was written
    _snapshot(tmp_path, 0x9)                            # later than every logged transaction
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", 5, 9, T0, T0 + 1000)


def test_kraft_log_from_offset_0(tmp_path: Path) -> None:
    # batches are stamped 1_700_000_000_000 + their base offset; the last (24..27) at +24
    span = evidence_span([write_metadata_dir(tmp_path)])
    assert span == EvidenceSpan("kraft", 0, 27, 1_700_000_000_000, 1_700_000_000_024)


def test_kraft_snapshot_then_log(tmp_path: Path) -> None:
    # the snapshot ends at 13 (it holds offsets 0..12) and says its last record was stamped 1
    span = evidence_span([write_metadata_dir(tmp_path, with_snapshot=True)])
    assert span == EvidenceSpan("kraft", 12, 27, 1, 1_700_000_000_024)
