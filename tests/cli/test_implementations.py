"""``kreplica --version`` names the record decoder, the ndjson renderer and the CRC-32C in use
(an install without a C compiler falls back to pure Python without a word), and ``--debug`` says
the same on stderr at the start of every run."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from kreplica.cli import implementations
from kreplica.cli.main import app
from kreplica.formats.checksums import CRC_IMPLEMENTATION
from kreplica.formats.log.default_records import DECODE_IMPLEMENTATION
from kreplica.report.schemas.inspect_log import RENDER_IMPLEMENTATION
from tests.conftest import FIXTURES, ROOT


def test_version_names_each_implementation_in_use() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    first, *parts = result.stdout.splitlines()
    assert first.startswith("kreplica ")
    assert [p.split(" (")[0] for p in parts] == [f"record decoder: {DECODE_IMPLEMENTATION}",
                                                 f"inspect-log ndjson renderer: {RENDER_IMPLEMENTATION}",
                                                 f"CRC-32C: {CRC_IMPLEMENTATION}"]


def test_version_says_when_the_pure_python_paths_are_forced() -> None:
    env = dict(os.environ, KREPLICA_DECODE="python", KREPLICA_RENDER="python", KREPLICA_CRC="reference",
               PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "kreplica", "--version"], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True).stdout.splitlines()
    assert out[1:] == ["record decoder: python (KREPLICA_DECODE=python)",
                       "inspect-log ndjson renderer: python (KREPLICA_RENDER=python)",
                       "CRC-32C: reference (crcmod, KREPLICA_CRC=reference)"]


def test_a_twin_that_was_not_built_says_what_building_it_needs(monkeypatch) -> None:
    monkeypatch.delenv("KREPLICA_DECODE", raising=False)
    monkeypatch.setattr("kreplica.formats.log.default_records.DECODE_IMPLEMENTATION", implementations.PYTHON)
    monkeypatch.setattr("kreplica.cli.implementations.importlib.util.find_spec", lambda name: None)
    decoder = implementations.implementations()[0]
    assert decoder.name == "python"
    assert "not built" in decoder.detail and "C compiler and Python headers" in decoder.detail


def test_debug_names_the_implementations_on_stderr_and_leaves_stdout_alone() -> None:
    args = ["inspect-log", str(FIXTURES / "logs" / "orders-0"), "-f", "ndjson"]
    plain = CliRunner().invoke(app, args)
    debug = CliRunner().invoke(app, [*args, "--debug"])
    assert debug.exit_code == plain.exit_code == 0
    assert debug.stdout == plain.stdout
    assert debug.stderr.splitlines()[0] == implementations.debug_line()
    assert f"record decoder: {DECODE_IMPLEMENTATION}" in debug.stderr
    assert "kreplica: debug:" not in plain.stderr
