"""How far a control-plane SOURCE's evidence reaches (:mod:`kreplica.model.cluster.span`): the first
and last position a state can be had at, and the first and last time recorded, for ZooKeeper
snapshots and logs and for KRaft snapshots and segments, written with kreplica's own writers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.kraft import records as kraft
from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.cluster.kraft_files import find_kraft_files
from kreplica.model.cluster.span import evidence_span, kraft_span
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


# -- KRaft: which files bound the span, and the snapshot's header time ---------------------------
# (issue 27 §7) The snapshot writer (``RecordsSnapshotWriter``, Kafka ``raft/.../snapshot/``)
# starts every ``*.checkpoint`` with a SnapshotHeaderRecord whose ``lastContainedLogTimestamp``
# dates the snapshot; its file name carries the end offset (``Snapshots.filenameFromSnapshotId``),
# so the snapshot's last offset is the end offset - 1. The module docstring: only the oldest and
# newest files are read.

K0 = 1_700_000_000_000
_FEATURE = ("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 20})


def _meta_dir(tmp_path: Path) -> Path:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    return d


def _segment(d: Path, offsets) -> None:
    """One segment, one batch per offset, stamped K0 + offset."""
    (d / f"{offsets[0]:020d}.log").write_bytes(b"".join(
        kraft.build_metadata_batch([_FEATURE], base_offset=o, epoch=1, timestamp=K0 + o) for o in offsets))


def _kraft_snapshot(d: Path, end: int, timestamp: int) -> None:
    (d / kraft.checkpoint_name(end, 1)).write_bytes(kraft.build_snapshot([_FEATURE], epoch=1, timestamp=timestamp))


def test_kraft_span_runs_from_the_first_segment_to_the_last(tmp_path: Path) -> None:
    """The first record is the oldest segment's first, the last the newest segment's last
    (counter-case of each: the other segment's first / last record)."""
    d = _meta_dir(tmp_path)
    _segment(d, [0, 1, 2])
    _segment(d, [3, 4, 5])
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", 0, 5, K0, K0 + 5)


def test_kraft_snapshot_alone_spans_its_last_offset(tmp_path: Path) -> None:
    """A snapshot with end offset 10 holds offsets up to 9: the span is 9..9, dated by its header."""
    d = _meta_dir(tmp_path)
    _kraft_snapshot(d, 10, 7)
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", 9, 9, 7, 7)


def test_kraft_only_the_oldest_and_newest_snapshots_date_the_span(tmp_path: Path) -> None:
    """The middle snapshot is not read: its (earlier) header time does not widen the span."""
    d = _meta_dir(tmp_path)
    _kraft_snapshot(d, 5, 50)
    _kraft_snapshot(d, 10, 1)
    _kraft_snapshot(d, 20, 70)
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", 4, 19, 50, 70)


@pytest.mark.parametrize("stamp, time", [
    pytest.param(-1, None, id="no-timestamp"),       # -1: the header's "no timestamp"
    pytest.param(0, 0, id="epoch-zero-is-a-time"),
    pytest.param(1, 1, id="one"),
])
def test_kraft_snapshot_header_time(tmp_path: Path, stamp, time) -> None:
    d = _meta_dir(tmp_path)
    _kraft_snapshot(d, 10, stamp)
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", 9, 9, time, time)


def test_kraft_snapshot_without_its_header_is_undated(tmp_path: Path) -> None:
    """A ``*.checkpoint`` whose first record is not a SnapshotHeaderRecord carries no time."""
    d = _meta_dir(tmp_path)
    (d / kraft.checkpoint_name(10, 1)).write_bytes(
        kraft.build_metadata_batch([_FEATURE], base_offset=0, epoch=1, timestamp=K0))
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", 9, 9, None, None)


def test_kraft_empty_segment_spans_nothing(tmp_path: Path) -> None:
    d = _meta_dir(tmp_path)
    (d / "00000000000000000000.log").write_bytes(b"")
    assert kraft_span(find_kraft_files([d])) == EvidenceSpan("kraft", None, None, None, None)


def test_zookeeper_snapshot_at_zxid_0_bounds_the_span(tmp_path: Path) -> None:
    """``snapshot.0`` (the empty tree a fresh ensemble writes, ``FileTxnSnapLog``) is a state at
    zxid 0; only snapshots whose name gives no zxid (-1) are left out."""
    _snapshot(tmp_path, 0)
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", 0, 0, None, None)


def test_zookeeper_log_alone_not_from_the_first_transaction(tmp_path: Path) -> None:
    """A log that starts later than the ensemble's first transaction, with no snapshot before
    it, gives no state to start from (first position unknown), but its last zxid and times."""
    d = tmp_path / "version-2"
    d.mkdir()
    (d / "log.5").write_bytes(_entries([5, 6]))
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", None, 6, T0, T0 + 1000)


def test_zookeeper_empty_log_alone_spans_nothing(tmp_path: Path) -> None:
    (tmp_path / "log.8").write_bytes(b"")              # a crash before the header was written
    assert evidence_span([tmp_path]) == EvidenceSpan("zookeeper", None, None, None, None)
