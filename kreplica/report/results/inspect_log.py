"""``inspect-log``'s result: the events of its walk, streamed to the seam as they are read (memory
stays flat, and ndjson takes the compiled renderer's path: :func:`~kreplica.report.schemas.
inspect_log.emit_events`); the error findings are counted on the way."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.analysis.inspect.inspect_log import Event
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import Payload
from kreplica.report.output.seam import Report
from kreplica.report.schemas.inspect_log import emit_events


class InspectLogReport(Report):
    """The events of :func:`~kreplica.analysis.inspect.inspect_log.inspect_groups`, rendered once."""

    def __init__(self, events: Iterable[Event], payload: Payload) -> None:
        self._events = events
        self._payload = payload
        self._errors = 0

    def emit(self, emitter: Emitter) -> None:
        self._errors = emit_events(self._events, emitter, self._payload)

    def render_text(self, console) -> None:
        from kreplica.report.text.inspect_log import render_text

        self._errors = render_text(self._events, console, self._payload)

    def has_problems(self) -> bool:
        """An error finding in what was read."""
        return self._errors > 0
