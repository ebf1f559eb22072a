"""Transaction index files (``<base>.txnindex``): one entry per aborted transaction (spec §6.4).

Sources (apache/kafka trunk 2024-10 baseline): ``storage/src/main/java/org/apache/kafka/storage/
internals/log/TransactionIndex.java``, ``AbortedTxn.java``.

A bare array of 34-byte entries, appended (never preallocated, never memory-mapped), created
only when the segment's first aborted transaction completes; no checksum::

    TransactionIndex => [AbortedTxn]
    AbortedTxn => version => Int16, producerId => Int64, firstOffset => Int64,
                  lastOffset => Int64, lastStableOffset => Int64

Offsets are absolute. ``lastOffset`` is the offset of the ABORT marker, which lies in this
segment; ``firstOffset`` may lie in an earlier one. Kafka's reader (``TransactionIndex.iterable``)
reads while at least 34 bytes remain, so a partial trailing entry is silently ignored, and
checks the version by reading only the **first byte** of the int16 (``buffer.get(0)``): a
high byte above 0 throws ``KafkaException("Unexpected aborted transaction version …")``.
``sanityCheck`` (run when a segment is loaded) throws ``CorruptIndexException`` for an entry
whose ``lastOffset`` is below the segment's base offset, which makes the broker rebuild the
segment; appends refuse a ``lastOffset`` that does not increase.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kreplica.formats.findings import Finding

ENTRY = struct.Struct(
    ">"
    "h"  # version
    "q"  # producerId
    "q"  # firstOffset
    "q"  # lastOffset
    "q"  # lastStableOffset
)
ENTRY_SIZE = ENTRY.size  # 34
CURRENT_VERSION = 0      # AbortedTxn.CURRENT_VERSION


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction, at byte ``position`` of the file. ``version`` is the whole
    int16 as stored (Kafka looks only at its high byte)."""

    position: int
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def iter_txn_index(buf, *, path: str, base_offset: int) -> Iterator[AbortedTxn | Finding]:
    """Yield the aborted transactions Kafka would read, with findings, never raising.

    Entries are read while 34 bytes remain; a shorter tail is a ``txn_index_partial_entry``
    warning (Kafka ignores it). An entry whose version high byte is above 0 is a
    ``txn_index_unknown_version`` error and ends the walk, as Kafka's iterator throws there.
    Each entry is checked as Kafka's append and ``sanityCheck`` would: ``lastOffset`` must
    increase (``txn_index_offset_regression``) and must not lie below ``base_offset``
    (``txn_index_before_segment``, Kafka's ``CorruptIndexException``); a ``firstOffset`` above
    ``lastOffset`` is ``txn_index_inverted_range``. The entry is yielded after its findings.
    """
    length = len(buf)
    unpack = ENTRY.unpack_from
    pos = 0
    prev_last = None
    while length - pos >= ENTRY_SIZE:
        version, producer_id, first, last, lso = unpack(buf, pos)
        high_byte = version >> 8          # arithmetic shift: the signed first byte
        if high_byte > CURRENT_VERSION:
            yield Finding("txn_index_unknown_version", path, pos,
                          f"Unexpected aborted transaction version {high_byte} in transaction index "
                          f"{path}, current version is {CURRENT_VERSION}; Kafka stops reading here",
                          details={"version": version})
            return
        if prev_last is not None and last <= prev_last:
            yield Finding("txn_index_offset_regression", path, pos,
                          f"last offset {last} is not above the previous entry's {prev_last}",
                          details={"last_offset": last, "previous_last_offset": prev_last})
        if last < base_offset:
            yield Finding("txn_index_before_segment", path, pos,
                          f"Last offset of aborted transaction (producer {producer_id}, last offset "
                          f"{last}) in index {path} is less than start offset {base_offset} "
                          "(CorruptIndexException: the broker rebuilds this segment)",
                          details={"last_offset": last, "base_offset": base_offset})
        if first > last:
            yield Finding("txn_index_inverted_range", path, pos,
                          f"first offset {first} is above last offset {last}",
                          details={"first_offset": first, "last_offset": last})
        yield AbortedTxn(pos, version, producer_id, first, last, lso)
        prev_last = last
        pos += ENTRY_SIZE
    if pos < length:
        yield Finding("txn_index_partial_entry", path, pos,
                      f"{length - pos} trailing bytes do not make a whole {ENTRY_SIZE}-byte entry; "
                      "Kafka ignores them",
                      details={"trailing_bytes": length - pos})


def build_txn_index(entries: Sequence[tuple[int, int, int, int]]) -> bytes:
    """A transaction index of ``(producer_id, first_offset, last_offset, last_stable_offset)``
    entries, version 0, in the order given (Kafka appends them as aborts complete)."""
    return b"".join(ENTRY.pack(CURRENT_VERSION, pid, first, last, lso) for pid, first, last, lso in entries)
