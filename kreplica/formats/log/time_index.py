"""Time index files (``<base>.timeindex``): timestamp → offset entries (spec §6.2, §6.3).

Sources (apache/kafka trunk 2024-10 baseline): ``storage/src/main/java/org/apache/kafka/storage/
internals/log/TimeIndex.java``, ``AbstractIndex.java``, ``LogSegment.java``, ``LogValidator.java``.

A bare array of 12-byte entries, no header, no checksum::

    TimeIndex => [TimeIndexEntry]
    TimeIndexEntry => timestamp => Int64, relativeOffset => Int32

An entry (T, O) says: T is the largest timestamp in the segment up to and including offset O
(base + relativeOffset). Kafka appends only when T is strictly above the last entry's
timestamp and never with a smaller offset, so timestamps strictly increase and offsets never
decrease. Which offset is stored with a timestamp depends on the Kafka version (§6.2: before
3.8 a leader could store a record's offset in the middle of a batch); that is judged against
the segment elsewhere, not here.

Preallocation is as for the offset index (10485756 bytes, 873813 slots by default), and a zero
tail makes Kafka's own ``sanityCheck`` fail (the "last" timestamp reads as 0). The walk finds
the real entries as §6.3 recommends: an all-zero slot 0 means empty; stop at the first slot
i > 0 that is all zero, or whose timestamp is not above the previous, or whose offset is below
the previous.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kreplica.formats.log._index_walk import IndexEnd, finish_walk, pad_preallocated, size_finding
from kreplica.formats.findings import Finding

ENTRY = struct.Struct(
    ">"
    "q"  # timestamp
    "i"  # relativeOffset
)
ENTRY_SIZE = ENTRY.size  # 12

__all__ = ["ENTRY", "ENTRY_SIZE", "IndexEnd", "TimeIndexEntry", "build_time_index", "iter_time_index"]


@dataclass(frozen=True, slots=True)
class TimeIndexEntry:
    """One real entry: ``slot`` number, ``timestamp`` (ms), absolute ``offset``."""

    slot: int
    timestamp: int
    offset: int


def iter_time_index(buf, *, path: str, base_offset: int) -> Iterator[TimeIndexEntry | Finding | IndexEnd]:
    """Yield the real entries of a time index, findings about it, and finally an :class:`IndexEnd`.

    Same walk as :func:`~kreplica.formats.log.offset_index.iter_offset_index`: stops at the first
    all-zero slot after slot 0 (the rest reported as ``index_preallocated`` or
    ``index_nonzero_after_end``); a timestamp not above the previous
    (``index_timestamp_regression``) or an offset below the previous
    (``index_offset_regression``) is an error and ends the walk; a negative relative offset is
    reported and the entry still yielded; a length that is not a multiple of 12 is reported
    first. Nothing is raised.
    """
    length = len(buf)
    slots = length // ENTRY_SIZE
    trailing = length % ENTRY_SIZE
    bad_size = size_finding(path, length, ENTRY_SIZE, "time index")
    if bad_size is not None:
        yield bad_size
    unpack = ENTRY.unpack_from
    slot = 0
    stopped_at = None
    prev_timestamp = prev_relative = None
    while slot < slots:
        pos = slot * ENTRY_SIZE
        timestamp, relative = unpack(buf, pos)
        if timestamp == 0 and relative == 0:
            break                                    # first empty slot: end of real entries
        if prev_timestamp is not None and timestamp <= prev_timestamp:
            yield Finding("index_timestamp_regression", path, pos,
                          f"slot {slot}: timestamp {timestamp} is not above the previous entry's "
                          f"{prev_timestamp}; the walk stops here",
                          details={"slot": slot, "timestamp": timestamp, "previous_timestamp": prev_timestamp})
            stopped_at = slot
            break
        if prev_relative is not None and relative < prev_relative:
            yield Finding("index_offset_regression", path, pos,
                          f"slot {slot}: offset {base_offset + relative} is below the previous "
                          f"entry's {base_offset + prev_relative}; the walk stops here",
                          details={"slot": slot, "offset": base_offset + relative,
                                   "previous_offset": base_offset + prev_relative})
            stopped_at = slot
            break
        if relative < 0:
            yield Finding("index_negative_entry", path, pos,
                          f"slot {slot}: negative relative offset {relative}",
                          details={"slot": slot, "relative_offset": relative})
        yield TimeIndexEntry(slot, timestamp, base_offset + relative)
        prev_timestamp, prev_relative = timestamp, relative
        slot += 1
    yield from finish_walk(buf, path=path, index_kind="time index", slot=slot, slots=slots,
                           entry_size=ENTRY_SIZE, trailing=trailing, stopped_at=stopped_at)


def build_time_index(entries: Sequence[tuple[int, int]], *, base_offset: int,
                     preallocate: int | None = None) -> bytes:
    """A time index holding ``(timestamp, absolute offset)`` pairs, as Kafka writes them.

    ``preallocate`` is the total file size of an active segment's index (``segment.index.bytes``),
    rounded down to a multiple of 12 and zero-filled after the entries (10485760 → 10485756).
    Raises ``ValueError`` for an offset that does not fit a relative int32 or entries that do
    not fit the preallocated size.
    """
    out = bytearray()
    for timestamp, offset in entries:
        relative = offset - base_offset
        if not 0 <= relative <= 2**31 - 1:
            raise ValueError(f"offset {offset} cannot be stored relative to base offset {base_offset}")
        out += ENTRY.pack(timestamp, relative)
    return pad_preallocated(out, entries=len(entries), entry_size=ENTRY_SIZE, preallocate=preallocate)
