"""``bench/mutation_table.py``: the per-module mutation score the bench README reports, from
mutmut's own account of each mutant, with the equivalents and the survivors killed since."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutation_table", ROOT / "bench" / "mutation_table.py")
mutation_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation_table)

LINES = [
    "    kreplica.analysis.a.x_f__mutmut_1: killed",
    "    kreplica.analysis.a.x_f__mutmut_2: survived",
    "    kreplica.analysis.a.x_f__mutmut_3: survived",
    "    kreplica.analysis.a.x_f__mutmut_4: survived",
    "    kreplica.analysis.a.xǁCǁm__mutmut_1: timeout",
    "    kreplica.analysis.a.x_g__mutmut_1: not checked",
    "    kreplica.model.b.x_h__mutmut_1: no tests",
]


def test_equivalents_are_left_out_and_kills_since_count() -> None:
    rows = dict(mutation_table.table(LINES, {"kreplica.analysis.a.x_f__mutmut_2"},
                                     {"kreplica.analysis.a.x_f__mutmut_3"}))
    a = rows["analysis.a"]
    assert (a["mutants"], a["killed"], a["survived"], a["equivalent"], a["killed since"], a["not run"]) == \
        (6, 2, 1, 1, 1, 1)
    assert mutation_table._score(a) == "75%"                     # (2 + 1) / (2 + 1 + 1)
    assert mutation_table._score(rows["model.b"]) == "0%"        # no tests reach it: not killed


def test_a_kill_since_is_only_a_survivor_s() -> None:
    """A name in the killed-since list that the run killed, or never ran, stays what the run says."""
    rows = dict(mutation_table.table(LINES, set(), {"kreplica.analysis.a.x_f__mutmut_1",
                                                    "kreplica.analysis.a.x_g__mutmut_1"}))
    assert (rows["analysis.a"]["killed"], rows["analysis.a"]["killed since"], rows["analysis.a"]["not run"]) == \
        (2, 0, 1)


def test_names_files_skip_comments(tmp_path: Path) -> None:
    f = tmp_path / "k.txt"
    f.write_text("# header\n\nkreplica.a.x_f__mutmut_1  # tests/x.py::t\n", encoding="utf-8")
    assert mutation_table.read_names(str(f), None) == {"kreplica.a.x_f__mutmut_1"}


def test_a_mutant_no_test_of_the_run_reached_counts_once_a_later_test_kills_it() -> None:
    rows = dict(mutation_table.table(LINES, set(), {"kreplica.model.b.x_h__mutmut_1"}))
    b = rows["model.b"]
    assert (b["no tests"], b["killed since"], mutation_table._score(b)) == (0, 1, "100%")


def test_a_split_run_takes_each_module_from_the_part_that_checked_it_completely() -> None:
    first = ["    kreplica.analysis.a.x_f__mutmut_1: killed\n", "    kreplica.model.b.x_h__mutmut_1: not checked\n",
             "    kreplica.model.b.x_h__mutmut_2: killed\n", "    kreplica.model.c.x_k__mutmut_1: not checked\n"]
    second = ["    kreplica.analysis.a.x_f__mutmut_1: not checked\n", "    kreplica.model.b.x_h__mutmut_1: survived\n",
              "    kreplica.model.b.x_h__mutmut_2: killed\n", "    kreplica.model.c.x_k__mutmut_1: not checked\n",
              "    kreplica.model.c.x_k__mutmut_2: not checked\n"]
    rows = dict(mutation_table.table(mutation_table.merged([first, second]), set()))
    # a: complete in the first part only; b: in the second; c: complete in neither, the last part's
    assert (rows["analysis.a"]["killed"], rows["analysis.a"]["not run"]) == (1, 0)
    assert (rows["model.b"]["survived"], rows["model.b"]["killed"], rows["model.b"]["not run"]) == (1, 1, 0)
    assert (rows["model.c"]["mutants"], rows["model.c"]["not run"]) == (2, 2)


def test_an_earlier_tree_s_verdicts_carry_over_to_unchanged_functions_only() -> None:
    """mutmut's rule on resume: a function whose source is unchanged keeps its mutants' verdicts;
    a changed function's stay unchecked, and what the current run checked is never overwritten."""
    now = ["kreplica.analysis.a.x_f__mutmut_1: not checked\n",
           "kreplica.analysis.a.x_f__mutmut_2: survived\n",
           "kreplica.analysis.a.x_g__mutmut_1: not checked\n",
           "kreplica.analysis.a.x_h__mutmut_1: not checked\n"]
    earlier = ["kreplica.analysis.a.x_f__mutmut_1: killed\n",
               "kreplica.analysis.a.x_f__mutmut_2: killed\n",
               "kreplica.analysis.a.x_g__mutmut_1: killed\n",
               "kreplica.analysis.a.x_h__mutmut_1: not checked\n"]
    out = mutation_table.carried(now, earlier, {"kreplica.analysis.a.x_g"})
    assert [line.rstrip("\n").rpartition(": ")[2] for line in out] == \
        ["killed", "survived", "not checked", "not checked"]
