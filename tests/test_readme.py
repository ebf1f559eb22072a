"""The README documents every finding kind and its quick start is what CI runs."""

from __future__ import annotations

from kreplica.formats.findings import KINDS
from tests.conftest import ROOT


def test_every_finding_kind_is_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [k for k in KINDS if f"| `{k}` |" not in readme]
    assert missing == []


def test_ci_runs_the_readme_quick_start() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.strip().splitlines()]
    assert len(commands) == 2
    install, test = commands
    assert install in ci
    assert any(line.strip() == test for line in ci.splitlines())
