"""The ``inspect-log`` output: schema version 1 (ARCHITECTURE.md); the text report is
:mod:`kreplica.report.text.inspect_log`.

The machine objects are built here and nowhere else::

    segment  {type, path, base_offset, size}
    batch    {type, path, position, size, magic, base_offset, last_offset, count,
              partition_leader_epoch, crc, crc_valid, compression, timestamp_type, max_timestamp,
              producer_id, producer_epoch, base_sequence, is_transactional, is_control,
              delete_horizon_ms, after_break}
    record   {type, path, batch_position, offset, timestamp, sequence, key, value, headers,
              control_type, coordinator_epoch[, decoded]}
    finding  {type, path, position, kind, severity, message, ...kind-specific extras}
    summary  {type, path, batches, records, first_offset, last_offset, file_size, valid_bytes,
              trailing_bytes, recovery: {valid_bytes, truncated_bytes, epoch_assignments} | null}

Where the schema's enumerations meet values Kafka itself has: ``timestamp_type`` is
``no_timestamp_type`` for magic 0 (Kafka's NO_TIMESTAMP_TYPE); ``compression`` is the raw id for
an undefined codec; ``crc_valid`` is null under ``--no-verify-crc``; ``base_offset`` of a
segment is null when its file name carries none (stdin, renamed copies). ``decoded`` is there
only on records of Kafka's internal topics (``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``, ``__cluster_metadata``) under ``--decode internal``; its shape is
:mod:`kreplica.report.schemas.internal_records`'s. Those records are rendered here, in Python; the
compiled renderer keeps writing every other record.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Iterable, Sequence

from kreplica.analysis.inspect.inspect_log import Event, SegmentStart, SegmentSummary
from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.formats._compiled import forced_python, import_compiled
from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.encoding import dumps, dumps_str
from kreplica.report.output.findings import finding_object
from kreplica.report.output.formats import OutputFormat, Payload
from kreplica.report.output.payload import encoder, json_literals
from kreplica.report.schemas import describe
from kreplica.report.schemas.internal_records import decoded_object

SCHEMA_VERSION = 1


def segment_object(s: SegmentStart) -> dict:
    return {"type": "segment", "path": s.path, "base_offset": s.base_offset, "size": s.size}


def batch_object(b: RecordBatch) -> dict:
    return {
        "type": "batch", "path": b.path, "position": b.position, "size": b.size, "magic": b.magic,
        "base_offset": b.base_offset, "last_offset": b.last_offset, "count": b.count,
        "partition_leader_epoch": b.partition_leader_epoch, "crc": b.crc, "crc_valid": b.crc_valid,
        "compression": describe.compression(b.compression),
        "timestamp_type": describe.timestamp_type(b.timestamp_type), "max_timestamp": b.max_timestamp,
        "producer_id": b.producer_id, "producer_epoch": b.producer_epoch, "base_sequence": b.base_sequence,
        "is_transactional": b.is_transactional, "is_control": b.is_control,
        "delete_horizon_ms": b.delete_horizon_ms, "after_break": b.after_break,
    }


def record_object(r: Record, path: str, enc: Callable[[bytes | None], str | None]) -> dict:
    return {
        "type": "record", "path": path, "batch_position": r.batch_position, "offset": r.offset,
        "timestamp": r.timestamp, "sequence": r.sequence, "key": enc(r.key), "value": enc(r.value),
        "headers": [{"key": h.key, "value": enc(h.value)} for h in r.headers],
        "control_type": describe.control_type(r.control_type), "coordinator_epoch": r.coordinator_epoch,
    }


def decoded_record_object(d: DecodedRecord, path: str, enc: Callable[[bytes | None], str | None]) -> dict:
    """:func:`record_object` of an internal topic's record, with its ``decoded`` member."""
    obj = record_object(d.record, path, enc)
    obj["decoded"] = decoded_object(d.decoded, enc)
    return obj


def summary_object(s: SegmentSummary) -> dict:
    recovery = None
    if s.recovery is not None:
        recovery = {"valid_bytes": s.recovery.valid_bytes, "truncated_bytes": s.recovery.truncated_bytes,
                    "epoch_assignments": [list(e) for e in s.recovery.epoch_assignments]}
    return {"type": "summary", "path": s.path, "batches": s.batches, "records": s.records,
            "first_offset": s.first_offset, "last_offset": s.last_offset, "file_size": s.file_size,
            "valid_bytes": s.valid_bytes, "trailing_bytes": s.trailing_bytes, "recovery": recovery}


