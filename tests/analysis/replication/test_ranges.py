"""The one rule for building offset ranges (``kreplica.analysis.replication.ranges.extend``): ranges
that overlap or touch and are of the same kind are one range; a gap of even one offset, or another
kind, starts a new one. Divergence's ``ranges`` and truncation's discarded / still-divergent offsets
are printed as built here (README, truncate-plan and diverge output)."""

from __future__ import annotations

import pytest

from kreplica.analysis.replication.ranges import Range, extend


@pytest.mark.parametrize("first, last, kind, expected", [
    pytest.param(3, 6, None, [Range(0, 6)], id="overlapping"),
    pytest.param(5, 9, None, [Range(0, 9)], id="touching"),
    pytest.param(6, 9, None, [Range(0, 4), Range(6, 9)], id="one-offset-gap"),
    pytest.param(7, 9, None, [Range(0, 4), Range(7, 9)], id="two-offset-gap"),
    pytest.param(5, 9, "only_b", [Range(0, 4), Range(5, 9, "only_b")], id="touching-other-kind"),
    pytest.param(1, 3, None, [Range(0, 4)], id="inside"),
])
def test_extend(first, last, kind, expected) -> None:
    out = [Range(0, 4)]
    extend(out, first, last, kind)
    assert out == expected


def test_extend_an_empty_list() -> None:
    out: list[Range] = []
    extend(out, 2, 3, "divergent")
    assert out == [Range(2, 3, "divergent")]
