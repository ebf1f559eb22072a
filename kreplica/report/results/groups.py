"""``groups``' result: each ``__consumer_offsets`` partition answered
(:class:`~kreplica.analysis.groups.state.PartitionGroups`), at the replay point asked for."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.analysis.groups.state import PartitionGroups
from kreplica.model.coordinator.replay import ReplayPoint
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.seam import Report
from kreplica.report.schemas.groups import iter_objects


@dataclass(frozen=True)
class GroupsReport(Report):
    results: tuple[PartitionGroups, ...]
    point: ReplayPoint

    def objects(self) -> Iterator[dict]:
        return iter_objects(self.results, self.point)

    def emit(self, emitter: Emitter) -> None:
        emit = emitter.emit_plain   # NOTE: no float in these objects; one group_offset a committed offset
        for obj in self.objects():
            emit(obj)

    def render_text(self, console) -> None:
        from kreplica.report.text.groups import render_text

        render_text(self.results, self.point, console)

    def has_problems(self) -> bool:
        """Records that do not decode, offsets beyond the log end, damaged segments."""
        return any(r.has_errors for r in self.results)
