"""Segment files (``*.log``): Kafka's file framing, then kreplica's walk past damage.

Sources (apache/kafka 3.9): ``clients/src/main/java/org/apache/kafka/common/record/
FileLogInputStream.java``, ``FileRecords.java``, ``Records.java``.

A segment is a plain run of log entries with no file header. Every entry, whatever its
magic, starts with the same fields, which is all the framing walk looks at::

    LogEntry => Offset => Int64, Size => Int32, (4 bytes: epoch or CRC), Magic => Int8, ...

Kafka's ``FileLogInputStream.nextBatch`` decides what counts as damage:

1. 17 bytes or fewer left → stop, no error;
2. ``Size < 14`` (the smallest v0 message; zero padding included) → ``CorruptRecordException``;
3. the entry runs past the end of the file → stop silently ("not there yet");
4. magic < 2 → legacy parser; anything else (3..127 too) → the v2 parser.

:func:`iter_segment` yields exactly the batches that walk yields, in order, then goes further:
where Kafka would stop (rule 2, or rule 3 when a valid batch follows), it searches forward for
the next position holding a plausible batch with a valid CRC and carries on from there, marking
those batches ``after_break``. Every problem becomes a :class:`Finding`; nothing is raised.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from kreplica.formats import codecs
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.checksums import crc32, crc32c
from kreplica.formats.errors import DecompressionError, FormatError, Truncated
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import PageReleaser, data_extent

PREFIX = struct.Struct(
    ">"
    "q"   # offset (v2: baseOffset; v0/v1: offset of the (last) message)
    "i"   # size (bytes after this field)
    "4x"  # partitionLeaderEpoch (v2) or crc (v0/v1)
    "b"   # magic
)
HEADER_SIZE_UP_TO_MAGIC = PREFIX.size            # 17
LOG_OVERHEAD = struct.calcsize(">qi")            # 12
MIN_ENTRY_SIZE = legacy_records.RECORD_OVERHEAD_V0  # 14: Kafka's minimum record overhead

#: How far the walk gets ahead of the pages it hands back (formats/mapped.py, PageReleaser).
RELEASE_STEP = 64 * 1024 * 1024

STOP_END_OF_FILE = "end_of_file"
STOP_INCOMPLETE = "incomplete_trailing_data"
STOP_EXCEPTION = "exception"
STOP_MAX_BYTES = "max_bytes"

_NONZERO = re.compile(rb"[^\x00]")
# A batch candidate: non-negative offset, size >= 14, then magic 2, or magic 0/1 followed by
# legacy attributes with codec 0-3 and no unused bits. Zero-width, so candidates may overlap.
_CANDIDATE = re.compile(
    rb"(?s)(?=[\x00-\x7f].{7}"
    rb"(?:[\x01-\x7f].{3}|\x00[\x01-\xff].{2}|\x00\x00[\x01-\xff].|\x00\x00\x00[\x0e-\xff])"
    rb".{4}(?:\x02|[\x00\x01][\x00-\x03\x08-\x0b]))"
)
_CRC = struct.Struct(">I")  # crc: v2 at default_records.CRC_OFFSET, v0/v1 at legacy_records.CRC_OFFSET


@dataclass(frozen=True, slots=True)
class SegmentEnd:
    """How the walk ended.

    ``valid_bytes`` is where Kafka's file reader stops yielding batches (the end of the last
    batch it returns); ``stopped_by`` is why, in the oracle's words: ``end_of_file``,
    ``incomplete_trailing_data`` (a silent stop with bytes left), ``exception``, or
    ``max_bytes`` when the user limited the read. ``scanned_bytes`` is how much was looked at.
    """

    path: str
    file_size: int
    scanned_bytes: int
    valid_bytes: int
    stopped_by: str


#: Searches over long stretches (zeros, garbage) go a window at a time, handing the pages behind
#: them back to the kernel: a 10 GiB run of zeros is read once without keeping 10 GiB resident.
#: The holes of a sparse file are not read at all (:func:`~kreplica.formats.mapped.data_extent`).
SEARCH_WINDOW = 32 * 1024 * 1024


def _all_zero(buf, start: int, end: int, mapping=None) -> bool:
    """Whether ``buf[start:end]`` is all zeros. Holes of a sparse file read as zeros, so only the
    stretches the file system says may hold data are searched, a window at a time, with the pages
    behind released when ``mapping`` is the mmap under ``buf``."""
    search = _NONZERO.search
    release = PageReleaser(mapping, start)
    pos = start
    while pos < end:
        data, stop = data_extent(mapping, pos, end)
        for w in range(data, stop, SEARCH_WINDOW):
            if search(buf, w, min(stop, w + SEARCH_WINDOW)) is not None:
                return False
            release.upto(w + SEARCH_WINDOW, SEARCH_WINDOW)
        pos = stop
    return True


def is_plausible_batch(buf, pos: int, end: int, budget: list[int] | None = None) -> bool:
    """True when a whole, structurally sensible batch with a matching CRC starts at ``pos``.

    Used to resynchronise: legacy messages must account for their size exactly (key and value
    lengths add up), v2 headers must have sane counts and deltas, and the CRC must match.
    ``budget`` (a one-item list of bytes) bounds the checksum work of a search; a candidate
    that would overspend it is refused, so crafted runs of plausible headers cannot make a
    search quadratic.
    """
    if end - pos < LOG_OVERHEAD + MIN_ENTRY_SIZE:
        return False
    offset, size, magic = PREFIX.unpack_from(buf, pos)
    if offset < 0 or size < MIN_ENTRY_SIZE or size > end - pos - LOG_OVERHEAD:
        return False
    stop = pos + LOG_OVERHEAD + size
    if budget is not None:
        if budget[0] < size:
            return False
        budget[0] -= size
    if magic == 2:
        if size < default_records.MIN_BATCH_LENGTH:
            return False
        (attributes, last_delta, base_ts, max_ts, producer_id, producer_epoch, base_sequence,
         count) = default_records.HEADER_FROM_ATTRIBUTES.unpack_from(
            buf, pos + default_records.ATTRIBUTES_OFFSET)
        codec = attributes & default_records.COMPRESSION_CODEC_MASK
        if codec > codecs.ZSTD or count < 0 or last_delta < 0 or last_delta < count - 1:
            return False
        if max_ts < -1 or producer_id < -1 or producer_epoch < -1 or base_sequence < -1:
            return False
        if codec == codecs.NONE and count * default_records.MIN_RECORD_SIZE > size - default_records.MIN_BATCH_LENGTH:
            return False
        (stored,) = _CRC.unpack_from(buf, pos + default_records.CRC_OFFSET)
        return crc32c(buf[pos + default_records.ATTRIBUTES_OFFSET:stop]) == stored
    if magic in (0, 1):
        overhead = legacy_records.RECORD_OVERHEAD_V0 if magic == 0 else legacy_records.RECORD_OVERHEAD_V1
        if size < overhead:
            return False
        key_at = pos + (legacy_records.KEY_SIZE_OFFSET_V0 if magic == 0 else legacy_records.KEY_SIZE_OFFSET_V1)
        (key_len,) = legacy_records.LENGTH.unpack_from(buf, key_at)
        if key_len < -1 or overhead + max(key_len, 0) > size:
            return False
        (value_len,) = legacy_records.LENGTH.unpack_from(buf, key_at + legacy_records.LENGTH.size + max(key_len, 0))
        if value_len < -1 or overhead + max(key_len, 0) + max(value_len, 0) != size:
            return False
        (stored,) = _CRC.unpack_from(buf, pos + legacy_records.CRC_OFFSET)
        return crc32(buf[pos + legacy_records.MAGIC_OFFSET:stop]) == stored
    return False


#: The magics Kafka writes; a file whose first entry carries another is not taken for a segment.
WRITTEN_MAGICS = (0, 1, 2)
#: How many leading bytes :func:`first_bytes_kind` looks at.
SNIFF_BYTES = 64


def starts_like_segment(buf) -> bool:
    """Whether ``buf`` opens with the prefix of a log entry Kafka writes: offset >= 0, size >= 14
    and magic 0, 1 or 2. Deliberately weaker than :func:`is_plausible_batch` (which also wants
    the whole batch and its CRC), so that a segment whose first batch is damaged or cut off is
    still read as one and its damage reported; text never passes, its byte 16 being a
    character, not a magic."""
    if len(buf) < HEADER_SIZE_UP_TO_MAGIC:
        return False
    offset, size, magic = PREFIX.unpack_from(buf, 0)
    return offset >= 0 and size >= MIN_ENTRY_SIZE and magic in WRITTEN_MAGICS


def first_bytes_kind(buf) -> str:
    """What the first bytes of a file look like, in a word: ``empty``, ``zeros``, ``text`` (UTF-8
    without control characters other than whitespace) or ``binary``."""
    head = bytes(buf[:SNIFF_BYTES])
    if not head:
        return "empty"
    if _NONZERO.search(head, 0, len(head)) is None:
        return "zeros"
    for cut in range(4):  # the window may cut a multi-byte character in two
        try:
            text = head[:len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return "text" if all(c.isprintable() or c in "\t\r\n" for c in text) else "binary"
    return "binary"


#: A search checksums at most this many times the bytes it searches (plus 1 MiB).
SEARCH_CRC_BUDGET_FACTOR = 16


def find_next_batch(buf, start: int, end: int, mapping=None) -> int | None:
    """The first position at or after ``start`` where :func:`is_plausible_batch` holds.

    Candidates come from a regular expression over the raw bytes (C speed), so runs of zeros
    and random garbage are skipped without a Python-level loop per byte. The checksum work is
    bounded (:data:`SEARCH_CRC_BUDGET_FACTOR`): crafted data that would make it quadratic ends
    the search instead, and the rest of the file is reported as unreadable. The search goes
    :data:`SEARCH_WINDOW` bytes at a time; when ``mapping`` is the mmap under ``buf``, pages it
    has passed are released, so resident memory stays flat across gigabytes of damage, and the
    holes of a sparse file are skipped without being read.
    """
    search = _CANDIDATE.search
    release = PageReleaser(mapping, start)
    pos = window_end = start
    budget = [SEARCH_CRC_BUDGET_FACTOR * (end - start) + (1 << 20)]
    nonzero = _NONZERO.search
    while True:
        if pos >= window_end:
            if pos >= end:
                return None
            # a hole reads as zeros, and a candidate's size field (bytes 8-11) is not zero: none
            # starts more than LOG_OVERHEAD bytes before the data that follows a hole
            data, stop = data_extent(mapping, pos, end)
            if data >= end:
                return None
            pos = max(pos, data - LOG_OVERHEAD)
            window_end = min(stop, pos + SEARCH_WINDOW)
            release.upto(pos, SEARCH_WINDOW)
        # a candidate's size field (bytes 8-11) is at least 14, so none lies wholly in zeros: skip
        # runs of zeros (a preallocated or sparse stretch) with the cheaper search first
        z = nonzero(buf, pos, min(end, window_end + LOG_OVERHEAD))
        if z is None:
            pos = window_end
        elif z.start() - LOG_OVERHEAD > pos:
            pos = z.start() - LOG_OVERHEAD
        # a candidate needs 18 bytes of lookahead past its start, so the window reads a little further
        m = search(buf, pos, min(end, window_end + HEADER_SIZE_UP_TO_MAGIC + 8)) if pos < window_end else None
        if m is None or m.start() >= window_end:
            pos = window_end
            continue
        if budget[0] <= 0:
            return None
        q = m.start()
        if is_plausible_batch(buf, q, end, budget):
            return q
        pos = q + 1


def iter_segment(buf, *, path: str, verify_crc: bool = True, max_bytes: int | None = None,
                 start: int = 0, stop: int | None = None) -> Iterator[RecordBatch | Finding | SegmentEnd]:
    """Walk a segment held in ``buf`` (an mmap, bytes or memoryview).

    Yields :class:`RecordBatch` values and :class:`Finding` values in file order, then one
    :class:`SegmentEnd`. Up to the first break the batches are exactly those Kafka's
    ``FileRecords.batches()`` yields (a batch with a bad CRC included: Kafka yields it too);
    after it, batches found by :func:`find_next_batch` come with ``after_break=True``.
    ``max_bytes`` reads only that many bytes, as ``kafka-dump-log --max-bytes`` does: a batch
    cut by the limit is not damage.

    ``start`` and ``stop`` walk one stretch of a segment split at batch boundaries (the fleet
    scan's chunks): the walk begins at ``start`` as if every byte before it had read cleanly and
    ends at the first batch boundary at or past ``stop``. The stretch is the same as that part of
    a whole walk exactly when the stretch before it ended cleanly at ``start``, which its
    :class:`SegmentEnd` tells: ``scanned_bytes == valid_bytes == stop``.
    """
    # NOTE: slices of an mmap are copies; slices of a memoryview over it are not, so the CRC of a
    # 16 KiB batch reads the mapping directly (bench/README.md has the figure).
    view = buf if isinstance(buf, (bytes, memoryview)) else memoryview(buf)
    try:
        yield from _walk(view, buf, path=path, verify_crc=verify_crc, max_bytes=max_bytes, start=start, stop=stop)
    finally:
        if view is not buf:
            try:
                view.release()
            except BufferError:  # a consumer still holds a slice; the view goes when it does
                pass


class _KafkaStop:
    """Where Kafka's reader stops, and why: the first break the walk meets (the walk itself may
    go on past it, resynchronising; later breaks are kreplica's alone)."""

    __slots__ = ("at", "why")

    def __init__(self) -> None:
        self.at: int | None = None
        self.why = STOP_END_OF_FILE

    def here(self, pos: int, why: str) -> None:
        if self.at is None:
            self.at, self.why = pos, why


def _walk(buf, mapping, *, path: str, verify_crc: bool, max_bytes: int | None, start: int = 0,
          stop: int | None = None) -> Iterator[RecordBatch | Finding | SegmentEnd]:
    """:func:`iter_segment` over ``buf`` (``mapping``: the mmap under it, or ``None``): Kafka's
    rules 1-4 in order, each break handed to the step that reports it and says where to resume."""
    file_size = len(buf)
    end = file_size if max_bytes is None else min(file_size, max_bytes)
    limited = end < file_size
    pos = start
    stop = end + 1 if stop is None else stop
    kafka = _KafkaStop()
    after_break = False
    # NOTE: on an mmap, pages already walked are handed back to the kernel every RELEASE_STEP bytes,
    # so resident memory stays flat however large the segment (they fault in again if revisited);
    # the loop compares one int per batch and calls the releaser once per step.
    release = PageReleaser(mapping, start)
    release_at = release.next_due(RELEASE_STEP)
    parse_v2 = default_records.parse_header
    parse_legacy = legacy_records.parse_entry
    unpack_prefix = PREFIX.unpack_from
    max_codec = codecs.ZSTD
    v2_minimum = default_records.MIN_BATCH_LENGTH

    while pos < stop:
        remaining = end - pos
        if remaining <= HEADER_SIZE_UP_TO_MAGIC:  # rule 1
            if limited:
                kafka.here(pos, STOP_MAX_BYTES)
            elif remaining > 0:
                kafka.here(pos, STOP_INCOMPLETE)
                yield _tail_finding(buf, path, pos, end)
            break
        offset, size, magic = unpack_prefix(buf, pos)
        if size < MIN_ENTRY_SIZE or size > remaining - LOG_OVERHEAD:
            if pos == 0 and not limited and _holds_no_batch(buf, mapping, end):
                kafka.here(pos, STOP_EXCEPTION if size < MIN_ENTRY_SIZE else STOP_INCOMPLETE)
                yield _not_a_segment_finding(buf, path, end)
                break
            if size < MIN_ENTRY_SIZE:  # rule 2: Kafka's reader throws
                kafka.here(pos, STOP_EXCEPTION)
                nxt = yield from _below_minimum(buf, mapping, path, pos, end, size)
            elif limited:  # a batch cut by the max_bytes limit is not damage
                kafka.here(pos, STOP_MAX_BYTES)
                break
            else:  # rule 3: Kafka's reader silently stops
                kafka.here(pos, STOP_INCOMPLETE)
                nxt = yield from _past_the_end(buf, mapping, path, pos, end, size)
            if nxt is None:
                break
            pos, after_break = nxt, True
            continue
        if pos >= release_at:
            release.upto(pos, RELEASE_STEP)
            release_at = release.next_due(RELEASE_STEP)
        entry_size = LOG_OVERHEAD + size
        if magic < 2:  # rule 4
            batch, error = parse_legacy(buf, pos, entry_size, path=path, verify_crc=verify_crc,
                                        after_break=after_break, mapping=mapping)
            yield batch
            if magic < 0 or batch.crc_valid is False or error is not None:
                yield from _legacy_findings(buf, mapping, batch, error)
        else:
            batch = parse_v2(buf, pos, entry_size, path=path, verify_crc=verify_crc, after_break=after_break,
                             mapping=mapping)
            yield batch
            if magic > 2 or size < v2_minimum or batch.crc_valid is False or batch.compression > max_codec:
                yield from _v2_findings(buf, mapping, batch)
        pos += entry_size
    else:  # a stretch's walk reached its stop
        end = pos
    yield SegmentEnd(path, file_size, end, pos if kafka.at is None else kafka.at, kafka.why)


def _holds_no_batch(buf, mapping, end: int) -> bool:
    """Whether a file whose first entry cannot be read holds no batch anywhere and does not start
    like one (nor with zeros): not a damaged segment, another file under a segment's name. A
    segment cut off inside its first batch still starts like a segment and is damaged."""
    return (not starts_like_segment(buf) and first_bytes_kind(buf) in ("text", "binary")
            and find_next_batch(buf, 1, end, mapping) is None)


def _not_a_segment_finding(buf, path: str, end: int) -> Finding:
    kind = first_bytes_kind(buf)
    starts = "text" if kind == "text" else "bytes that are not a log entry"
    return Finding("not_a_segment", path, 0,
                   f"no record batch anywhere in its {end} bytes, which start with {starts}: not a Kafka "
                   "segment, whatever its name (Kafka's reader finds no batch in it)",
                   details={"first_bytes": kind, "size": end})


def _below_minimum(buf, mapping, path: str, pos: int, end: int, size: int) -> Generator[Finding, None, int | None]:
    """Rule 2, an entry size below Kafka's minimum record overhead (where Kafka's reader throws):
    preallocated zeros to the end, or damage; yields the findings and returns where the next
    plausible batch starts (``None``: nowhere, the walk ends)."""
    if _all_zero(buf, pos, end, mapping):
        yield Finding("trailing_zeros", path, pos,
                      f"{end - pos} zero bytes from byte {pos} to the end of the file "
                      "(preallocated space); Kafka's reader fails here with 'Found record size 0 "
                      "smaller than minimum record overhead (14)'",
                      details={"length": end - pos})
        return None
    yield Finding("invalid_length", path, pos,
                  f"entry size {size} is below the minimum record overhead ({MIN_ENTRY_SIZE}); "
                  "Kafka's reader throws CorruptRecordException here",
                  details={"size": size, "minimum": MIN_ENTRY_SIZE})
    nxt = find_next_batch(buf, pos + 1, end, mapping)
    if nxt is not None:
        yield _resync_finding(buf, path, pos, nxt)
    return nxt


def _past_the_end(buf, mapping, path: str, pos: int, end: int, size: int) -> Generator[Finding, None, int | None]:
    """Rule 3, an entry that runs past the end of the file (where Kafka's reader silently stops):
    the cut-off last batch, or a damaged length with valid batches after it; yields the findings
    and returns where the next plausible batch starts (``None``: nowhere, the walk ends)."""
    remaining = end - pos
    nxt = find_next_batch(buf, pos + 1, end, mapping)
    if nxt is None:
        yield Finding("truncated_tail", path, pos,
                      f"the batch at byte {pos} declares {LOG_OVERHEAD + size} bytes but only "
                      f"{remaining} remain: the last batch is cut off ({remaining} bytes); "
                      "Kafka's reader silently ignores it",
                      details={"declared_size": LOG_OVERHEAD + size, "available": remaining})
        return None
    yield Finding("invalid_length", path, pos,
                  f"batch length {size} at byte {pos} runs past the end of the file although a "
                  f"valid batch follows at byte {nxt}; Kafka's reader silently stops here and "
                  f"never reads the {end - pos} bytes after it",
                  details={"size": size, "available": remaining - LOG_OVERHEAD})
    yield _resync_finding(buf, path, pos, nxt)
    return nxt


def _legacy_findings(buf, mapping, batch: RecordBatch, error: FormatError | None) -> Iterator[Finding]:
    """What is wrong with a magic 0/1 entry: a negative magic, its CRC, inner messages that
    cannot be read (``error``, from reading the wrapper's base offset)."""
    if batch.magic < 0:
        at = batch.position + legacy_records.MAGIC_OFFSET
        yield Finding("invalid_magic", batch.path, at,
                      f"magic byte {batch.magic} at byte {at} is not 0, 1 "
                      "or 2; Kafka's file reader treats magic values below 2 as legacy messages",
                      details={"magic": batch.magic})
    if batch.crc_valid is False:
        yield _crc_finding(buf, batch, mapping)
    if error is not None:
        yield records_finding(batch, error, wrapper=True)


def _v2_findings(buf, mapping, batch: RecordBatch) -> Iterator[Finding]:
    """What is wrong with an entry read as v2: a magic above 2, a length below the v2 header, its
    CRC (not reported for a too-short batch, whose CRC cannot hold), an undefined codec id."""
    size = batch.size - LOG_OVERHEAD
    if batch.magic > 2:
        at = batch.position + default_records.MAGIC_OFFSET
        yield Finding("invalid_magic", batch.path, at,
                      f"magic byte {batch.magic} at byte {at} is not 0, 1 "
                      "or 2; the magic lies outside the v2 CRC, so Kafka's file reader reads this "
                      "as a v2 batch (only its network reader rejects it)",
                      details={"magic": batch.magic})
    if size < default_records.MIN_BATCH_LENGTH:
        yield Finding("invalid_length", batch.path, batch.position,
                      f"batch length {size} is below the v2 minimum "
                      f"{default_records.MIN_BATCH_LENGTH}: 'Record batch is corrupt (the size "
                      f"{batch.size} is smaller than the minimum allowed overhead "
                      f"{default_records.RECORD_BATCH_OVERHEAD})'",
                      details={"size": size, "minimum": default_records.MIN_BATCH_LENGTH})
    elif batch.crc_valid is False:
        yield _crc_finding(buf, batch, mapping)
    if batch.compression > codecs.ZSTD:
        yield Finding("unknown_codec", batch.path, batch.position + default_records.ATTRIBUTES_OFFSET,
                      f"compression codec id {batch.compression} is not defined "
                      "(Kafka: 'Unknown compression type id')",
                      details={"codec": batch.compression})


def _tail_finding(buf, path: str, pos: int, end: int) -> Finding:
    if _all_zero(buf, pos, end):
        return Finding("trailing_zeros", path, pos, f"{end - pos} zero bytes at the end of the file",
                       details={"length": end - pos})
    return Finding("truncated_tail", path, pos,
                   f"{end - pos} bytes at the end of the file are too few for a batch header; "
                   "Kafka's reader silently ignores them",
                   details={"available": end - pos})


def _resync_finding(buf, path: str, start: int, nxt: int) -> Finding:
    offset, _, _ = PREFIX.unpack_from(buf, nxt)
    return Finding("resynchronised", path, start,
                   f"skipped {nxt - start} unreadable bytes from byte {start}; a valid batch "
                   f"(offset {offset}) starts at byte {nxt}, and batches from there on are "
                   "marked after_break",
                   details={"skipped_bytes": nxt - start, "resumed_at": nxt})


def _crc_finding(buf, batch: RecordBatch, mapping=None) -> Finding:
    # a huge batch is summed a window at a time with its pages released (formats/mapped.py)
    summed = PageReleaser(mapping, batch.position).checksum
    if batch.magic < 2:
        computed = summed(crc32, buf, batch.position + legacy_records.MAGIC_OFFSET, batch.end)
        what = "CRC-32 of the message"
    else:
        computed = summed(crc32c, buf, batch.position + default_records.ATTRIBUTES_OFFSET, batch.end)
        what = "CRC-32C of the batch"
    return Finding("crc_mismatch", batch.path, batch.position,
                   f"{what} at byte {batch.position} (offsets {batch.base_offset}-{batch.last_offset}) "
                   f"does not match: stored {batch.crc}, computed {computed}",
                   details={"stored_crc": batch.crc, "computed_crc": computed,
                            "base_offset": batch.base_offset, "last_offset": batch.last_offset})


def records_finding(batch: RecordBatch, error: FormatError, *, wrapper: bool = False) -> Finding:
    """The finding for a batch whose records Kafka's reader cannot read, ``error`` being what the
    record reader raised: ``decompression_error`` for a :class:`DecompressionError`, else
    ``invalid_record``. ``wrapper`` words it for a legacy wrapper whose inner messages the walk
    itself reads (for the wrapper's base offset); otherwise it names the batch's offsets."""
    kind = "decompression_error" if isinstance(error, DecompressionError) else "invalid_record"
    where = (f"wrapper message at byte {batch.position} (offset {batch.last_offset})" if wrapper
             else f"batch at byte {batch.position} (offsets {batch.base_offset}-{batch.last_offset})")
    return Finding(kind, batch.path, batch.position, f"{where}: {error.reason}",
                   details={"field": error.field} if error.field else {})


__all__ = ["SegmentEnd", "iter_segment", "find_next_batch", "is_plausible_batch", "starts_like_segment",
           "first_bytes_kind", "records_finding", "Truncated"]
