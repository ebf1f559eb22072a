"""Which survivors of a mutmut run a test kills, seen by running it against each mutant.

    mutmut results --all true > run.txt
    python bench/mutation_kills.py run.txt tests/analysis/inspect/test_inspect_partition.py \
        [--module kreplica.analysis.inspect.inspect_dir] [--mutants mutants]
    python bench/mutation_kills.py run.txt --check bench/mutation-killed-since/*.txt

The first form runs the given tests once per survivor (of ``--module``, a name prefix) in mutmut's
own copy of the tree, with ``MUTANT_UNDER_TEST`` naming the mutant as mutmut sets it, and prints
each survivor that makes a test fail as a ``--killed-since`` line (``name  # failing test``); the
second runs, for each survivor of the run listed in the files, the test its line names, and prints
the lines whose test does not fail, or that name none (a name numbered on older code can denote another mutant). The
tests are copied into ``mutants/tests`` beside the run's (a file the run holds in another version
as ``<name>_since.py``: a running mutmut has imported the run's), and the unmutated tree is run
first, so a test failing there is refused.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

_FAILED = re.compile(r"^FAILED (\S+)", re.M)


def survivors(results: Path, prefix: str = "") -> list[str]:
    """The names of a ``mutmut results --all true`` listing's mutants that no test of the run
    killed: survived, or reached by none of its tests."""
    names = []
    for line in results.read_text(encoding="utf-8").splitlines():
        name, sep, status = line.rpartition(": ")
        if sep and status.strip() in ("survived", "no tests") and name.strip().startswith(prefix):
            names.append(name.strip())
    return names


def failing_test(mutants: Path, mutant: str, tests: list[str]) -> str | None:
    """The first of ``tests`` that fails with ``mutant`` active, or ``None``."""
    env = dict(os.environ, MUTANT_UNDER_TEST=mutant)
    env.setdefault("KREPLICA_ORACLE", str(Path(__file__).resolve().parents[2] / "shared" / "oracle"))
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-rf", "-p", "no:cacheprovider", *tests],
                              cwd=mutants, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode == 0:
        return None
    found = _FAILED.search(done.stdout)
    return found.group(1) if found else f"exit {done.returncode}"


def copy_tests(tests: list[str], mutants: Path) -> list[str]:
    """Put ``tests`` in mutmut's tree, as they are here: a file new since the run under its own
    name, a file the run holds in another version beside it as ``<name>_since.py`` (a running
    mutmut has imported the run's version). The node ids to run there."""
    out = []
    for test in tests:
        path, sep, rest = test.partition("::")
        here = Path(path).read_bytes()
        target = mutants / path
        if target.exists() and target.read_bytes() != here:
            path = path.removesuffix(".py") + "_since.py"
            target = mutants / path
        if not target.exists() or target.read_bytes() != here:
            target.write_bytes(here)
        out.append(path + sep + rest)
    return out


def as_here(test: str) -> str:
    """A node id in mutmut's tree as the test is named here."""
    path, sep, rest = test.partition("::")
    return path.removesuffix("_since.py") + ".py" + sep + rest if path.endswith("_since.py") else test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a `mutmut results --all true` listing")
    parser.add_argument("tests", nargs="*", help="test files or node ids to run against each survivor")
    parser.add_argument("--module", default="", help="only survivors whose name starts with this")
    parser.add_argument("--mutants", type=Path, default=Path("mutants"), help="mutmut's copy of the tree")
    parser.add_argument("--check", nargs="*", default=[], help="killed-since files whose named tests to check")
    args = parser.parse_args()
    left = survivors(args.results, args.module)
    if args.check:
        listed = {}
        for path in args.check:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                name, _, test = line.partition("#")
                if name.strip():
                    listed[name.strip()] = (test.strip(), line)
        for name in left:
            if name in listed:
                test, line = listed[name]
                if not test:
                    print(f"{line}  # names no test: cannot be checked")
                    continue
                if failing_test(args.mutants, name, copy_tests([test], args.mutants)) is None:
                    print(line)
        return
    tests = copy_tests(args.tests, args.mutants)
    if failing_test(args.mutants, "none", tests) is not None:
        sys.exit("the tests fail on the unmutated tree: fix them first")
    for name in left:
        test = failing_test(args.mutants, name, tests)
        if test is not None:
            print(f"{name}  # {as_here(test)}", flush=True)


if __name__ == "__main__":
    main()
