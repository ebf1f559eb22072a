"""Legacy message sets, magic 0 and 1: Kafka's ``LegacyRecord`` and ``AbstractLegacyRecordBatch``.

Sources (apache/kafka 3.9): ``clients/src/main/java/org/apache/kafka/common/record/
LegacyRecord.java``, ``AbstractLegacyRecordBatch.java``, ``DataLogInputStream.java``.

Each log entry holds one message::

    LogEntry => Offset => Int64, MessageSize => Int32, Message
    Message (v0) => Crc => Uint32, Magic => Int8, Attributes => Int8,
                    KeyLength => Int32, Key => Bytes, ValueLength => Int32, Value => Bytes
    Message (v1) => Crc, Magic, Attributes, Timestamp => Int64, KeyLength, Key, ValueLength, Value

The CRC-32 (IEEE) covers Magic to the end of the message, not Offset or MessageSize. A
compressed set is one *wrapper* message whose value inflates to further log entries; the
wrapper's offset is the offset of its last inner message. Inner offsets are absolute in v0 and
relative (0..n-1) in v1: absolute = wrapper offset - last inner offset + inner offset, except
that a wrapper offset of 0 (written by some librdkafka versions) means base 0. Kafka builds the
whole inner list before it hands out the first inner record, so any inner error yields none.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence

from kreplica.formats import codecs
from kreplica.formats.log.batch import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE, NewRecord, Record, RecordBatch
from kreplica.formats.checksums import crc32
from kreplica.formats.errors import DecompressionError, FormatError, Malformed
from kreplica.formats.mapped import RELEASE_WINDOW, PageReleaser

V0_HEADER = struct.Struct(
    ">"
    "q"  # offset
    "i"  # message size
    "I"  # crc
    "b"  # magic
    "b"  # attributes
)
V1_TIMESTAMP = struct.Struct(">q")  # timestamp, right after attributes in v1
LENGTH = struct.Struct(">i")        # KeyLength or ValueLength (-1 = null)
ENTRY_PREFIX = struct.Struct(
    ">"
    "q"  # offset
    "i"  # message size
)
LOG_OVERHEAD = ENTRY_PREFIX.size                       # 12
CRC_OFFSET = LOG_OVERHEAD                              # 12
MAGIC_OFFSET = struct.calcsize(">qiI")                 # 16: the CRC covers from here
ATTRIBUTES_OFFSET = struct.calcsize(">qiIb")           # 17
TIMESTAMP_OFFSET = struct.calcsize(">qiIbb")           # 18 (v1)
KEY_SIZE_OFFSET_V0 = TIMESTAMP_OFFSET                  # 18: v0 has no timestamp
KEY_SIZE_OFFSET_V1 = TIMESTAMP_OFFSET + V1_TIMESTAMP.size  # 26
#: The smallest message (``LegacyRecord.RECORD_OVERHEAD_V0``/``_V1``): crc, magic, attributes,
#: (v1: timestamp,) key length and value length, with a null key and value.
RECORD_OVERHEAD_V0 = struct.calcsize(">Ibbii")         # 14
RECORD_OVERHEAD_V1 = struct.calcsize(">Ibbqii")        # 22

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


def parse_entry(buf, position: int, size: int, *, path: str, verify_crc: bool = True,
                after_break: bool = False, mapping=None) -> tuple[RecordBatch, FormatError | None]:
    """The shallow message at ``position`` as Kafka's file reader presents it, and the error
    that reading its inner messages raised (``None`` if fine or uncompressed).

    ``base_offset`` of a compressed wrapper is its first inner offset, which takes inflating the
    wrapper, as Kafka's ``baseOffset()`` does; when that fails it falls back to the wrapper offset.
    When ``mapping`` is the mmap under ``buf``, the CRC of a message larger than
    :data:`~kreplica.formats.mapped.RELEASE_WINDOW` is computed with the pages behind released.
    """
    end = position + size
    raw = bytes(buf[position:min(end, position + KEY_SIZE_OFFSET_V1)])
    raw += bytes(KEY_SIZE_OFFSET_V1 - len(raw))
    offset, _size, crc, magic, attributes = V0_HEADER.unpack_from(raw, 0)
    if magic == 0:
        timestamp_type, timestamp = NO_TIMESTAMP_TYPE, -1
    else:
        timestamp_type = LOG_APPEND_TIME if attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
        (timestamp,) = V1_TIMESTAMP.unpack_from(raw, TIMESTAMP_OFFSET)
    if not verify_crc:
        crc_valid = None
    elif mapping is None or size <= RELEASE_WINDOW:
        crc_valid = size >= LOG_OVERHEAD + RECORD_OVERHEAD_V0 and crc32(buf[position + MAGIC_OFFSET:end]) == crc
    else:
        crc_valid = PageReleaser(mapping, position).checksum(crc32, buf, position + MAGIC_OFFSET, end) == crc
    codec = attributes & COMPRESSION_CODEC_MASK
    batch = RecordBatch(
        path, position, size, magic, offset, offset, None, -1, crc, crc_valid, attributes & 0xFF,
        codec, timestamp_type, timestamp, timestamp, -1, -1, -1, False, False, None, after_break,
    )
    if codec == codecs.NONE:
        return batch, None
    try:
        # baseOffset() reads inner offsets only; a damaged inner key or value does not matter here
        first = next(iter_records(buf, batch, on_damage=_ignore))
    except FormatError as exc:
        # handed back, not raised: without its traceback, which would tie the caller's frame (the
        # walker keeps the error in a local) to the inflated bytes in a reference cycle (bench/fuzz)
        return batch, exc.with_traceback(None)
    except StopIteration:  # pragma: no cover - iter_records raises on an empty set
        return batch, None
    return _with_base(batch, first.offset), None


def _ignore(record: Record, error: FormatError) -> None:
    pass


def _with_base(batch: RecordBatch, base_offset: int) -> RecordBatch:
    return batch._replace(base_offset=base_offset)


def _key_value(msg: bytes, magic: int, where: int, path: str) -> tuple[bytes | None, bytes | None]:
    """Key and value of a message body (``msg`` starts at the CRC)."""
    key, value, error = _key_value_partial(msg, magic, where, path)
    if error is not None:
        try:
            raise error
        finally:
            del error  # see iter_records
    return key, value


def _key_value_partial(msg: bytes, magic: int, where: int, path: str,
                       ) -> tuple[bytes | None, bytes | None, Malformed | None]:
    """Key and value of a message body, as far as they can be read, and the error that stopped it.

    Kafka's ``LegacyRecord.key()`` and ``value()`` slice by the stored lengths only when asked,
    so a message whose value length is impossible still has its key (``value()`` throws), and
    one whose key length is impossible has neither (``value()`` is located after the key).
    """
    pos = (KEY_SIZE_OFFSET_V0 if magic == 0 else KEY_SIZE_OFFSET_V1) - LOG_OVERHEAD
    out: list[bytes | None] = []
    for name in ("key", "value"):
        if pos + LENGTH.size > len(msg):
            error = Malformed(f"{name} length runs past the end of the message", path=path,
                              position=where + pos, field=name)
            return (out[0] if out else None), None, error
        (n,) = LENGTH.unpack_from(msg, pos)
        pos += LENGTH.size
        if n < 0:
            out.append(None)
            continue
        if n > len(msg) - pos:
            error = Malformed(f"{name} of {n} bytes runs past the end of the message", path=path,
                              position=where + pos, field=name)
            return (out[0] if out else None), None, error
        out.append(bytes(msg[pos:pos + n]))
        pos += n
    return out[0], out[1], None


def iter_records(buf, batch: RecordBatch, *,
                 on_damage: Callable[[Record, FormatError], None] | None = None) -> Iterator[Record]:
    """The records of a legacy entry, as Kafka's deep iterator yields them.

    An uncompressed message is its own single record. A wrapper is inflated and all inner
    entries are read first (so an inner error raises before any record is yielded), then the
    records follow with absolute offsets and, in v1, the wrapper's timestamp when it says
    LogAppendTime. An inner message that is itself compressed raises when it is reached, so
    wrappers never nest: the inner value is not inflated again, whatever its depth. A wrapper
    value that does not inflate raises :class:`DecompressionError`.

    A message whose key or value length is impossible raises :class:`Malformed` by default.
    With ``on_damage``, it is yielded as Kafka's iterator yields it, with the key when that can
    be read and ``None`` for what cannot (Kafka throws only when ``key()``/``value()`` is
    called); ``on_damage(record, error)`` is called just before it is yielded.
    """
    path, position, end = batch.path, batch.position, batch.end
    msg = bytes(buf[position + LOG_OVERHEAD:end])
    if batch.compression == codecs.NONE:
        key, value, error = _key_value_partial(msg, batch.magic, position + LOG_OVERHEAD, path)
        record = Record(position, batch.last_offset, batch.max_timestamp if batch.magic else -1, -1, key, value, ())
        if error is not None:
            if on_damage is None:
                # NOTE: the traceback keeps this frame; a local naming the exception too would make
                # a cycle that holds the message (and a wrapper's inflated bytes) until the cyclic
                # garbage collector runs, not until the caller drops the error (bench/fuzz)
                try:
                    raise error
                finally:
                    del error
            on_damage(record, error)
        yield record
        return
    if batch.compression == codecs.ZSTD:
        raise Malformed(f"Invalid wrapper compressionType found in legacy deep record iterator {batch.magic}",
                        path=path, position=position + ATTRIBUTES_OFFSET, field="attributes")
    if batch.compression > codecs.ZSTD:
        raise Malformed(f"Unknown compression type id: {batch.compression}", path=path,
                        position=position + ATTRIBUTES_OFFSET, field="attributes")
    _, wrapper_value = _key_value(msg, batch.magic, position + LOG_OVERHEAD, path)
    if wrapper_value is None:
        raise Malformed(f"Found invalid compressed record set with null value (magic = {batch.magic})",
                        path=path, position=position, field="value")
    inflated = codecs.decompress(batch.compression, wrapper_value, magic=batch.magic)
    data = inflated.data
    # NOTE: inner messages are views of the inflated bytes, not copies: a wrapper may inflate to
    # codecs.inflation_limit() bytes, and copying every message would double that
    view = memoryview(data)
    inner: list[tuple[int, memoryview]] = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        offset, size = ENTRY_PREFIX.unpack_from(data, pos)
        if size < RECORD_OVERHEAD_V0:
            raise Malformed(f"Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})",
                            path=path, position=position, field=f"inner message at inflated byte {pos}")
        if len(data) - pos - LOG_OVERHEAD < size:
            break  # a short read ends the inner set silently (DataLogInputStream)
        inner.append((offset, view[pos + LOG_OVERHEAD:pos + LOG_OVERHEAD + size]))
        pos += LOG_OVERHEAD + size
    if inflated.error is not None:
        raise DecompressionError(f"wrapper value does not decompress: {inflated.error}", path=path,
                                 position=position, field="value")
    if not inner:
        raise Malformed("Found invalid compressed record set with no inner records", path=path, position=position)
    wrapper_offset = batch.last_offset
    base = -1
    if batch.magic == 1:
        if wrapper_offset == 0:
            base = 0
        else:
            last_inner = inner[-1][0]
            if wrapper_offset < last_inner:
                raise Malformed(
                    f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                    f"'{wrapper_offset}' is less than the last inner message offset '{last_inner}' "
                    "and it is not zero.", path=path, position=position, field="offset")
            base = wrapper_offset - last_inner
    wrapper_log_append = batch.magic == 1 and batch.timestamp_type == LOG_APPEND_TIME
    # an inner body starts at its CRC: positions in it are the entry's less the 12-byte prefix
    magic_at, attributes_at = MAGIC_OFFSET - LOG_OVERHEAD, ATTRIBUTES_OFFSET - LOG_OVERHEAD
    for offset, body in inner:
        imagic = body[magic_at] if len(body) > magic_at else 0
        if imagic > 127:
            imagic -= 256
        if base >= 0:
            offset = base + offset
        if len(body) > attributes_at and body[attributes_at] & COMPRESSION_CODEC_MASK:
            raise Malformed("Inner messages must not be compressed", path=path, position=position,
                            field=f"inner message at offset {offset}")
        if imagic == 0:
            timestamp = -1
        elif wrapper_log_append:
            timestamp = batch.max_timestamp
        else:
            at = TIMESTAMP_OFFSET - LOG_OVERHEAD
            (timestamp,) = V1_TIMESTAMP.unpack_from(body if len(body) >= at + V1_TIMESTAMP.size
                                                    else bytes(body) + bytes(V1_TIMESTAMP.size), at)
        key, value, error = _key_value_partial(body, imagic, position, path)
        record = Record(position, offset, timestamp, -1, key, value, ())
        if error is not None:
            error = Malformed(f"inner message at offset {offset}: {error.reason}", path=path, position=position,
                              field=error.field)
            if on_damage is None:
                try:
                    raise error
                finally:
                    del error  # no cycle through this frame (see above)
            on_damage(record, error)
        yield record


# -- writer ---------------------------------------------------------------------------------


def build_message(offset: int, key: bytes | None, value: bytes | None, *, magic: int, timestamp: int = -1,
                  compression: int = codecs.NONE, timestamp_type: int = CREATE_TIME) -> bytes:
    """One log entry holding one message, as ``LegacyRecord.write`` lays it out."""
    attributes = compression & COMPRESSION_CODEC_MASK
    if magic == 1 and timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += V1_TIMESTAMP.pack(timestamp)
    for blob in (key, value):
        body += LENGTH.pack(-1) if blob is None else LENGTH.pack(len(blob)) + blob
    message = struct.pack(">I", crc32(body)) + body
    return ENTRY_PREFIX.pack(offset, len(message)) + message


def build_wrapper(records: Sequence[NewRecord], *, magic: int, compression: int,
                  timestamp_type: int = CREATE_TIME, append_time: int | None = None) -> bytes:
    """A compressed wrapper entry as Kafka's ``MemoryRecordsBuilder`` writes it for magic 0/1.

    Inner offsets are absolute for v0 and relative for v1; the wrapper carries the last offset
    and (v1) the max inner timestamp, or ``append_time`` for LogAppendTime.
    """
    base = records[0].offset
    inner = b"".join(
        build_message(r.offset if magic == 0 else r.offset - base, r.key, r.value, magic=magic,
                      timestamp=r.timestamp)
        for r in records
    )
    if magic == 1 and timestamp_type == LOG_APPEND_TIME:
        wrapper_ts = append_time if append_time is not None else max(r.timestamp for r in records)
    else:
        wrapper_ts = max(r.timestamp for r in records)
    return build_message(records[-1].offset, None, codecs.compress(compression, inner, magic=magic),
                         magic=magic, timestamp=wrapper_ts, compression=compression,
                         timestamp_type=timestamp_type)
