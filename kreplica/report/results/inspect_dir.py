"""``inspect-dir``'s result: a report per log directory and partition, streamed."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.analysis.inspect.inspect_dir import LogDirReport, PartitionReport
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import StreamedReport
from kreplica.report.schemas.inspect_dir import emit_reports


class InspectDirReport(StreamedReport):
    """The reports of :func:`~kreplica.analysis.inspect.inspect_dir.inspect_log_dirs`."""

    def __init__(self, reports: Iterable[LogDirReport | PartitionReport]) -> None:
        self._reports = reports

    def emit_stream(self, emitter: Emitter) -> int:
        return emit_reports(self._reports, emitter)

    def render_stream(self, console) -> int:
        from kreplica.report.text.inspect_dir import render_text

        return render_text(self._reports, console)
