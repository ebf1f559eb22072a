"""A replica as its broker holds it after loading: the log end offset and epoch cache a broker
of a given version would have once it restarted on these files (kafka-algorithms spec §1.6)."""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.analysis.log.log_loading import RestartVerdict, load_partition, loaded_high_watermark
from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH, EpochEntry, LeaderEpochCache, for_version
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion


@dataclass
class ReplicaState:
    """What a simulation mutates: the log (as batch headers), its end, and the epoch cache.

    ``cache`` is ``None`` for a log without an epoch cache (pre-v2 message format only).
    """

    replica: PartitionLog
    batches: list[RecordBatch]
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    cache: LeaderEpochCache | None
    restart: RestartVerdict | None = None

    @property
    def label(self) -> str:
        return self.replica.label

    @property
    def latest_epoch(self) -> int | None:
        return self.cache.latest_epoch if self.cache is not None else None


def _checkpoint_latest_epoch(replica: PartitionLog) -> int | None:
    return max((ln.epoch for ln in replica.epoch_checkpoint_lines or ()), default=None)


def replica_state(replica: PartitionLog, *, kafka_version: KafkaVersion = DEFAULT_VERSION, shutdown: str | None = None,
                  cache_source: str = "broker", as_leader: bool = False) -> ReplicaState:
    """The replica after its broker loads it.

    ``cache_source`` ``broker``: the cache the broker loads (checkpoint, repaired, extended by
    recovery, trimmed to the log); ``batches``: the cache rebuilt from batch headers (when the
    checkpoint is not trusted). ``as_leader``: the replica is (again) the leader, and a 2.1+
    leader registers its leader epoch at its log end when elected (KAFKA-7415) — an entry the
    load dropped because it started at the log end comes back.
    """
    verdict = load_partition(replica, shutdown=shutdown, kafka_version=kafka_version)
    leo = verdict.log_end_offset
    batches = [b for b in replica.batches if b.last_offset < leo]
    legacy_only = bool(batches) and all(b.magic < 2 for b in batches)
    if legacy_only and kafka_version.has(Feature.NO_EPOCH_CACHE_FOR_LEGACY_FORMAT):
        cache = None  # KAFKA-7897: a log with a pre-v2 record format has no epoch cache
    elif cache_source == "batches":
        cache = for_version(kafka_version)
        for b in batches:
            if b.magic >= 2 and b.partition_leader_epoch >= 0:
                latest = cache.latest_epoch
                if latest is None or b.partition_leader_epoch > latest:
                    cache.assign(b.partition_leader_epoch, b.base_offset)
        cache.truncate_from_start(verdict.log_start_offset)
    else:
        cache = for_version(kafka_version)
        cache.entries = [EpochEntry(e, o) for e, o in verdict.epoch_cache]
    if as_leader and cache is not None and kafka_version.has(Feature.LEADER_REGISTERS_EPOCH_AT_LOG_END):
        leader_epoch = _checkpoint_latest_epoch(replica)
        if leader_epoch is not None and leader_epoch > (cache.latest_epoch if cache.latest_epoch is not None
                                                        else UNDEFINED_EPOCH):
            cache.assign(leader_epoch, leo)
    hw = loaded_high_watermark(replica.high_watermark, verdict.log_start_offset, leo)
    return ReplicaState(replica, batches, verdict.log_start_offset, leo, hw, cache, verdict)