_BATCH_LINE = (
    '{{"type":"batch","path":{},"position":{},"size":{},"magic":{},"base_offset":{},"last_offset":{},'
    '"count":{},"partition_leader_epoch":{},"crc":{},"crc_valid":{},"compression":{},"timestamp_type":"{}",'
    '"max_timestamp":{},"producer_id":{},"producer_epoch":{},"base_sequence":{},"is_transactional":{},'
    '"is_control":{},"delete_horizon_ms":{},"after_break":{}}}\n'
).format
_JSON_LITERAL = {True: "true", False: "false", None: "null"}


_CODEC_JSON = {codec: f'"{name}"' for codec, name in describe.CODEC_NAMES.items()}
_TIMESTAMP_TYPE = describe.TIMESTAMP_TYPES


def batch_line(b: RecordBatch, path_json: str) -> str:
    """The ndjson line of :func:`batch_object`, byte for byte what ``dumps`` would write.

    NOTE: a format template instead of building and encoding a dict, with the fields unpacked
    once: batch lines dominate the output of a batch scan (bench/README.md).
    """
    (_, position, size, magic, base_offset, last_offset, count, epoch, crc, crc_valid, _, codec, ts_type, _,
     max_timestamp, producer_id, producer_epoch, base_sequence, is_transactional, is_control, delete_horizon_ms,
     after_break) = b
    lit = _JSON_LITERAL
    return _BATCH_LINE(
        path_json, position, size, magic, base_offset, last_offset, "null" if count is None else count, epoch, crc,
        lit[crc_valid], _CODEC_JSON.get(codec, codec), _TIMESTAMP_TYPE.get(ts_type, "create_time"), max_timestamp,
        producer_id, producer_epoch, base_sequence, lit[is_transactional], lit[is_control],
        "null" if delete_horizon_ms is None else delete_horizon_ms, lit[after_break],
    )


_RECORD_LINE = (
    '{{"type":"record","path":{},"batch_position":{},"offset":{},"timestamp":{},"sequence":{},"key":{},'
    '"value":{},"headers":[{}],"control_type":{},"coordinator_epoch":{}}}\n'
).format


def json_payload_encoder(mode: Payload) -> Callable[[bytes | None], str]:
    """Payload → its JSON text (``null`` for absent), without a general JSON encoder where the
    encoding can never need escaping (base64, hex)."""
    if mode is Payload.base64:
        b2a = binascii.b2a_base64
        return lambda b: "null" if b is None else '"' + b2a(b, newline=False).decode("ascii") + '"'
    if mode is Payload.hex:
        return lambda b: "null" if b is None else '"' + b.hex() + '"'
    if mode is Payload.utf8:
        return lambda b: "null" if b is None else dumps(b.decode("utf-8", "replace"))
    return lambda b: "null"


_HEADER_KEYS: dict[str, str] = {}  # header key -> its JSON prefix; keys repeat across records


def record_line(r: Record, path_json: str, enc: Callable[[bytes | None], str]) -> str:
    """The ndjson line of :func:`record_object` (``enc`` from :func:`json_payload_encoder`).

    NOTE: like :func:`batch_line`, a template instead of a dict through the JSON encoder; records
    are most of ``--records`` output (bench/README.md).
    """
    if r.headers:
        keys = _HEADER_KEYS
        parts = []
        for h in r.headers:
            k = keys.get(h.key)
            if k is None:
                k = '{"key":' + dumps(h.key) + ',"value":'
                if len(keys) < 4096:
                    keys[h.key] = k
            parts.append(k + enc(h.value) + "}")
        headers = ",".join(parts)
    else:
        headers = ""
    control = describe.control_type(r.control_type)
    return _RECORD_LINE(
        path_json, r.batch_position, r.offset, r.timestamp, r.sequence, enc(r.key), enc(r.value), headers,
        "null" if control is None else '"' + control + '"',
        "null" if r.coordinator_epoch is None else r.coordinator_epoch,
    )


