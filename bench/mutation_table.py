"""The mutation score per module, from mutmut's own account of every mutant.

    mutmut results --all true | python bench/mutation_table.py [--equivalent bench/mutation-equivalent.txt] \
        [--killed-since bench/mutation-killed-since/*.txt]
    python bench/mutation_table.py PART1.txt PART2.txt ...    # a run split by module, one table
    python bench/mutation_table.py NOW.txt --carry EARLIER.txt@REV  # a run of the changed functions

Reads ``NAME: STATUS`` lines (mutmut 3 names a mutant ``<module>.x_<function>__mutmut_<n>`` or
``<module>.xǁ<Class>ǁ<method>__mutmut_<n>``) and prints one row per module and a total:
mutants, killed (a timeout counts as killed: the mutant made a test hang), survived, no tests (no
test reaches the function), not run (not checked yet), equivalent (survivors listed, with their
reason, in the ``--equivalent`` file: one mutant name per line, ``#`` starts a comment), killed
since (survivors of the run, or mutants no test of the run reached, that a test added after it
kills, each seen to: the mutant applied, the test failing (``bench/mutation_kills.py``); listed in
the ``--killed-since`` files, same format) and the
score, ``(killed + killed since) / (checked - equivalent)``. Module names are shown relative to ``kreplica.``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict

_MANGLED = re.compile(r"\.(?:x_|xǁ)[^.]*__mutmut_\d+$")
COLUMNS = ("mutants", "killed", "survived", "no tests", "not run", "equivalent", "killed since", "score")
_KILLED = {"killed", "timeout", "segfault", "suspicious"}


def module_of(name: str) -> str:
    """``kreplica.analysis.log.recovery.x_recover__mutmut_3`` -> ``analysis.log.recovery``."""
    module = _MANGLED.sub("", name)
    return module.removeprefix("kreplica.")


def read_names(*paths: str | None) -> set[str]:
    """The mutant names of listing files (one a line, ``#`` starts a comment)."""
    names: set[str] = set()
    for path in paths:
        if path is None:
            continue
        with open(path, encoding="utf-8") as fh:
            names |= {line.split("#", 1)[0].strip() for line in fh} - {""}
    return names


def merged(listings: list[list[str]]) -> list[str]:
    """The lines of several runs' listings, each module's from the last listing that checked it
    completely (none left ``not checked``), else from the last that holds it: a run split by module
    (``bench/mutation.sh 'kreplica.model.cluster.*'``) adds up to one table, and a module is never
    counted from two runs whose numbering may differ."""
    by_module: list[dict[str, list[str]]] = []
    for listing in listings:
        per: dict[str, list[str]] = defaultdict(list)
        for line in listing:
            name, sep, _ = line.rstrip("\n").rpartition(": ")
            if sep and "__mutmut_" in name:
                per[module_of(name.strip())].append(line)
        by_module.append(per)
    out = []
    for module in sorted({m for per in by_module for m in per}):
        holding = [per[module] for per in by_module if module in per]
        complete = [rows for rows in holding if not any(r.rstrip().endswith(": not checked") for r in rows)]
        out += (complete or holding)[-1]
    return out


def carried(lines: list[str], earlier: list[str], changed: set[str]) -> list[str]:
    """``lines`` with each ``not checked`` mutant of an unchanged function given the verdict
    ``earlier`` holds for it (a function's mutants are numbered from its source alone)."""
    verdicts = {}
    for line in earlier:
        name, sep, status = line.rstrip("\n").rpartition(": ")
        if sep and status.strip() != "not checked":
            verdicts[name.strip()] = status.strip()
    out = []
    for line in lines:
        name, sep, status = line.rstrip("\n").rpartition(": ")
        name = name.strip()
        if (sep and status.strip() == "not checked" and name in verdicts
                and name.rsplit("__mutmut_", 1)[0] not in changed):
            line = f"{name}: {verdicts[name]}\n"
        out.append(line)
    return out


def table(lines, equivalent: set[str], killed_since: set[str] = frozenset()) -> list[tuple[str, Counter]]:
    per: dict[str, Counter] = defaultdict(Counter)
    for line in lines:
        name, sep, status = line.rstrip("\n").rpartition(": ")
        if not sep or "__mutmut_" not in name:
            continue
        c = per[module_of(name.strip())]
        c["mutants"] += 1
        status = status.strip()
        if status in _KILLED:
            c["killed"] += 1
        elif status == "survived":
            name = name.strip()
            c["equivalent" if name in equivalent else "killed since" if name in killed_since else "survived"] += 1
        elif status == "no tests":
            c["killed since" if name.strip() in killed_since else "no tests"] += 1
        else:
            c["not run"] += 1
    return sorted(per.items())


def _score(c: Counter) -> str:
    judged = c["killed"] + c["killed since"] + c["survived"] + c["no tests"]
    return f"{100 * (c['killed'] + c['killed since']) / judged:.0f}%" if judged else "-"


def render(rows: list[tuple[str, Counter]]) -> str:
    width = max([len(m) for m, _ in rows] + [len("all")]) + 2
    out = ["module".ljust(width) + "".join(f"{h:>13}" for h in COLUMNS)]
    total: Counter = Counter()
    for module, c in rows:
        total.update(c)
        out.append(module.ljust(width) + "".join(f"{c[h]:>13}" for h in COLUMNS[:-1]) + f"{_score(c):>13}")
    out.append("all".ljust(width) + "".join(f"{total[h]:>13}" for h in COLUMNS[:-1]) + f"{_score(total):>13}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("listings", nargs="*", help="`mutmut results --all true` listings of the parts of a split "
                        "run (default: one on stdin)")
    parser.add_argument("--equivalent", help="file of equivalent mutants' names, one a line")
    parser.add_argument("--killed-since", nargs="*", default=[],
                        help="files of survivors' names that tests added since kill, one a line")
    parser.add_argument("--carry", metavar="LISTING@REV",
                        help="a listing of the tree at commit REV whose verdicts carry over to unchanged functions")
    args = parser.parse_args()
    listings = [open(path, encoding="utf-8").readlines() for path in args.listings] or [sys.stdin.readlines()]
    lines = merged(listings)
    if args.carry:
        path, _, rev = args.carry.rpartition("@")
        from mutation_changed import changed_functions
        lines = carried(lines, open(path, encoding="utf-8").readlines(), changed_functions(rev))
    print(render(table(lines, read_names(args.equivalent), read_names(*args.killed_since))))


if __name__ == "__main__":
    main()
