"""The README's quick start is what CI runs, line for line, and it sets up a virtual environment
(a system Python that is externally managed refuses a bare ``pip install``)."""

from __future__ import annotations

from tests.conftest import ROOT


def _quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines()]


def test_ci_runs_each_quick_start_command_verbatim_on_its_own_line() -> None:
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = _quick_start()
    assert len(commands) == 2
    assert all(c in ci_lines for c in commands)
    assert ci_lines.index(commands[0]) < ci_lines.index(commands[1])


def test_quick_start_installs_into_a_virtual_environment() -> None:
    setup, tests = _quick_start()
    assert setup.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install ")
    assert tests.startswith(". .venv/bin/activate && ")
