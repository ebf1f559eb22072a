"""KIP-966's unclean-recovery order: which surviving replica holds the most complete log.

KIP-966 ("Unclean Recovery") has the controller ask every survivor for its log's last leader epoch
and log end offset and elect the one with the highest epoch, then the longest log. The epoch is
the latest entry of the leader-epoch cache the broker holds once it has loaded the log
(``UnifiedLog.latestEpoch``), and the log end is the end after that load's recovery: what a live
broker would report, not the raw files. Ties, which KIP-966 leaves open, go to the higher high
watermark (the replica that knew of more committed data) and then the lower broker id, so the
order is total. ``plan-elect``'s candidate ranking and the fleet's evidence leader both read this
order; there is no other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.analysis.log.replica_state import replica_state
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion

#: The last epoch of a replica without one (an empty log, or pre-v2 records only).
NO_EPOCH = -1


@dataclass(frozen=True, slots=True)
class RecoveryFacts:
    """What a survivor reports to an unclean recovery, and where it stands in the order."""

    broker: int
    last_epoch: int
    log_end_offset: int
    high_watermark: int

    @property
    def order_key(self) -> tuple[int, int, int, int]:
        """Sorts first the replica KIP-966 recovers from."""
        return -self.last_epoch, -self.log_end_offset, -self.high_watermark, self.broker


def recovery_facts(broker: int, replica: PartitionLog, *, kafka_version: KafkaVersion) -> RecoveryFacts:
    """The replica's facts once a broker of ``kafka_version`` has loaded it."""
    state = replica_state(replica, kafka_version=kafka_version)
    epoch = state.latest_epoch
    return RecoveryFacts(broker, NO_EPOCH if epoch is None else epoch, state.log_end_offset, state.high_watermark)


def recovery_order(facts: Iterable[RecoveryFacts]) -> list[RecoveryFacts]:
    """The survivors, the one KIP-966 recovers from first."""
    return sorted(facts, key=lambda f: f.order_key)
