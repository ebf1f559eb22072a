"""The last record of each key in a batch's records section, without building a record per record.

A compacted topic's state is its last record per key (Kafka's ``LogCleaner`` keeps exactly that),
and the coordinators that load ``__consumer_offsets`` or ``__transaction_state`` rebuild their
state from the log in a way compaction must not change. So a reader that needs that state folds
the records by key first and decodes only the survivors: :func:`fold_records` walks a v2 records
section and, for each record whose key and value match the *flat layouts* it is given, stores::

    table[key] = (offset, timestamp, value, value_offset, path, batch_position)

``value`` is ``None`` for a tombstone; ``value_offset`` is the offset of the key's last non-null
value folded so far (``-1``: none), which a tombstone keeps from the entry it replaces. A key's
leading int16 is its type; ``layouts[type]`` is ``None`` (not folded) or ``(alias, key_layout,
value_layouts)``: the key is stored with its type rewritten to ``alias`` (two key versions of one
state share an entry), the rest of the key must match ``key_layout`` exactly, and a non-null
value must be an int16 version ``v`` followed by exactly ``value_layouts[v]`` (``None``: that
version is not folded). Layouts come from
:func:`kreplica.formats.generated_messages.flat_layout`: codes ``b h i q`` (fixed-width integers), ``u`` (a
uuid), ``s`` (a non-null int16-length string), ``S`` (a non-null compact string), ``T`` (a
tagged-fields section). A layout match implies the generic message reader reads the bytes (never
the reverse: a varint longer than 4 bytes is left to it).

It returns ``(pos, index, status, other)`` at the first record it does not fold:

* :data:`FOLD_DONE`: every record was folded;
* :data:`FOLD_FRAMING`: the record at ``(pos, index)`` is irregular as a record: the caller reads
  it with :func:`~kreplica.formats.log.default_records.decode_records`, which raises Kafka's error
  (or reads a record that only looked unusual here);
* :data:`FOLD_CUT`: the record at ``(pos, index)`` lies beyond ``stop_offset`` or ``stop_time``;
* :data:`FOLD_OTHER`: a well-framed record that matches no layout; ``other`` is its ``(offset,
  timestamp, key, value)`` and ``(pos, index)`` are just past it, where the fold resumes.

Record headers are not read (a coordinator ignores them). The pure-Python :func:`fold_records` is
the reference; ``_crecords.fold`` is its compiled twin (``FOLD_API_VERSION``), used unless
``KREPLICA_DECODE=python``; tests/formats/log/test_key_fold.py runs both and checks they agree.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator

from kreplica.formats._compiled import forced_python, import_compiled
from kreplica.formats.errors import FormatError
from kreplica.formats.log.batch import Record
from kreplica.formats.log.default_records import decode_records
from kreplica.formats.varint import read_varint

FOLD_DONE = 0
FOLD_FRAMING = 1
FOLD_CUT = 2
FOLD_OTHER = 3

#: no cut (``stop_offset`` / ``stop_time``)
NO_STOP = sys.maxsize
#: the contract of ``_crecords.fold`` this module speaks
FOLD_API_VERSION = 1
#: the longest varint a layout match accepts (longer ones are left to the generic reader)
_LAYOUT_VARINT_BYTES = 4

_I16 = struct.Struct(">h")
_FIXED = {"b": 1, "h": 2, "i": 4, "q": 8, "u": 16}


def load_compiled_fold():
    """The compiled module when it is built and speaks :data:`FOLD_API_VERSION` (a build that
    predates the fold still decodes records), else ``None``."""
    module = import_compiled("kreplica.formats.log._crecords", 2)
    if module is None or getattr(module, "FOLD_API_VERSION", None) != FOLD_API_VERSION:
        return None
    return module


_compiled = None if forced_python("KREPLICA_DECODE") else load_compiled_fold()
#: ``"compiled"`` or ``"python"``: which fold this process uses.
FOLD_IMPLEMENTATION = "python" if _compiled is None else "compiled"


def new_table():
    """An empty table for :func:`fold_section`: the compiled ``KeyTable`` (keys and values held in C
    memory, no Python object per entry) when the compiled fold is in use, else a dict. Both map
    key bytes to entries and offer ``get``, ``[]``, ``[]=``, ``items`` and ``len``."""
    return {} if _compiled is None else _compiled.KeyTable()


def _small_uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """An unsigned varint of at most :data:`_LAYOUT_VARINT_BYTES` bytes, else ``None``."""
    value = shift = 0
    for i in range(_LAYOUT_VARINT_BYTES):
        if pos + i >= end:
            return None
        b = buf[pos + i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos + i + 1
        shift += 7
    return None


def matches_layout(buf: bytes, start: int, end: int, layout: bytes) -> bool:
    """Whether ``buf[start:end]`` is exactly one message of ``layout`` (module docstring)."""
    pos = start
    for code in layout.decode("ascii"):
        fixed = _FIXED.get(code)
        if fixed is not None:
            need = fixed
        elif code == "s":
            if end - pos < 2:
                return False
            (need,) = _I16.unpack_from(buf, pos)
            pos += 2
            if need < 0:
                return False
        elif code == "S":
            read = _small_uvarint(buf, pos, end)
            if read is None or read[0] == 0:
                return False
            need, pos = read[0] - 1, read[1]
        elif code == "T":
            read = _small_uvarint(buf, pos, end)
            if read is None:
                return False
            tags, pos = read
            for _ in range(tags):
                tag = _small_uvarint(buf, pos, end)
                size = tag and _small_uvarint(buf, tag[1], end)
                if not size or size[0] > end - size[1]:
                    return False
                pos = size[1] + size[0]
            need = 0
        else:
            return False
        if need > end - pos:
            return False
        pos += need
    return pos == end


def fold_key(key: bytes | None, value: bytes | None, layouts: tuple) -> bytes | None:
    """The key a record is folded under (its type rewritten to the alias), or ``None`` when its
    key and value do not match the layouts."""
    if key is None or len(key) < 2:
        return None
    (kind,) = _I16.unpack_from(key)
    entry = layouts[kind] if 0 <= kind < len(layouts) else None
    if entry is None:
        return None
    alias, key_layout, value_layouts = entry
    if not matches_layout(key, 2, len(key), key_layout):
        return None
    if value is not None:
        if len(value) < 2:
            return None
        (version,) = _I16.unpack_from(value)
        layout = value_layouts[version] if 0 <= version < len(value_layouts) else None
        if layout is None or not matches_layout(value, 2, len(value), layout):
            return None
    return _I16.pack(alias) + key[2:]


def fold_one(table: dict, key: bytes, record: Record, path: str, batch_position: int) -> None:
    """Store one record matching the layouts under its fold key (module docstring)."""
    value = record.value
    if value is not None:
        value_offset = record.offset
    else:
        old = table.get(key)
        value_offset = old[3] if old is not None else -1
    table[key] = (record.offset, record.timestamp, value, value_offset, path, batch_position)


def record_end(data, pos: int) -> int:
    """Where the record starting at ``pos`` ends, by its length varint (it was read already)."""
    length, body = read_varint(data, pos, len(data))
    return body + length


def fold_records(data, pos: int, index: int, count: int, base_offset: int, base_timestamp: int,
                 log_append_time: int | None, stop_offset: int, stop_time: int, batch_position: int, path: str,
                 layouts: tuple, table: dict) -> tuple[int, int, int, tuple | None]:
    """Fold records ``index`` .. ``count - 1`` of a section (module docstring): the reference."""
    section = data if isinstance(data, bytes) else bytes(data)
    records: Iterator[Record] = decode_records(section, count, base_offset, base_timestamp, -1, log_append_time,
                                               batch_position, start_index=index, start_pos=pos)
    while index < count:
        try:
            record = next(records)
        except FormatError:
            return pos, index, FOLD_FRAMING, None
        end = record_end(section, pos)
        if record.offset > stop_offset or record.timestamp > stop_time:
            return pos, index, FOLD_CUT, None
        key = fold_key(record.key, record.value, layouts)
        index += 1
        if key is None:
            return end, index, FOLD_OTHER, (record.offset, record.timestamp, record.key, record.value)
        fold_one(table, key, record, path, batch_position)
        pos = end
    return pos, index, FOLD_DONE, None


def fold_section(data, pos: int, index: int, count: int, base_offset: int, base_timestamp: int,
                 log_append_time: int | None, stop_offset: int, stop_time: int, batch_position: int, path: str,
                 layouts: tuple, table: dict) -> tuple[int, int, int, tuple | None]:
    """:func:`fold_records`, by the compiled twin when it is in use (same arguments, same result;
    ``table`` from :func:`new_table`)."""
    if _compiled is None:
        return fold_records(data, pos, index, count, base_offset, base_timestamp, log_append_time, stop_offset,
                            stop_time, batch_position, path, layouts, table)
    return _compiled.fold(data, pos, index, count, base_offset, base_timestamp, log_append_time, stop_offset,
                          stop_time, batch_position, path, layouts, table)


__all__ = ["FOLD_CUT", "FOLD_DONE", "FOLD_FRAMING", "FOLD_IMPLEMENTATION", "FOLD_OTHER", "NO_STOP", "fold_key",
           "fold_one", "fold_records", "fold_section", "matches_layout", "new_table", "record_end"]
