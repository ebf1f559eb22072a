"""A replica as its broker holds it after loading: the log end offset and epoch cache a broker
of a given version would have once it restarted on these files (kafka-algorithms spec §1.6)."""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.analysis.log_loading import RestartVerdict, load_partition
from kreplica.model.epoch_cache import EpochEntry, LeaderEpochCache, for_version
from kreplica.model.replica import BatchRef, Replica
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion


@dataclass
class ReplicaState:
    """What a simulation mutates: the log (as batch headers), its end, and the epoch cache.

    ``cache`` is ``None`` for a log without an epoch cache (pre-v2 message format only).
    """

    replica: Replica
    batches: list[BatchRef]
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


def replica_state(replica: Replica, *, kafka_version: KafkaVersion = DEFAULT_VERSION, shutdown: str | None = None,
                  cache_source: str = "broker") -> ReplicaState:
    """The replica after its broker loads it.

    ``cache_source`` ``broker``: the cache the broker loads (checkpoint, repaired, extended by
    recovery, trimmed to the log); ``batches``: the cache rebuilt from batch headers (when the
    checkpoint is not trusted).
    """
    verdict = load_partition(replica.partition, replica.checkpoints, shutdown=shutdown, kafka_version=kafka_version)
    leo = verdict.log_end_offset if replica.partition.segments else replica.log_end_offset
    batches = [b for b in replica.batches if b.last_offset < leo]
    legacy_only = bool(batches) and all(b.magic < 2 for b in batches)
    if legacy_only and kafka_version.at_least(2, 1, 1):
        cache = None  # KAFKA-7897: a log with a pre-v2 record format has no epoch cache
    elif cache_source == "batches":
        cache = for_version(kafka_version)
        for b in batches:
            if b.magic >= 2 and b.epoch >= 0:
                latest = cache.latest_epoch
                if latest is None or b.epoch > latest:
                    cache.assign(b.epoch, b.base_offset)
        cache.truncate_from_start(verdict.log_start_offset)
    else:
        cache = for_version(kafka_version)
        cache.entries = [EpochEntry(e, o) for e, o in verdict.epoch_cache]
    hw = replica.high_watermark if replica.high_watermark is not None else 0
    return ReplicaState(replica, batches, verdict.log_start_offset, leo, hw, cache, verdict)
