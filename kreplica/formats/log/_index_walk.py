"""The walk shared by the offset and time index readers: where the real entries end (spec §6.3).

Private to :mod:`~kreplica.formats.log.offset_index` and :mod:`~kreplica.formats.log.time_index`. Both
files are bare arrays of fixed-size slots that Kafka preallocates with zeros (10 MiB by default)
and trusts by length; each reader walks its own entries until the first all-zero slot or a
regression, then hands the rest of the file to :func:`finish_walk`, which says what follows the
real entries (a zero-filled preallocated tail, or non-zero slots Kafka would misread) and ends
the walk with an :class:`IndexEnd`. Zero tails are compared in bounded chunks, never copied or
materialised as entries.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.formats.findings import Finding

_CHUNK = 64 * 1024
_ZERO_CHUNK = bytes(_CHUNK)


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
                          f"{os.path.basename(path)}: {padding} zero-filled preallocated slot(s) "
                          f"({padding * entry_size} bytes) follow the {slot} real {index_kind} entries, as Kafka "
                          "leaves an active segment's index until it trims it on close; normal, not damage",
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


def pad_preallocated(out: bytearray, *, entries: int, entry_size: int, preallocate: int | None) -> bytes:
    """``out`` zero-filled to ``preallocate`` rounded down to a whole number of entries, as an
    active segment's index is (``segment.index.bytes``); ``out`` itself when ``preallocate`` is
    ``None``. Raises ``ValueError`` when the entries do not fit."""
    if preallocate is not None:
        size = preallocate - preallocate % entry_size
        if size < len(out):
            raise ValueError(f"{entries} entries do not fit a {preallocate}-byte index")
        out += bytes(size - len(out))
    return bytes(out)
