"""The compiled record decoder (``kreplica/formats/_crecords.c``) against the pure-Python reader,
which is the reference: on every input the compiled twin either declines (None) or returns
exactly what the pure reader yields. Skipped where no C compiler built it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats import default_records
from kreplica.formats.batch import Header, NewRecord, Record
from kreplica.formats.default_records import RECORDS_OFFSET, build_batch, decode_records
from kreplica.formats.errors import FormatError

crecords = default_records._crecords
pytestmark = pytest.mark.skipif(crecords is None, reason="the compiled decoder was not built here (no C compiler, "
                                                          "or KREPLICA_DECODE=python); the pure reader is in use")

TS = 1_700_000_000_000


def reference(section: bytes, count: int, base_offset: int, base_ts: int, base_seq: int, lat):
    out = []
    try:
        for r in decode_records(section, count, base_offset, base_ts, base_seq, lat, 77):
            out.append(r)
    except FormatError:
        return out, True
    return out, False


def compiled(section: bytes, count: int, base_offset: int, base_ts: int, base_seq: int, lat):
    return crecords.decode(section, count, base_offset, base_ts, base_seq, lat, 77, Record, Header)


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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records, base_seq=st.sampled_from([-1, 0, 5, 2147483640]), lat=st.sampled_from([None, TS + 99]))
def test_compiled_equals_reference_on_valid_sections(recs, base_seq, lat) -> None:
    section, count = _batch(recs, base_seq)
    expected, failed = reference(section, count, 100, TS, base_seq, lat)
    got = compiled(section, count, 100, TS, base_seq, lat)
    assert not failed
    if got is not None:
        assert got == expected
        assert all(type(r) is Record for r in got) and all(type(h) is Header for r in got for h in r.headers)
    else:
        assert base_seq > 0  # it only declines valid data where the sequence wraps


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records, data=st.data())
def test_compiled_declines_or_agrees_on_damaged_sections(recs, data) -> None:
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
    got = compiled(bytes(mutated), count, 100, TS, -1, None)
    expected, failed = reference(bytes(mutated), count, 100, TS, -1, None)
    if got is not None:
        assert not failed and got == expected
