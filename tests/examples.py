"""Documented command lines, run as a user types them: from the root of the source tree, on
``fixtures/`` (and ``../shared/oracle`` where a line names it), with the files a line writes under
``/tmp/`` sent to the test's own folder instead (and ``/tmp/`` put back in what it prints).

Shared by ``tests/cli/test_examples.py`` (the man pages' EXAMPLES) and ``tests/test_readme.py``.
A line with nothing for a shell to do (no pipe, redirection, brace, glob or unknown variable
outside quotes) runs in-process through the CLI's entry point; any other line runs under
``bash -o pipefail`` with this environment's ``kreplica`` first on PATH, so a pipeline ends with
kreplica's status whenever kreplica's is not 0. Either way the terminal is :data:`COLUMNS` wide,
whatever the one running the tests is: text output shown is what an 80-column terminal shows.

A fleet line starts Spark (seconds). When the lines run before it in the same folder and the line
itself repeat a sequence already run in this test session (the man page's ``fleet scan`` example
is the first line of the ``fleet analyze`` one and of the README's), it is not run again: its
result is reused and the files it left are copied into the folder.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from kreplica.cli.commands.fleet import FLEET_MODULES
from kreplica.cli.main import app
from tests.conftest import ORACLE, ROOT

OUTPUT_PREFIX = "/tmp/"
#: the width of the terminal documented text output is shown at
COLUMNS = "80"
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_SHELL_SYNTAX = re.compile(r"[|&;<>(){}\[\]*?$`]")
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


class Ran(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str


#: the lines run in each output folder so far, and (fleet lines only) what a sequence of lines ending
#: with one returned and a copy of the folder it left
_HISTORY: dict[Path, list[str]] = {}
_FLEET_RUNS: dict[tuple[str, ...], tuple[Ran, Path]] = {}
_SAVED = Path(tempfile.mkdtemp(prefix="kreplica-fleet-runs-"))
atexit.register(shutil.rmtree, _SAVED, ignore_errors=True)


def needs_shell(line: str) -> bool:
    """Whether ``line`` uses anything only a shell does, quoted text aside."""
    return bool(_SHELL_SYNTAX.search(_QUOTED.sub("", line)))


def cannot_run(line: str) -> str | None:
    """Why ``line`` cannot run on this machine (a tool or the oracle is missing), else None. The
    oracle is required in CI, as ``tests/conftest.py:oracle_dir`` requires it."""
    if re.search(r"\|\s*jq\b", line) and shutil.which("jq") is None:
        return "jq is not installed"
    if "../shared/oracle" in line and not ORACLE.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the oracle folder {ORACLE} is required in CI (CI=true) but is missing")
        return f"the oracle folder {ORACLE} is absent"
    if re.match(r"kreplica fleet\b", line) and shutil.which("java") is None:
        return "Spark needs a Java runtime and none is on PATH (CI installs Java 17)"
    if re.match(r"kreplica fleet\b", line) and not all(find_spec(m) for m in FLEET_MODULES):
        return "the fleet extra (pyspark, pyarrow) is not installed (the quick start installs it)"
    return None


def expand(line: str, variables: dict[str, str]) -> str:
    """``line`` with ``$NAME`` and ``${NAME}`` replaced for the ``variables`` given."""
    return _VARIABLE.sub(lambda m: variables.get(m[1] or m[2], m[0]), line)


def _spark_elsewhere() -> str | None:
    """The working directory of a Spark JVM this process already started, when it is not ROOT:
    Spark resolves a fleet command's relative paths there, not in the process's current one."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    gateway = SparkContext._gateway
    if gateway is None:
        return None
    user_dir = gateway.jvm.java.lang.System.getProperty("user.dir")
    return None if Path(user_dir).resolve() == ROOT.resolve() else user_dir


def run_line(line: str, out_dir: Path, variables: dict[str, str] | None = None) -> Ran:
    """Run one command line from ROOT. ``variables`` are the shell variables assigned before it
    (``R=fixtures/...``). A line that would create a file inside the source tree fails the test."""
    variables = variables or {}
    sequence = (*_HISTORY.setdefault(out_dir, []), expand(line, variables))
    _HISTORY[out_dir].append(sequence[-1])
    fleet = sequence[-1].startswith("kreplica fleet ")
    if fleet and sequence in _FLEET_RUNS:
        ran, saved = _FLEET_RUNS[sequence]
        shutil.copytree(saved, out_dir, symlinks=True, dirs_exist_ok=True)
        return ran
    ran = _run(line, out_dir, variables)
    if fleet:
        saved = _SAVED / str(len(_FLEET_RUNS))
        shutil.copytree(out_dir, saved, symlinks=True)
        _FLEET_RUNS[sequence] = (ran, saved)
    return ran


def _run(line: str, out_dir: Path, variables: dict[str, str]) -> Ran:
    typed = line.replace(OUTPUT_PREFIX, f"{out_dir}/")
    expanded = expand(typed, variables)
    new_here = [w for w in shlex.split(_QUOTED.sub("", expanded))
                if not w.startswith(("-", "/")) and not (ROOT / w).exists()]
    with contextlib.chdir(ROOT):
        if needs_shell(expanded):
            assigned = "".join(f"{k}={shlex.quote(v.replace(OUTPUT_PREFIX, f'{out_dir}/'))}\n"
                               for k, v in variables.items())
            env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                       COLUMNS=COLUMNS)
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", assigned + typed], env=env,
                                  capture_output=True, text=True, timeout=600, check=False)
            ran = Ran(proc.returncode, proc.stdout, proc.stderr)
        else:
            argv = shlex.split(expanded)
            assert argv[0] == "kreplica", f"not a kreplica command: {line}"
            if argv[1] == "fleet" and (where := _spark_elsewhere()):
                pytest.skip(f"this test process started Spark in {where}, where relative paths would resolve; "
                            f"run the fleet examples from {ROOT}")
            result = CliRunner().invoke(app, argv[1:], env={"COLUMNS": COLUMNS})
            ran = Ran(result.exit_code, result.stdout, result.stderr)
    created = [w for w in new_here if (ROOT / w).exists()]
    assert not created, f"{line!r} wrote {created} into the source tree: documented outputs go under /tmp"
    back = (lambda text: text.replace(f"{out_dir}/", OUTPUT_PREFIX))
    return Ran(ran.exit_code, back(ran.stdout), back(ran.stderr))
