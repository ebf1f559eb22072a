"""Running a command in-process and reading its usage error: the one line on stderr
(``kreplica: error: ...``) and nothing on stdout, exit 2 (tests/cli/options)."""

from __future__ import annotations

from importlib.util import find_spec

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app

#: tests that run a fleet command need the fleet extra
FLEET = pytest.mark.skipif(find_spec("pyspark") is None or find_spec("pyarrow") is None,
                           reason="the fleet extra is not installed")


def run(*args: object):
    """``kreplica ARGS...`` in this process (arguments as text)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def usage_error(result, *needles: str) -> str:
    """Exit 2, nothing on stdout, one ``kreplica: error:`` line on stderr holding every needle."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kreplica: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
