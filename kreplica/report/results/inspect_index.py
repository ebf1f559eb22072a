"""``inspect-index``'s result: each index file's entries, findings and summary, streamed."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import Report
from kreplica.report.schemas.inspect_index import emit


class InspectIndexReport(Report):
    """``(path, item)`` pairs of :func:`~kreplica.analysis.inspect.inspect_index.inspect_index`;
    ``entries`` false (``--verify-only``) leaves the entries out, findings and summaries in."""

    def __init__(self, items: Iterable[tuple[str, object]], *, entries: bool) -> None:
        self._items = items
        self._entries = entries
        self._errors = 0

    def emit(self, emitter: Emitter) -> None:
        self._errors = emit(self._items, emitter, entries=self._entries)

    def render_text(self, console) -> None:
        from kreplica.report.text.inspect_index import render_text

        self._errors = render_text(self._items, console, entries=self._entries)

    def has_problems(self) -> bool:
        """An error finding in an index."""
        return self._errors > 0
