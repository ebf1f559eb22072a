"""How far a piece of evidence reaches: the value every "past the evidence" check compares with.

A point asked for outside the evidence (a zxid, metadata offset, log offset or time) is an
answer of its own (exit 2 with what exists), never the nearest state shown as the one asked for.
The control plane's spans are measured in :mod:`kreplica.model.cluster.span`, a partition log's
in :mod:`kreplica.model.log.log_cut`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EvidenceSpan:
    """The first and last position a state can be had at, and the first and last time the
    evidence records (``None``: the evidence has none, e.g. ZooKeeper snapshots without logs)."""

    kind: str                   # "zookeeper" | "kraft" ("log": a partition's segments, inspect-log)
    first_position: int | None
    last_position: int | None
    first_time: int | None
    last_time: int | None
    #: ZooKeeper: the first logged transaction, when a log reaches back before every state
    first_logged: int | None = None


def merge_spans(a: EvidenceSpan, b: EvidenceSpan) -> EvidenceSpan:
    """The span holding both (``None`` bounds give way to the other's)."""
    def low(x, y):
        return y if x is None else x if y is None else min(x, y)

    def high(x, y):
        return y if x is None else x if y is None else max(x, y)

    return EvidenceSpan(a.kind, low(a.first_position, b.first_position), high(a.last_position, b.last_position),
                        low(a.first_time, b.first_time), high(a.last_time, b.last_time))
