"""The compiled ndjson renderer (``kreplica/report/_crender.c``) against the pure-Python one in
``kreplica/report/schemas/inspect_log.py``, which is the reference: which one is in use, and that on
every input the compiled one either writes exactly the reference's bytes or hands the input
back (``None``) for the reference to write.

The stream tests run once on each renderer (the ``renderer`` fixture), and each compares the
ndjson stream with the machine objects (``batch_object``, ``record_object``, ...) written by the
general JSON encoder, so both renderers are held to the schema's own definition.

With ``KREPLICA_REQUIRE_COMPILED=1`` (CI sets it) a build without the compiled renderer fails
here instead of being skipped, so an install that silently fell back to pure Python is caught.
"""

from __future__ import annotations

import binascii
import io
import json
import os
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.analysis.inspect.inspect_log import InspectOptions, SegmentStart, inspect_groups
from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.formats import codecs
from kreplica.formats.log.batch import Header, NewRecord, Record, RecordBatch
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.formats.findings import Finding
from kreplica.model.logdir.segments import find_segment_groups
from kreplica.report.schemas import inspect_log
from kreplica.report.schemas.inspect_log import (
    batch_line,
    batch_object,
    decoded_record_object,
    emit_events,
    finding_object,
    record_lines,
    record_object,
    segment_object,
    summary_object,
)
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.encoding import dumps, dumps_str
from kreplica.report.output.formats import OutputFormat, Payload
from kreplica.report.output.payload import encoder, json_literals
from tests.conftest import FIXTURES, generated_fixtures

REQUIRED = os.environ.get("KREPLICA_REQUIRE_COMPILED") == "1"
FORCED_PYTHON = os.environ.get("KREPLICA_RENDER", "").lower() == "python"
crender = inspect_log.load_compiled()
needs_compiled = pytest.mark.skipif(crender is None and not REQUIRED,
                                    reason="the compiled renderer was not built here (no C compiler)")
COMPILED_MODES = [Payload.base64, Payload.hex, Payload.none]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # str as decoded: no lone surrogates


def test_the_compiled_renderer_is_in_use_when_built() -> None:
    if REQUIRED:
        assert crender is not None, ("KREPLICA_REQUIRE_COMPILED=1 but kreplica.report._crender is not built "
                                     "(or is a stale build): pip install -e . needs a C compiler")
    if FORCED_PYTHON:
        assert inspect_log.RENDER_IMPLEMENTATION == "python"
        assert inspect_log._crender is None
    elif crender is not None:
        assert inspect_log.RENDER_IMPLEMENTATION == "compiled"
        assert inspect_log._crender is crender
    else:
        assert inspect_log.RENDER_IMPLEMENTATION == "python"


def test_a_stale_build_is_not_used(monkeypatch) -> None:
    import kreplica.report

    stale = types.ModuleType("kreplica.report._crender")
    monkeypatch.setitem(sys.modules, "kreplica.report._crender", stale)
    monkeypatch.setattr(kreplica.report, "_crender", stale, raising=False)
    assert inspect_log.load_compiled() is None
    stale.API_VERSION = inspect_log.COMPILED_API_VERSION
    assert inspect_log.load_compiled() is stale


@pytest.fixture(params=["compiled", "python"])
def renderer(request, monkeypatch):
    """Run the test on the compiled renderer (the reference taking what it hands back) and on
    the pure-Python reference alone."""
    if request.param == "compiled":
        if crender is None:
            if REQUIRED:
                pytest.fail("KREPLICA_REQUIRE_COMPILED=1 but the compiled renderer is not built")
            pytest.skip("the compiled renderer is not built here")
        monkeypatch.setattr(inspect_log, "_crender", crender)
    else:
        monkeypatch.setattr(inspect_log, "_crender", None)
    return request.param


# -- inputs -----------------------------------------------------------------------------------

TS = 1_700_000_000_000


