"""The README documents every column of every fleet table, in the order the table has them, with
its type: a column added, renamed or retyped in ``tables.py`` (or the analysis tables) without
its line in "The fleet's tables" fails here."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

pa = pytest.importorskip("pyarrow", reason="the fleet tables are Arrow schemas (the fleet extra)")

from kreplica.pipeline.tables import schemas as tables  # noqa: E402
from kreplica.pipeline.analyze.partitions import ANALYSIS_OBJECTS, ANALYSIS_PARTITIONS  # noqa: E402

_ROW = re.compile(r"^\| `([a-z_]+)` \| ([^|]+) \|")
_KEY = "| *key* |"


def _documented() -> dict[str, list[tuple[str, str]]]:
    """Each ``#### `table` `` heading of the README's section and its (column, type) rows; the
    replica key's rows under ``key``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### The fleet's tables"):]
    section = section[:section.index("\n## ")]
    out: dict[str, list[tuple[str, str]]] = {}
    current = "key"
    for line in section.splitlines():
        heading = re.match(r"^#### `([a-z_/]+)`", line)
        if heading:
            current = heading.group(1)
            continue
        if line.startswith(_KEY):
            out.setdefault(current, []).extend(out["key"])
        row = _ROW.match(line)
        if row:
            out.setdefault(current, []).append((row.group(1), row.group(2).strip()))
    return out


def _arrow_type(kind: pa.DataType) -> str:
    """An Arrow type as the README writes it: ``list<struct<epoch int32, ...>>``."""
    if pa.types.is_list(kind):
        return f"list<{_arrow_type(kind.value_type)}>"
    if pa.types.is_struct(kind):
        return "struct<" + ", ".join(f"{f.name} {_arrow_type(f.type)}" for f in kind) + ">"
    return {"bool": "bool"}.get(str(kind), str(kind))


DOCUMENTED = _documented()


@pytest.mark.parametrize("name", sorted(tables.TABLES))
def test_every_scan_table_column_is_in_the_readme_with_its_type(name: str) -> None:
    schema = tables.TABLES[name]
    assert DOCUMENTED.get(name) == [(f.name, _arrow_type(f.type)) for f in schema], name


@pytest.mark.parametrize(("name", "columns"), [("analysis/partitions", ANALYSIS_PARTITIONS),
                                               ("analysis/objects", ANALYSIS_OBJECTS)])
def test_every_analysis_column_is_in_the_readme(name: str, columns) -> None:
    assert [c for c, _ in DOCUMENTED.get(name, [])] == [c for c, _ in columns]


def test_the_section_names_no_table_that_does_not_exist() -> None:
    assert set(DOCUMENTED) - {"key"} == set(tables.TABLES) | {"analysis/partitions", "analysis/objects"}
