"""``plan-elect`` as one call (:func:`analyze_elections`): the elections a scenario causes under
the rules of a version (:func:`~kreplica.analysis.election.scenarios.plan_elections`), and, with
the brokers' copied log directories, each elected partition's candidate leaders ranked by the
records each choice would lose (:func:`~kreplica.analysis.election.loss.rank_candidates`) and
what the elections do to the consumer groups with offsets in those partitions
(:func:`~kreplica.analysis.consumers.elections.leader_change_impacts`).

A partition the scenario elects more than once (a broker fails, then another shuts down) is
judged from the leader before its first election to the leader after its last; an unclean
election anywhere in that chain makes it unclean. One already offline (no leader: an admin
UNCLEAN election) is judged from its ISR's last member, the leader Kafka keeps there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kreplica.analysis.consumers.elections import leader_change_impacts
from kreplica.analysis.consumers.impact import ConsumerImpact
from kreplica.analysis.election.common import Election
from kreplica.analysis.election.loss import LossRanking, rank_candidates
from kreplica.analysis.election.scenarios import ElectionPlan, Scenario, plan_elections
from kreplica.model.cluster import ClusterState
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.broker_replicas import BrokerLogDirs
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion


@dataclass(frozen=True)
class ElectionAnalysis:
    """The plan; with log directories, the rankings (in the plan's order of partitions) and the
    consumer impacts."""

    plan: ElectionPlan
    rankings: tuple[LossRanking, ...] = ()
    impacts: tuple[ConsumerImpact, ...] = ()

    @property
    def has_problems(self) -> bool:
        """An election leaves its partition offline or elects uncleanly, or a group is known to
        have consumed records an election loses."""
        return self.plan.has_problems or any(i.loses_consumed_records for i in self.impacts)


def _no_offsets(kafka_version: KafkaVersion) -> Sequence[CommittedOffset]:
    return ()


def analyze_elections(state: ClusterState, scenario: Scenario, kafka_version: KafkaVersion | None = None, *,
                      log_dirs: BrokerLogDirs | None = None,
                      committed: Callable[[KafkaVersion], Sequence[CommittedOffset]] = _no_offsets) -> ElectionAnalysis:
    """The plan of ``scenario`` on ``state`` (module docstring); ``committed(version)`` gives the
    groups' committed offsets as the plan's coordinator version loads them, read only with
    ``log_dirs``. Raises :class:`~kreplica.analysis.election.scenarios.ScenarioError` for a
    scenario that does not fit the state."""
    plan = plan_elections(state, scenario, kafka_version)
    if not log_dirs:
        return ElectionAnalysis(plan)
    keys = list(dict.fromkeys(e.key for e in plan.elections))
    evidence = log_dirs.read_partitions({k: f"{k[0]}-{k[1]}" for k in keys})
    last = {e.key: e for e in plan.elections}
    rankings = tuple(rank_candidates(last[k], evidence[k], kafka_version=plan.kafka_version, online=plan.online_after)
                     for k in keys if k in evidence)
    impacts = _impacts(plan.elections, evidence, committed(plan.kafka_version), plan.kafka_version)
    return ElectionAnalysis(plan, rankings, tuple(impacts))


def _impacts(elections: Sequence[Election], evidence: Mapping[tuple, Mapping[int, PartitionLog]],
             offsets: Sequence[CommittedOffset], kafka_version: KafkaVersion) -> list[ConsumerImpact]:
    """Per partition with replica evidence, from the leader before its first election to the
    leader after its last (module docstring)."""
    if not offsets:
        return []
    chains: dict[tuple, list[Election]] = {}
    for e in elections:
        chains.setdefault(e.key, []).append(e)
    out: list[ConsumerImpact] = []
    for key, chain in chains.items():
        first, final = chain[0], chain[-1]
        if key not in evidence or not final.elected:
            continue
        out += leader_change_impacts(key, _last_leader(first.before), final.after.leader, evidence[key], offsets,
                                     leader_epoch=final.after.leader_epoch, unclean=any(e.unclean for e in chain),
                                     kafka_version=kafka_version)
    return out


def _last_leader(before) -> int:
    """The leader consumers last read from: the partition's, or for one already offline (no
    leader) the ISR's last member, which Kafka keeps there when the partition goes offline
    (ZooKeeper's OfflineReplica step, KRaft's PartitionChangeBuilder); -1 when that is not one."""
    if before.leader >= 0 or len(before.isr) != 1:
        return before.leader
    return before.isr[0]
