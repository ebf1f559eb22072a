"""What a broker does to one segment when it recovers it after an unclean shutdown.

Source (apache/kafka 3.9): ``LogSegment.recover`` in ``storage/src/main/java/org/apache/kafka/
storage/internals/log/LogSegment.java``, with ``LogLoader.recoverLog`` (the handling of
``InvalidOffsetException``) and ``ProducerStateManager``/``ProducerAppendInfo`` for control
batches.

For every batch the file reader yields, in order: ``ensureValid`` (v2: size >= 61 and CRC-32C;
legacy: CRC-32), rebuild the offset and time indexes every ``index.interval.bytes`` (an offset
that does not increase there makes Kafka truncate the whole segment), count the bytes as valid,
assign the batch's epoch to the leader-epoch cache when it is newer than the latest (magic >= 2),
and update producer state (a control batch's marker is decoded; a bad one stops recovery after
that batch). The walk ends at the first corrupt batch or where the reader stops; everything
after is truncated. The cache is then truncated to the recovered log end.
"""

from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Mapping

from kreplica.formats.log import default_records
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, NO_PRODUCER_ID, NO_TIMESTAMP, RecordBatch
from kreplica.formats.checksums import crc32, crc32c
from kreplica.formats.log.control_marker import ControlMarker, read_control_marker
from kreplica.formats.mapped import PageReleaser
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH, LeaderEpochCache

#: ``index.interval.bytes`` default.
INDEX_INTERVAL_BYTES = 4096
_INT32_MAX = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class RecoveryVerdict:
    """What a broker keeps of a segment: ``valid_bytes`` and ``truncated_bytes`` add up to the
    file size; ``epoch_assignments`` are the ``(epoch, start_offset)`` entries its leader-epoch
    cache holds afterwards (starting from an empty cache). ``stop_position``/``stop_reason`` say
    where and why the walk ended early (``None`` when it read to the end)."""

    valid_bytes: int
    truncated_bytes: int
    epoch_assignments: tuple[tuple[int, int], ...]
    stop_position: int | None = None
    stop_reason: str | None = None
    refuses_to_load: bool = False