def odd_records() -> list[NewRecord]:
    """Null, empty and binary keys and values; header keys that need escaping (quotes, control
    characters, U+2028, non-ASCII, replacement characters); null and empty header values."""
    out = []
    for i in range(40):
        key = None if i % 7 == 0 else (b"" if i % 11 == 0 else f'k\u00e9y-"{i}\\\n'.encode())
        value = None if i % 13 == 5 else (b"" if i % 9 == 0 else bytes(range(i % 256)) * (i % 5 + 1))
        headers = []
        if i % 3 == 0:
            headers.append(("trace\u2028id\"\x01\x7f", None))
        if i % 4 == 0:
            headers.append(("h\ufffdx\U0001f600", b"\xff\x00abc"))
        if i % 5 == 0:
            headers.append(("", b""))
        if i % 6 == 0:
            headers.extend((f"k{j}", bytes([j])) for j in range(5))
        out.append(NewRecord(i, TS + i * (-1 if i % 2 else 1), key, value, tuple(headers)))
    return out


def odd_segment() -> bytes:
    """A segment of odd records, plain and compressed, LogAppendTime, a wrapping sequence, a
    delete horizon, and control batches (commit, abort, an unknown control type)."""
    recs = odd_records()
    out = build_batch(recs[:20], base_offset=0, producer_id=5, producer_epoch=1, base_sequence=2147483640)
    out += build_batch(recs[20:], base_offset=20, compression=codecs.GZIP, timestamp_type=1, max_timestamp=1234)
    for offset, ctype in ((40, 1), (41, 0), (42, 5)):
        out += build_batch([build_control_record(offset, 99, ctype, 7)], base_offset=offset, is_control=True,
                           is_transactional=True, producer_id=5)
    out += build_batch([NewRecord(43 + i, 5, b"x", b"y" * i) for i in range(3)], base_offset=43,
                       compression=codecs.ZSTD, delete_horizon_ms=77)
    return out


