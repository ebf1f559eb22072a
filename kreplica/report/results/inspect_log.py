"""``inspect-log``'s result: the events of its walk, streamed to the seam as they are read (memory
stays flat, and ndjson takes the compiled renderer's path: :func:`~kreplica.report.schemas.
inspect_log.emit_events`); the error findings are counted on the way."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.analysis.inspect.inspect_log import Event
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import Payload
from kreplica.report.output.seam import StreamedReport
from kreplica.report.schemas.inspect_log import emit_events


class InspectLogReport(StreamedReport):
    """The events of :func:`~kreplica.analysis.inspect.inspect_log.inspect_groups`, rendered once."""

    def __init__(self, events: Iterable[Event], payload: Payload) -> None:
        self._events = events
        self._payload = payload

    def emit_stream(self, emitter: Emitter) -> int:
        return emit_events(self._events, emitter, self._payload)

    def render_stream(self, console) -> int:
        from kreplica.report.text.inspect_log import render_text

        return render_text(self._events, console, self._payload)
