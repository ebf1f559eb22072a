"""Offset ranges built in offset order, and the one rule for merging them: ranges that overlap or
touch and are of the same kind are one range. Truncation's discarded and still-divergent offsets
and divergence's ranges (kinded) are all built this way."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Range:
    """Offsets ``first``-``last`` (inclusive); ``kind`` says what they are where a caller sorts
    ranges into kinds (divergence), ``None`` where they are just offsets."""

    first: int
    last: int
    kind: str | None = None


def extend(out: list[Range], first: int, last: int, kind: str | None = None) -> None:
    """Add ``first``-``last`` to ``out`` (built in offset order), merged into the last range when
    they overlap or touch and are of the same kind."""
    if out and out[-1].kind == kind and first <= out[-1].last + 1:
        out[-1] = Range(out[-1].first, max(out[-1].last, last), kind)
    else:
        out.append(Range(first, last, kind))
