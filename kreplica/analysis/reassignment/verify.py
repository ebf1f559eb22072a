"""The state of in-flight reassignments, as ``kafka-reassign-partitions.sh --verify`` would judge it.

A partition is being reassigned when it has adding or removing replicas (KIP-455, Kafka's
``isBeingReassigned``) or an entry in ZooKeeper's ``/admin/reassign_partitions`` (the ≤ 2.5 tool).
Its target is the replica list less the removing replicas (KIP-455 writes the target first), or
the znode's list. Each adding replica has caught up when it is in the ISR; the controller finishes
once every target replica is (kafka-algorithms spec §5.5).

Given a reassignment file (a proposal), every partition in it is judged as the tool's ``--verify``
does: ``in_progress`` while the cluster still reassigns it, else ``completed`` when the replicas
equal the file's list (order counts), else ``differs``. Throttle configs still set (topic replica
lists, broker rates) are listed: the tool clears them only when no reassignment is active.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kreplica.analysis.reassignment.phases import BROKER_THROTTLE_CONFIGS, TOPIC_THROTTLE_CONFIGS
from kreplica.model.cluster.assignment import Assignment, TopicPartition


@dataclass(frozen=True, slots=True)
class ReassignmentStatus:
    """One partition: ``status`` is ``in_progress``, ``completed`` or ``differs``; ``caught_up`` and
    ``lagging`` split the replicas still to join the ISR."""

    topic: str
    partition: int
    status: str
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    target: tuple[int, ...]
    leader: int | None
    isr: tuple[int, ...] | None
    caught_up: tuple[int, ...]
    lagging: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ThrottleLeft:
    """A throttle config still set: on a topic or a broker entity (``<default>`` included)."""

    entity_type: str    # "topic" | "broker"
    entity: str
    config: str
    value: str


@dataclass(frozen=True)
class VerifyResult:
    statuses: tuple[ReassignmentStatus, ...]
    throttles: tuple[ThrottleLeft, ...]

    @property
    def in_progress(self) -> int:
        return sum(1 for s in self.statuses if s.status == "in_progress")

    @property
    def has_problems(self) -> bool:
        """Anything still moving, a replica set other than planned, or throttles left behind."""
        return any(s.status != "completed" for s in self.statuses) or bool(self.throttles)


def verify_reassignments(assignment: Assignment,
                         proposal: Mapping[TopicPartition, tuple[int, ...]] | None = None) -> VerifyResult:
    """Every in-flight reassignment of ``assignment`` (and, with ``proposal``, every partition in
    it), and the throttles still set."""
    pending = {(r["topic"], r["partition"]): tuple(r["replicas"]) for r in assignment.pending_reassignments
               if "topic" in r and "partition" in r and "replicas" in r}
    statuses = []
    keys: Iterable[TopicPartition]
    if proposal is None:
        keys = [p.key for p in assignment.partitions if p.adding or p.removing or p.key in pending]
    else:
        keys = sorted(proposal)
    for key in keys:
        p = assignment.partition(*key)
        if p is None:
            statuses.append(ReassignmentStatus(key[0], key[1], "differs", (), (), (), tuple(proposal[key]),
                                               None, None, (), ()))
            continue
        moving = bool(p.adding or p.removing or key in pending)
        if p.adding or p.removing:
            target = tuple(b for b in p.replicas if b not in p.removing)
        elif key in pending:
            target = pending[key]
        else:
            target = tuple(proposal[key]) if proposal is not None else p.replicas
        if proposal is not None and key in proposal and not moving:
            status = "completed" if p.replicas == tuple(proposal[key]) else "differs"
            target = tuple(proposal[key])
        else:
            status = "in_progress"
        isr = set(p.isr) if p.isr is not None else set(p.replicas)
        joining = p.adding or tuple(b for b in target if b not in p.replicas or b not in isr)
        caught = tuple(b for b in joining if b in isr)
        lagging = tuple(b for b in joining if b not in isr)
        statuses.append(ReassignmentStatus(p.topic, p.partition, status, p.replicas, p.adding, p.removing,
                                           target, p.leader, p.isr, caught, lagging))
    throttles = [ThrottleLeft("topic", t, k, v) for t, cfg in sorted(assignment.topic_configs.items())
                 for k, v in sorted(cfg.items()) if k in TOPIC_THROTTLE_CONFIGS and v]
    throttles += [ThrottleLeft("broker", e, k, v) for e, cfg in sorted(assignment.broker_configs.items())
                  for k, v in sorted(cfg.items()) if k in BROKER_THROTTLE_CONFIGS]
    return VerifyResult(tuple(statuses), tuple(throttles))
