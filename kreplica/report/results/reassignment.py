"""``plan-reassign``'s result: a plan with the files ``--output-dir`` wrote for it, or a verify."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kreplica.analysis.reassignment.plan import ReassignmentOutcome
from kreplica.analysis.reassignment.verify import VerifyResult
from kreplica.report.output.seam import Report
from kreplica.report.schemas.reassignment import plan_objects, verify_objects


@dataclass(frozen=True)
class ReassignmentReport(Report):
    """``files``: every file written, in order; ``phase_files``: each phase's."""

    outcome: ReassignmentOutcome
    files: tuple[str, ...] = ()
    phase_files: Mapping[int, str] = field(default_factory=dict)

    def objects(self) -> list[dict]:
        if isinstance(self.outcome, VerifyResult):
            return verify_objects(self.outcome)
        return plan_objects(self.outcome, self.files, self.phase_files)

    def render_text(self, console) -> None:
        from kreplica.report.text.reassignment import render_plan

        render_plan(self.objects(), console)

    def has_problems(self) -> bool:
        """A goal the plan could not reach; verify: a reassignment in flight, different from the
        file, or throttles left."""
        return self.outcome.has_problems
