"""``cluster-state``'s result: the cluster image at the point asked for, then its findings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.model.cluster import ClusterState
from kreplica.report.output.findings import finding_object
from kreplica.report.output.seam import Report
from kreplica.report.schemas.cluster_state import cluster_state_to_dict


@dataclass(frozen=True)
class ClusterStateReport(Report):
    state: ClusterState

    def objects(self) -> Iterator[dict]:
        yield cluster_state_to_dict(self.state)
        yield from (finding_object(f) for f in self.state.findings)

    def render_text(self, console) -> None:
        from kreplica.report.text.cluster_state import render_text

        render_text(cluster_state_to_dict(self.state), self.state.findings, console)

    def has_problems(self) -> bool:
        """A partition offline or under min ISR, or damage found in the evidence."""
        return self.state.has_problems or any(f.is_error for f in self.state.findings)
