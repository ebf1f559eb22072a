"""Consumer impact of the unclean elections a timeline finds: the old leader's records the
election lost (:class:`~kreplica.analysis.timeline.evidence.ElectionLoss`) against the new leader
as it was when elected — its log end then, its election epoch registered there, the records it
has written since as the later copy that shows reused offsets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreplica.analysis.consumers.impact import ConsumerImpact, impacts, lost_range_of, new_leader
from kreplica.analysis.timeline.evidence import ElectionLoss, end_at_election
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion


def election_impacts(loss: ElectionLoss, replicas: Mapping[int, PartitionLog], offsets: Iterable[CommittedOffset],
                     *, kafka_version: KafkaVersion = DEFAULT_VERSION) -> list[ConsumerImpact]:
    """The impact of ``loss`` on every group with an offset in its partition (none when the
    election lost nothing or a replica it needs is not among ``replicas``). Commits older than the
    election's time were made on the old leader's history; the other replicas of the same lineage
    may show records written since."""
    if not loss.lost_offsets or loss.old_leader not in replicas or loss.new_leader not in replicas:
        return []
    new = replicas[loss.new_leader]
    others = [r for b, r in sorted(replicas.items()) if b not in (loss.old_leader, loss.new_leader)]
    leader = new_leader(new, kafka_version=kafka_version, leader_epoch=loss.leader_epoch,
                        log_end_offset=end_at_election(new, loss.leader_epoch), later=others)
    lost = lost_range_of(replicas[loss.old_leader], loss.first_lost_offset, loss.end_offset)
    return impacts(offsets, loss.topic, loss.partition, lost, leader,
                   event=f"the unclean election of broker {loss.new_leader} at epoch {loss.leader_epoch}",
                   event_time=loss.time)