class SegmentRecovery:
    """Feed it the batches Kafka's reader yields, in order; :meth:`verdict` gives the result.

    Works from batch headers alone when their CRC validity is known and ``markers`` holds the
    control batches' decoded markers (a :class:`~kreplica.model.log.partition_log.SegmentLog`);
    otherwise ``buf``, the segment's bytes, supplies both while streaming.
    """

    def __init__(self, buf=None, *, segment_base_offset: int, cache: LeaderEpochCache | None = None,
                 index_interval_bytes: int = INDEX_INTERVAL_BYTES, assign_epoch_zero: bool = True,
                 check_offset_range: bool = True, markers: Mapping[int, ControlMarker] | None = None) -> None:
        self._buf = buf
        self._markers = markers
        self._base = segment_base_offset
        self._cache = cache if cache is not None else LeaderEpochCache()
        self._interval = index_interval_bytes
        # 2.1.1-2.6 re-added only epochs > 0 during recovery (KAFKA-10432)
        self._min_epoch = 0 if assign_epoch_zero else 1
        # 2.0+: ensureOffsetInRange (KAFKA-6264)
        self._check_range = check_offset_range
        latest = self._cache.latest_epoch
        self._latest_epoch = UNDEFINED_EPOCH if latest is None else latest  # mirrors the cache: only feed assigns
        self.valid_bytes = 0
        self._last_index_entry = 0
        self._index_last_offset: int | None = None
        self._time_last: tuple[int, int] | None = None  # (timestamp, offset)
        self._max_ts = NO_TIMESTAMP
        self._offset_of_max_ts = -1
        self._first_position_reaching_base: int | None = None
        self._next_offset: int | None = None
        self.stopped = False
        self.stop_position: int | None = None
        self.stop_reason: str | None = None
        self.refuses_to_load = False

    def _stop(self, position: int, reason: str) -> None:
        self.stopped = True
        self.stop_position = position
        self.stop_reason = reason

    def feed(self, batch: RecordBatch) -> None:
        """Apply one batch; does nothing once recovery has stopped.

        NOTE: runs once per batch of every scan; the fields are unpacked once into locals
        (bench/README.md).
        """
        if self.stopped:
            return
        (_, position, size, magic, base_offset, last_offset, count, epoch, crc, valid, _, _, _, _, max_timestamp,
         producer_id, _, _, _, is_control, _, _) = batch
        # ensureValid
        if magic >= 2:
            if size < default_records.RECORD_BATCH_OVERHEAD:
                return self._stop(position, f"Record batch is corrupt (the size {size} is smaller "
                                            f"than the minimum allowed overhead 61)")
            if valid is None:
                valid = self._checksum(crc32c, position, position + default_records.ATTRIBUTES_OFFSET, size) == crc
        elif valid is None:
            valid = self._checksum(crc32, position, position + 16, size) == crc
        if not valid:
            return self._stop(position, f"Record is corrupt (stored crc = {crc})")
        if self._check_range and last_offset < self._base:
            # ensureOffsetInRange throws LogSegmentOffsetOverflowException; LogLoader.retryOnOffsetOverflow
            # then splits the segment, whose require(hasOverflow) fails: only offsets past base + 2^31 - 1
            # can be split away (those are kept, the segment split where they start)
            self.refuses_to_load = True
            return self._stop(position, f"LogSegmentOffsetOverflowException: offset {last_offset} is below the "
                                        f"segment's base offset {self._base}; splitting the segment then fails "
                                        "(IllegalArgumentException: it does not have overflow): the broker fails to "
                                        "load the log")
        if self._first_position_reaching_base is None and last_offset >= self._base:
            self._first_position_reaching_base = position
        if max_timestamp > self._max_ts:
            self._max_ts, self._offset_of_max_ts = max_timestamp, last_offset
        # Build offset index (and time index) every index.interval.bytes
        if self.valid_bytes - self._last_index_entry > self._interval:
            if self._index_last_offset is not None and last_offset <= self._index_last_offset:
                return self._invalid_offset(batch, f"Attempt to append an offset ({last_offset}) no larger "
                                                   f"than the last offset appended ({self._index_last_offset})")
            self._index_last_offset = last_offset
            if self._time_last is not None and self._offset_of_max_ts < self._time_last[1]:
                return self._invalid_offset(batch, "time index offset goes backwards")
            if self._max_ts > (self._time_last[0] if self._time_last else NO_TIMESTAMP):
                self._time_last = (self._max_ts, self._offset_of_max_ts)
            self._last_index_entry = self.valid_bytes
        self.valid_bytes += size
        self._next_offset = last_offset + 1
        if magic >= 2:
            if epoch >= self._min_epoch and epoch > self._latest_epoch:
                try:
                    self._cache.assign(epoch, base_offset)
                except ValueError as exc:
                    # LeaderEpochFileCache.assign throws IllegalArgumentException (a negative start
                    # offset in a header the CRC does not cover); nothing in LogLoader catches it
                    self.refuses_to_load = True
                    return self._stop(position, f"IllegalArgumentException: {exc}: the broker fails to load the log")
                self._latest_epoch = epoch
            if is_control and producer_id != NO_PRODUCER_ID and count != 0:
                self._check_marker(batch)

    def _checksum(self, crc, position: int, start: int, size: int) -> int:
        # a huge batch is summed a window at a time with its pages released (formats/mapped.py)
        return PageReleaser(self._buf, position).checksum(crc, self._buf, start, position + size)

    def _invalid_offset(self, batch: RecordBatch, reason: str) -> None:
        # LogLoader.recoverLog catches InvalidOffsetException and truncates the segment to its base
        # offset: to the first batch whose last offset reaches it.
        self.valid_bytes = self._first_position_reaching_base or 0
        self._next_offset = None
        self._stop(batch.position, f"InvalidOffsetException: {reason}; the segment is truncated to its base offset")

    def _check_marker(self, batch: RecordBatch) -> None:
        marker = self._markers.get(batch.position) if self._markers is not None else None
        if marker is None:
            marker = read_control_marker(self._buf, batch)
        if marker.error is not None:
            return self._stop(batch.end, f"control batch at {batch.position} does not decode: {marker.error}")
        if marker.key_is_null:
            self.refuses_to_load = True  # ControlRecordType.parse(null) throws NullPointerException
            return self._stop(batch.end, "control record has a null key: the broker fails to load the log")
        if marker.control_type is None:
            return self._stop(batch.end, "Invalid version found for control record")
        if marker.control_type not in (CONTROL_ABORT, CONTROL_COMMIT):
            self.refuses_to_load = True
            return self._stop(batch.end, f"control batch at {batch.position} is not a transaction marker "
                                         f"(type {marker.control_type}): IllegalArgumentException")
        if marker.coordinator_epoch is None:
            return self._stop(batch.end, "Invalid value size found for end transaction marker")

    @property
    def next_offset(self) -> int | None:
        """The offset after the last batch kept (``None`` when none was kept)."""
        return self._next_offset

    def verdict(self, file_size: int, *, truncate_cache: bool = True) -> RecoveryVerdict:
        """The result after the last batch was fed (``file_size`` is the segment's size).

        ``truncate_cache`` applies ``truncateFromEnd`` to the recovered end, as for one segment
        on its own; a partition-level load does that itself, once, after the last segment.
        """
        if truncate_cache:
            self._cache.truncate_from_end(self._next_offset if self._next_offset is not None else self._base)
        return RecoveryVerdict(
            self.valid_bytes, file_size - self.valid_bytes,
            tuple((e.epoch, e.start_offset) for e in self._cache.entries),
            self.stop_position, self.stop_reason, self.refuses_to_load,
        )
