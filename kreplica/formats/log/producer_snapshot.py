"""Producer-state snapshots (``<offset>.snapshot``): idempotent/transactional producer state (spec §7).

Sources (apache/kafka trunk 2024-10 baseline): ``storage/src/main/java/org/apache/kafka/storage/
internals/log/ProducerStateManager.java`` (``readSnapshot``/``writeSnapshot``),
``storage/src/main/resources/message/ProducerSnapshot.json``, ``ProducerStateEntry.java``,
``BatchMetadata.java``; the layout is unchanged since 0.11 (branch ``2.0``
``core/src/main/scala/kafka/log/ProducerStateManager.scala``).

The file name's offset is the log offset up to which (exclusive) the snapshot reflects producer
state. Version 1 is the only version ever written; the encoding is non-flexible, so the array
count is an int32::

    ProducerSnapshot => version => Int16, crc => Uint32, producerEntries => [ProducerEntry]
    ProducerEntry => producerId => Int64, epoch => Int16, lastSequence => Int32,
                     lastOffset => Int64, offsetDelta => Int32, timestamp => Int64,
                     coordinatorEpoch => Int32, currentTxnFirstOffset => Int64

``crc`` is the CRC-32C of everything after it (bytes 6 … end of file, trailing bytes
included), so a torn or extended file fails it. Kafka's reader refuses the file on a bad
version, a parse failure or a CRC mismatch (``CorruptSnapshotException``); at start-up it then
deletes the snapshot and tries the next older one (§12.4). Here the CRC is reported
(``crc_valid``) rather than raised, so the contents of a damaged snapshot stay visible.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from kreplica.formats.checksums import crc32c
from kreplica.formats.errors import Malformed, Truncated, UnsupportedVersion

HEADER = struct.Struct(
    ">"
    "h"  # version
    "I"  # crc
    "i"  # producerEntries count (non-flexible array)
)
ENTRY = struct.Struct(
    ">"
    "q"  # producerId
    "h"  # epoch
    "i"  # lastSequence
    "q"  # lastOffset
    "i"  # offsetDelta
    "q"  # timestamp
    "i"  # coordinatorEpoch
    "q"  # currentTxnFirstOffset
)
HEADER_SIZE = HEADER.size                     # 10
ENTRY_SIZE = ENTRY.size                       # 46
CRC_OFFSET = struct.calcsize(">h")            # 2
CRC_COVERS_FROM = struct.calcsize(">hI")      # 6: ProducerStateManager.PRODUCER_ENTRIES_OFFSET
COUNT_OFFSET = CRC_COVERS_FROM                # 6
VERSION = 1                                   # ProducerStateManager.PRODUCER_SNAPSHOT_VERSION

NO_SEQUENCE = -1                              # RecordBatch.NO_SEQUENCE
INT32_MAX = 2**31 - 1


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence``: sequences wrap from ``Integer.MAX_VALUE`` to 0."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's persisted state: its last batch (``last_sequence``, ``last_offset``,
    ``offset_delta``, ``timestamp``), epochs, and the first offset of its open transaction
    (-1 if none). ``last_offset`` -1 means no batch is recorded."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def has_batch(self) -> bool:
        """Kafka adds the batch metadata only when ``lastOffset`` ≥ 0."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """First sequence of the last batch (``BatchMetadata.firstSeq``, wrapping below 0), or -1
        when no batch is recorded (``ProducerStateEntry.firstSeq`` of an empty entry)."""
        if not self.has_batch:
            return NO_SEQUENCE
        return decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """First offset of the last batch (``lastOffset - offsetDelta``), or -1 with no batch."""
        if not self.has_batch:
            return -1
        return self.last_offset - self.offset_delta

    @property
    def has_open_transaction(self) -> bool:
        return self.current_txn_first_offset >= 0


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A parsed snapshot. ``crc`` is stored, ``computed_crc`` recomputed over bytes 6 … end;
    ``crc_valid`` is their equality (Kafka refuses the file when false). ``trailing_bytes``
    counts bytes after the declared entries (Kafka's parser ignores them, but they are under the
    CRC)."""

    path: str
    version: int
    crc: int
    crc_valid: bool
    computed_crc: int
    entries: tuple[ProducerSnapshotEntry, ...]
    trailing_bytes: int = 0


