"""The compiled record decoder (``kreplica/formats/log/_crecords.c``) against the pure-Python reader,
which is the reference: which one is in use, and that on every input the records the compiled
path hands out, followed by what the reference reads from where it stopped, are exactly what the
reference alone yields (the same records, then the same error). The whole of
``test_default_records.py`` also runs once on each path.

With ``KREPLICA_REQUIRE_COMPILED=1`` (CI sets it) a build without the compiled path fails here
instead of being skipped, so an install that silently fell back to pure Python is caught.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.log import default_records
from kreplica.formats.log.batch import Header, NewRecord, Record
from kreplica.formats.log.default_records import RECORDS_OFFSET, build_batch, decode_records
from kreplica.formats.errors import FormatError

TS = 1_700_000_000_000
REQUIRED = os.environ.get("KREPLICA_REQUIRE_COMPILED") == "1"
FORCED_PYTHON = os.environ.get("KREPLICA_DECODE", "").lower() == "python"
crecords = default_records.load_compiled()
needs_compiled = pytest.mark.skipif(crecords is None and not REQUIRED,
                                    reason="the compiled decoder was not built here (no C compiler)")


def test_the_compiled_decoder_is_in_use_when_built() -> None:
    if REQUIRED:
        assert crecords is not None, ("KREPLICA_REQUIRE_COMPILED=1 but kreplica.formats.log._crecords is not built "
                                      "(or is a stale build): pip install -e . needs a C compiler")
    if FORCED_PYTHON:
        assert default_records.DECODE_IMPLEMENTATION == "python"
        assert default_records._crecords is None
    elif crecords is not None:
        assert default_records.DECODE_IMPLEMENTATION == "compiled"
        assert default_records._crecords is crecords
    else:
        assert default_records.DECODE_IMPLEMENTATION == "python"


def test_a_stale_build_is_not_used(monkeypatch) -> None:
    import sys
    import types

    import kreplica.formats

    stale = types.ModuleType("kreplica.formats.log._crecords")
    stale.decode = lambda *args: None
    monkeypatch.setitem(sys.modules, "kreplica.formats.log._crecords", stale)
    monkeypatch.setattr(kreplica.formats, "_crecords", stale, raising=False)
    assert default_records.load_compiled() is None
    stale.API_VERSION = default_records.COMPILED_API_VERSION
    assert default_records.load_compiled() is stale


def reference(section: bytes, count: int, base_offset: int, base_ts: int, base_seq: int, lat):
    """The pure reader alone: its records, then its error as (type, reason, position), or None."""
    out = []
    try:
        for r in decode_records(section, count, base_offset, base_ts, base_seq, lat, 77):
            out.append(r)
    except FormatError as exc:
        return out, (type(exc), exc.reason, exc.position)
    return out, None


def combined(section: bytes, count: int, base_offset: int, base_ts: int, base_seq: int, lat):
    """What ``iter_records`` does: compiled chunks, then the reference from where they stopped."""
    out = []
    pos = index = 0
    chunks = 0
    while index < count:
        chunk, pos, irregular = crecords.decode(section, pos, index, count, base_offset, base_ts, base_seq, lat,
                                                77, Record, Header)
        assert len(chunk) <= crecords.CHUNK_RECORDS
        assert chunk or irregular  # always progress, or say why not
        chunks += 1
        index += len(chunk)
        out += chunk
        if irregular:
            break
    compiled_part = list(out)
    try:
        for r in decode_records(section, count, base_offset, base_ts, base_seq, lat, 77,
                                start_index=index, start_pos=pos):
            out.append(r)
    except FormatError as exc:
        return out, (type(exc), exc.reason, exc.position), compiled_part
    return out, None, compiled_part


records = st.lists(
    st.tuples(
        st.integers(0, 3),                                    # offset gap
        st.integers(-10**6, 10**6),                           # timestamp delta
        st.one_of(st.none(), st.binary(max_size=300)),       # key
        st.one_of(st.none(), st.binary(max_size=3000)),      # value
        st.lists(st.tuples(st.text(max_size=12), st.one_of(st.none(), st.binary(max_size=40))), max_size=3),
    ),
    min_size=0, max_size=12,
)


def _batch(recs, base_seq: int) -> tuple[bytes, int]:
    offset = 100
    new = []
    for gap, dts, key, value, headers in recs:
        offset += gap
        new.append(NewRecord(offset, TS + dts, key, value, tuple(headers)))
        offset += 1
    data = build_batch(new, base_offset=100, base_timestamp=TS, base_sequence=base_seq,
                       producer_id=-1 if base_seq < 0 else 9, producer_epoch=-1 if base_seq < 0 else 0)
    return data[RECORDS_OFFSET:], len(new)


@needs_compiled
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records, base_seq=st.sampled_from([-1, 0, 5, 2147483640]), lat=st.sampled_from([None, TS + 99]))
def test_compiled_equals_reference_on_valid_sections(recs, base_seq, lat) -> None:
    section, count = _batch(recs, base_seq)
    expected, error = reference(section, count, 100, TS, base_seq, lat)
    got, got_error, compiled_part = combined(section, count, 100, TS, base_seq, lat)
    assert error is None and got_error is None
    assert got == expected
    assert all(type(r) is Record for r in got) and all(type(h) is Header for r in got for h in r.headers)
    if len(compiled_part) < count:
        assert base_seq > 0  # it only stops early on valid data where the sequence wraps


@needs_compiled
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records, data=st.data())
def test_compiled_then_reference_equals_reference_on_damaged_sections(recs, data) -> None:
    section, count = _batch(recs, -1)
    mutated = bytearray(section)
    for _ in range(data.draw(st.integers(1, 4))):
        if mutated and data.draw(st.booleans()):
            mutated[data.draw(st.integers(0, len(mutated) - 1))] = data.draw(st.integers(0, 255))
        else:
            cut = data.draw(st.integers(0, len(mutated)))
            mutated = mutated[:cut]
    count = count + data.draw(st.integers(-1, 1)) if count else data.draw(st.integers(0, 2))
    count = max(count, 0)
    expected, error = reference(bytes(mutated), count, 100, TS, -1, None)
    got, got_error, _ = combined(bytes(mutated), count, 100, TS, -1, None)
    assert got == expected
    assert got_error == error


@needs_compiled
def test_chunks_are_bounded_by_count_and_by_bytes() -> None:
    small = b"".join(default_records.build_record(i, 0, None, b"v") for i in range(3 * crecords.CHUNK_RECORDS))
    chunk, pos, irregular = crecords.decode(small, 0, 0, 3 * crecords.CHUNK_RECORDS, 0, TS, -1, None, 0,
                                            Record, Header)
    assert len(chunk) == crecords.CHUNK_RECORDS and not irregular
    value = bytes(64 * 1024)
    big = b"".join(default_records.build_record(i, 0, None, value) for i in range(40))
    chunk, pos, irregular = crecords.decode(big, 0, 0, 40, 0, TS, -1, None, 0, Record, Header)
    assert len(chunk) == crecords.CHUNK_BYTES // len(value) and not irregular
    assert pos == sum(len(default_records.build_record(i, 0, None, value)) for i in range(len(chunk)))


@needs_compiled
def test_bad_arguments_are_errors_not_crashes() -> None:
    with pytest.raises(TypeError):
        crecords.decode(b"", 0, 0, 1, 0, 0, -1, None, 0, "not a type", Header)
    with pytest.raises(ValueError):
        crecords.decode(b"\x00", 2, 0, 1, 0, 0, -1, None, 0, Record, Header)
