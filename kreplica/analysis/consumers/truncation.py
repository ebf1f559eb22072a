"""Consumer impact of follower truncation, and ``truncate-plan`` as one call
(:func:`analyze_truncations`): each follower that discards records, or keeps records other than
the leader's, is a replica whose records consumers may have read while it led; the chosen
leader, as its files show it now, is the log they meet next."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kreplica.analysis.consumers.impact import ConsumerImpact, LostRange, impacts, lost_range_of, new_leader
from kreplica.analysis.replication.truncation import TruncationPlan, plan_truncations
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion, Protocol


def truncation_impacts(plans: Sequence[TruncationPlan], replicas: Sequence[PartitionLog],
                       offsets: Iterable[CommittedOffset], *,
                       kafka_version: KafkaVersion = DEFAULT_VERSION) -> list[ConsumerImpact]:
    """For each plan whose follower loses records (:func:`plan_loss`), the impact on every group
    with an offset in the partition; ``replicas[0]`` leads, at the epoch the plans elected it at
    when they did (no commit counts as made after the event). Empty when the partition is
    unnamed or no group committed in it."""
    key = replicas[0].key
    wanted = [c for c in offsets if (c.topic, c.partition) == key] if key is not None else []
    if not wanted:
        return []
    by_label = {r.label: r for r in replicas}
    # the leader as the plans elected it: its new epoch registered at its log end
    elected = next((p.elected for p in plans if p.elected is not None), None)
    leader = new_leader(replicas[0], kafka_version=kafka_version,
                        leader_epoch=None if elected is None else elected.epoch)
    out: list[ConsumerImpact] = []
    for p in plans:
        lost = plan_loss(p, by_label[p.follower])
        if lost is not None:
            out += impacts(wanted, *key, lost, leader, event=f"{p.follower}'s truncation to {p.truncate_to}")
    return out


def loses_records(plans: Sequence[TruncationPlan], replicas: Sequence[PartitionLog]) -> bool:
    """Whether some follower of ``plans`` loses records (:func:`plan_loss`): only then is the
    group evidence, which can be large, worth reading."""
    by_label = {r.label: r for r in replicas}
    return any(plan_loss(p, by_label[p.follower]) is not None for p in plans)


def plan_loss(plan: TruncationPlan, follower: PartitionLog) -> LostRange | None:
    """The follower's records consumers of it can no longer read: from the first offset it
    discards or keeps different from the leader (truncation does not heal a divergent middle,
    KAFKA-6880) up to its log end before truncating; ``None`` when it loses nothing."""
    firsts = [r.first for r in plan.still_divergent]
    if plan.follower_log_end_before > plan.truncate_to:
        firsts.append(plan.truncate_to)
    if not firsts:
        return None
    return lost_range_of(follower, min(firsts), plan.follower_log_end_before)


@dataclass(frozen=True)
class TruncationAnalysis:
    """``truncate-plan``'s answer: each follower's truncation against the leader, and the consumer
    impact of those that lose records."""

    plans: tuple[TruncationPlan, ...]
    impacts: tuple[ConsumerImpact, ...] = ()


def analyze_truncations(replicas: Sequence[PartitionLog], *, protocol: Protocol, kafka_version: KafkaVersion,
                        committed: Callable[[], Sequence[CommittedOffset]] = tuple,
                        leader_epoch: int | None = None) -> TruncationAnalysis:
    """``truncate-plan`` as one call: each of ``replicas[1:]`` truncated against ``replicas[0]``
    (:func:`~kreplica.analysis.replication.truncation.plan_truncations`, the leader elected at
    ``leader_epoch`` when given), then, when one loses records, the impact on the groups of
    ``committed()`` (called only then: the group evidence can be large)."""
    plans = tuple(plan_truncations(replicas, protocol=protocol, kafka_version=kafka_version,
                                   leader_epoch=leader_epoch))
    if not loses_records(plans, replicas):
        return TruncationAnalysis(plans)
    offsets = committed()
    if not offsets:
        return TruncationAnalysis(plans)
    return TruncationAnalysis(plans, tuple(truncation_impacts(plans, replicas, offsets, kafka_version=kafka_version)))
