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


#: What reading a file takes: the modules that reach the file system and kreplica's own openers.
_FILE_ACCESS_MODULES = {"os", "pathlib", "mmap", "shutil", "io", "tempfile"}
_FILE_OPENERS = {"open_buffer", "read_small_file", "open_regular", "read_bytes", "scan_log_dir", "scan_partition_dir"}


def test_analysis_reads_no_files_itself() -> None:
    # ARCHITECTURE: analysis is functions of model values; files are opened by model/ (which hands
    # analysis buffers, as model.segments.mapped_segments does) so analysis never needs a path
    import ast

    offences = []
    modules = sorted((ROOT / "kreplica" / "analysis").rglob("*.py"))
    # every module of every sub-package, not only the top level (analysis/election/zk.py and kin)
    assert {m.parent.name for m in modules} >= {"log", "replication", "election", "reassignment", "timeline", "inspect"}
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            if isinstance(node, ast.Import):
                offences += [f"{module.name}: import {a.name}" for a in node.names
                             if a.name.split(".")[0] in _FILE_ACCESS_MODULES]
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] in _FILE_ACCESS_MODULES:
                    offences.append(f"{module.name}: from {node.module} import ...")
                offences += [f"{module.name}: imports {a.name}" for a in node.names if a.name in _FILE_OPENERS]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                offences.append(f"{module.name}: line {node.lineno} calls open()")
    assert offences == []


def test_every_package_docstring_names_its_modules() -> None:
    # HOUSE-STYLE 11: a package's __init__ says what it holds; a module added without a line there
    # (or a line left for a module gone) makes the map false
    import ast

    missing = []
    for init in sorted((ROOT / "kreplica").rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        names = {p.stem for p in init.parent.glob("*.py")} - {"__init__", "__main__"}
        names |= {p.name for p in init.parent.iterdir() if (p / "__init__.py").is_file()}
        missing += [f"{init.parent.relative_to(ROOT)}: {n}" for n in sorted(names) if f"``{n}``" not in doc
                    and f".{n}`" not in doc]
    assert missing == []
