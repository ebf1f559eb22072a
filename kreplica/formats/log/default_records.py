"""Record batch format v2 (magic 2): Kafka's ``DefaultRecordBatch`` and ``DefaultRecord``.

Sources (apache/kafka 3.9): ``clients/src/main/java/org/apache/kafka/common/record/
DefaultRecordBatch.java``, ``DefaultRecord.java``, ``ControlRecordType.java``,
``EndTransactionMarker.java``, ``MemoryRecordsBuilder.java``.

Layout, in Kafka's own words::

    RecordBatch =>
      BaseOffset => Int64
      Length => Int32                 (bytes after this field)
      PartitionLeaderEpoch => Int32
      Magic => Int8
      CRC => Uint32                   (CRC-32C of Attributes..end)
      Attributes => Int16
      LastOffsetDelta => Int32
      BaseTimestamp => Int64          (the delete horizon when attribute bit 6 is set)
      MaxTimestamp => Int64
      ProducerId => Int64
      ProducerEpoch => Int16
      BaseSequence => Int32
      RecordCount => Int32
      Records => [Record]             (one compressed stream when the codec is not none)

    Record =>
      Length => Varint                (bytes of the fields below)
      Attributes => Int8              (unused)
      TimestampDelta => Varlong
      OffsetDelta => Varint
      KeyLength => Varint             (negative = null)
      Key => Bytes
      ValueLength => Varint           (negative = null)
      Value => Bytes
      HeaderCount => Varint
      Headers => [HeaderKeyLength => Varint, HeaderKey => String,
                  HeaderValueLength => Varint, HeaderValue => Bytes]

The CRC covers bytes 21 to the end: attributes, the rest of the header and the records as
stored. It does *not* cover BaseOffset, Length, PartitionLeaderEpoch or Magic, because the
broker rewrites the offset and the epoch in place on append without recomputing it; so damage
to those bytes is invisible to the CRC (a magic of 3 still "passes").
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Generator, Iterator, Sequence

from kreplica.formats import codecs
from kreplica.formats.log.batch import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CREATE_TIME,
    LOG_APPEND_TIME,
    Header,
    NewRecord,
    Record,
    RecordBatch,
    increment_sequence,
)
from kreplica.formats._compiled import forced_python, import_compiled
from kreplica.formats.checksums import crc32c
from kreplica.formats.errors import DecompressionError, FormatError, Malformed, Truncated
from kreplica.formats.mapped import PAGE, RELEASE_WINDOW, PageReleaser
from kreplica.formats.varint import build_varint, build_varlong, read_unsigned_varint, read_varlong

MAGIC = 2

#: The contract of the compiled path this module speaks (``_crecords.API_VERSION``).
COMPILED_API_VERSION = 2


def load_compiled():
    """The compiled record decoder (``kreplica/formats/log/_crecords.c``), or ``None`` when it was not
    built (no C compiler at install time) or is a stale build of another contract."""
    return import_compiled("kreplica.formats.log._crecords", COMPILED_API_VERSION)


# Record decoding has one reference, the pure-Python reader below (decode_records). The compiled
# path decodes well-formed records in bounded chunks and stops before anything irregular, where
# the reference takes over with Kafka's exact errors. KREPLICA_DECODE=python runs everything on
# the reference.
_crecords = None if forced_python("KREPLICA_DECODE") else load_compiled()
#: ``"compiled"`` or ``"python"``: which record decoder this process uses for well-formed records.
DECODE_IMPLEMENTATION = "python" if _crecords is None else "compiled"

HEADER = struct.Struct(
    ">"
    "q"  # baseOffset
    "i"  # batchLength
    "i"  # partitionLeaderEpoch
    "b"  # magic
    "I"  # crc
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordCount
)
RECORD_BATCH_OVERHEAD = HEADER.size                      # 61
LOG_OVERHEAD = struct.calcsize(">qi")                    # 12: offset + length prefix
MAGIC_OFFSET = struct.calcsize(">qii")                   # 16
CRC_OFFSET = struct.calcsize(">qiib")                    # 17
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")            # 21: the CRC covers from here
#: The header from ``attributes`` to ``recordCount``: the part the CRC covers.
HEADER_FROM_ATTRIBUTES = struct.Struct(">" + HEADER.format[len(">qiibI"):])
RECORDS_OFFSET = RECORD_BATCH_OVERHEAD                   # 61
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49

#: The smallest record: Length, Attributes, TimestampDelta, OffsetDelta, KeyLength, ValueLength
#: and HeaderCount, one byte each (varints of small values; key and value null, no headers).
MIN_RECORD_SIZE = 7

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

CONTROL_KEY = struct.Struct(">hh")     # version, type (ControlRecordType)
END_TXN_MARKER = struct.Struct(">hi")  # version, coordinatorEpoch (EndTransactionMarker)

_INT32_MAX = 0x7FFFFFFF
_I64 = 1 << 63
_new_tuple = tuple.__new__


def _i32(v: int) -> int:
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def _i64(v: int) -> int:
    return ((v + _I64) & 0xFFFFFFFFFFFFFFFF) - _I64


def parse_header(buf, position: int, size: int, *, path: str, verify_crc: bool = True,
                 after_break: bool = False, mapping=None) -> RecordBatch:
    """The batch whose 12-byte prefix starts at ``position`` (``size`` includes the prefix).

    Read for any magic the file reader sends to the v2 parser (2 and anything above 2). A batch
    shorter than the 61-byte header is still returned, with its header completed from the bytes
    that follow it (zeros past the end of the buffer) and ``crc_valid`` false, as Kafka's
    ``isValid()`` says for it; callers report the impossible length. When ``mapping`` is the
    mmap under ``buf``, the CRC of a batch larger than :data:`~kreplica.formats.mapped.RELEASE_WINDOW`
    is computed a window at a time with the pages behind released, so one huge batch does not
    stay resident.
    """
    end = position + size
    if position + RECORD_BATCH_OVERHEAD <= len(buf):
        h = HEADER.unpack_from(buf, position)
    else:
        padded = bytes(buf[position:len(buf)]) + bytes(RECORD_BATCH_OVERHEAD)
        h = HEADER.unpack_from(padded, 0)
    (base_offset, _length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_sequence, count) = h
    if not verify_crc:
        crc_valid = None
    elif size < RECORD_BATCH_OVERHEAD:
        crc_valid = False
    elif mapping is None or size <= RELEASE_WINDOW:
        crc_valid = crc32c(buf[position + ATTRIBUTES_OFFSET:end]) == crc
    else:
        crc_valid = PageReleaser(mapping, position).checksum(crc32c, buf, position + ATTRIBUTES_OFFSET, end) == crc
    last_offset = base_offset + last_delta
    if not -_I64 <= last_offset < _I64:  # Kafka's long addition wraps
        last_offset = _i64(last_offset)
    # NOTE: tuple.__new__ skips NamedTuple's Python-level __new__, as for Record (bench/README.md)
    return _new_tuple(RecordBatch, (
        path, position, size, magic, base_offset, last_offset, count, epoch,
        crc, crc_valid, attributes, attributes & COMPRESSION_CODEC_MASK,
        LOG_APPEND_TIME if attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME,
        base_ts, max_ts, producer_id, producer_epoch, base_sequence,
        bool(attributes & TRANSACTIONAL_FLAG_MASK), bool(attributes & CONTROL_FLAG_MASK),
        base_ts if attributes & DELETE_HORIZON_FLAG_MASK else None, after_break,
    ))


def records_payload(buf, batch: RecordBatch) -> codecs.Inflated:
    """The batch's records section, inflated if compressed (bounded; errors returned, not raised)."""
    section = memoryview(buf)[batch.position + RECORDS_OFFSET:batch.end]
    if batch.compression == codecs.NONE:
        return codecs.Inflated(section)
    return codecs.decompress(batch.compression, section, magic=batch.magic)


