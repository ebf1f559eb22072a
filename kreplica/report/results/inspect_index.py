"""``inspect-index``'s result: each index file's entries, findings and summary, streamed."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import StreamedReport
from kreplica.report.schemas.inspect_index import emit


class InspectIndexReport(StreamedReport):
    """``(path, item)`` pairs of :func:`~kreplica.analysis.inspect.inspect_index.inspect_index`;
    ``entries`` false (``--verify-only``) leaves the entries out, findings and summaries in."""

    def __init__(self, items: Iterable[tuple[str, object]], *, entries: bool) -> None:
        self._items = items
        self._entries = entries

    def emit_stream(self, emitter: Emitter) -> int:
        return emit(self._items, emitter, entries=self._entries)

    def render_stream(self, console) -> int:
        from kreplica.report.text.inspect_index import render_text

        return render_text(self._items, console, entries=self._entries)
