"""Jute primitives: round trips, the null/empty distinction, labelled errors with absolute
positions, and lengths checked before any allocation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreplica.formats.errors import FormatError, Malformed, Truncated
from kreplica.formats.zookeeper.jute import (
    JuteReader,
    build_boolean,
    build_buffer,
    build_int,
    build_long,
    build_ustring,
)


@given(st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1), st.booleans(),
       st.one_of(st.none(), st.binary(max_size=64)), st.one_of(st.none(), st.text(max_size=32)))
def test_round_trip(i, q, b, buf, s):
    data = build_int(i) + build_long(q) + build_boolean(b) + build_buffer(buf) + build_ustring(s)
    r = JuteReader(data)
    assert r.int("i") == i
    assert r.long("q") == q
    assert r.boolean("b") is b
    assert r.buffer("buf") == buf
    assert r.ustring("s") == s
    assert r.remaining == 0


def test_null_and_empty_buffers_differ():
    r = JuteReader(build_buffer(None) + build_buffer(b""))
    assert r.buffer("a") is None
    assert r.buffer("b") == b""


@pytest.mark.parametrize("value, expected", [
    pytest.param(b"\x00", False, id="zero"),
    pytest.param(b"\x01", True, id="one"),
    pytest.param(b"\x7f", True, id="any-non-zero"),
])
def test_boolean_any_non_zero_is_true(value, expected):
    assert JuteReader(value).boolean("flag") is expected


def test_huge_declared_length_is_truncated_not_allocated():
    # 2^31-1 declared in a 10-byte buffer: refused before slicing.
    data = b"\x00" * 6 + build_int(2**31 - 1)
    r = JuteReader(data, path="f", base=1000, start=6)
    with pytest.raises(Truncated) as info:
        r.buffer("node data")
    assert info.value.position == 1006
    assert info.value.field == "node data"
    assert info.value.path == "f"
    assert "f: byte 1006: node data" in str(info.value)


def test_length_below_minus_one_is_malformed():
    with pytest.raises(Malformed) as info:
        JuteReader(build_int(-2) + b"xx", base=40).ustring("path")
    assert info.value.position == 40 and info.value.actual == -2


def test_short_fixed_field_names_the_field():
    with pytest.raises(Truncated) as info:
        JuteReader(b"\x00\x00\x00", base=8).long("czxid")
    assert info.value.field == "czxid" and info.value.position == 8


def test_vector_count_that_cannot_fit_is_refused():
    r = JuteReader(build_int(1_000_000) + b"\x00" * 16)
    with pytest.raises(Truncated):
        r.vector_count("acls", 12)


def test_invalid_utf8_is_replaced_not_refused():
    r = JuteReader(build_int(2) + b"\xff/")
    assert r.ustring("path") == "\ufffd/"


@given(st.binary(max_size=64))
def test_any_bytes_give_values_or_format_error(data):
    r = JuteReader(data)
    try:
        while r.remaining:
            r.ustring("s")
            r.buffer("b")
            r.vector_count("v")
            r.long("l")
    except FormatError as exc:
        assert exc.position is not None and 0 <= exc.position <= len(data)
