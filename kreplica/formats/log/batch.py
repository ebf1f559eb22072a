"""The values every segment reader yields: one :class:`RecordBatch` per log entry, and
:class:`Record` values for the records inside it, whatever the magic.

For magic 0/1 a "batch" is one shallow (wrapper) message, exactly as Kafka's
``FileLogInputStream`` presents it: ``count`` is ``None`` and the producer fields are -1.
Values are raw: codec ids, timestamp type codes and control type ids are ints; ``report/``
turns them into words (the timestamp types' words are here, beside their codes, as the codecs'
are in :mod:`kreplica.formats.codecs`, because the fleet's tables use the same words).
"""

from __future__ import annotations

from typing import NamedTuple

NO_TIMESTAMP_TYPE = -1
CREATE_TIME = 0
LOG_APPEND_TIME = 1
#: Kafka's ``TimestampType`` names in snake_case, the words of every output schema
TIMESTAMP_TYPE_NAMES = {NO_TIMESTAMP_TYPE: "no_timestamp_type", CREATE_TIME: "create_time",
                        LOG_APPEND_TIME: "log_append_time"}

NO_TIMESTAMP = -1           # RecordBatch.NO_TIMESTAMP
NO_PRODUCER_ID = -1         # RecordBatch.NO_PRODUCER_ID
NO_SEQUENCE = -1            # RecordBatch.NO_SEQUENCE

CONTROL_ABORT = 0
CONTROL_COMMIT = 1

_INT32_MAX = 0x7FFFFFFF


def _i32(v: int) -> int:
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: int32 addition that wraps past MAX to 0."""
    if sequence > _i32(_INT32_MAX - increment):
        return _i32(increment - _i32(_INT32_MAX - sequence) - 1)
    return _i32(sequence + increment)


class RecordBatch(NamedTuple):
    """One log entry as Kafka's file reader sees it, plus where kreplica found it.

    ``size`` counts the 12-byte offset+length prefix. ``crc`` is the stored value; ``crc_valid``
    is Kafka's ``isValid()`` (size at or above the format minimum and CRC matching), or ``None``
    when CRC checking was switched off. ``after_break`` marks batches found by resynchronising
    past damage, which Kafka's reader never reaches.

    NOTE: an immutable NamedTuple rather than a frozen dataclass: a segment scan builds one per
    batch (65,000 per GiB) and a frozen dataclass's field-by-field ``__init__`` took a quarter
    of the scan time (bench/README.md).
    """

    path: str
    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    count: int | None
    partition_leader_epoch: int
    crc: int
    crc_valid: bool | None
    attributes: int
    compression: int
    timestamp_type: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    is_transactional: bool
    is_control: bool
    delete_horizon_ms: int | None
    after_break: bool = False

    # -- derived facts, each as Kafka's RecordBatch interface defines it; every command reads
    # them here rather than redoing the arithmetic (issue 27)

    @property
    def next_offset(self) -> int:
        """``AbstractRecordBatch.nextOffset``: ``lastOffset() + 1``."""
        return self.last_offset + 1

    @property
    def last_offset_delta(self) -> int:
        """``DefaultRecordBatch.lastOffsetDelta`` (int32), recovered from the two offsets also when
        ``lastOffset()``'s long addition wrapped; 0 for an uncompressed legacy message."""
        return _i32(self.last_offset - self.base_offset)

    @property
    def offset_span(self) -> int:
        """How many offsets ``baseOffset()..lastOffset()`` covers: ``LogValidator``'s
        ``countFromOffsets`` (``lastOffset() - baseOffset() + 1``), unclamped (a damaged header
        can make it 0 or negative; compaction makes it larger than the count)."""
        return self.last_offset - self.base_offset + 1

    @property
    def last_sequence(self) -> int:
        """``DefaultRecordBatch.lastSequence``: ``NO_SEQUENCE`` when the base sequence is, else
        ``incrementSequence(baseSequence, lastOffsetDelta)``, which wraps past ``Integer.MAX_VALUE``
        to 0; ``AbstractLegacyRecordBatch.lastSequence`` is always ``NO_SEQUENCE``."""
        if self.magic < 2 or self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def records_read(self) -> int:
        """How many records Kafka's reader yields from this batch by its header, without reading
        them (a scan's record totals; the records themselves may still stop early on damage).

        v2: ``countOrNull()``, but none when it is negative (``DefaultRecordBatch``'s record
        iterator throws "Found invalid record count" before the first record) and none when it is
        0 (``iterator()`` is empty; the cleaner's empty batch). Legacy (``countOrNull()`` is null):
        one for an uncompressed message (the iterator yields the shallow record itself), and for a
        compressed wrapper the offsets it spans, first inner to wrapper offset, at least one
        (``DeepRecordsIterator`` refuses a wrapper with no inner records)."""
        count = self.count
        if count is not None:
            return count if count > 0 else 0
        span = self.last_offset - self.base_offset + 1
        return span if span > 1 else 1

    @property
    def end(self) -> int:
        """File position just past this batch."""
        return self.position + self.size

    @property
    def identity(self) -> tuple[int, int, int, int]:
        """``(base_offset, last_offset, partition_leader_epoch, crc)``: two replicas hold the same
        batch when these agree. The CRC covers the records and the rest of the header, but not
        the offsets or the epoch, which a broker writes in place on append; hence all four."""
        return (self.base_offset, self.last_offset, self.partition_leader_epoch, self.crc)


class Header(NamedTuple):
    """A record header: the key as Kafka decodes it (UTF-8), the value raw (``None`` = null)."""

    key: str
    value: bytes | None


class Record(NamedTuple):
    """One record, with the offset, timestamp and sequence Kafka reports for it.

    ``timestamp`` is what Kafka reports: for LogAppendTime batches (or v1 wrappers) the batch's
    time, not the stored delta. ``control_type`` is the raw control key type id of a control
    record (0 ABORT, 1 COMMIT, ...) and ``None`` elsewhere; ``coordinator_epoch`` is set for
    transaction markers only.

    NOTE: a NamedTuple, not a frozen dataclass: records are built ~10 per microsecond-budget
    batch, and tuple construction is several times cheaper (bench/README.md, decode figures).
    """

    batch_position: int
    offset: int
    timestamp: int
    sequence: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    control_type: int | None = None
    coordinator_epoch: int | None = None


class NewRecord(NamedTuple):
    """A record to write: absolute offset and timestamp, key, value, headers (writers only)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
