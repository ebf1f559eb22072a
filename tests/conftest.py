"""Shared test fixtures: where the oracle lives, and which CRC implementation is loaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kreplica.formats import checksums

ROOT = Path(__file__).resolve().parents[1]
#: ../shared/oracle beside the repository; KREPLICA_ORACLE names it when the tests run from a copy
#: of the tree elsewhere (bench/mutation.sh runs them from mutmut's mutants/ folder)
ORACLE = Path(os.environ.get("KREPLICA_ORACLE") or ROOT.parent / "shared" / "oracle")
FIXTURES = ROOT / "fixtures"
#: the recorded real-cluster corpus (tests/realkafka/record.py), beside the generated fixtures
RECORDED = FIXTURES / "real-kafka"


def generated_fixtures(pattern: str) -> list[Path]:
    """The generated fixtures matching ``pattern`` at any depth, in order: the recorded corpus
    (its brokers' text logs, dozens of metadata copies) has tests of its own."""
    return sorted(p for p in FIXTURES.rglob(pattern) if RECORDED not in p.parents)


def oracle_dir(*parts: str) -> Path:
    """The oracle folder, or skip (outside CI) / fail (in CI) when it is absent."""
    path = ORACLE.joinpath(*parts)
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the oracle folder {path} is required in CI (CI=true) but is missing")
        pytest.skip(f"oracle folder {path} is absent (it lives in ../shared beside the repository)")
    return path


def pytest_report_header(config):
    from kreplica.formats.log import default_records

    return (f"kreplica CRC implementation: {checksums.CRC_IMPLEMENTATION} "
            f"(hardware crc32c: {checksums.CRC32C_HARDWARE}); record decoder: "
            f"{default_records.DECODE_IMPLEMENTATION}")


def pytest_sessionstart(session):
    # aiokafka's practice: assert which twin loaded, so a run meant for the reference CRC
    # cannot silently test the fast one (or the reverse).
    wanted = os.environ.get("KREPLICA_CRC", "fast").lower() or "fast"
    assert checksums.CRC_IMPLEMENTATION == ("reference" if wanted == "reference" else "fast")
    from kreplica.formats.log import default_records

    if os.environ.get("KREPLICA_DECODE", "").lower() == "python":
        assert default_records.DECODE_IMPLEMENTATION == "python"


def pytest_collection_modifyitems(session, config, items):
    # Under mutmut a mutant's tests run with -x, so the first failure ends the run: run the
    # fastest first (mutmut's own timings, held in the forked worker's state) and a killed
    # mutant costs its cheapest killing test instead of whichever slow test came first. A
    # module's tests stay together (by their fastest) so its module fixtures are set up once.
    # The verdict is unchanged: a survivor still runs every test that reaches its function.
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    if os.environ.get("KREPLICA_MUTATION_STAGE") == "fast":
        # bench/mutation.sh's first stage: the differential tests over the wild corpus compare
        # two readings through the one image, so a mutant of it changes both sides alike; they
        # cost most of a survivor's time. Whatever survives this stage is run again with them.
        slow = [item for item in items
                if "[wild/" in item.nodeid or item.nodeid.startswith("tests/interop/test_wild_")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item not in slow]
    from mutmut.state import state

    durations = state().duration_by_test
    if not durations:
        return
    cost = {item.nodeid: durations.get(item.nodeid, float("inf")) for item in items}
    fastest: dict[str, float] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        fastest[module] = min(fastest.get(module, float("inf")), cost[item.nodeid])
    items.sort(key=lambda item: (fastest[item.nodeid.split("::")[0]],
                                 item.nodeid.split("::")[0], cost[item.nodeid]))
