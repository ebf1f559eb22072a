"""The results of the replication commands — ``epochs``, ``offset-for-epoch``, ``truncate-plan``,
``diverge`` — each with the replicas it answered from.

Each begins with the findings of those replicas' logs that bear on the answer
(:func:`~kreplica.analysis.log.log_findings.log_findings`), so each says the damage of the logs
it answered from in one way: for programs, ``finding`` objects replica by replica in the order
given; for people, :func:`~kreplica.report.text.log_findings.render_log_findings`. A log with an
error finding is a problem (exit 1), as ``inspect-log`` and ``inspect-dir`` say of the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from kreplica.analysis.consumers.impact import ConsumerImpact
from kreplica.analysis.log.epoch_reconciliation import EpochsVerdict
from kreplica.analysis.log.log_findings import log_findings
from kreplica.analysis.replication.divergence import Divergence
from kreplica.analysis.replication.offset_for_epoch import OffsetForLeaderEpochAnswer
from kreplica.analysis.replication.truncation import TruncationPlan
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion
from kreplica.report.output.findings import finding_object
from kreplica.report.output.seam import Report
from kreplica.report.schemas import replication as schema
from kreplica.report.schemas.consumer_impact import consumer_impact_object


@dataclass(frozen=True)
class _FromReplicas(Report):
    """A result answered from ``replicas``: their log findings come first."""

    replicas: tuple[PartitionLog, ...]

    def logs_have_errors(self) -> bool:
        return any(f.is_error for r in self.replicas for f in log_findings(r))

    def objects(self) -> Iterator[dict]:
        for r in self.replicas:
            yield from (finding_object(f) for f in log_findings(r))
        yield from self.answer_objects()

    def answer_objects(self) -> Iterator[dict]:
        raise NotImplementedError

    def render_text(self, console) -> None:
        from kreplica.report.text.log_findings import render_log_findings

        render_log_findings(self.replicas, console)
        self.render_answer(console)

    def render_answer(self, console) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class EpochsReport(_FromReplicas):
    """``epochs``: per replica its lineage, checkpoint and loaded cache, then its disagreements."""

    verdicts: tuple[EpochsVerdict, ...]
    kafka_version: KafkaVersion

    def _objects(self) -> list[dict]:
        return [schema.epochs_object(v.state, v.checkpoint, self.kafka_version) for v in self.verdicts]

    def answer_objects(self) -> Iterator[dict]:
        for obj, v in zip(self._objects(), self.verdicts):
            yield obj
            yield from (finding_object(f) for f in v.findings)

    def render_answer(self, console) -> None:
        from kreplica.report.text.replication import render_epochs

        render_epochs(self._objects(), {v.state.label: list(v.findings) for v in self.verdicts}, console)

    def has_problems(self) -> bool:
        """A disagreement of error severity, or an error finding in a log."""
        return any(f.is_error for v in self.verdicts for f in v.findings) or self.logs_have_errors()


@dataclass(frozen=True)
class OffsetForEpochReport(_FromReplicas):
    """``offset-for-epoch``: one answer per query, as the replica (``replicas[0]``) would give it."""

    answers: tuple[OffsetForLeaderEpochAnswer, ...]
    kafka_version: KafkaVersion

    def answer_objects(self) -> Iterator[dict]:
        label = self.replicas[0].label
        return (schema.offset_for_epoch_object(label, a, self.kafka_version) for a in self.answers)

    def render_answer(self, console) -> None:
        from kreplica.report.text.replication import render_offset_for_epoch

        render_offset_for_epoch(list(self.answer_objects()), console)

    def has_problems(self) -> bool:
        """An answer carrying an error, or an error finding in the log."""
        return any(a.error != "NONE" for a in self.answers) or self.logs_have_errors()


@dataclass(frozen=True)
class TruncationReport(_FromReplicas):
    """``truncate-plan``: each follower's truncation against ``replicas[0]``, the files
    ``--output-dir`` wrote for it, then the consumer impact of the truncations that lose records."""

    plans: tuple[TruncationPlan, ...]
    exported: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    impacts: tuple[ConsumerImpact, ...] = ()

    def _objects(self) -> list[dict]:
        return [schema.truncation_object(p, self.exported.get(p.follower, ())) for p in self.plans]

    def answer_objects(self) -> Iterator[dict]:
        yield from self._objects()
        yield from (consumer_impact_object(i) for i in self.impacts)

    def render_answer(self, console) -> None:
        from kreplica.report.text.consumer_impact import render_consumer_impacts
        from kreplica.report.text.replication import render_truncation

        for obj in self._objects():
            render_truncation(obj, console)
        if self.impacts:
            render_consumer_impacts([consumer_impact_object(i) for i in self.impacts], console)

    def has_problems(self) -> bool:
        """Committed data lost, an error finding in a log, or a group known to have consumed
        records the log no longer has."""
        return (any(p.committed_loss for p in self.plans) or self.logs_have_errors()
                or any(i.loses_consumed_records for i in self.impacts))


@dataclass(frozen=True)
class DivergenceReport(_FromReplicas):
    """``diverge``: each pair of replicas compared."""

    divergences: tuple[Divergence, ...]

    def answer_objects(self) -> Iterator[dict]:
        return (schema.divergence_object(d) for d in self.divergences)

    def render_answer(self, console) -> None:
        from kreplica.report.text.replication import render_divergence

        for obj in self.answer_objects():
            render_divergence(obj, console)

    def has_problems(self) -> bool:
        """Divergent data, or an error finding in a log."""
        return any(d.differs for d in self.divergences) or self.logs_have_errors()
