"""Every ``type`` of machine output is listed once, with the one module that builds it
(``kreplica/report/schemas/types.py``), and every object every command writes on the fixtures has
a type in that list: one name, one schema (``summary`` is ``inspect-log``'s alone; ``plan-elect``
ends with ``election_summary`` or ``sweep_summary``)."""

from __future__ import annotations

import ast
import json
import shlex
from pathlib import Path

import pytest

from kreplica.cli.manpage import EXAMPLES
from kreplica.report.schemas.types import TYPES
from tests.conftest import ROOT
from tests.examples import cannot_run, run_line

REPORT = ROOT / "kreplica" / "report"


def _built_types() -> dict[str, set[str]]:
    """type -> the modules (``schemas.inspect_log``...) with a dict literal ``{"type": <it>, ...}``."""
    built: dict[str, set[str]] = {}
    for path in sorted(REPORT.rglob("*.py")):
        module = ".".join(path.relative_to(REPORT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "type" and isinstance(value, ast.Constant) \
                        and isinstance(value.value, str):
                    built.setdefault(value.value, set()).add(module)
    return built


def test_each_type_is_built_by_the_one_module_the_table_names() -> None:
    built = _built_types()
    assert set(built) == set(TYPES), "a type built but not listed, or listed but built nowhere"
    assert {t: modules for t, modules in built.items() if modules != {TYPES[t]}} == {}


def test_the_summaries_have_their_own_names() -> None:
    # three schemas were all "summary" (inspect-log's segment, plan-elect's plan and its sweep);
    # the one ARCHITECTURE.md documents keeps the name
    assert TYPES["summary"] == "schemas.inspect_log"
    assert TYPES["election_summary"] == TYPES["sweep_summary"] == "schemas.election"


#: beyond the man pages' examples: what only these inputs write
EXTRA_LINES = (
    "kreplica groups fixtures/groups/broker-2 fixtures/groups/broker-1",   # group_replica_disagreement
    "kreplica plan-reassign --assignment fixtures/reassign/assignment.json --brokers 1-6 verify "
    "--reassignment-json-file fixtures/reassign/assignment.json",           # reassignment_status, verify
    "kreplica plan-reassign ../shared/oracle/zookeeper/snapshot-plus-logs verify",   # throttle_left
)


def _ndjson(line: str) -> str:
    """``line`` writing ndjson whatever format it asked for."""
    words = shlex.split(line)
    kept = [w for i, w in enumerate(words) if w not in ("-f", "--format") and words[i - 1] not in ("-f", "--format")]
    return shlex.join([*kept, "-f", "ndjson"])


def _sequences() -> list[tuple[str, ...]]:
    """The man pages' examples (each a sequence of lines, the last one's output collected), and
    :data:`EXTRA_LINES`."""
    out = [tuple(example.lines) for examples in EXAMPLES.values() for example in examples]
    return out + [(line,) for line in EXTRA_LINES]


@pytest.mark.parametrize("lines", [pytest.param(s, id=shlex.split(s[-1])[1] + f"-{n}")
                                   for n, s in enumerate(_sequences())])
def test_every_object_a_command_writes_has_a_listed_type(lines: tuple[str, ...], tmp_path: Path) -> None:
    for line in lines:
        if reason := cannot_run(line):
            pytest.skip(reason)
    for line in lines[:-1]:
        assert run_line(line, tmp_path).exit_code == 0, line
    ran = run_line(_ndjson(lines[-1]), tmp_path)
    assert ran.exit_code in (0, 1), ran.stderr
    types = [json.loads(text)["type"] for text in ran.stdout.splitlines()]
    assert types, lines[-1]
    assert [t for t in types if t not in TYPES] == []
