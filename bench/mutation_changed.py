"""The functions whose source changed between a commit and the working tree, named as mutmut
names them (``<module>.x_<function>``, ``<module>.xǁ<Class>ǁ<method>``).

    python bench/mutation_changed.py REV          # one name a line

mutmut's unit of reuse: a resumed run keeps the verdicts of a function whose source is the same
and checks again the mutants of one that changed. ``mutation_table.py --carry LISTING@REV``
applies the same rule to a listing of an earlier tree, so a run on the current tree need only
check the changed functions.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ("kreplica/analysis", "kreplica/model/cluster", "kreplica/model/coordinator")


def _functions(source: str, module: str) -> dict[str, str]:
    tree = ast.parse(source)
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[f"{module}.x_{node.name}"] = ast.get_source_segment(source, node) or ""
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{module}.xǁ{node.name}ǁ{member.name}"] = ast.get_source_segment(source, member) or ""
    return out


def _at(rev: str, path: str) -> str | None:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def changed_functions(rev: str) -> set[str]:
    """The mangled names of the functions of mutmut's scope that are new or different in the
    working tree compared with ``rev``."""
    changed: set[str] = set()
    for path in sorted(p for d in SCOPE for p in (ROOT / d).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        module = rel.removesuffix(".py").replace("/", ".")
        now = _functions(path.read_text(encoding="utf-8"), module)
        old_source = _at(rev, rel)
        then = _functions(old_source, module) if old_source is not None else {}
        changed |= {name for name, body in now.items() if then.get(name) != body}
    return changed


if __name__ == "__main__":
    print("\n".join(sorted(changed_functions(sys.argv[1]))))
