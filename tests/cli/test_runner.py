"""The one command runner (``kreplica/cli/runner.py``): exit codes for input the OS refuses, and a
closed stdout that ends the run quietly, every time."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.main import app
from kreplica.cli.runner import runs_command
from tests.conftest import FIXTURES

LOGS = FIXTURES / "logs"
REPLICA = FIXTURES / "scenarios" / "kip101-scenario-1" / "broker-1" / "orders-0"
KREPLICA = [sys.executable, "-m", "kreplica"]


def _closed_early(args: list[str], *, read: int) -> subprocess.CompletedProcess:
    """Run kreplica with a stdout pipe whose reader takes ``read`` bytes (0: none) and closes."""
    proc = subprocess.Popen([*KREPLICA, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if read:
        proc.stdout.read(read)
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.stderr.close()
    return subprocess.CompletedProcess(proc.args, proc.wait(timeout=120), b"", stderr)


@pytest.mark.parametrize("fmt", [pytest.param(f, id=f) for f in ("ndjson", "json", "msgpack", "text")])
@pytest.mark.parametrize("read", [pytest.param(0, id="closed-at-once"), pytest.param(1, id="after-one-byte"),
                                  pytest.param(70_000, id="after-a-pipe-buffer")])
def test_closed_stdout_exits_0_silently_every_time(fmt: str, read: int) -> None:
    # `kreplica inspect-log fixtures/logs --records | head -1`: the reader goes before the writer
    # is done (the output is ~650 KB, far more than a pipe holds); repeated because the race between
    # the reader closing and the writer's next write or final flush is what used to vary
    for _ in range(4):
        done = _closed_early(["inspect-log", str(LOGS), "--records", "-f", fmt], read=read)
        assert (done.returncode, done.stderr.decode()) == (0, "")


def test_closed_stdout_of_a_result_command_exits_0_silently() -> None:
    for fmt in ("text", "ndjson"):
        done = _closed_early(["epochs", str(REPLICA), "-f", fmt], read=0)
        assert (done.returncode, done.stderr.decode()) == (0, "")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads a file whatever its mode, so chmod 000 cannot make it unreadable; "
                           "test_os_errors_are_exit_2_naming_the_path covers the mapping")
def test_unreadable_segment_is_exit_2_naming_it(tmp_path: Path) -> None:
    segment = tmp_path / "orders-0" / "00000000000000000000.log"
    segment.parent.mkdir()
    segment.write_bytes(next(LOGS.glob("*/00000000000000000000.log")).read_bytes())
    segment.chmod(0)
    try:
        done = subprocess.run([*KREPLICA, "inspect-log", "-f", "ndjson", str(segment)], capture_output=True)
    finally:
        segment.chmod(0o644)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2
    assert len(lines) == 1 and str(segment) in lines[0] and "Traceback" not in lines[0]


def test_a_directory_where_a_file_belongs_is_exit_2_naming_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["offset-for-epoch", str(REPLICA), "--epochs-from", str(tmp_path)])
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and str(tmp_path) in lines[0] and "internal error" not in lines[0]


def _app_raising(exc: BaseException) -> typer.Typer:
    one = typer.Typer()

    @one.command()
    @runs_command
    def boom(debug: bool = False) -> int:
        raise exc

    return one


@pytest.mark.parametrize("exc,words", [
    pytest.param(PermissionError(errno.EACCES, "Permission denied", "/evidence/0.log"), "permission denied",
                 id="permission-denied"),
    pytest.param(IsADirectoryError(errno.EISDIR, "Is a directory", "/evidence/dir"), "is a directory", id="eisdir"),
    pytest.param(OSError(errno.ELOOP, "Too many levels of symbolic links", "/evidence/loop"),
                 "too many levels of symbolic links", id="eloop"),
])
def test_os_errors_are_exit_2_naming_the_path(exc: OSError, words: str) -> None:
    result = CliRunner().invoke(_app_raising(exc), [])
    assert result.exit_code == 2
    assert result.stderr == f"kreplica: error: {exc.filename}: {words}\n"


def test_broken_pipe_raised_by_a_command_is_exit_0_and_silent() -> None:
    result = CliRunner().invoke(_app_raising(BrokenPipeError(errno.EPIPE, "Broken pipe")), [])
    assert (result.exit_code, result.stderr) == (0, "")


def test_an_unexpected_error_is_exit_3_in_one_line() -> None:
    result = CliRunner().invoke(_app_raising(RuntimeError("bug")), [])
    assert result.exit_code == 3
    assert result.stderr.splitlines() == ["kreplica: internal error: RuntimeError: bug (run with --debug for the traceback)"]


def _app_returning(value: object) -> typer.Typer:
    one = typer.Typer()

    @one.command()
    @runs_command
    def done(debug: bool = False):
        return value

    return one


@pytest.mark.parametrize("status", [pytest.param(s, id=s.name) for s in ExitCode])
def test_a_command_exits_with_the_status_it_returns(status: ExitCode) -> None:
    result = CliRunner().invoke(_app_returning(status), [])
    assert (result.exit_code, result.stderr) == (status, "")


@pytest.mark.parametrize("value", [pytest.param(None, id="None"), pytest.param(7, id="not-a-status"),
                                   pytest.param("0", id="str"), pytest.param(True, id="bool")])
def test_a_command_returning_no_exit_status_is_an_internal_error_in_one_line(value: object) -> None:
    # a body that forgot its `return` used to reach int(None) outside the runner's `try`: a
    # traceback and exit 1, which the contract reserves for problems found in the evidence
    result = CliRunner().invoke(_app_returning(value), [])
    assert result.exit_code == ExitCode.INTERNAL == 3
    assert result.stderr.splitlines() == [
        f"kreplica: internal error: TypeError: done returned {value!r}, not an exit status "
        "(run with --debug for the traceback)"]


def test_ctrl_c_is_exit_130_in_one_line() -> None:
    result = CliRunner().invoke(_app_raising(KeyboardInterrupt()), [])
    assert result.exit_code == ExitCode.INTERRUPTED == 130
    assert result.stderr == "kreplica: interrupted\n"


def test_exit_codes_are_unique_and_keep_their_numbers() -> None:
    assert {c.name: c.value for c in ExitCode} == {"OK": 0, "PROBLEMS": 1, "USAGE": 2, "INTERNAL": 3,
                                                   "INTERRUPTED": 130}


def test_a_memory_error_in_a_codec_is_an_internal_error_not_a_finding(monkeypatch) -> None:
    # out of memory while inflating says nothing about the evidence: exit 3, one line, no finding
    import cramjam

    segment = LOGS / "metrics-0" / "00000000000000000000.log"

    def out_of_memory(*args):
        raise MemoryError("out of memory")

    for library, call in ((cramjam.zstd, "decompress_into"), (cramjam.lz4, "decompress_block_into"),
                          (cramjam.snappy, "decompress_raw_into")):
        monkeypatch.setattr(library, call, out_of_memory)
    monkeypatch.setattr(zlib, "decompressobj", out_of_memory)
    result = CliRunner().invoke(app, ["inspect-log", str(segment), "--records", "-f", "ndjson"])
    assert result.exit_code == 3, result.output
    assert result.stderr.splitlines() == [
        "kreplica: internal error: MemoryError: out of memory (run with --debug for the traceback)"]
    assert '"decompression_error"' not in result.stdout
