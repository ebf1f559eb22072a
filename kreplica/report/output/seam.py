"""The one output seam: a command's result, rendered as text, json, ndjson or msgpack.

Every command hands :func:`write` one :class:`Report`: what it found, and how to say it. The seam
chooses the format (:func:`~kreplica.report.output.formats.resolve_format`), builds the text
console or the :class:`~kreplica.report.output.emitter.Emitter`, and asks the report for its
text or its machine objects; the command's exit status comes from :meth:`Report.has_problems`,
a question about the analysis values the report holds, never about the objects rendered.

A report whose values are a stream (``inspect-log``, ``zk log``, ``timeline``...) is read as it
is rendered, so memory stays flat; what it found is tallied on the way (:class:`StreamedReport`
counts the error findings its renderers pass), and :meth:`Report.has_problems` answers once
:func:`write` has returned. Such a report is rendered once. The reports themselves live in :mod:`kreplica.report.results`, one module per command.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import OutputFormat, resolve_format


class Report:
    """A command's result: its machine objects (:meth:`objects`, or :meth:`emit` where a stream
    has a faster path), its text for people (:meth:`render_text`), and whether the evidence has
    problems (:meth:`has_problems`, exit status 1)."""

    def objects(self) -> Iterable[dict]:
        """The machine objects, in the order the command's schema gives them."""
        raise NotImplementedError

    def emit(self, emitter: Emitter) -> None:
        """Write the machine objects (streaming reports override this with their fast paths)."""
        emit = emitter.emit
        for obj in self.objects():
            emit(obj)

    def render_text(self, console) -> None:
        """The text report, on ``console`` (rich; imported only by text output)."""
        raise NotImplementedError

    def has_problems(self) -> bool:
        """Whether the run found problems in the evidence (exit 1); for a streamed report, once
        rendered."""
        raise NotImplementedError


class StreamedReport(Report):
    """A result whose values are a stream, read once as it is rendered: its renderers
    (:meth:`emit_stream`, :meth:`render_stream`) return how many error findings they passed,
    and those are its problems."""

    _errors = 0

    def emit_stream(self, emitter: Emitter) -> int:
        raise NotImplementedError

    def render_stream(self, console) -> int:
        raise NotImplementedError

    def emit(self, emitter: Emitter) -> None:
        self._errors = self.emit_stream(emitter)

    def render_text(self, console) -> None:
        self._errors = self.render_stream(console)

    def has_problems(self) -> bool:
        """An error finding in what was read (once rendered)."""
        return self._errors > 0


def write(report: Report, requested: OutputFormat | None, stream: IO | None = None) -> None:
    """Render ``report`` in the format asked for (``None``: text on a terminal, ndjson
    elsewhere) to stdout, or to ``stream``."""
    fmt = resolve_format(requested, stream)
    if fmt is OutputFormat.text:
        from kreplica.report.output.console import text_console

        report.render_text(text_console(stream))
        return
    emitter = Emitter(fmt, stream)
    report.emit(emitter)
    emitter.close()
