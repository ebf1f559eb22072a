"""``timeline``'s result: the run of :class:`~kreplica.analysis.timeline.analysis.TimelineAnalysis`,
streamed to the seam event by event (memory stays flat), then the data joined per partition, the
consumer impact and the ``timeline_summary``."""

from __future__ import annotations

from kreplica.analysis.timeline.analysis import TimelineAnalysis
from kreplica.formats.findings import Finding
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.findings import finding_object
from kreplica.report.output.seam import Report
from kreplica.report.schemas.consumer_impact import consumer_impact_object
from kreplica.report.schemas.timeline import event_to_dict, evidence_to_dicts, summary_to_dict


class TimelineReport(Report):
    """``kind`` (``zookeeper`` or ``kraft``) says how positions are written; ``per_partition``
    makes the text one table per partition instead of one time-ordered table."""

    def __init__(self, analysis: TimelineAnalysis, kind: str, *, per_partition: bool = False) -> None:
        self._analysis = analysis
        self._kind = kind
        self._per_partition = per_partition

    def _after(self) -> list[dict]:
        """What follows the events: each partition's joined data, then the consumer impact."""
        a = self._analysis
        return [*(obj for pe in a.evidence for obj in evidence_to_dicts(pe, self._kind)),
                *(consumer_impact_object(i) for i in a.impacts)]

    def _summary(self) -> dict:
        a = self._analysis
        return summary_to_dict(a.end, a.summary, a.evidence)

    def emit(self, emitter: Emitter) -> None:
        plain = emitter.emit_plain     # the timeline's objects hold no float
        kind = self._kind
        a = self._analysis
        for item in a.items():
            if isinstance(item, Finding):
                emitter.emit(finding_object(item))
            else:
                plain(event_to_dict(item, kind))
        for obj in (obj for pe in a.evidence for obj in evidence_to_dicts(pe, kind)):
            plain(obj)
        for i in a.impacts:
            emitter.emit(consumer_impact_object(i))
        plain(self._summary())

    def render_text(self, console) -> None:
        from kreplica.report.text.timeline import TextReport

        report = TextReport(console, per_partition=self._per_partition)
        kind = self._kind
        for item in self._analysis.items():
            if not isinstance(item, Finding):     # the findings come at the end, after the tables
                report.event(event_to_dict(item, kind))
        report.finish(self._after(), self._summary(), self._analysis.findings)

    def has_problems(self) -> bool:
        return self._analysis.has_problems