def iter_records(buf, batch: RecordBatch) -> Iterator[Record]:
    """The records of a v2 batch, as Kafka's ``DefaultRecordBatch.iterator()`` yields them.

    Kafka checks "no bytes left" when it reads the last declared record and throws instead of
    returning it, so a batch with bytes to spare yields every record but the last, then raises.
    Raises :class:`FormatError` (position = the batch) at the first record Kafka cannot read,
    after yielding the ones before it: a :class:`DecompressionError` when that is where the
    compressed data breaks. A control batch's records carry their control type and,
    for transaction markers, the coordinator epoch. When ``buf`` is an mmap and the batch is
    uncompressed and longer than :data:`~kreplica.formats.mapped.RELEASE_WINDOW`, the pages the
    decoder has passed are handed back to the kernel as it goes (and the rest at the end), so a
    huge batch is decoded in bounded memory.
    """
    if batch.count < 0:
        raise Malformed(f"Found invalid record count {batch.count} in magic v2 batch",
                        path=batch.path, position=batch.position, field="recordCount")
    if batch.size < RECORD_BATCH_OVERHEAD:
        raise Malformed(f"Record batch is corrupt (the size {batch.size} is smaller than the "
                        f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})",
                        path=batch.path, position=batch.position, field="batchLength")
    if batch.compression > codecs.ZSTD:
        raise Malformed(f"Unknown compression type id: {batch.compression}",
                        path=batch.path, position=batch.position, field="attributes")
    inflated = records_payload(buf, batch)
    log_append_time = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
    data = inflated.data
    count = batch.count
    pos = index = 0
    releaser = release = None
    if batch.compression == codecs.NONE and len(data) > RELEASE_WINDOW:
        releaser = PageReleaser(buf, batch.position + RECORDS_OFFSET)
        if releaser.active:
            section = batch.position + RECORDS_OFFSET

            def release(at: int) -> None:
                releaser.upto(section + at)
        else:
            releaser = None
    compiled = _crecords
    try:
        if compiled is not None and not batch.is_control and inflated.error is None:
            # NOTE: the compiled path hands out bounded chunks (at most 512 records or 256 KiB of
            # section each), so a batch is streamed whatever its declared count (bench/README.md).
            decode = compiled.decode
            while index < count:
                chunk, pos, irregular = decode(data, pos, index, count, batch.base_offset, batch.base_timestamp,
                                               batch.base_sequence, log_append_time, batch.position, Record, Header)
                index += len(chunk)
                yield from chunk
                if release is not None:
                    release(pos)
                if irregular:
                    break
            if index >= count:
                return
        try:
            yield from decode_records(
                data, count, batch.base_offset, batch.base_timestamp,
                batch.base_sequence, log_append_time, batch.position, batch.is_control,
                tail_error=inflated.error, start_index=index, start_pos=pos, release=release,
            )
        except FormatError as exc:
            if inflated.error is not None:
                raise _not_inflated(inflated.error, path=batch.path, position=batch.position, field="records") from exc
            raise exc.at(path=batch.path, offset=batch.position + RECORDS_OFFSET
                         if batch.compression == codecs.NONE else 0) from exc
        if inflated.error is not None:
            raise _not_inflated(inflated.error, path=batch.path, position=batch.position, field="records")
    finally:
        if releaser is not None:  # the pages the decoder passed last (fewer than a window)
            releaser.upto(batch.end + PAGE, 0)


