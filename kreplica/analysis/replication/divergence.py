"""Where replicas of one partition differ, batch by batch, over their whole logs.

Two replicas agree on a batch when it has the same base and last offsets, leader epoch and CRC
there. Walking both logs in offset order gives the identical prefix, the first offset where
they hold different data, every divergent range (including a divergent middle followed by an
identical tail, the KAFKA-6880 "zombie" case), and the ranges only one of them holds — each
annotated with the replicas' high watermarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from kreplica.model.partition_log import PartitionLog
from kreplica.model.replica import require_one_partition

DIVERGENT = "divergent"


@dataclass(frozen=True, slots=True)
class DivergentRange:
    first: int
    last: int
    kind: str                      # "divergent" or "only_<label>"
    below_high_watermark: dict     # label -> bool: does the range start below that replica's HW


@dataclass(frozen=True, slots=True)
class Divergence:
    partition: str
    replicas: tuple[str, str]
    first_divergent_offset: int | None
    common_prefix_end: int
    ranges: tuple[DivergentRange, ...]
    high_watermarks: dict


def compare(a: PartitionLog, b: PartitionLog, partition: str) -> Divergence:
    """Compare two replicas' batches (sorted by offset) over the whole of both logs."""
    xs = sorted(a.batches, key=lambda x: (x.base_offset, x.position))
    ys = sorted(b.batches, key=lambda x: (x.base_offset, x.position))
    hws = {a.label: a.high_watermark, b.label: b.high_watermark}
    raw: list[list] = []  # [first, last, kind]

    def add(first: int, last: int, kind: str) -> None:
        if raw and raw[-1][2] == kind and first <= raw[-1][1] + 1:
            raw[-1][1] = max(raw[-1][1], last)
        else:
            raw.append([first, last, kind])

    i = j = 0
    first_divergent = None
    prefix_end = None
    start = max(xs[0].base_offset if xs else 0, ys[0].base_offset if ys else 0)
    while i < len(xs) or j < len(ys):
        if j >= len(ys):
            add(xs[i].base_offset, xs[i].last_offset, f"only_{a.label}")
            i += 1
            continue
        if i >= len(xs):
            add(ys[j].base_offset, ys[j].last_offset, f"only_{b.label}")
            j += 1
            continue
        x, y = xs[i], ys[j]
        if x.last_offset < y.base_offset:
            add(x.base_offset, x.last_offset, f"only_{a.label}")
            i += 1
            continue
        if y.last_offset < x.base_offset:
            add(y.base_offset, y.last_offset, f"only_{b.label}")
            j += 1
            continue
        if x.identity == y.identity:
            i += 1
            j += 1
            continue
        # overlapping but different: extend over every batch of either side that overlaps
        lo = min(x.base_offset, y.base_offset)
        hi = max(x.last_offset, y.last_offset)
        i += 1
        j += 1
        while True:
            grew = False
            while i < len(xs) and xs[i].base_offset <= hi:
                hi = max(hi, xs[i].last_offset)
                i += 1
                grew = True
            while j < len(ys) and ys[j].base_offset <= hi:
                hi = max(hi, ys[j].last_offset)
                j += 1
                grew = True
            if not grew:
                break
        if first_divergent is None:
            first_divergent = max(lo, start)
        add(lo, hi, DIVERGENT)
    for first, last, kind in raw:
        if prefix_end is None and first >= start:
            prefix_end = first
    if prefix_end is None:
        prefix_end = min(a.log_end_offset, b.log_end_offset)
    ranges = tuple(
        DivergentRange(first, last, kind, {label: (hw is not None and first < hw) for label, hw in hws.items()})
        for first, last, kind in raw
    )
    return Divergence(partition, (a.label, b.label), first_divergent, prefix_end, ranges, hws)


def compare_all(replicas: list[PartitionLog]) -> list[Divergence]:
    """``diverge``: every pair of replicas, in the order given."""
    require_one_partition(replicas)
    return [compare(a, b, a.name) for a, b in combinations(replicas, 2)]

