"""The wrong kind of evidence is a one-line usage error (exit 2) naming the path and what was
expected — never a hang, a traceback or a plausible answer — and evidence is never changed."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

SCENARIO = FIXTURES / "scenarios" / "kip101-scenario-1"


def kreplica(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kreplica", *args, "-f", "ndjson"], capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("kreplica: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["inspect-log"], ["inspect-index"], ["cluster-state"], ["zk", "dump"]])
def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / ("00000000000000000000.index" if command == ["inspect-index"] else "snapshot.0")
    os.mkfifo(fifo)
    one_line_error(kreplica(*command, str(fifo), timeout=30), str(fifo), "named pipe")


def test_a_device_is_refused(tmp_path: Path) -> None:
    one_line_error(kreplica("inspect-log", "/dev/zero"), "/dev/zero", "character device")


def test_cluster_state_on_a_partition_directory_says_what_it_is() -> None:
    part = FIXTURES / "logs" / "orders-0"
    one_line_error(kreplica("cluster-state", str(part)), "partition directory of topic 'orders'", "inspect-log")


def test_inspect_dir_on_a_folder_of_brokers_says_what_it_is(tmp_path: Path) -> None:
    for broker in SCENARIO.glob("broker-*"):
        shutil.copytree(broker, tmp_path / broker.name)
    one_line_error(kreplica("inspect-dir", str(tmp_path)), "broker folders", "fleet scan")


@pytest.mark.parametrize("command", ["truncate-plan", "diverge"])
def test_replicas_of_different_partitions_are_not_compared(command: str) -> None:
    a, b = FIXTURES / "logs" / "orders-0", FIXTURES / "logs" / "payments-0"
    args = ["--leader", str(a), "--follower", str(b)] if command == "truncate-plan" else [str(a), str(b)]
    one_line_error(kreplica(command, *args), "payments-0", "orders-0", "one partition")


def _digest_tree(root: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            out[str(p.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def test_no_command_changes_or_creates_anything_in_the_evidence(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    shutil.copytree(FIXTURES, evidence, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    before = _digest_tree(evidence)
    scen = evidence / "scenarios" / "kip101-scenario-1"
    l1, l2 = str(scen / "broker-1" / "orders-0"), str(scen / "broker-2" / "orders-0")
    runs = [
        ["inspect-log", str(evidence / "logs"), "--records"],
        ["inspect-log", str(evidence / "damaged"), "--records"],
        ["inspect-index", str(evidence / "logs" / "orders-0")],
        ["inspect-dir", str(scen / "broker-1"), str(scen / "broker-2")],
        ["inspect-dir", *(str(p) for p in (evidence / "logs").iterdir() if p.is_dir())],
        ["epochs", l1, l2],
        ["offset-for-epoch", l1, "--epoch", "0"],
        ["truncate-plan", "--leader", l1, "--follower", l2],
        ["diverge", l1, l2],
    ]
    for args in runs:
        result = CliRunner().invoke(app, [*args, "-f", "ndjson"])
        assert result.exit_code in (0, 1), (args, result.output)
    assert _digest_tree(evidence) == before
