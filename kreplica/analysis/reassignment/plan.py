"""``plan-reassign`` as one analysis: from what a user asked, on one assignment, to everything the
command reports, decided here so the command only parses, loads and writes.

**Which path runs.** ``verify`` judges the cluster's in-flight reassignments (and, given the
executed file, each of its partitions) as ``kafka-reassign-partitions.sh --verify`` does
(:mod:`~kreplica.analysis.reassignment.verify`); every other action plans: the request
(:mod:`~kreplica.analysis.reassignment.request`), the plan
(:mod:`~kreplica.analysis.reassignment.planner`) and its figures
(:mod:`~kreplica.analysis.reassignment.bounds`), its phases and throttles
(:mod:`~kreplica.analysis.reassignment.phases`), and the controller's steps for each partition it
changes, in phase order, with the targets live (:mod:`~kreplica.analysis.reassignment.transitions`).

**What the files cover.** ``generate`` is Kafka's ``--generate``
(``ReassignPartitionsCommand.generateAssignment``): it proposes a replica list for every
partition of the topics it moves (all topics when none are named), changed or not, and prints
those partitions' current assignment to save for a rollback; the current list of a partition
being reassigned is that reassignment's target. The other actions propose only the partitions
they change, and the rollback puts each back as it was before the plan (again, a reassignment in
flight counts as completed). A plan of more than one phase also gets one file per phase, each
with its partitions' final replica lists; a single phase is the proposal itself.

**Throttles.** With a rate, each phase gets the configs Kafka's tool sets for it: from 2.6
(``Feature.REASSIGN_TOOL_ADMIN_API``) the move map includes the cluster's in-flight
reassignments, before that the ZooKeeper tool's rule; and its least duration when the rate is
positive and sizes are known.

**Exit status, as data.** ``has_problems``: a plan warned that a goal could not be reached (a
rack violation or imbalance a constraint forced); verify found a partition still moving, one that
differs from the executed file, or throttles left behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.analysis.reassignment.bounds import PlanSummary, summarize_plan
from kreplica.analysis.reassignment.phases import Phase, Throttle, phase_seconds, split_phases, throttle_configs
from kreplica.analysis.reassignment.planner import PartitionChange, ReassignmentPlan, plan_reassignment
from kreplica.analysis.reassignment.request import build_request
from kreplica.analysis.reassignment.transitions import TransitionTable, controller_for, transition_table
from kreplica.analysis.reassignment.verify import VerifyResult, verify_reassignments
from kreplica.model.cluster.assignment import Assignment, PartitionReplicas, TopicPartition
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion

#: the action that judges reassignments instead of planning one
VERIFY = "verify"
#: the action whose files cover whole topics, as Kafka's ``--generate`` prints them
GENERATE = "generate"

Layout = Mapping[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class PhaseThrottle:
    """The throttle configs ``--execute --throttle`` would set for one phase, at ``rate`` bytes/s,
    and the phase's least duration (``None`` without sizes or at rate 0)."""

    phase: int
    rate: int
    throttle: Throttle
    seconds: float | None


@dataclass(frozen=True)
class PlannedReassignment:
    """A plan and everything reported with it. ``proposal`` and ``rollback`` are the replica lists
    the two reassignment files hold; ``phase_proposals`` one per phase, only when there are
    several. ``phase_seconds`` has every phase (``None`` without a rate or sizes)."""

    source: str
    source_kind: str
    kafka_version: KafkaVersion
    controller: str
    plan: ReassignmentPlan
    summary: PlanSummary
    phases: tuple[Phase, ...]
    phase_seconds: Mapping[int, float | None]
    transitions: tuple[TransitionTable, ...]
    throttles: tuple[PhaseThrottle, ...]
    proposal: Layout
    rollback: Layout
    phase_proposals: Mapping[int, Layout]

    @property
    def has_problems(self) -> bool:
        """A goal the plan could not reach (it says which in ``plan.warnings``)."""
        return bool(self.plan.warnings)


#: what ``plan-reassign`` answers: a plan, or (``verify``) the state of reassignments
ReassignmentOutcome = PlannedReassignment | VerifyResult


def plan_reassign(assignment: Assignment, action: str, *, sizes: Mapping[TopicPartition, int] | None = None,
                  executed: Layout | None = None, kafka_version: KafkaVersion | None = None,
                  max_moves: int | None = None, max_bytes: int | None = None, phases: int | None = None,
                  throttle_rate: int | None = None, **request: object) -> ReassignmentOutcome:
    """What ``plan-reassign ACTION`` reports (see the module docstring).

    ``verify`` uses only ``executed`` (the reassignment file that was run, if any). Planning
    actions take :func:`~kreplica.analysis.reassignment.request.build_request`'s keywords in
    ``request``, ``sizes`` per partition, the phase caps and ``throttle_rate`` (bytes/s), under
    ``kafka_version`` (default: :data:`~kreplica.model.versions.DEFAULT_VERSION`). Raises
    :class:`~kreplica.analysis.reassignment.planner.PlanError` or
    :class:`~kreplica.analysis.reassignment.placement.PlacementError` for a request that cannot
    be met.
    """
    if action == VERIFY:
        return verify_reassignments(assignment, executed)
    version = kafka_version or DEFAULT_VERSION
    req = build_request(assignment, action, **request)  # type: ignore[arg-type]
    plan = plan_reassignment(assignment, req, sizes)
    summary = summarize_plan(assignment, plan, sizes)
    steps = split_phases(plan.changes, max_moves=max_moves, max_bytes=max_bytes, phases=phases)
    current = {p.key: p for p in assignment.partitions}
    controller = controller_for(version, assignment.source_kind)
    seconds = {p.number: phase_seconds(p, current, throttle_rate) if throttle_rate else None for p in steps}
    live = set(req.targets)
    transitions = tuple(transition_table(current[c.key], c.after, controller, live)
                        for p in steps for c in p.changes)
    throttles: tuple[PhaseThrottle, ...] = ()
    if throttle_rate is not None:
        in_flight = [p for p in assignment.partitions if p.adding or p.removing]
        admin_api = version.has(Feature.REASSIGN_TOOL_ADMIN_API)
        throttles = tuple(
            PhaseThrottle(p.number, throttle_rate,
                          throttle_configs(_final(p.changes), current, throttle_rate, in_flight=in_flight,
                                           admin_api=admin_api),
                          seconds[p.number])
            for p in steps)
    proposal, rollback = proposal_and_rollback(plan, current, assignment.topics)
    phase_proposals = {p.number: _final(p.changes) for p in steps} if len(steps) > 1 else {}
    return PlannedReassignment(assignment.source, assignment.source_kind, version, controller, plan, summary, steps,
                               seconds, transitions, throttles, proposal, rollback, phase_proposals)


def proposal_and_rollback(plan: ReassignmentPlan, current: Mapping[TopicPartition, PartitionReplicas],
                          topics: Iterable[str]) -> tuple[Layout, Layout]:
    """The replica lists of ``proposal.json`` and ``rollback.json`` (see the module docstring):
    for ``generate``, every partition of the requested topics (``topics``, all of the source's,
    when none were requested); otherwise the partitions the plan changes."""
    if plan.request.action == GENERATE:
        scope = set(plan.request.topics or topics)
        proposal = {k: v for k, v in plan.after.items() if k[0] in scope}
        return proposal, {k: current[k].target for k in proposal}
    return _final(plan.changes), {c.key: c.before for c in plan.changes}


def _final(changes: Iterable[PartitionChange]) -> dict[TopicPartition, tuple[int, ...]]:
    """Each changed partition's replica list after the plan."""
    return {c.key: c.after for c in changes}
