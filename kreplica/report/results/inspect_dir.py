"""``inspect-dir``'s result: a report per log directory and partition, streamed."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.analysis.inspect.inspect_dir import LogDirReport, PartitionReport
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import Report
from kreplica.report.schemas.inspect_dir import emit_reports


class InspectDirReport(Report):
    """The reports of :func:`~kreplica.analysis.inspect.inspect_dir.inspect_log_dirs`."""

    def __init__(self, reports: Iterable[LogDirReport | PartitionReport]) -> None:
        self._reports = reports
        self._errors = 0

    def emit(self, emitter: Emitter) -> None:
        self._errors = emit_reports(self._reports, emitter)

    def render_text(self, console) -> None:
        from kreplica.report.text.inspect_dir import render_text

        self._errors = render_text(self._reports, console)

    def has_problems(self) -> bool:
        """An error finding in a log directory or partition."""
        return self._errors > 0
