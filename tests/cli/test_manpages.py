"""The man pages in ``man/`` are exactly what the commands' ``--help`` data generates, and
each lists every option ``--help`` shows."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.cli.manpage import render_all
from tests.conftest import ROOT
from tests.builders.commands import GROUPS

PAGES = render_all()


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in sorted(PAGES)])
def test_committed_page_matches_generated(name: str) -> None:
    committed = ROOT / "man" / name
    assert committed.is_file(), f"man/{name} is missing: run python -m kreplica.cli.manpage man"
    assert committed.read_text(encoding="utf-8") == PAGES[name], \
        f"man/{name} is stale: run python -m kreplica.cli.manpage man"


def test_no_stray_pages() -> None:
    assert {p.name for p in (ROOT / "man").glob("*.1")} == set(PAGES)


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in sorted(PAGES) if n != "kreplica.1"])
def test_every_help_option_is_in_the_page(name: str) -> None:
    command = name[len("kreplica-"):-len(".1")]
    group, _, sub = command.partition("-")
    args = [group, sub] if group in GROUPS else [command]   # kreplica-zk-dump.1 is `kreplica zk dump`
    help_text = CliRunner().invoke(app, [*args, "--help"]).stdout
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", help_text))
    page = PAGES[name].replace("\\-", "-")
    assert options, "the help lists options"
    assert {o for o in options if o not in page} == set()
