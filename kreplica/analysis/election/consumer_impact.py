"""Consumer impact of the elections ``plan-elect`` plans, with the replicas' files: when the new
leader is not the old one, the old leader follows it (the engine of ``truncate-plan``) and what
it discards or keeps different is what its consumers may have read and lose; the new leader,
with the epoch the controller gives it registered at its log end, is the log they meet next."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreplica.analysis.consumers.impact import ConsumerImpact, impacts, new_leader
from kreplica.analysis.consumers.truncation_impact import plan_loss
from kreplica.analysis.election.common import Election
from kreplica.analysis.replication.truncation import plan_truncations
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion, protocol_for


def election_impacts(election: Election, replicas: Mapping[int, PartitionLog], offsets: Iterable[CommittedOffset],
                     *, kafka_version: KafkaVersion) -> list[ConsumerImpact]:
    """The impact of ``election`` on every group with an offset in its partition. None when no
    leader is elected, the leader does not change, the partition had no leader before (whose
    records its consumers read is unknown), a replica needed is not among ``replicas``, or the
    old leader loses nothing (:func:`~kreplica.analysis.consumers.truncation_impact.plan_loss`)."""
    old, new = election.before.leader, election.after.leader
    if not election.elected or old == new or old not in replicas or new not in replicas:
        return []
    wanted = [c for c in offsets if (c.topic, c.partition) == election.key]
    if not wanted:
        return []
    plan = plan_truncations([replicas[new], replicas[old]], protocol=protocol_for(kafka_version),
                            kafka_version=kafka_version)[0]
    lost = plan_loss(plan, replicas[old])
    if lost is None:
        return []
    epoch = election.after.leader_epoch
    leader = new_leader(replicas[new], kafka_version=kafka_version, leader_epoch=epoch)
    kind = "unclean election" if election.unclean else "election"
    return impacts(wanted, *election.key, lost, leader, event=f"the {kind} of broker {new} at epoch {epoch}")
