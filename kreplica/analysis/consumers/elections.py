"""Consumer impact of a leader change: the elections ``plan-elect --log-dirs`` plans and the
unclean elections a ``timeline --log-dirs`` finds. Their joins (which elections, which
replicas: :mod:`kreplica.analysis.election.analysis`, :mod:`kreplica.analysis.timeline.analysis`)
call these with the leaders and the epoch; the rules are :mod:`~kreplica.analysis.consumers.impact`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreplica.analysis.consumers.impact import ConsumerImpact, impacts, lost_range_of, new_leader
from kreplica.analysis.consumers.truncation import plan_loss
from kreplica.analysis.replication.truncation import plan_truncations
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion, protocol_for


def end_at_election(new: PartitionLog, epoch: int) -> int:
    """The new leader's log end when it was elected at ``epoch``: its first batch of ``epoch``
    or later, else (it has written nothing since) its log end."""
    later = [r.start_offset for r in new.lineage if r.epoch >= epoch]
    return min(later) if later else new.log_end_offset


def leader_change_impacts(key: tuple[str, int], old: int, new: int, replicas: Mapping[int, PartitionLog],
                          offsets: Iterable[CommittedOffset], *, leader_epoch: int, unclean: bool,
                          kafka_version: KafkaVersion) -> list[ConsumerImpact]:
    """A planned election of ``new`` (broker id) at ``leader_epoch`` in place of ``old``: the old
    leader follows the new one (the engine of ``truncate-plan``), and what it discards or keeps
    different is what its consumers may have read and lose; the new leader, with the epoch
    registered at its log end, is the log they meet next. Impacts on every group with an offset in
    partition ``key``; none when the leader does not change, a replica needed is not among
    ``replicas``, or the old leader loses nothing
    (:func:`~kreplica.analysis.consumers.truncation.plan_loss`)."""
    if old == new or old not in replicas or new not in replicas:
        return []
    wanted = [c for c in offsets if (c.topic, c.partition) == key]
    if not wanted:
        return []
    plan = plan_truncations([replicas[new], replicas[old]], protocol=protocol_for(kafka_version),
                            kafka_version=kafka_version, leader_epoch=leader_epoch)[0]
    lost = plan_loss(plan, replicas[old])
    if lost is None:
        return []
    leader = new_leader(replicas[new], kafka_version=kafka_version, leader_epoch=leader_epoch)
    kind = "unclean election" if unclean else "election"
    return impacts(wanted, *key, lost, leader, event=f"the {kind} of broker {new} at epoch {leader_epoch}")


def election_loss_impacts(key: tuple[str, int], old: int, new: int, replicas: Mapping[int, PartitionLog],
                          offsets: Iterable[CommittedOffset], *, leader_epoch: int, first_lost_offset: int,
                          end_offset: int, event_time: int | None,
                          kafka_version: KafkaVersion = DEFAULT_VERSION) -> list[ConsumerImpact]:
    """An unclean election of ``new`` at ``leader_epoch`` that lost ``old``'s offsets from
    ``first_lost_offset`` to ``end_offset`` (exclusive), against the new leader as it was when
    elected: its log end then (:func:`end_at_election`), its election epoch registered there,
    the records it has written since as the later copy that shows reused offsets. Commits older
    than ``event_time`` were made on the old leader's history; the other replicas of the same
    lineage may show records written since. None when a replica needed is not among
    ``replicas``."""
    if old not in replicas or new not in replicas:
        return []
    log = replicas[new]
    others = [r for b, r in sorted(replicas.items()) if b not in (old, new)]
    leader = new_leader(log, kafka_version=kafka_version, leader_epoch=leader_epoch,
                        log_end_offset=end_at_election(log, leader_epoch), later=others)
    lost = lost_range_of(replicas[old], first_lost_offset, end_offset)
    return impacts(offsets, *key, lost, leader, event=f"the unclean election of broker {new} at epoch {leader_epoch}",
                   event_time=event_time)
