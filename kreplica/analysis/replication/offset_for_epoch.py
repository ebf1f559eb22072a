"""OffsetForLeaderEpoch (API key 23) answered as a replica would if it were the leader.

Source: ``Partition.lastOffsetForLeaderEpoch`` and ``KafkaApis.handleOffsetForLeaderEpochRequest``
(apache/kafka 3.9), kafka-algorithms spec §2. Fencing arrived in 2.1 (KIP-320): when the caller
names its current leader epoch, a replica whose own leader epoch is newer answers
FENCED_LEADER_EPOCH and one whose epoch is older answers UNKNOWN_LEADER_EPOCH. The lookup itself
is ``LeaderEpochFileCache.endOffsetFor`` for the replica's version; a log without an epoch cache
(pre-v2 message format) answers (-1, -1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kreplica.analysis.log.replica_state import replica_state
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion

NONE = "NONE"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
ERROR_CODES = {NONE: 0, FENCED_LEADER_EPOCH: 74, UNKNOWN_LEADER_EPOCH: 75}
#: ``RecordBatch.NO_PARTITION_LEADER_EPOCH``: the only current leader epoch that means "not sent"
#: (``ReplicaManager.lastOffsetForLeaderEpoch``); any other value, negative or not, is compared.
NO_PARTITION_LEADER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochAnswer:
    requested_epoch: int
    current_leader_epoch: int | None
    leader_epoch: int
    end_offset: int
    error: str


def answer(cache: LeaderEpochCache | None, log_end_offset: int, requested_epoch: int, *,
           current_leader_epoch: int | None = None, local_leader_epoch: int | None = None,
           kafka_version: KafkaVersion = DEFAULT_VERSION) -> OffsetForLeaderEpochAnswer:
    """The (leader_epoch, end_offset, error) this replica returns as leader.

    ``local_leader_epoch`` is the replica's own leader epoch (default: its latest cached epoch,
    which a 2.1+ leader registers when elected); ``current_leader_epoch`` None or -1 means the
    caller did not send one (no fencing). Any other value is compared, as
    ``Partition.checkCurrentLeaderEpoch`` compares it: -2 is older than every epoch, so fenced.
    """
    cur = None if current_leader_epoch in (None, NO_PARTITION_LEADER_EPOCH) else current_leader_epoch
    if local_leader_epoch is None:
        local_leader_epoch = (cache.latest_epoch if cache is not None and cache.latest_epoch is not None
                              else UNDEFINED_EPOCH)
    if cur is not None and kafka_version.has(Feature.KIP_320_FENCING):
        if local_leader_epoch > cur:
            return OffsetForLeaderEpochAnswer(requested_epoch, current_leader_epoch, UNDEFINED_EPOCH,
                                              UNDEFINED_EPOCH_OFFSET, FENCED_LEADER_EPOCH)
        if local_leader_epoch < cur:
            return OffsetForLeaderEpochAnswer(requested_epoch, current_leader_epoch, UNDEFINED_EPOCH,
                                              UNDEFINED_EPOCH_OFFSET, UNKNOWN_LEADER_EPOCH)
    if cache is None:
        return OffsetForLeaderEpochAnswer(requested_epoch, current_leader_epoch, UNDEFINED_EPOCH,
                                          UNDEFINED_EPOCH_OFFSET, NONE)
    epoch, offset = cache.end_offset_for(requested_epoch, log_end_offset, kafka_version)
    if offset == UNDEFINED_EPOCH_OFFSET:
        epoch = UNDEFINED_EPOCH
    return OffsetForLeaderEpochAnswer(requested_epoch, current_leader_epoch, epoch, offset, NONE)


def answer_queries(log: PartitionLog, queries: Iterable[tuple[int, int | None]], *,
                   kafka_version: KafkaVersion = DEFAULT_VERSION) -> Iterator[OffsetForLeaderEpochAnswer]:
    """Each ``(requested epoch, current leader epoch or None)`` answered by ``log`` as leader, with
    the cache and log end offset its broker holds once it has loaded the files."""
    state = replica_state(log, kafka_version=kafka_version)
    for requested, current in queries:
        yield answer(state.cache, state.log_end_offset, requested, current_leader_epoch=current,
                     kafka_version=kafka_version)