_RECORD_LINE_BYTES = (
    b'{"type":"record","path":%s,"batch_position":%d,"offset":%d,"timestamp":%d,"sequence":%d,"key":%s,'
    b'"value":%s,"headers":[%s],"control_type":%s,"coordinator_epoch":%s}\n'
)
_CONTROL_JSON: dict[int | None, bytes] = {None: b"null"}
_HEADER_PREFIX: dict[str, bytes] = {}  # header key -> b'{"key":"...","value":'; keys repeat


def _control_json(code: int) -> bytes:
    text = b'"' + describe.control_type(code).encode("ascii") + b'"'
    if len(_CONTROL_JSON) < 256:
        _CONTROL_JSON[code] = text
    return text


def _header_prefix(key: str, errors: str = "strict") -> bytes:
    """``{"key":<key as JSON>,"value":`` as UTF-8 bytes, remembered for the next records (up to
    4096 keys: header keys repeat across records)."""
    prefix = b'{"key":' + dumps_str(key, errors) + b',"value":'
    if len(_HEADER_PREFIX) < 4096:
        _HEADER_PREFIX[key] = prefix
    return prefix


def record_lines(records: Sequence[Record], path_json: bytes, literals: Callable, errors: str = "strict") -> bytes:
    """The ndjson lines of a run of records (one batch's), as UTF-8 bytes: byte for byte the
    lines :func:`record_line` writes (``literals`` from :func:`~kreplica.report.output.payload.json_literals`).

    This is the reference renderer; ``_crender.render_records`` is its compiled twin for the
    base64, hex and none payloads (see :func:`load_compiled`).

    NOTE: the payloads of the whole run are encoded in three calls (keys, values, header
    values) instead of one call per payload, and each line is one bytes ``%`` format; record
    lines are most of ``--records`` output (bench/README.md).
    """
    keys = literals([r[4] for r in records])
    values = literals([r[5] for r in records])
    header_values = iter(literals([h[1] for r in records for h in r[6]]))
    prefixes = _HEADER_PREFIX
    control_json = _CONTROL_JSON
    template = _RECORD_LINE_BYTES
    lines = []
    append = lines.append
    for (position, offset, timestamp, sequence, _, _, headers, control, coordinator), key, value in zip(
            records, keys, values):
        if headers:
            parts = []
            for h in headers:
                prefix = prefixes.get(h[0])
                if prefix is None:
                    prefix = _header_prefix(h[0], errors)
                parts.append(prefix + next(header_values) + b"}")
            header_json = b",".join(parts)
        else:
            header_json = b""
        control_text = control_json.get(control)
        if control_text is None:
            control_text = _control_json(control)
        append(template % (path_json, position, offset, timestamp, sequence, key, value, header_json, control_text,
                           b"null" if coordinator is None else b"%d" % coordinator))
    return b"".join(lines)


# -- the compiled twin -------------------------------------------------------------------------

#: The contract of the compiled renderer this module speaks (``_crender.API_VERSION``).
COMPILED_API_VERSION = 1


def load_compiled():
    """The compiled ndjson renderer (``kreplica/report/_crender.c``), or ``None`` when it was not
    built (no C compiler at install time) or is a stale build of another contract."""
    return import_compiled("kreplica.report._crender", COMPILED_API_VERSION)


# The pure-Python renderer (batch_line, record_lines) is the reference. The compiled one writes
# the same bytes for batches and for data records with base64, hex or no payloads, and hands
# anything else back (it returns None); KREPLICA_RENDER=python renders everything in Python.
_crender = None if forced_python("KREPLICA_RENDER") else load_compiled()
#: ``"compiled"`` or ``"python"``: which ndjson renderer this process uses where it can.
RENDER_IMPLEMENTATION = "python" if _crender is None else "compiled"



def _codec_json_bytes() -> tuple[bytes, ...]:
    """The JSON text of codec ids 0, 1, ... up to the first undefined one (written as a number)."""
    names = []
    while len(names) in _CODEC_JSON:
        names.append(_CODEC_JSON[len(names)].encode("ascii"))
    return tuple(names)


# what the compiled renderer is told: codec ids 0.. as JSON text; timestamp types -1, 0 and 1
_CODEC_JSON_BYTES = _codec_json_bytes()
_TIMESTAMP_TYPE_BYTES = tuple(_TIMESTAMP_TYPE.get(t, "create_time").encode("ascii") for t in (-1, 0, 1))


