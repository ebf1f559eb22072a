"""PySpark and pyarrow (about 500 MB) are the ``fleet`` extra: only ``kreplica fleet`` imports
them, and without them it exits 2 with the line that installs them (issue 19)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

INSTALL = "pip install 'kreplica[fleet]'"
R = FIXTURES / "scenarios" / "kip279-fast-failover"
Z = FIXTURES / "timeline" / "zookeeper"

#: One run of every command but fleet (and fleet's help, which needs nothing of Spark).
NOT_FLEET = [
    ["--help"],
    ["fleet", "--help"],
    ["fleet", "scan", "--help"],
    ["inspect-log", "--records", FIXTURES / "logs"],
    ["inspect-dir", FIXTURES / "logs"],
    ["inspect-index", FIXTURES / "logs" / "orders-0"],
    ["epochs", R / "broker-1" / "orders-0", R / "broker-2" / "orders-0"],
    ["offset-for-epoch", R / "broker-1" / "orders-0", "--epoch", "1"],
    ["truncate-plan", "--leader", R / "broker-1" / "orders-0", "--follower", R / "broker-2" / "orders-0"],
    ["diverge", *(FIXTURES / "scenarios" / "divergent-middle" / b / "orders-0" for b in ("broker-1", "broker-2"))],
    ["zk", "dump", Z, "--path", "/brokers/ids/*"],
    ["cluster-state", Z, "--at-zxid", "0x17"],
    ["plan-elect", FIXTURES / "elections" / "kraft"],
    ["timeline", Z],
    # --sizes-from reads a fleet layout (kreplica.pipeline.evidence.layout), without Spark
    ["plan-reassign", "--assignment", FIXTURES / "reassign" / "assignment.json", "--brokers", "1-6", "add-brokers",
     "5,6", "--sizes-from", FIXTURES / "scenarios" / "three-replicas"],
]


def test_no_command_but_fleet_imports_pyspark_or_pyarrow() -> None:
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from kreplica.cli.main import app\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    assert r.exit_code in (0, 1), (args, r.exit_code, r.stderr)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow')))\n"
    )
    runs = json.dumps([[str(a) for a in args] for args in NOT_FLEET])
    result = subprocess.run([sys.executable, "-c", code, runs], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("hidden", ["pyspark", "pyarrow"])
@pytest.mark.parametrize("args", [
    pytest.param(["fleet", "scan"], id="scan-alone"),
    pytest.param(["fleet", "scan", str(FIXTURES / "scenarios" / "three-replicas"), "--output-dir", "{tmp}/tables"],
                 id="scan"),
    pytest.param(["fleet", "analyze", "{tmp}"], id="analyze"),
])
def test_fleet_without_the_extra_exits_2_with_the_install_line(hidden, args, monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, hidden, None)  # what an import finds when the package is absent
    missing = " and ".join(m for m in ("pyspark", "pyarrow") if m == hidden or find_spec(m) is None)
    result = CliRunner().invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2
    assert result.stderr == f"kreplica: error: fleet runs on PySpark and pyarrow, installed with the fleet extra " \
                            f"({missing} missing): {INSTALL}\n"
    assert result.stdout == "" and not (tmp_path / "tables").exists()


def test_fleet_help_works_without_the_extra(monkeypatch) -> None:
    for name in ("pyspark", "pyarrow"):
        monkeypatch.setitem(sys.modules, name, None)
    for args in (["fleet", "--help"], ["fleet", "scan", "--help"], ["fleet", "analyze", "-h"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0 and "Usage:" in result.stdout, args
    assert INSTALL in CliRunner().invoke(app, ["fleet", "--help"]).stdout
