"""``fleet scan`` and ``fleet analyze`` are quiet and well-behaved (issue 22): stdout carries
kreplica's output only and stderr nothing of Spark's unless asked (``--debug``, ``--spark-log``);
Ctrl-C ends a scan with exit 130 and one line, Spark stopped and no table that looks complete;
``fleet analyze`` refuses a table not marked complete.

The commands run in processes of their own, as a user runs them: the JVM writes to the file
descriptors it inherits, which an in-process runner would never see.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES, ROOT

pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

from kreplica.pipeline.tables.schemas import SCAN_TABLES, STAGING_DIR, SUCCESS_MARKER  # noqa: E402

FLEET = FIXTURES / "scenarios" / "three-replicas"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
#: Spark's start and one small job, on a busy machine
SPARK_TIMEOUT = 300


def kreplica(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kreplica", *map(str, args)], capture_output=True, text=True,
                          env={**ENV, **(env or {})}, timeout=SPARK_TIMEOUT)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("quiet") / "tables"
    return out, kreplica("fleet", "scan", FLEET, "--output-dir", out, "--master", "local[1]", "-f", "ndjson")


#: What ``fleet scan`` says of evidence this small (the single-partition commands answer sooner).
BREAK_EVEN_NOTE = "kreplica: note: 1 partition, 995 bytes: epochs, truncate-plan, diverge answer this sooner than "


def test_a_scan_prints_its_one_object_and_nothing_of_sparks_on_stderr(scanned) -> None:
    out, result = scanned
    assert result.returncode == 0, result.stderr
    (note,) = result.stderr.splitlines()  # before: 8 lines of the JVM's and Spark's
    assert note.startswith(BREAK_EVEN_NOTE)
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["type"] == "fleet_scan"


def test_every_table_of_a_finished_scan_is_marked_complete(scanned) -> None:
    out, _ = scanned
    assert all((out / table / SUCCESS_MARKER).is_file() for table in SCAN_TABLES)
    assert not (out / STAGING_DIR).exists()


def test_spark_log_shows_sparks_log_at_that_level_on_stderr_only(scanned) -> None:
    out, _ = scanned
    # tables this small are analysed without Spark unless told
    result = kreplica("fleet", "analyze", out, "--master", "local[1]", "--spark-log", "info", "-f", "ndjson",
                      env={"KREPLICA_FLEET_ANALYZE": "spark"})
    assert result.returncode == 1, result.stderr  # the three replicas diverge
    assert " INFO SparkContext: " in result.stderr
    assert "Using Spark's default log4j profile" not in result.stderr  # the shipped configuration is used
    objects = [json.loads(line) for line in result.stdout.splitlines()]  # nothing of Spark's on stdout
    assert objects[-1]["type"] == "fleet_summary"


def test_an_unknown_spark_log_level_is_a_usage_error_before_spark_starts(tmp_path) -> None:
    result = CliRunner().invoke(app, ["fleet", "scan", str(FLEET), "--output-dir", str(tmp_path / "t"), "--spark-log",
                                      "warning"])
    assert result.exit_code == 2 and "did you mean 'WARN'" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "t").exists()


def test_analyze_refuses_a_table_not_marked_complete_naming_it(scanned, tmp_path) -> None:
    out, _ = scanned
    copy = tmp_path / "tables"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("analysis"))
    (copy / "batches" / SUCCESS_MARKER).unlink()
    result = CliRunner().invoke(app, ["fleet", "analyze", str(copy)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"kreplica: error: {copy / 'batches'}: the batches table is incomplete (no _SUCCESS: " \
                            "the fleet scan that wrote it did not finish): scan again into an empty directory\n"


#: ``kreplica`` with stage 1's task slowed down: the function is ``__main__``'s, so Spark ships it
#: to the Python workers by value; it says when the task runs, then sleeps past the test.
SLOW_SCAN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import kreplica.pipeline.scan.run as scan

    running, original = Path(sys.argv.pop(1)), scan.scan_log_dirs

    def slow_scan_log_dirs(out, index, log_dirs, relabel=None):
        running.touch()
        time.sleep(600)
        return original(out, index, log_dirs, relabel)

    scan.scan_log_dirs = slow_scan_log_dirs
    from kreplica.cli.main import run
    sys.argv[0] = "kreplica"
    run()
""")


def _session_processes(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[3]) == sid:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="finds Spark's processes in /proc")
def test_ctrl_c_in_the_middle_of_a_scan_exits_130_with_one_line_and_leaves_no_complete_table(tmp_path) -> None:
    script, running, out = tmp_path / "slow_scan.py", tmp_path / "running", tmp_path / "tables"
    script.write_text(SLOW_SCAN)
    # a session of its own: Ctrl-C at a terminal signals the whole foreground group (JVM and workers too)
    proc = subprocess.Popen([sys.executable, str(script), str(running), "fleet", "scan", str(FLEET), "--output-dir", str(out),
                             "--master", "local[1]", "-f", "ndjson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV, start_new_session=True)
    try:
        deadline = time.monotonic() + SPARK_TIMEOUT
        while not running.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running.exists(), proc.communicate()[1]
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=SPARK_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (proc.returncode, stdout) == (130, "")
    note, interrupted = stderr.splitlines()
    assert note.startswith(BREAK_EVEN_NOTE) and interrupted == "kreplica: interrupted"
    # Spark stopped: its JVM and Python workers end with the command
    deadline = time.monotonic() + 60
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _session_processes(proc.pid) == []
    assert not list(out.rglob(SUCCESS_MARKER)) and not any((out / t).exists() for t in SCAN_TABLES)
    refused = CliRunner().invoke(app, ["fleet", "analyze", str(out)])
    assert refused.exit_code == 2 and "a fleet scan that did not finish" in refused.stderr