def _compiled_payload(compiled, payload: Payload) -> int | None:
    """The compiled renderer's code for ``payload``, or ``None`` where only Python renders it."""
    if compiled is None:
        return None
    return {Payload.base64: compiled.PAYLOAD_BASE64, Payload.hex: compiled.PAYLOAD_HEX,
            Payload.none: compiled.PAYLOAD_NONE}.get(payload)


def emit_events(events: Iterable[Event], emitter: Emitter, payload: Payload) -> int:
    """Write the events as machine objects; returns the number of error findings.

    ndjson to a UTF-8 stream takes the fast path: batch lines from a template, and the records
    of each batch gathered and written as one block by :func:`record_lines`.
    """
    if emitter.format is OutputFormat.ndjson and emitter.utf8:
        return _emit_ndjson(events, emitter, payload)
    enc = encoder(payload)
    errors = 0
    path = ""
    emit = emitter.emit
    for ev in events:
        if isinstance(ev, RecordBatch):
            emit(batch_object(ev))
        elif isinstance(ev, Record):
            emit(record_object(ev, path, enc))
        elif isinstance(ev, DecodedRecord):
            emit(decoded_record_object(ev, path, enc))
        elif isinstance(ev, Finding):
            errors += ev.is_error
            emit(finding_object(ev))
        elif isinstance(ev, SegmentStart):
            path = ev.path
            emit(segment_object(ev))
        elif isinstance(ev, SegmentSummary):
            emit(summary_object(ev))
    return errors


#: Records rendered in one block at most, so a batch of millions of records streams (issue 14).
FLUSH_RECORDS = 4096


def _emit_ndjson(events: Iterable[Event], emitter: Emitter, payload: Payload) -> int:
    errors = 0
    path = ""
    path_json = '""'
    path_bytes = batch_path = b'""'   # the path as JSON: for record lines, for batch lines
    literals = json_literals(payload)
    text_errors = emitter.errors
    emit = emitter.emit
    write = emitter.write_block
    compiled = _crender
    mode = _compiled_payload(compiled, payload)
    render_batch = compiled.render_batch if compiled is not None else None
    render_records = compiled.render_records if mode is not None else None
    prefixes = _HEADER_PREFIX
    codec_json, timestamp_types = _CODEC_JSON_BYTES, _TIMESTAMP_TYPE_BYTES
    enc = encoder(payload)   # for decoded records, which take the general path

    def header_prefix(key: str) -> bytes:
        return _header_prefix(key, text_errors)

    def flush(records: list[Record]) -> None:
        # NOTE: the compiled twin renders a batch's records in one call where it can (bench/README.md)
        block = None if render_records is None else render_records(records, path_bytes, mode, prefixes, header_prefix)
        if block is None:
            block = record_lines(records, path_bytes, literals, text_errors)
        write(block, len(records))

    def set_path(new: str) -> None:
        nonlocal path, path_json, path_bytes, batch_path
        path, path_json = new, dumps(new)
        path_bytes = dumps_str(new, text_errors)
        batch_path = path_json.encode("utf-8", text_errors)

    pending: list[Record] = []   # the records since the last other event: one batch's
    for ev in events:
        kind = type(ev)
        if kind is Record:
            pending.append(ev)
            if len(pending) >= FLUSH_RECORDS:  # a batch may declare millions: stream it in blocks
                flush(pending)
                pending = []
            continue
        if pending:
            flush(pending)
            pending = []
        if kind is RecordBatch or isinstance(ev, RecordBatch):
            if ev.path != path:
                set_path(ev.path)
            line = None if render_batch is None else render_batch(ev, batch_path, codec_json, timestamp_types)
            write(line if line is not None else batch_line(ev, path_json).encode("utf-8", text_errors))
        elif isinstance(ev, Record):   # a subclass: not expected, but never dropped
            pending.append(ev)
        elif kind is DecodedRecord:
            emit(decoded_record_object(ev, path, enc))
        elif isinstance(ev, Finding):
            errors += ev.is_error
            emit(finding_object(ev))
        elif isinstance(ev, SegmentStart):
            set_path(ev.path)
            emit(segment_object(ev))
        elif isinstance(ev, SegmentSummary):
            emit(summary_object(ev))
    if pending:
        flush(pending)
    return errors