def _schema_error(cls, detail: str, *, path: str, position: int, field: str, **kw):
    return cls(f"Snapshot failed schema validation: {detail}", path=path, position=position,
               field=field, **kw)


def parse_producer_snapshot(buf, *, path: str) -> ProducerSnapshot:
    """Parse a producer-state snapshot, checking structure before allocating anything.

    Raises :class:`UnsupportedVersion` for a version other than 1 ("Snapshot contained an
    unknown file version N" — Kafka parses the v1 layout first and checks the version after,
    so for a damaged file of another version its message may be a schema one instead),
    :class:`Truncated` when the header or the declared entries run past the end, and
    :class:`Malformed` for a negative entry count, each with Kafka's ``CorruptSnapshotException``
    text as ``reason``. A CRC mismatch is **not** raised: see ``crc_valid``.
    """
    length = len(buf)
    if length < CRC_OFFSET:
        raise _schema_error(Truncated, "java.nio.BufferUnderflowException reading version",
                            path=path, position=0, field="version",
                            expected=HEADER_SIZE, actual=length)
    (version,) = struct.unpack_from(">h", buf, 0)
    if version != VERSION:
        raise UnsupportedVersion(f"Snapshot contained an unknown file version {version}", path=path,
                                 position=0, field="version", expected=VERSION, actual=version)
    if length < HEADER_SIZE:
        field = "crc" if length < COUNT_OFFSET else "producer_entries"
        raise _schema_error(Truncated, f"java.nio.BufferUnderflowException reading {field}",
                            path=path, position=length, field=field,
                            expected=HEADER_SIZE, actual=length)
    _, crc, count = HEADER.unpack_from(buf, 0)
    remaining = length - HEADER_SIZE
    if count < 0:
        raise _schema_error(Malformed, "non-nullable field producerEntries was serialized as null",
                            path=path, position=COUNT_OFFSET, field="producer_entries", actual=count)
    if count > remaining:
        raise _schema_error(Truncated, f"Tried to allocate a collection of size {count}, but there "
                            f"are only {remaining} bytes remaining.",
                            path=path, position=COUNT_OFFSET, field="producer_entries",
                            expected=count * ENTRY_SIZE, actual=remaining)
    needed = count * ENTRY_SIZE
    if needed > remaining:
        whole = remaining // ENTRY_SIZE
        raise _schema_error(Truncated, f"java.nio.BufferUnderflowException reading entry {whole} of "
                            f"{count} ({needed} bytes declared, {remaining} present)",
                            path=path, position=HEADER_SIZE + whole * ENTRY_SIZE,
                            field="producer_entries", expected=needed, actual=remaining)
    with memoryview(buf) as view:
        computed = crc32c(view[CRC_COVERS_FROM:])
    entries = tuple(ProducerSnapshotEntry(*values)
                    for values in ENTRY.iter_unpack(buf[HEADER_SIZE:HEADER_SIZE + needed]))
    return ProducerSnapshot(path, version, crc, crc == computed, computed, entries,
                            remaining - needed)


def build_producer_snapshot(entries: Sequence[ProducerSnapshotEntry]) -> bytes:
    """A version-1 snapshot of ``entries`` in the order given, CRC filled in, as
    ``ProducerStateManager.writeSnapshot`` writes it."""
    body = bytearray(struct.pack(">i", len(entries)))
    for e in entries:
        body += ENTRY.pack(e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
                           e.offset_delta, e.timestamp, e.coordinator_epoch, e.current_txn_first_offset)
    return struct.pack(">hI", VERSION, crc32c(bytes(body))) + bytes(body)
