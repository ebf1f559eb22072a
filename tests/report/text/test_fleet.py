"""``fleet analyze``'s ranking rendered from its objects (no Spark), at 80 and 160 columns
(issue 20): headers wrap between words instead of being cut, no cell runs down the screen, the
least telling column (where the leader came from) goes first on a narrow terminal."""

from __future__ import annotations

from kreplica.pipeline.analyze.partitions import LEADER_FROM_EVIDENCE
from kreplica.report.text.fleet import render_ranking
from tests.builders.text_width import UNWRAPPED, assert_readable, render

WORST = [
    {"partition": "orders-0", "leader": 3, "leader_source": LEADER_FROM_EVIDENCE, "committed_loss_records": 16659,
     "followers_losing_committed": ["broker-1", "broker-2"], "divergent_pairs": 1, "offline": None,
     "under_min_isr": False},
    {"partition": "payments-12", "leader": None, "leader_source": "cluster state", "committed_loss_records": 0,
     "followers_losing_committed": [], "divergent_pairs": 2, "offline": True, "under_min_isr": True},
]
SUMMARY = {"partitions": 2, "committed_loss_partitions": 1, "committed_loss_records": 16659, "divergent_partitions": 1}


def _ranking(width: int) -> str:
    return render(lambda c: render_ranking(WORST, SUMMARY, c), width)


def test_ranking_fits_80_columns_without_cutting_a_header() -> None:
    narrow = _ranking(80)
    assert_readable(narrow, _ranking(UNWRAPPED), 80)
    assert narrow.startswith("2 partitions analysed: 1 would lose committed data (16,659 records), 1 has")
    assert "16,659" in narrow and "(left out at 80 columns: leader from;" in narrow
    rows = [line for line in narrow.splitlines() if "orders-0" in line or line.startswith("│ ")]
    assert len(rows) <= 4   # two partitions, the first with its two followers on two lines


def test_ranking_uses_a_wide_terminal() -> None:
    wide = _ranking(160)
    assert_readable(wide, _ranking(UNWRAPPED), 160)
    assert "left out" not in wide and "leader from" in wide


def _partition(name: str, *findings: dict) -> list[dict]:
    return [*findings, {"type": "fleet_partition", "partition": name, "replicas": ["broker-1"], "leader": "broker-1",
                        "leader_source": "highest", "committed_loss_records": 0, "followers_losing_committed": [],
                        "divergent_pairs": 0, "offline": None, "under_min_isr": None, "notes": []}]


def test_a_partition_with_an_error_finding_is_counted_damaged_and_a_warning_is_not() -> None:
    # fleet analyze's exit rule (FleetSummary.has_problems) reads damaged_partitions: damage is exit 1
    # as in the single-partition commands, a warning alone is not
    from kreplica.report.schemas.fleet import FleetSummary

    error = {"type": "finding", "severity": "error", "kind": "offset_regression"}
    warning = {"type": "finding", "severity": "warning", "kind": "epoch_regression"}
    summary = FleetSummary()
    for objs in (_partition("t-0", error), _partition("t-1", warning), _partition("t-2")):
        summary.add(tuple(objs))
    assert summary.partitions == 3 and summary.damaged_partitions == 1 and summary.has_problems
    calm = FleetSummary()
    calm.add(tuple(_partition("t-1", warning)))
    assert calm.damaged_partitions == 0 and not calm.has_problems
