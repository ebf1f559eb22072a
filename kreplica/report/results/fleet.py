"""The results of the fleet commands: ``fleet scan``'s totals, and ``fleet analyze``'s (and
``fleet run``'s) stream of each partition's objects.

The fleet's per-partition objects are the rows of its analysis tables (``DIR/analysis``: "the
table and the output are one"), made in Spark tasks by :func:`~kreplica.report.schemas.fleet.
partition_objects` and read back. They stream to the output; what the run comes to is folded
from them as they pass (:class:`~kreplica.report.schemas.fleet.FleetSummary`), keeping in memory
only the worst partitions the text ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import Report
from kreplica.report.schemas.fleet import FleetSummary, scan_object

@dataclass(frozen=True)
class FleetScanReport(Report):
    """``fleet scan``: what was scanned into ``out``."""

    out: str
    totals: object

    def objects(self) -> list[dict]:
        return [scan_object(self.out, self.totals)]

    def render_text(self, console) -> None:
        from kreplica.report.text.fleet import render_scan

        render_scan(scan_object(self.out, self.totals), console)

    def has_problems(self) -> bool:
        """A finding of error severity."""
        return bool(self.totals.errors)


class FleetAnalysisReport(Report):
    """``fleet analyze``: each partition's objects, then the ``fleet_summary`` (text: the worst
    partitions ranked). With ``out`` (``fleet run``), ``partitions`` begins with the scan's totals,
    written first as its ``fleet_scan`` object."""

    def __init__(self, partitions: Iterable, out: str | None = None) -> None:
        self._stream = iter(partitions)
        self._out = out
        self._totals = None
        self.summary = FleetSummary()

    def _scanned(self) -> dict | None:
        if self._out is None:
            return None
        self._totals = next(self._stream)
        return scan_object(self._out, self._totals)

    def emit(self, emitter: Emitter) -> None:
        scanned = self._scanned()
        if scanned is not None:
            emitter.emit(scanned)
        add = self.summary.add
        for objs in self._stream:
            add(objs)
            for o in objs:
                emitter.emit(o)
        emitter.emit(self.summary.summary_object())

    def render_text(self, console) -> None:
        from kreplica.report.text.fleet import render_ranking, render_scan

        scanned = self._scanned()
        first = next(self._stream, None)   # the scan's line once the analysis has come back
        if scanned is not None:
            render_scan(scanned, console)
        if first is not None:
            self.summary.add(first)
        for objs in self._stream:
            self.summary.add(objs)
        render_ranking(self.summary.worst(), self.summary.summary_object(), console)

    def has_problems(self) -> bool:
        """Damage in the scan, committed data at risk, divergence or damage in a partition."""
        return bool(self._totals is not None and self._totals.errors) or self.summary.has_problems
