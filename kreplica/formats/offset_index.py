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

ENTRY = struct.Struct(
    ">"
    "i"  # relativeOffset
    "i"  # position
)
ENTRY_SIZE = ENTRY.size  # 8

#: ``log.index.size.max.bytes`` / ``segment.index.bytes`` default: what Kafka preallocates.
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024

_CHUNK = 64 * 1024
_ZERO_CHUNK = bytes(_CHUNK)


@dataclass(frozen=True, slots=True)
class OffsetIndexEntry:
    """One real entry: ``slot`` number, absolute ``offset`` (base + relative), ``position``."""

    slot: int
    offset: int
    position: int


@dataclass(frozen=True, slots=True)
class IndexEnd:
    """How an index walk ended (offset and time indexes alike).

    ``entries`` is the real entry count (§6.3); ``slots`` what Kafka assumes
    (``length // entry_size``); ``padding_slots`` the all-zero slots at the end of the file
    (the preallocated tail; ``slots - entries`` for a clean preallocated file);
    ``trailing_bytes`` the ``length % entry_size`` bytes Kafka ignores; ``stopped_at`` the slot
    of a non-zero entry that broke monotonicity and ended the walk, else ``None``.
    """

    path: str
    entries: int
    slots: int
    padding_slots: int
    trailing_bytes: int
    stopped_at: int | None


def _is_zero(buf, start: int, end: int) -> bool:
    """True when ``buf[start:end]`` is all zero, compared in bounded chunks (no copy of a 10 MiB
    preallocated tail)."""
    pos = start
    while pos < end:
        n = min(_CHUNK, end - pos)
        # bytes(): a memoryview compares element by element, bytes with memcmp.
        if bytes(buf[pos:pos + n]) != _ZERO_CHUNK[:n]:
            return False
        pos += n
    return True


def _first_nonzero(buf, start: int, end: int) -> int | None:
    pos = start
    while pos < end:
        n = min(_CHUNK, end - pos)
        chunk = bytes(buf[pos:pos + n])
        if chunk != _ZERO_CHUNK[:n]:
            return pos + (len(chunk) - len(chunk.lstrip(b"\x00")))
        pos += n
    return None


def trailing_zero_slots(buf, first_slot: int, slots: int, entry_size: int) -> int:
    """How many slots in ``[first_slot, slots)`` at the end of the slot area are all zero."""
    lo, hi = first_slot, slots
    # Whole-chunk steps backwards, then slot by slot.
    count = 0
    slot = hi
    per_chunk = max(1, _CHUNK // entry_size)
    while slot - per_chunk >= lo and _is_zero(buf, (slot - per_chunk) * entry_size, slot * entry_size):
        slot -= per_chunk
        count += per_chunk
    while slot > lo and _is_zero(buf, (slot - 1) * entry_size, slot * entry_size):
        slot -= 1
        count += 1
    return count


def finish_walk(buf, *, path: str, index_kind: str, slot: int, slots: int, entry_size: int,
                trailing: int, stopped_at: int | None) -> Iterator[Finding | IndexEnd]:
    """Findings about what follows the real entries, then the :class:`IndexEnd`. Shared by the
    offset and time index walkers; ``slot`` is where the real entries ended."""
    if stopped_at is None and slot < slots:
        start = slot * entry_size
        end = slots * entry_size
        if _is_zero(buf, start, end):
            padding = slots - slot
            yield Finding("index_preallocated", path, start,
                          f"{padding} zero-filled slot(s) ({padding * entry_size} bytes) follow the "
                          f"{slot} real {index_kind} entries; Kafka counts all {slots} slots",
                          details={"entries": slot, "padding_slots": padding, "slots": slots})
            yield IndexEnd(path, slot, slots, padding, trailing, None)
            return
        first = _first_nonzero(buf, start, end)
        first_slot = slot if first is None else (first - start) // entry_size + slot
        yield Finding("index_nonzero_after_end", path, first_slot * entry_size,
                      f"slot {first_slot} is not empty although slot {slot} ends the {index_kind} "
                      "entries; the slots from there on are not read as entries",
                      details={"entries": slot, "slots": slots, "first_nonzero_slot": first_slot})
    padding = trailing_zero_slots(buf, slot + (1 if stopped_at is not None else 0), slots, entry_size) \
        if slot < slots else 0
    yield IndexEnd(path, slot, slots, padding, trailing, stopped_at)


def size_finding(path: str, length: int, entry_size: int, index_kind: str) -> Finding | None:
    """The ``sanityCheck`` length rule: a length that is not a whole number of entries."""
    trailing = length % entry_size
    if not trailing:
        return None
    return Finding("index_size_not_multiple", path, length - trailing,
                   f"{index_kind} file length {length} is not a multiple of {entry_size}; Kafka's "
                   f"sanity check throws CorruptIndexException ({trailing} trailing bytes)",
                   details={"length": length, "entry_size": entry_size, "trailing_bytes": trailing})


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
                          details={"slot": slot, "relative_offset": relative, "position": position})
        elif prev_position is not None and position <= prev_position:
            yield Finding("index_position_regression", path, pos,
                          f"slot {slot}: position {position} is not above the previous entry's "
                          f"{prev_position}",
                          details={"slot": slot, "position": position, "previous_position": prev_position})
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
    if preallocate is not None:
        size = preallocate - preallocate % ENTRY_SIZE
        if size < len(out):
            raise ValueError(f"{len(entries)} entries do not fit a {preallocate}-byte index")
        out += bytes(size - len(out))
    return bytes(out)
