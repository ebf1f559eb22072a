"""The fixture tree is exactly what ``fixtures/generate.py`` writes: nothing hand-edited,
nothing stale, nothing missing (pyelftools' corpus police, for generated fixtures)."""

from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path

from tests.conftest import FIXTURES
from tests.conftest import RECORDED as RECORDED_CORPUS


def _load_generator():
    spec = importlib.util.spec_from_file_location("fixture_generator", FIXTURES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# recorded from real clusters by tests/realkafka/record.py, not written by the generator
RECORDED = RECORDED_CORPUS.name


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.relative_to(root).parts[0] != RECORDED}


def test_committed_fixtures_are_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    _load_generator().generate(tmp_path)
    generated = _files(tmp_path)
    committed = _files(FIXTURES) - {"generate.py"}
    assert committed == generated
    mismatched = [name for name in sorted(generated)
                  if not filecmp.cmp(tmp_path / name, FIXTURES / name, shallow=False)]
    assert mismatched == []


def test_generator_is_deterministic(tmp_path: Path) -> None:
    generator = _load_generator()
    generator.generate(tmp_path / "a")
    generator.generate(tmp_path / "b")
    for name in _files(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_fixtures_cover_every_magic_and_codec() -> None:
    from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
    from kreplica.formats.log.batch import RecordBatch
    from kreplica.model.logdir.segments import find_segment_groups

    seen = {(b.magic, b.compression) for b in inspect_groups(find_segment_groups([str(FIXTURES / "logs")]),
                                                             InspectOptions())
            if isinstance(b, RecordBatch)}
    expected = {(2, c) for c in range(5)} | {(m, c) for m in (0, 1) for c in range(4)}
    assert expected <= seen