@pytest.fixture(scope="module")
def odd_paths(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("odd")
    segment = odd_segment()
    plain = root / "odd-0"
    plain.mkdir()
    (plain / "00000000000000000000.log").write_bytes(segment)
    quoted = root / 'd\u00e9"q\\-0'   # a path that needs escaping in JSON
    quoted.mkdir()
    damaged = bytearray(segment)
    damaged[200] ^= 0xFF
    (quoted / "00000000000000000000.log").write_bytes(bytes(damaged) + bytes(30))
    return [str(plain), str(quoted)]


def fixture_paths() -> list[str]:
    return [str(p) for p in generated_fixtures("*.log")]


def expected_ndjson(events: list, payload: Payload) -> bytes:
    """The stream as the schema defines it: every object through the general JSON encoder."""
    enc = encoder(payload)
    path = ""
    lines = []
    for ev in events:
        if isinstance(ev, RecordBatch):
            obj = batch_object(ev)
        elif isinstance(ev, Record):
            obj = record_object(ev, path, enc)
        elif isinstance(ev, DecodedRecord):   # fixtures/elections/kraft/__cluster_metadata-0
            obj = decoded_record_object(ev, path, enc)
        elif isinstance(ev, Finding):
            obj = finding_object(ev)
        elif hasattr(ev, "base_offset"):
            path = ev.path
            obj = segment_object(ev)
        else:
            obj = summary_object(ev)
        lines.append(dumps(obj) + "\n")
    return "".join(lines).encode("utf-8")


def rendered(events: list, payload: Payload) -> bytes:
    out = io.BytesIO()
    emitter = Emitter(OutputFormat.ndjson, out)
    emit_events(iter(events), emitter, payload)
    emitter.close()
    return out.getvalue()


# -- the stream, on both renderers ----------------------------------------------------------------


@pytest.mark.parametrize("payload", [pytest.param(p, id=p.value) for p in Payload])
@pytest.mark.parametrize("options", [
    pytest.param(InspectOptions(), id="scan"),
    pytest.param(InspectOptions(records=True), id="records"),
    pytest.param(InspectOptions(records=True, verify_crc=False, first_offset=3, last_offset=30), id="filtered"),
])
def test_ndjson_stream_is_the_schema_objects_byte_for_byte(renderer, odd_paths, payload, options) -> None:
    events = list(inspect_groups(find_segment_groups(fixture_paths() + odd_paths), options))
    assert any(isinstance(e, Finding) for e in events)
    if options.records:
        records = [e for e in events if isinstance(e, Record)]
        assert any(r.control_type is not None for r in records) and any(r.key is None for r in records)
        assert any(h.value is None for r in records for h in r.headers)
    assert rendered(events, payload) == expected_ndjson(events, payload)


def test_a_large_batch_renders_whole(renderer) -> None:
    # 3,000 records of 1 KiB: one block well over the emitter's chunk, written as it is
    records = [NewRecord(i, TS + i, b"key-%d" % i, bytes([i % 251]) * 1024, (("trace", b"%016d" % i),))
               for i in range(3000)]
    buf = build_batch(records, base_offset=1000, producer_id=9, producer_epoch=0, base_sequence=0)
    from kreplica.formats.log.default_records import iter_records, parse_header

    batch = parse_header(buf, 0, len(buf), path="big.log")
    events = [SegmentStart("big.log", 1000, len(buf)), batch, *iter_records(buf, batch)]
    for payload in Payload:
        assert rendered(events, payload) == expected_ndjson(events, payload)


# -- the compiled functions against the reference, directly -------------------------------------


def compiled_lines(records: list, path: str, payload: Payload) -> bytes | None:
    mode = inspect_log._compiled_payload(crender, payload)
    return crender.render_records(records, dumps_str(path), mode, inspect_log._HEADER_PREFIX,
                                  inspect_log._header_prefix)


def reference_lines(records: list, path: str, payload: Payload) -> bytes:
    return record_lines(records, dumps_str(path), json_literals(payload))


@needs_compiled
@pytest.mark.parametrize("payload", [pytest.param(p, id=p.value) for p in COMPILED_MODES])
def test_compiled_record_lines_equal_the_reference(payload) -> None:
    records = [Record(7, 8, -1, 5, b"\x00\xff\"\\", b"", (Header('k"\u00e9\\', b"\x80"), Header("", None)), None, None),
               Record(2**63 - 1, -2**63, 0, -1, None, None, (), None, None),
               Record(0, 0, 0, 0, b"", b"a", (Header("\x00\x1f\u2028", b"ab"),) * 3, None, None)]
    for r in odd_records():
        records.append(Record(61, 100 + r.offset, r.timestamp, r.offset, r.key, r.value,
                              tuple(Header(k, v) for k, v in r.headers), None, None))
    for run in (records, records[:1], [], records[3:9]):
        assert compiled_lines(run, 'p"\\', payload) == reference_lines(run, 'p"\\', payload)


@needs_compiled
@pytest.mark.parametrize("record", [
    pytest.param(Record(0, 1, 2, 3, b"k", b"v", (), 1, 5), id="control-record"),
    pytest.param(Record(0, 1, 2, 3, b"k", b"v", (), None, 5), id="coordinator-epoch"),
    pytest.param(Record(0, 2**63, 2, 3, b"k", b"v", (), None, None), id="int-beyond-64-bits"),
    pytest.param(Record(0, 1, 2, 3, bytearray(b"k"), b"v", (), None, None), id="bytearray-key"),
    pytest.param(Record(0, 1, 2, 3, b"k", memoryview(b"v"), (), None, None), id="memoryview-value"),
    pytest.param(Record(0, 1, 2, 3, b"k", b"v", [Header("h", b"x")], None, None), id="header-list"),
    pytest.param(Record(0, 1, 2, 3, b"k", b"v", (Header("h", bytearray(b"x")),), None, None), id="header-bytearray"),
    pytest.param(Record(0, 1.0, 2, 3, b"k", b"v", (), None, None), id="float-offset"),
])
def test_compiled_record_lines_hand_back_what_they_were_not_written_for(record) -> None:
    for payload in COMPILED_MODES:
        assert compiled_lines([Record(0, 1, 2, 3, b"k", b"v", (), None, None), record], "p", payload) is None


@needs_compiled
def test_an_exception_making_a_header_prefix_propagates() -> None:
    def failing(key: str) -> bytes:
        raise RuntimeError("no prefix")

    record = Record(0, 1, 2, 3, b"k", b"v", (Header("never-seen-key-\u2603", b"x"),), None, None)
    with pytest.raises(RuntimeError, match="no prefix"):
        crender.render_records([record], b'"p"', crender.PAYLOAD_BASE64, {}, failing)


@needs_compiled
def test_more_header_keys_than_the_cache_holds() -> None:
    records = [Record(0, i, 0, 0, None, b"v", tuple(Header(f"key-{i}-{j}", b"x") for j in range(3)), None, None)
               for i in range(2000)]
    for payload in COMPILED_MODES:
        assert compiled_lines(records, "p", payload) == reference_lines(records, "p", payload)
    assert len(inspect_log._HEADER_PREFIX) <= 4096


@needs_compiled
def test_compiled_batch_line_equals_the_reference() -> None:
    events = inspect_groups(find_segment_groups(fixture_paths()), InspectOptions())
    batches = [e for e in events if isinstance(e, RecordBatch)]
    unverified = [e for e in inspect_groups(find_segment_groups(fixture_paths()), InspectOptions(verify_crc=False))
                  if isinstance(e, RecordBatch)]
    assert any(b.after_break for b in batches) and any(b.magic == 0 for b in batches)
    odd = [batches[0]._replace(compression=c, timestamp_type=t, delete_horizon_ms=h, count=n, path='a"\\b\u00e9')
           for c in (0, 4, 5, 7) for t in (-1, 0, 1, 2) for h in (None, 5) for n in (None, 0, 7)]
    odd.append(batches[0]._replace(base_offset=-2**63, last_offset=2**63 - 1, max_timestamp=-1, crc=2**32 - 1))
    for b in batches + unverified + odd:
        path_json = dumps(b.path)
        line = crender.render_batch(b, path_json.encode(), inspect_log._CODEC_JSON_BYTES,
                                    inspect_log._TIMESTAMP_TYPE_BYTES)
        assert line == batch_line(b, path_json).encode()
        assert json.loads(line) == batch_object(b)


@needs_compiled
@pytest.mark.parametrize("batch_field,value", [
    pytest.param("crc_valid", 1, id="crc_valid-int"),
    pytest.param("is_control", None, id="is_control-none"),
    pytest.param("after_break", 0, id="after_break-int"),
    pytest.param("base_offset", 2**64, id="int-beyond-64-bits"),
    pytest.param("count", "7", id="count-str"),
])
def test_compiled_batch_line_hands_back_what_it_was_not_written_for(batch_field, value) -> None:
    batch = next(e for e in inspect_groups(find_segment_groups(fixture_paths()[:1]), InspectOptions())
                 if isinstance(e, RecordBatch))
    odd = batch._replace(**{batch_field: value})
    assert crender.render_batch(odd, b'"p"', inspect_log._CODEC_JSON_BYTES, inspect_log._TIMESTAMP_TYPE_BYTES) is None


@needs_compiled
@pytest.mark.parametrize("simd", [pytest.param(True, id="avx2-if-the-cpu-has-it"), pytest.param(False, id="scalar")])
def test_compiled_base64_is_the_standard_librarys(simd) -> None:
    was = crender.set_simd(simd)
    try:
        for n in [*range(0, 200), 255, 256, 1023, 1024, 1025, 65536 + 7]:
            data = bytes((i * 131 + n) % 256 for i in range(n))
            assert crender.base64(data) == binascii.b2a_base64(data, newline=False), n
    finally:
        crender.set_simd(was)


@needs_compiled
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(
    st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1), st.integers(-2**31, 2**31 - 1),
    st.none() | st.binary(max_size=80), st.none() | st.binary(max_size=300),
    st.lists(st.tuples(TEXT, st.none() | st.binary(max_size=40)), max_size=4),
), max_size=20), TEXT, st.sampled_from(COMPILED_MODES), st.booleans())
def test_compiled_record_lines_equal_the_reference_on_any_records(fields, path, payload, simd) -> None:
    records = [Record(len(fields), offset, ts, seq, key, value, tuple(Header(k, v) for k, v in headers), None, None)
               for offset, ts, seq, key, value, headers in fields]
    was = crender.set_simd(simd)
    try:
        assert compiled_lines(records, path, payload) == reference_lines(records, path, payload)
    finally:
        crender.set_simd(was)
