"""``plan-elect``'s results: a plan of elections (with, from ``--log-dirs``, each elected
partition's candidates ranked and the consumer impact of the elections that lose records), or
the what-if sweep of ``--sweep``."""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.analysis.election.analysis import ElectionAnalysis
from kreplica.analysis.election.sweep import Sweep
from kreplica.report.output.seam import Report
from kreplica.report.schemas import election as schema
from kreplica.report.schemas.consumer_impact import consumer_impact_object


@dataclass(frozen=True)
class ElectionPlanReport(Report):
    """The elections, each ranking, each consumer impact, then the ``election_summary``."""

    analysis: ElectionAnalysis

    def objects(self) -> list[dict]:
        a = self.analysis
        return [*(schema.election_object(e) for e in a.plan.elections),
                *(schema.ranking_object(r) for r in a.rankings),
                *(consumer_impact_object(i) for i in a.impacts),
                schema.summary_object(a.plan)]

    def render_text(self, console) -> None:
        from kreplica.report.text.consumer_impact import render_consumer_impacts
        from kreplica.report.text.election import render_text

        a = self.analysis
        render_text([schema.election_object(e) for e in a.plan.elections],
                    [schema.ranking_object(r) for r in a.rankings], schema.summary_object(a.plan), console)
        if a.impacts:
            render_consumer_impacts([consumer_impact_object(i) for i in a.impacts], console)

    def has_problems(self) -> bool:
        return self.analysis.has_problems


@dataclass(frozen=True)
class SweepReport(Report):
    """Every harmful combination of failed brokers (or racks), then the summary."""

    sweep: Sweep

    def _combinations(self) -> list[dict]:
        return [schema.sweep_object(r, self.sweep.by_rack) for r in self.sweep.results]

    def objects(self) -> list[dict]:
        return [*self._combinations(), schema.sweep_summary(self.sweep)]

    def render_text(self, console) -> None:
        from kreplica.report.text.election import render_sweep

        render_sweep(self._combinations(), schema.sweep_summary(self.sweep), console)

    def has_problems(self) -> bool:
        """Some combination harms a partition (offline, unclean or under min ISR)."""
        return bool(self.sweep.results)
