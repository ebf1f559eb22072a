"""The layers of ARCHITECTURE.md hold: ``lint-imports`` checks the contract in pyproject.toml
(``[tool.importlinter]``), so an import from a layer to one on its right fails the suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports() -> list[str]:
    script = Path(sys.executable).with_name("lint-imports")
    return [str(script)] if script.exists() else [shutil.which("lint-imports") or "lint-imports"]


def test_imports_only_go_leftwards_through_the_layers() -> None:
    done = subprocess.run([*_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
