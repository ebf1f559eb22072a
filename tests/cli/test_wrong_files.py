"""The wrong file or directory given to a command that reads logs: said for what it is (exit 2,
one line naming it), never read as damaged evidence or as a healthy partition (issue 20)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

ORDERS = FIXTURES / "logs" / "orders-0"
SERVER_LOG = b"[2024-05-01 10:00:00,000] INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)\n"


def run(*args: object):
    return CliRunner().invoke(app, [*(str(a) for a in args), "-f", "ndjson"])


def one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.startswith("kreplica: error: ") and result.stderr.count("\n") == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize(("name", "content", "looks"), [
    pytest.param("server.log", SERVER_LOG, "text", id="broker-server-log"),
    pytest.param("README.log", (FIXTURES.parent / "README.md").read_bytes(), "text", id="readme"),
    pytest.param("assignment.log", (FIXTURES / "reassign" / "assignment.json").read_bytes(), "text", id="json"),
    pytest.param("controller.log", "déjà vu — ünïcode\n".encode() * 8, "text", id="utf8-text"),
    pytest.param("blank.log", b"", "nothing", id="empty"),
    pytest.param("zeros.log", bytes(4096), "zero bytes", id="zeros"),
    pytest.param("archive.log", b"\x1f\x8b\x08\x00" + bytes(range(200, 256)) * 3, "not a log entry", id="binary"),
])
def test_a_log_file_that_is_not_a_segment_is_exit_2(tmp_path: Path, name: str, content: bytes, looks: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    one_line_error(run("inspect-log", path), str(path), "not a Kafka segment", looks)


def test_a_segment_under_another_name_is_still_read(tmp_path: Path) -> None:
    copy = tmp_path / "evidence.log"
    shutil.copy(ORDERS / "00000000000000000000.log", copy)
    assert run("inspect-log", copy).exit_code == 0


@pytest.mark.parametrize("name", ["00000000000000000000.log", "evidence.log"])
def test_a_segment_whose_first_batch_is_damaged_is_still_damaged(tmp_path: Path, name: str) -> None:
    """A real segment whose first batch is cut off keeps today's damage report, whatever its name."""
    data = (ORDERS / "00000000000000000000.log").read_bytes()
    path = tmp_path / name
    path.write_bytes(data[:100])
    result = run("inspect-log", path)
    assert result.exit_code == 1, result.stderr
    assert {"truncated_tail"} <= {o["kind"] for o in map(json.loads, result.stdout.splitlines()) if o["type"] == "finding"}


def test_a_segment_name_keeps_damage_reporting_even_on_text(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(SERVER_LOG)
    assert run("inspect-log", path).exit_code == 1


def test_a_directory_skips_non_segments_with_a_note(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    shutil.copytree(ORDERS, part)
    (part / "server.log").write_bytes(SERVER_LOG)
    result = run("inspect-log", part)
    assert result.exit_code == 0, result.stderr
    assert f"kreplica: note: skipped {part / 'server.log'}: not a Kafka segment" in result.stderr
    assert not any(str(part / "server.log") == o.get("path") for o in map(json.loads, result.stdout.splitlines()))


def test_a_directory_of_only_non_segments_names_one(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_bytes(SERVER_LOG)
    one_line_error(run("inspect-log", tmp_path), "holds no segment files", "server.log is not a Kafka segment")


def _zookeeper_data_dir(root: Path) -> Path:
    data = root / "zookeeper"
    (data / "version-2").mkdir(parents=True)
    shutil.copy(next((FIXTURES / "timeline" / "zookeeper").rglob("snapshot.*")), data / "version-2" / "snapshot.0")
    (data / "myid").write_text("1\n")
    return data


def test_inspect_dir_on_a_zookeeper_data_directory_says_what_it_is(tmp_path: Path) -> None:
    """``version-2`` parses as partition 2 of topic ``version``; it was reported "OK version-2"."""
    data = _zookeeper_data_dir(tmp_path)
    one_line_error(run("inspect-dir", data), str(data), "ZooKeeper data directory", "cluster-state")
    one_line_error(run("inspect-dir", data / "version-2"), "ZooKeeper data directory")


@pytest.mark.parametrize(("files", "needle"), [
    pytest.param({}, "empty directory", id="empty"),
    pytest.param({"server.properties": "broker.id=1\n", "log4j.properties": ""}, "configuration files", id="config"),
    pytest.param({"notes.txt": "x"}, "neither a partition directory nor a log directory", id="other"),
])
def test_inspect_dir_on_a_directory_without_log_data(tmp_path: Path, files: dict, needle: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if files:
        (tmp_path / "looks-0").mkdir()   # a name Kafka would parse, but no partition file in it
    one_line_error(run("inspect-dir", tmp_path), str(tmp_path), needle)


def test_inspect_dir_still_reads_a_kraft_metadata_partition() -> None:
    meta = FIXTURES / "elections" / "kraft"
    kraft = next(meta.rglob("__cluster_metadata-0"), None)
    if kraft is None:
        pytest.skip("no __cluster_metadata-0 in the fixtures")
    assert run("inspect-dir", kraft).exit_code in (0, 1)
