"""Offset index files (``<base>.index``): sparse offset → file position entries (spec §6.1, §6.3).

Sources (apache/kafka trunk 2024-10 baseline): ``storage/src/main/java/org/apache/kafka/storage/
internals/log/OffsetIndex.java``, ``AbstractIndex.java``, ``LogSegment.java``.

The file is a bare array of 8-byte entries, no header, no checksum (Kafka rebuilds indexes
after a crash instead of verifying them)::

    OffsetIndex => [OffsetIndexEntry]
    OffsetIndexEntry => relativeOffset => Int32, position => Int32

``relativeOffset`` is the absolute offset minus the segment's base offset (from the file name);
``position`` is the byte position in ``<base>.log`` of the append that holds that offset. Kafka
writes an entry after every ``index.interval.bytes`` of appends, never for a segment's first
append, so a real entry never has position 0.

Kafka preallocates the active segment's index to ``segment.index.bytes`` (10 MiB: 1310720
zero slots) and trims it on roll or clean shutdown, but on load it trusts the length:
entries = length / 8. A copied active segment (or a crashed broker's) therefore carries a zero
tail, which Kafka never notices because an all-zero slot decodes to (base offset, 0). The walk
here finds the real entries the way §6.3 recommends: slot 0 all zero means empty; stop at the
first slot i > 0 that is all zero, or whose relative offset is not above the previous one.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kreplica.formats.findings import Finding
from kreplica.formats.log._index_walk import IndexEnd, finish_walk, pad_preallocated, size_finding

ENTRY = struct.Struct(
    ">"
    "i"  # relativeOffset
    "i"  # position
)
ENTRY_SIZE = ENTRY.size  # 8

#: ``log.index.size.max.bytes`` / ``segment.index.bytes`` default: what Kafka preallocates.
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class OffsetIndexEntry:
    """One real entry: ``slot`` number, absolute ``offset`` (base + relative), ``position``."""

    slot: int
    offset: int
    position: int


def iter_offset_index(buf, *, path: str, base_offset: int) -> Iterator[OffsetIndexEntry | Finding | IndexEnd]:
    """Yield the real entries of an offset index, findings about it, and finally an :class:`IndexEnd`.

    ``buf`` is ``bytes``, an ``mmap`` or a ``memoryview`` of the whole file. The walk stops at
    the first all-zero slot after slot 0 (an all-zero slot 0 means no entries); the rest is a
    ``index_preallocated`` warning when it is all zero, else an ``index_nonzero_after_end``
    error. A slot whose relative offset is not above the previous one is an
    ``index_offset_regression`` error and ends the walk (``IndexEnd.stopped_at``). A negative
    relative offset or position, or a position not above the previous, is reported and the
    entry still yielded. A length that is not a multiple of 8 is reported first. Nothing is
    raised; the preallocated tail is checked in chunks, never materialised as entries.
    """
    length = len(buf)
    slots = length // ENTRY_SIZE
    trailing = length % ENTRY_SIZE
    bad_size = size_finding(path, length, ENTRY_SIZE, "offset index")
    if bad_size is not None:
        yield bad_size
    unpack = ENTRY.unpack_from
    slot = 0
    stopped_at = None
    prev_relative = prev_position = None
    while slot < slots:
        pos = slot * ENTRY_SIZE
        relative, position = unpack(buf, pos)
        if relative == 0 and position == 0:
            break                                    # first empty slot: end of real entries
        if prev_relative is not None and relative <= prev_relative:
            yield Finding("index_offset_regression", path, pos,
                          f"slot {slot}: offset {base_offset + relative} is not above the previous "
                          f"entry's {base_offset + prev_relative}; the walk stops here",
                          details={"slot": slot, "offset": base_offset + relative,
                                   "previous_offset": base_offset + prev_relative})
            stopped_at = slot
            break
        if relative < 0 or position < 0:
            yield Finding("index_negative_entry", path, pos,
                          f"slot {slot}: negative relative offset {relative} or position {position}",
                          details={"slot": slot, "relative_offset": relative, "segment_position": position})
        elif prev_position is not None and position <= prev_position:
            yield Finding("index_position_regression", path, pos,
                          f"slot {slot}: position {position} is not above the previous entry's "
                          f"{prev_position}",
                          details={"slot": slot, "segment_position": position, "previous_position": prev_position})
        yield OffsetIndexEntry(slot, base_offset + relative, position)
        prev_relative, prev_position = relative, position
        slot += 1
    yield from finish_walk(buf, path=path, index_kind="offset index", slot=slot, slots=slots,
                           entry_size=ENTRY_SIZE, trailing=trailing, stopped_at=stopped_at)


def build_offset_index(entries: Sequence[tuple[int, int]], *, base_offset: int,
                       preallocate: int | None = None) -> bytes:
    """An offset index holding ``(absolute offset, position)`` pairs, as Kafka writes them.

    ``preallocate`` is the total file size of an active segment's index (Kafka's
    ``segment.index.bytes``, e.g. :data:`DEFAULT_MAX_INDEX_SIZE`), rounded down to a multiple
    of 8 and zero-filled after the entries. Raises ``ValueError`` for an offset that does not
    fit a relative int32 or entries that do not fit the preallocated size.
    """
    out = bytearray()
    for offset, position in entries:
        relative = offset - base_offset
        if not 0 <= relative <= 2**31 - 1:
            raise ValueError(f"offset {offset} cannot be stored relative to base offset {base_offset}")
        out += ENTRY.pack(relative, position)
    return pad_preallocated(out, entries=len(entries), entry_size=ENTRY_SIZE, preallocate=preallocate)
