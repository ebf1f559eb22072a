"""A replica's leader-epoch lineage, rebuilt from batch headers.

Every v2 batch carries the epoch of the leader that appended it (``partitionLeaderEpoch``), so
the batches themselves say which epoch wrote which offsets — the checkpoint file is only a
cache of that (kafka-algorithms spec §1.6, algorithm B). Runs of batches with the same epoch
become one :class:`LineageEntry` with its offset range, batch count and the wall-clock range of
its batch timestamps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log.epoch_cache import EpochEntry, LeaderEpochCache


@dataclass(frozen=True, slots=True)
class LineageEntry:
    """Epoch ``epoch`` wrote offsets ``start_offset``..``last_offset`` in ``batches`` batches,
    with batch timestamps from ``first_timestamp`` to ``last_timestamp`` (``None`` if none >= 0)."""

    epoch: int
    start_offset: int
    last_offset: int
    batches: int
    first_timestamp: int | None
    last_timestamp: int | None


class LineageBuilder:
    """Feed batches in offset order; legacy batches and epochs below 0 carry no lineage."""

    def __init__(self) -> None:
        self._runs: list[list] = []  # [epoch, start, last, batches, tmin, tmax]
        self._cache = LeaderEpochCache()

    def feed(self, batch: RecordBatch) -> None:
        if batch.magic < 2 or batch.partition_leader_epoch < 0:
            return
        epoch = batch.partition_leader_epoch
        ts = batch.max_timestamp if batch.max_timestamp >= 0 else None
        run = self._runs[-1] if self._runs else None
        if run is not None and run[0] == epoch:
            run[2] = max(run[2], batch.last_offset)
            run[3] += 1
            if ts is not None:
                run[4] = ts if run[4] is None else min(run[4], ts)
                run[5] = ts if run[5] is None else max(run[5], ts)
        else:
            self._runs.append([epoch, batch.base_offset, batch.last_offset, 1, ts, ts])
        try:
            self._cache.assign(epoch, batch.base_offset)
        except ValueError:  # negative offset in a damaged header; the run above still shows it
            pass

    def feed_all(self, batches: Iterable[RecordBatch]) -> "LineageBuilder":
        for b in batches:
            self.feed(b)
        return self

    @property
    def runs(self) -> tuple[LineageEntry, ...]:
        """Every run of same-epoch batches, in file order (a lower epoch after a higher one is a
        run of its own: evidence of damage or of logs spliced together)."""
        return tuple(LineageEntry(*r) for r in self._runs)

    @property
    def cache_entries(self) -> tuple[EpochEntry, ...]:
        """The cache Kafka's current ``assign`` rule builds from these batches (the "ideal" cache)."""
        return tuple(self._cache.entries)
