"""Long reads show a progress bar on stderr when it is a terminal, and nothing otherwise."""

from __future__ import annotations

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

    def recording(label: str, total: int):
        class Recorder:
            def __enter__(self_inner):
                self_inner.done = 0
                self_inner.cm = real(label, total)
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


def test_no_bar_without_a_terminal() -> None:
    with progress.byte_progress("x", 1 << 40) as advance:
        assert advance is None
