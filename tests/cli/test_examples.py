"""Every man page has an EXAMPLES section, and every line of it runs on ``fixtures/`` as printed,
ends with the exit status the page states and prints something on stdout.

The examples are :data:`kreplica.cli.manpage.EXAMPLES`; ``tests/cli/test_manpages.py`` checks the
committed pages render them. The fleet examples start Spark's local mode (seconds each) and are
skipped, with the reason, where no Java runtime is installed, as ``tests/pipeline/test_fleet.py``
is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.cli.manpage import EXAMPLES, Example, render_all
from tests.builders.commands import GROUPS
from tests.examples import cannot_run, needs_shell, run_line

CASES = [pytest.param(command, example, id=f"{(command or 'kreplica').replace(' ', '-')}-{n}")
         for command, examples in EXAMPLES.items() for n, example in enumerate(examples, 1)]


def _command(page: str) -> str:
    """``kreplica-zk-dump.1`` -> ``zk dump``; ``kreplica.1`` -> ``""``."""
    stem = page[len("kreplica"):-len(".1")].lstrip("-")
    group, _, sub = stem.partition("-")
    return f"{group} {sub}" if group in GROUPS else stem


#: the commands with a fourth example, for the consumer impact of their replication event
CONSUMER_IMPACT = {"truncate-plan", "plan-elect", "timeline"}


def test_every_page_has_one_to_three_examples_of_its_own_command() -> None:
    assert set(EXAMPLES) == {_command(page) for page in render_all()}
    for command, examples in EXAMPLES.items():
        assert 1 <= len(examples) <= (4 if command in CONSUMER_IMPACT else 3), command
        for example in examples:
            assert example.lines[-1].startswith(f"kreplica {command}".rstrip() + " "), example
            assert any("fixtures/" in line for line in example.lines), example
            assert example.exit_code in (0, 1), "an example shows a completed run: 0 nothing wrong, 1 findings"


@pytest.mark.parametrize("command, example", CASES)
def test_example_runs_as_the_page_says(command: str, example: Example, tmp_path: Path) -> None:
    for n, line in enumerate(example.lines, 1):
        assert not needs_shell(line), "man page examples are plain command lines (no pipes, globs or variables)"
        if reason := cannot_run(line):
            pytest.skip(reason)
        ran = run_line(line, tmp_path)
        expected = example.exit_code if n == len(example.lines) else 0
        assert ran.exit_code == expected, f"{line}\nexit {ran.exit_code}, the page says {expected}\n{ran.stderr}"
        assert ran.stdout.strip(), f"{line} printed nothing"