def _not_inflated(error: str, *, path: str | None = None, position: int, field: str) -> DecompressionError:
    """The error a reader raises where it reaches the end of what the codec could inflate
    (``error``: the :class:`~kreplica.formats.codecs.Inflated` error, in the codec's words)."""
    return DecompressionError(f"records do not decompress: {error}", path=path, position=position, field=field)


def _record_uvarint(buf, pos: int, end: int) -> tuple[int, int]:
    """:func:`varint.read_unsigned_varint`, with the record reader's wording for its errors.

    Kafka's ``DefaultRecord.readFrom`` turns a varint that runs out or is too long into
    ``InvalidRecordException("Found invalid record structure")``.
    """
    try:
        return read_unsigned_varint(buf, pos, end)
    except Truncated as exc:
        raise Truncated("Found invalid record structure (a varint runs past the end)", position=exc.position) from None
    except Malformed:
        raise Malformed("Found invalid record structure (varint is too long)", position=pos) from None


def _record_varlong(buf, pos: int, end: int) -> tuple[int, int]:
    """:func:`varint.read_varlong`, with the record reader's wording for its errors."""
    try:
        return read_varlong(buf, pos, end)
    except Truncated as exc:
        raise Truncated("Found invalid record structure (a varint runs past the end)", position=exc.position) from None
    except Malformed as exc:
        raise Malformed("Found invalid record structure (varlong is too long)", position=exc.position) from None


#: A records section that is not already ``bytes`` (one read straight from a mapping) and is
#: longer than this is decoded by the pure reader a window of this many bytes at a time.
DECODE_WINDOW = 4 << 20


