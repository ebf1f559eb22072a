"""Fleet discovery: brokers, their log directories and their ids, without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.mapped import EvidenceError
from kreplica.formats.logdir.meta_properties import build_meta_properties
from kreplica.pipeline.evidence.layout import discover


def _log_dir(path: Path, broker_id: int | None = None) -> None:
    (path / "orders-0").mkdir(parents=True)
    (path / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    if broker_id is not None:
        (path / "meta.properties").write_bytes(build_meta_properties({"version": "0", "broker.id": str(broker_id)}))


def test_broker_ids_come_from_meta_properties_else_the_folder_name(tmp_path: Path) -> None:
    _log_dir(tmp_path / "broker-3" / "data1")
    _log_dir(tmp_path / "broker-3" / "data2", broker_id=30)
    _log_dir(tmp_path / "4")                              # a broker folder that is its own log dir
    _log_dir(tmp_path / "broker_5" / "d")
    found = [(d.broker, d.broker_source, Path(d.path).relative_to(tmp_path).as_posix()) for d in discover(str(tmp_path))]
    assert found == [(4, "folder name", "4"), (3, "folder name", "broker-3/data1"),
                     (30, "meta.properties", "broker-3/data2"), (5, "folder name", "broker_5/d")]


def test_a_folder_without_any_broker_id_is_a_usage_error(tmp_path: Path) -> None:
    _log_dir(tmp_path / "kafka-a" / "data")
    with pytest.raises(EvidenceError, match="no broker id"):
        discover(str(tmp_path))


def test_local_discovery_takes_paths_and_file_uris_only(tmp_path: Path) -> None:
    # other schemes are listed through Spark (pipeline/evidence/remote.py), never by discover() itself
    with pytest.raises(EvidenceError, match="^hdfs://namenode/fleet: scheme hdfs:// is not a local path"):
        discover("hdfs://namenode/fleet")
    _log_dir(tmp_path / "broker-1" / "data")
    assert [d.broker for d in discover(f"file://{tmp_path}")] == [1]
