"""``bench/mutation_kills.py``: a survivor (or a mutant no test of the run reached) counts as killed since only when a test fails with it
active (``MUTANT_UNDER_TEST`` set as mutmut sets it), and a test failing unmutated is refused."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutation_kills", ROOT / "bench" / "mutation_kills.py")
mutation_kills = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation_kills)

RESULTS = """    kreplica.analysis.a.x_f__mutmut_1: survived
    kreplica.analysis.a.x_f__mutmut_2: survived
    kreplica.analysis.a.x_f__mutmut_3: killed
    kreplica.model.b.x_g__mutmut_1: survived
    kreplica.model.b.x_h__mutmut_1: no tests
    kreplica.model.b.x_h__mutmut_2: not checked
"""
#: a stand-in for a test that tells mutant 2 from the real code and not mutant 1
TEST = """import os
def test_tells_mutant_2():
    assert os.environ["MUTANT_UNDER_TEST"] != "kreplica.analysis.a.x_f__mutmut_2"
"""


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "run.txt").write_text(RESULTS, encoding="utf-8")
    (tmp_path / "mutants" / "tests").mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, str(ROOT / "bench" / "mutation_kills.py"), "run.txt", *args,
                           "--mutants", "mutants"], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_survivors_are_read_by_status_and_module(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text(RESULTS, encoding="utf-8")
    assert mutation_kills.survivors(tmp_path / "run.txt", "kreplica.analysis.") == [
        "kreplica.analysis.a.x_f__mutmut_1", "kreplica.analysis.a.x_f__mutmut_2"]
    assert mutation_kills.survivors(tmp_path / "run.txt") == [
        "kreplica.analysis.a.x_f__mutmut_1", "kreplica.analysis.a.x_f__mutmut_2", "kreplica.model.b.x_g__mutmut_1",
        "kreplica.model.b.x_h__mutmut_1"]


def test_only_the_survivor_a_test_fails_on_is_printed(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text(TEST, encoding="utf-8")
    done = run(tmp_path, "tests/test_new.py", "--module", "kreplica.analysis.")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "kreplica.analysis.a.x_f__mutmut_2  # tests/test_new.py::test_tells_mutant_2"]
    assert (tmp_path / "mutants" / "tests" / "test_new.py").read_text(encoding="utf-8") == TEST


def test_a_test_failing_on_the_real_code_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text("def test_always_fails():\n    assert False\n", encoding="utf-8")
    done = run(tmp_path, "tests/test_new.py")
    assert done.returncode == 1 and "fail on the unmutated tree" in done.stderr and done.stdout == ""


def test_check_prints_the_listed_kills_whose_test_passes(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text(TEST, encoding="utf-8")
    listed = tmp_path / "since.txt"
    listed.write_text("# header\n"
                      "kreplica.analysis.a.x_f__mutmut_1  # tests/test_new.py::test_tells_mutant_2\n"
                      "kreplica.analysis.a.x_f__mutmut_2  # tests/test_new.py::test_tells_mutant_2\n"
                      "kreplica.analysis.a.x_f__mutmut_3  # tests/test_new.py::test_tells_mutant_2\n",
                      encoding="utf-8")
    done = run(tmp_path, "--check", str(listed))
    # mutant 1 is listed but its test passes on it; mutant 3 was killed by the run, not checked
    assert done.stdout.splitlines() == ["kreplica.analysis.a.x_f__mutmut_1  # tests/test_new.py::test_tells_mutant_2"]


def test_check_names_a_listed_kill_that_gives_no_test_as_unchecked(tmp_path: Path) -> None:
    listed = tmp_path / "since.txt"
    listed.write_text("kreplica.analysis.a.x_f__mutmut_2\n", encoding="utf-8")
    done = run(tmp_path, "--check", str(listed))
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["kreplica.analysis.a.x_f__mutmut_2  # names no test: cannot be checked"]


def test_a_test_file_changed_since_the_run_runs_beside_the_runs_version(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text(TEST, encoding="utf-8")
    (tmp_path / "mutants" / "tests").mkdir(parents=True)
    run_version = "def test_old():\n    pass\n"
    (tmp_path / "mutants" / "tests" / "test_new.py").write_text(run_version, encoding="utf-8")
    done = run(tmp_path, "tests/test_new.py")
    assert done.stdout.splitlines() == [
        "kreplica.analysis.a.x_f__mutmut_2  # tests/test_new.py::test_tells_mutant_2"]
    assert (tmp_path / "mutants" / "tests" / "test_new.py").read_text(encoding="utf-8") == run_version
    assert (tmp_path / "mutants" / "tests" / "test_new_since.py").read_text(encoding="utf-8") == TEST