def decode_records(data, count: int, base_offset: int, base_timestamp: int, base_sequence: int,
                   log_append_time: int | None, batch_position: int,
                   is_control: bool = False, tail_error: str | None = None, *,
                   start_index: int = 0, start_pos: int = 0,
                   release: Callable[[int], None] | None = None) -> Iterator[Record]:
    """Decode ``count`` records from the bytes of a records section (positions are relative).

    ``tail_error`` is a decompression error met after the last byte of ``data``: Kafka hits it
    when it checks that nothing follows the last record, so the last record is not yielded.
    ``start_index`` and ``start_pos`` resume the section at record ``start_index``, which starts
    at byte ``start_pos`` (where the compiled path stopped): records are read one after the
    other, so what follows does not depend on how the ones before were decoded.

    A section given as ``bytes`` (an inflated one) is read in place. Any other buffer is copied
    to ``bytes`` (indexing and slicing ``bytes`` beats a ``memoryview``): whole when it is short,
    else :data:`DECODE_WINDOW` bytes at a time, so a huge uncompressed batch is streamed in
    bounded memory; ``release(pos)`` is then called once the bytes before ``pos`` are copied
    (the caller hands their pages back). Windows give exactly the records and errors of one
    whole copy: a record a window cuts short is read again from a window that starts with it,
    and an error is only raised from a window that reaches the end of the section.
    """
    if not isinstance(data, bytes) and len(data) - start_pos > DECODE_WINDOW:
        return _decode_windows(data, count, base_offset, base_timestamp, base_sequence, log_append_time,
                               batch_position, is_control, tail_error, start_index, start_pos, release)
    buf = data if isinstance(data, bytes) else bytes(data)
    return _decode_span(buf, len(buf), count, base_offset, base_timestamp, base_sequence, log_append_time,
                        batch_position, is_control, tail_error, start_index, start_pos)


def _decode_windows(data, count: int, base_offset: int, base_timestamp: int, base_sequence: int,
                    log_append_time: int | None, batch_position: int, is_control: bool, tail_error: str | None,
                    index: int, pos: int, release: Callable[[int], None] | None) -> Iterator[Record]:
    """:func:`decode_records` over ``data`` a window at a time (see there)."""
    total = len(data)
    window = DECODE_WINDOW
    while True:
        stop = min(total, pos + window)
        buf = bytes(data[pos:stop])
        if release is not None:
            release(stop)
        try:
            resume = yield from _decode_span(buf, total - pos, count, base_offset, base_timestamp, base_sequence,
                                             log_append_time, batch_position, is_control, tail_error, index, 0)
        except FormatError as exc:
            if pos == 0:
                raise
            raise exc.at(offset=pos) from exc
        if resume is None:
            return
        next_index, at = resume
        # a record longer than the window (or damaged): read a window twice as long from it
        window = window * 2 if (next_index, at) == (index, 0) else DECODE_WINDOW
        index, pos = next_index, pos + at


