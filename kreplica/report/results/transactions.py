"""``transactions``' result: the analysis (:class:`~kreplica.analysis.transactions.analysis.
TransactionsAnalysis`), kept to the transactional ids asked for."""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.analysis.transactions.analysis import TransactionsAnalysis
from kreplica.report.output.seam import Report
from kreplica.report.schemas.transactions import report_objects


@dataclass(frozen=True)
class TransactionsReport(Report):
    """``transactional_ids`` keeps the transactions of those ids and the open transactions
    joined to them (``None``: all)."""

    analysis: TransactionsAnalysis
    transactional_ids: frozenset[str] | None = None

    def objects(self) -> list[dict]:
        return report_objects(self.analysis, self.transactional_ids)

    def render_text(self, console) -> None:
        from kreplica.report.text.transactions import render_text

        render_text(self.objects(), self.analysis, console)

    def has_problems(self) -> bool:
        """A hanging transaction (of the ids asked for) or an error finding in a log."""
        wanted = self.transactional_ids
        return (any(wanted is None or v.transactional_id in wanted for v in self.analysis.hanging)
                or any(f.is_error for f in self.analysis.findings))
