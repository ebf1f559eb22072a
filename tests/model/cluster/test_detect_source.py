"""Which control plane a SOURCE holds (``model/cluster/sources.py``): KRaft by its segment and
snapshot names (``__cluster_metadata-0``, found inside a log directory too), ZooKeeper by
``snapshot.*``/``log.*`` names or a ``version-2`` directory; a topic's partition directory is
refused as data; mixed or unknown evidence and options of the other control plane are one-line
refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kreplica.formats.errors import FormatError
from kreplica.model.cluster.sources import detect_source_kind, load_cluster_state
from tests.conftest import FIXTURES

KRAFT_LOG_DIR = FIXTURES / "elections" / "kraft"
KRAFT = KRAFT_LOG_DIR / "__cluster_metadata-0"
ZK = FIXTURES / "timeline" / "zookeeper"


@pytest.mark.parametrize("source, kind, resolved", [
    pytest.param(KRAFT, "kraft", KRAFT, id="metadata-dir"),
    pytest.param(KRAFT_LOG_DIR, "kraft", KRAFT, id="log-dir-holding-it"),
    pytest.param(KRAFT / "00000000000000000000.log", "kraft", KRAFT / "00000000000000000000.log", id="a-segment"),
    pytest.param(ZK, "zookeeper", ZK, id="zk-data-dir"),
    pytest.param(ZK / "version-2", "zookeeper", ZK / "version-2", id="version-2"),
    pytest.param(ZK / "version-2" / "snapshot.f", "zookeeper", ZK / "version-2" / "snapshot.f", id="a-snapshot"),
])
def test_the_kind_and_the_directory_read(source: Path, kind: str, resolved: Path) -> None:
    assert detect_source_kind([source]) == (kind, [str(resolved)])


def test_a_kraft_snapshot_name_is_kraft(tmp_path: Path) -> None:
    (tmp_path / "00000000000000000042-0000000003.checkpoint").write_bytes(b"")
    assert detect_source_kind([tmp_path]) == ("kraft", [str(tmp_path)])


def test_both_kinds_or_neither_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as mixed:
        detect_source_kind([KRAFT, ZK])
    assert mixed.value.reason == "cannot tell the control plane: SOURCE holds both ZooKeeper and KRaft files"
    assert mixed.value.path == f"{KRAFT}, {ZK}"
    (tmp_path / "notes.txt").write_bytes(b"")
    with pytest.raises(FormatError) as neither:
        detect_source_kind([tmp_path])
    assert neither.value.reason == "cannot tell the control plane: SOURCE holds no ZooKeeper or KRaft metadata files"
    assert neither.value.path == str(tmp_path)


def test_a_topics_partition_directory_is_data_not_metadata(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    part.mkdir()
    shutil.copyfile(KRAFT / "00000000000000000000.log", part / "00000000000000000000.log")
    tail = (" not cluster metadata: give a ZooKeeper data directory or KRaft's __cluster_metadata-0 (or the log "
            "directory holding it); for a partition's segments use inspect-log or inspect-dir")
    with pytest.raises(FormatError) as whole:
        detect_source_kind([part])
    assert (whole.value.reason, whole.value.path) == ("is a partition directory of topic 'orders'," + tail, str(part))
    with pytest.raises(FormatError) as one:
        detect_source_kind([part / "00000000000000000000.log"])
    assert one.value.reason == "is in a partition directory of topic 'orders'," + tail
    # the counter-case: the same segment in the metadata partition's directory is KRaft
    meta = tmp_path / "__cluster_metadata-0"
    meta.mkdir()
    shutil.copyfile(KRAFT / "00000000000000000000.log", meta / "00000000000000000000.log")
    assert detect_source_kind([meta])[0] == "kraft"


@pytest.mark.parametrize("source, options, message", [
    pytest.param(ZK, {"at_offset": 3}, "--at-offset applies to KRaft metadata; this SOURCE is ZooKeeper (use --at-zxid)",
                 id="at-offset-on-zookeeper"),
    pytest.param(KRAFT, {"at_zxid": 3}, "--at-zxid applies to ZooKeeper; this SOURCE is KRaft metadata (use "
                                        "--at-offset)", id="at-zxid-on-kraft"),
    pytest.param(KRAFT, {"chroot": "/kafka"}, "--chroot applies to ZooKeeper; this SOURCE is KRaft metadata",
                 id="chroot-on-kraft"),
])
def test_an_option_of_the_other_control_plane_is_refused(source: Path, options: dict, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        load_cluster_state([source], **options)
    assert str(refused.value) == message


def test_each_kind_loads_its_cluster() -> None:
    zk = load_cluster_state([ZK])
    kraft = load_cluster_state([KRAFT_LOG_DIR])
    assert (zk.source_kind, kraft.source_kind) == ("zookeeper", "kraft")
    assert zk.brokers and kraft.brokers and "zxid" in zk.position and "offset" in kraft.position