def _decode_span(buf: bytes, last_end: int, count: int, base_offset: int, base_timestamp: int, base_sequence: int,
                 log_append_time: int | None, batch_position: int, is_control: bool, tail_error: str | None,
                 start_index: int, start_pos: int) -> Generator[Record, None, tuple[int, int] | None]:
    """Records ``start_index`` .. ``count - 1`` from ``buf``, the section from some byte on;
    ``last_end`` is where the section ends, relative to ``buf``.

    When ``buf`` does not reach the end of the section (a window), a record that cannot be read
    from it is not judged: the generator returns ``(index, position)`` of that record, to be read
    again from a longer window. Otherwise it returns ``None`` after the last record.

    NOTE: the hot loop of ``--records`` where the compiled path is not built. Names are bound as
    locals. Varints of one and two bytes -- nearly all of them -- are decoded inline: that is
    :func:`varint.read_unsigned_varint`'s own loop unrolled for those lengths (a test checks
    every one- and two-byte encoding against it); longer ones call it. bench/README.md has the
    figures.
    """
    end = len(buf)
    final = end >= last_end
    pos = start_pos
    new = tuple.__new__  # NOTE: skips NamedTuple's Python-level __new__ (bench/README.md)
    record_cls = Record
    no_sequence = base_sequence < 0
    for index in range(start_index, count):
        try:
            first = pos
            # Length => Varint
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b2 = buf[pos + 1]
                if b2 < 0x80:
                    b = (b & 0x7F) | (b2 << 7)
                    pos += 2
                else:
                    b, pos = _record_uvarint(buf, pos, end)
            length = (b >> 1) ^ -(b & 1)
            if length > end - pos:
                raise Malformed(f"Invalid record size: expected {length} bytes in record payload, "
                                f"but instead the buffer has only {end - pos} remaining bytes.", position=pos)
            start = pos
            pos += 1  # Attributes => Int8, unused
            # TimestampDelta => Varlong
            b = buf[pos]
            if b < 0x80:
                pos += 1
                ts_delta = (b >> 1) ^ -(b & 1)
            else:
                b2 = buf[pos + 1]
                if b2 < 0x80:
                    b = (b & 0x7F) | (b2 << 7)
                    pos += 2
                    ts_delta = (b >> 1) ^ -(b & 1)
                else:
                    ts_delta, pos = _record_varlong(buf, pos, end)
            # OffsetDelta => Varint
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b2 = buf[pos + 1]
                if b2 < 0x80:
                    b = (b & 0x7F) | (b2 << 7)
                    pos += 2
                else:
                    b, pos = _record_uvarint(buf, pos, end)
            offset_delta = (b >> 1) ^ -(b & 1)
            # KeyLength => Varint, Key => Bytes
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b2 = buf[pos + 1]
                if b2 < 0x80:
                    b = (b & 0x7F) | (b2 << 7)
                    pos += 2
                else:
                    b, pos = _record_uvarint(buf, pos, end)
            n = (b >> 1) ^ -(b & 1)
            if n >= 0:
                if n > end - pos:
                    raise Truncated("Found invalid record structure (key runs past the end)", position=pos)
                key = buf[pos:pos + n]
                pos += n
            else:
                key = None
            # ValueLength => Varint, Value => Bytes
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b2 = buf[pos + 1]
                if b2 < 0x80:
                    b = (b & 0x7F) | (b2 << 7)
                    pos += 2
                else:
                    b, pos = _record_uvarint(buf, pos, end)
            n = (b >> 1) ^ -(b & 1)
            if n >= 0:
                if n > end - pos:
                    raise Truncated("Found invalid record structure (value runs past the end)", position=pos)
                value = buf[pos:pos + n]
                pos += n
            else:
                value = None
            # HeaderCount => Varint
            b = buf[pos]
            if b < 0x80:
                pos += 1
            else:
                b, pos = _record_uvarint(buf, pos, end)
            n = (b >> 1) ^ -(b & 1)
            if n == 0:
                headers = ()
            else:
                if n < 0:
                    raise Malformed(f"Found invalid number of record headers {n}", position=pos)
                if n > end - pos:
                    raise Malformed(f"Found invalid number of record headers. {n} is larger than the "
                                    "remaining size of the buffer", position=pos)
                headers, pos = _decode_headers(buf, pos, end, n)
            if pos - start != length:
                raise Malformed(f"Invalid record size: expected to read {length} bytes in record "
                                f"payload, but instead read {pos - start}", position=start)
        except IndexError:
            if not final:
                return index, first
            raise Truncated("Found invalid record structure (a field runs past the end)", position=pos) from None
        except FormatError:
            if not final:
                return index, first
            raise
        if index == count - 1:
            if pos != last_end:
                raise Malformed("Incorrect declared batch size, records still remaining in file",
                                position=pos, field=f"record {index}")
            if tail_error is not None:
                raise _not_inflated(tail_error, position=pos, field=f"record {index}")
        timestamp = log_append_time if log_append_time is not None else base_timestamp + ts_delta
        if not -_I64 <= timestamp < _I64:
            timestamp = _i64(timestamp)
        if no_sequence:
            sequence = -1
        elif 0 <= offset_delta <= _INT32_MAX - base_sequence:
            sequence = base_sequence + offset_delta
        else:
            sequence = increment_sequence(base_sequence, offset_delta)
        if is_control:
            control_type, coordinator_epoch = parse_control(key, value)
            yield new(record_cls, (batch_position, base_offset + offset_delta, timestamp, sequence, key, value,
                                   headers, control_type, coordinator_epoch))
        else:
            yield new(record_cls, (batch_position, base_offset + offset_delta, timestamp, sequence, key, value,
                                   headers, None, None))


def _decode_headers(buf, pos: int, end: int, n: int) -> tuple[tuple[Header, ...], int]:
    """``n`` headers from ``pos``; one-byte lengths (nearly all) are decoded inline."""
    out = []
    new = tuple.__new__
    header_cls = Header
    for _ in range(n):
        b = buf[pos]
        if b < 0x80:
            pos += 1
        else:
            b, pos = _record_uvarint(buf, pos, end)
        klen = (b >> 1) ^ -(b & 1)
        if klen < 0:
            raise Malformed(f"Invalid negative header key size {klen}", position=pos)
        if klen > end - pos:
            raise Truncated("Found invalid record structure (header key runs past the end)", position=pos)
        hkey = buf[pos:pos + klen].decode("utf-8", "replace")
        pos += klen
        b = buf[pos]
        if b < 0x80:
            pos += 1
        else:
            b, pos = _record_uvarint(buf, pos, end)
        vlen = (b >> 1) ^ -(b & 1)
        if vlen >= 0:
            if vlen > end - pos:
                raise Truncated("Found invalid record structure (header value runs past the end)", position=pos)
            out.append(new(header_cls, (hkey, buf[pos:pos + vlen])))
            pos += vlen
        else:
            out.append(new(header_cls, (hkey, None)))
    return tuple(out), pos


