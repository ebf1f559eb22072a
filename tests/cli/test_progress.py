"""Long reads show a progress bar on stderr when it is a terminal, and nothing otherwise."""

from __future__ import annotations

import contextlib
import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kreplica.cli import progress
from kreplica.cli.main import app
from tests.conftest import FIXTURES

SCENARIO = FIXTURES / "scenarios" / "kip101-scenario-1"
REPLICAS = [str(SCENARIO / "broker-1" / "orders-0"), str(SCENARIO / "broker-2" / "orders-0")]
COMMANDS = {
    "inspect-dir": ["inspect-dir", *REPLICAS],
    "inspect-log": ["inspect-log", *REPLICAS],
    "epochs": ["epochs", *REPLICAS],
    "truncate-plan": ["truncate-plan", "--leader", REPLICAS[0], "--follower", REPLICAS[1]],
    "diverge": ["diverge", *REPLICAS],
    "groups": ["groups", str(FIXTURES / "groups" / "broker-1"), str(FIXTURES / "groups" / "broker-2")],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_terminal_gets_a_bar_that_reaches_the_total(monkeypatch, name: str) -> None:
    seen: list[tuple[str, int, int]] = []
    real = progress.byte_progress

    def recording(label: str, total: int, **kw):
        class Recorder:
            def __enter__(self_inner):
                self_inner.done = 0
                self_inner.cm = real(label, total, **kw)
                inner = self_inner.cm.__enter__()

                def advance(n: int) -> None:
                    self_inner.done += n
                    if inner is not None:
                        inner(n)
                return advance

            def __exit__(self_inner, *exc):
                seen.append((label, total, self_inner.done))
                return self_inner.cm.__exit__(*exc)
        return Recorder()

    terminal = Console(file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr(progress, "PROGRESS_THRESHOLD", 0)
    monkeypatch.setattr(progress, "stderr_console", lambda: terminal)
    monkeypatch.setattr(progress, "_stderr_is_tty", lambda: True)
    monkeypatch.setattr(progress, "byte_progress", recording)
    result = CliRunner().invoke(app, [*COMMANDS[name], "-f", "ndjson"])
    assert result.exit_code in (0, 1), result.output
    assert seen and all(total > 0 and done == total for _, total, done in seen), seen


@pytest.mark.parametrize(("records", "size", "bar"), [
    # decoding every record is some 20 times slower a byte: a bar from 4 MiB, not 64
    pytest.param(True, progress.RECORDS_PROGRESS_THRESHOLD, True, id="records-at-4MiB"),
    pytest.param(True, progress.RECORDS_PROGRESS_THRESHOLD - 1, False, id="records-below"),
    pytest.param(False, progress.RECORDS_PROGRESS_THRESHOLD, False, id="batches-at-4MiB"),
    pytest.param(False, progress.PROGRESS_THRESHOLD, True, id="batches-at-64MiB"),
])
def test_the_threshold_follows_the_work(monkeypatch, records: bool, size: int, bar: bool) -> None:
    monkeypatch.setattr(progress, "stderr_console", lambda: Console(file=io.StringIO(), force_terminal=True))
    monkeypatch.setattr(progress, "_stderr_is_tty", lambda: True)
    with progress.byte_progress("x", size, records=records) as advance:
        assert (advance is not None) == bar


def test_no_bar_without_a_terminal() -> None:
    with progress.byte_progress("x", 1 << 40) as advance:
        assert advance is None


def test_a_fleet_job_shows_its_files_bytes_and_partitions_done() -> None:
    from kreplica.pipeline.spark.job_progress import JobWork

    assert progress._counts(JobWork("segments", 4, 4_000_000, 2), 0.5) == "2/4 files, 2.0 MB/4.0 MB, 2 partitions"
    assert progress._counts(JobWork("partitions", partitions=6), 0.5) == "3/6 partitions"
    assert progress._counts(JobWork("log directories"), 0.5) == ""


def test_the_fleet_display_follows_sparks_jobs_and_never_goes_back(monkeypatch) -> None:
    from kreplica.pipeline.spark.job_progress import JobWork

    terminal = Console(file=io.StringIO(), force_terminal=True, width=120)
    monkeypatch.setattr(progress, "stderr_console", lambda: terminal)
    monkeypatch.setattr(progress, "_stderr_is_tty", lambda: True)
    monkeypatch.setattr(progress, "FLEET_POLL_SECONDS", 0)
    shares = [None, 0.5, 0.25, 0.75]

    def done() -> float | None:
        if not shares:
            raise RuntimeError("Spark stopped")  # the display stops asking, quietly
        return shares.pop(0)

    with progress.fleet_progress() as display:
        display.job(JobWork("segments", 4, 4_000_000, 2))
        display._poll(done)
        assert display._done == 0.75
        display.job(JobWork("checks across segments", 1))
        assert display._done == 0.0


def test_no_fleet_display_without_a_terminal_or_beside_sparks_log(monkeypatch) -> None:
    with progress.fleet_progress() as display:
        assert display is None
    monkeypatch.setattr(progress, "_stderr_is_tty", lambda: True)
    monkeypatch.setattr(progress, "stderr_console", lambda: Console(file=io.StringIO(), force_terminal=True))
    with progress.fleet_progress(shown=False) as display:
        assert display is None


def test_the_timeline_shows_how_far_its_history_is_walked(monkeypatch) -> None:
    """A timeline's bar runs over the history's positions (zxids here) as its events reach them,
    to the last one; shown on a terminal only, for evidence past the records threshold."""
    reached: list[int] = []
    real = progress.position_progress

    @contextlib.contextmanager
    def recording(label, total_bytes, span):
        with real(label, total_bytes, span) as inner:
            assert inner is not None
            yield lambda position: (reached.append(position), inner(position))

    monkeypatch.setattr(progress, "RECORDS_PROGRESS_THRESHOLD", 0)
    monkeypatch.setattr(progress, "stderr_console", lambda: Console(file=io.StringIO(), force_terminal=True))
    monkeypatch.setattr(progress, "_stderr_is_tty", lambda: True)
    monkeypatch.setattr(progress, "position_progress", recording)
    result = CliRunner().invoke(app, ["timeline", str(FIXTURES / "timeline" / "zookeeper"), "-f", "ndjson"])
    assert result.exit_code in (0, 1), result.output
    assert reached and max(reached) == 0x1b     # the fixture's last transaction

