"""When the fleet pays for itself (issue 22): few partitions and little data are answered sooner
by the single-partition commands, and ``fleet scan`` says so before Spark starts."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

from kreplica.pipeline import break_even  # noqa: I001 (no Spark or Arrow needed)
from kreplica.pipeline.break_even import EvidenceSize


@pytest.mark.parametrize("size, cores, below", [
    pytest.param(EvidenceSize(1, 3, 995), 2, True, id="three-replica-fixture"),
    pytest.param(EvidenceSize(break_even.break_even_partitions() - 1, 3, 0), 64, True, id="partitions-just-below"),
    pytest.param(EvidenceSize(break_even.break_even_partitions(), 3, 0), 1, False, id="partitions-at-break-even"),
    pytest.param(EvidenceSize(1, 3, int(break_even.break_even_bytes(2) * 0.99)), 2, True, id="bytes-just-below"),
    pytest.param(EvidenceSize(1, 3, int(break_even.break_even_bytes(2) * 1.01)), 2, False, id="bytes-just-above"),
    pytest.param(EvidenceSize(44, 57, 9_000_000), 2, False, id="scenario-fleet"),
])
def test_below_break_even(size: EvidenceSize, cores: int, below: bool) -> None:
    assert size.below_break_even(cores) is below


def test_more_cores_bring_the_break_even_down() -> None:
    assert break_even.break_even_bytes(1) > break_even.break_even_bytes(2) > break_even.break_even_bytes(64) > 0


def test_evidence_is_measured_by_listing_and_the_count_stops_when_enough() -> None:
    fleet = FIXTURES / "scenarios" / "three-replicas"
    log_dirs = [str(p) for p in sorted(fleet.glob("broker-*"))]
    size = break_even.measure(log_dirs)
    assert size == EvidenceSize(1, 3, sum(f.stat().st_size for f in fleet.rglob("*.log")))
    scenarios = [str(p) for p in sorted((FIXTURES / "scenarios").glob("*/broker-*"))]
    assert break_even.measure(scenarios, enough=1).replicas == 1