def parse_control(key: bytes | None, value: bytes | None) -> tuple[int | None, int | None]:
    """(control type id, coordinator epoch) of a control record; ``None`` where Kafka would throw.

    ``ControlRecordType.parse`` needs a 4-byte key with a non-negative version (other versions
    are read as 0); ``EndTransactionMarker`` needs a 6-byte value with a non-negative version.
    """
    if key is None or len(key) < CONTROL_KEY.size:
        return None, None
    version, ctype = CONTROL_KEY.unpack_from(key, 0)
    if version < 0:
        return None, None
    if ctype not in (CONTROL_ABORT, CONTROL_COMMIT):
        return ctype, None
    if value is None or len(value) < END_TXN_MARKER.size:
        return ctype, None
    mversion, coordinator_epoch = END_TXN_MARKER.unpack_from(value, 0)
    if mversion < 0:
        return ctype, None
    return ctype, coordinator_epoch


# -- writer ---------------------------------------------------------------------------------


def build_record(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                 headers: Sequence[tuple[str, bytes | None]] = ()) -> bytes:
    """One record's bytes, as ``DefaultRecord.writeTo`` lays them out."""
    body = bytearray(b"\x00")
    body += build_varlong(timestamp_delta)
    body += build_varint(offset_delta)
    for blob in (key, value):
        if blob is None:
            body += build_varint(-1)
        else:
            body += build_varint(len(blob)) + blob
    body += build_varint(len(headers))
    for hkey, hvalue in headers:
        kb = hkey.encode("utf-8")
        body += build_varint(len(kb)) + kb
        if hvalue is None:
            body += build_varint(-1)
        else:
            body += build_varint(len(hvalue)) + hvalue
    return build_varint(len(body)) + bytes(body)


def build_control_record(offset: int, timestamp: int, control_type: int, coordinator_epoch: int = 0) -> NewRecord:
    """A transaction marker (COMMIT 1 / ABORT 0) as ``MemoryRecords.writeEndTransactionalMarker`` writes it."""
    value = END_TXN_MARKER.pack(0, coordinator_epoch) if control_type in (CONTROL_ABORT, CONTROL_COMMIT) else b""
    return NewRecord(offset, timestamp, CONTROL_KEY.pack(0, control_type), value)


def build_batch(
    records: Sequence[NewRecord],
    *,
    base_offset: int,
    partition_leader_epoch: int = 0,
    compression: int = codecs.NONE,
    timestamp_type: int = CREATE_TIME,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    last_offset_delta: int | None = None,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    delete_horizon_ms: int | None = None,
    magic: int = MAGIC,
) -> bytes:
    """A v2 batch as Kafka's ``MemoryRecordsBuilder`` (or the log cleaner) writes it.

    Offsets of ``records`` are absolute; the deltas are taken from ``base_offset`` and from the
    base timestamp (the first record's time, or ``delete_horizon_ms`` when given, as the cleaner
    does). With no records this is the cleaner's empty batch: pass ``last_offset_delta`` and
    ``max_timestamp``. For LogAppendTime, ``max_timestamp`` is the broker's append time.
    ``magic`` other than 2 writes a deliberately wrong magic byte (for damage fixtures).
    """
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    elif base_timestamp is not None:
        base_ts = base_timestamp
    else:
        base_ts = records[0].timestamp if records else -1
    body = b"".join(
        build_record(r.offset - base_offset, r.timestamp - base_ts, r.key, r.value, r.headers)
        for r in records
    )
    payload = codecs.compress(compression, body, magic=MAGIC) if compression != codecs.NONE else body
    if last_offset_delta is None:
        last_offset_delta = (records[-1].offset - base_offset) if records else 0
    if max_timestamp is None:
        max_timestamp = max((r.timestamp for r in records), default=-1)
    attributes = compression & COMPRESSION_CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    header = HEADER.pack(
        base_offset, RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload), partition_leader_epoch,
        magic, 0, attributes, last_offset_delta, base_ts, max_timestamp, producer_id,
        producer_epoch, base_sequence, len(records),
    )
    out = bytearray(header + payload)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
