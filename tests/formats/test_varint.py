"""Kafka's varints (``ByteUtils``): the spec §1.1 table, every length boundary, and the
decoder's edge rules (5th/10th byte, non-minimal encodings, truncation).

Expected bytes come from the spec's table (TV2) and, for boundaries the table does not list,
from the definition: zigzag, then base-128 with the low group first.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreplica.formats.errors import FormatError, Malformed, Truncated
from kreplica.formats.varint import (
    build_unsigned_varint,
    build_varint,
    build_varlong,
    read_unsigned_varint,
    read_varint,
    read_varlong,
)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _reference_uvarint(u: int) -> bytes:
    """Base 128, least-significant group first, written independently of kreplica."""
    out = []
    while True:
        if u < 0x80:
            out.append(u)
            return bytes(out)
        out.append(0x80 | (u & 0x7F))
        u >>= 7


def _zigzag(n: int) -> int:
    # 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3 ... without relying on fixed-width shifts
    return 2 * n if n >= 0 else -2 * n - 1


# -- the spec's table (§1.1 / TV2), verbatim -------------------------------------------------

SPEC_VARINTS = [
    pytest.param(0, "00", id="0"),
    pytest.param(-1, "01", id="-1"),
    pytest.param(1, "02", id="1"),
    pytest.param(-2, "03", id="-2"),
    pytest.param(63, "7e", id="63"),
    pytest.param(-64, "7f", id="-64"),
    pytest.param(64, "80 01", id="64"),
    pytest.param(-65, "81 01", id="-65"),
    pytest.param(150, "ac 02", id="150"),
    pytest.param(300, "d8 04", id="300"),
    pytest.param(INT32_MAX, "fe ff ff ff 0f", id="INT32_MAX"),
    pytest.param(INT32_MIN, "ff ff ff ff 0f", id="INT32_MIN"),
]

SPEC_VARLONGS = [
    pytest.param(0, "00", id="0"),
    pytest.param(-1, "01", id="-1"),
    pytest.param(1700000000000, "80 a0 ab fe f9 62", id="TS"),
    pytest.param(INT64_MIN, "ff ff ff ff ff ff ff ff ff 01", id="INT64_MIN"),
    pytest.param(INT64_MAX, "fe ff ff ff ff ff ff ff ff 01", id="INT64_MAX"),
]

SPEC_UNSIGNED = [
    pytest.param(0, "00", id="0"),
    pytest.param(127, "7f", id="127"),
    pytest.param(128, "80 01", id="128"),
    pytest.param(16383, "ff 7f", id="16383"),
    pytest.param(16384, "80 80 01", id="16384"),
]


@pytest.mark.parametrize(("value", "hexed"), SPEC_VARINTS)
def test_varint_spec_table(value, hexed):
    encoded = bytes.fromhex(hexed)
    assert build_varint(value) == encoded
    assert read_varint(encoded, 0, len(encoded)) == (value, len(encoded))


@pytest.mark.parametrize(("value", "hexed"), SPEC_VARLONGS)
def test_varlong_spec_table(value, hexed):
    encoded = bytes.fromhex(hexed)
    assert build_varlong(value) == encoded
    assert read_varlong(encoded, 0, len(encoded)) == (value, len(encoded))


@pytest.mark.parametrize(("value", "hexed"), SPEC_UNSIGNED)
def test_unsigned_varint_spec_table(value, hexed):
    encoded = bytes.fromhex(hexed)
    assert build_unsigned_varint(value) == encoded
    assert read_unsigned_varint(encoded, 0, len(encoded)) == (value, len(encoded))


# -- every length boundary, both signs ---------------------------------------------------------
# A zigzag value u takes k bytes for 2**(7(k-1)) <= u < 2**(7k). The largest positive n with
# k bytes is (2**(7k) - 2) // 2 and the smallest negative is -(2**(7k)) // 2; one step further
# out takes k + 1 bytes.


def _boundaries(max_len: int, lo: int, hi: int):
    params = []
    for k in range(1, max_len + 1):
        top = 2 ** (7 * k)
        for n, length, name in (
            ((top - 2) // 2, k, f"+max{k}B"),
            ((top - 2) // 2 + 1, k + 1, f"+min{k + 1}B"),
            (-(top // 2), k, f"-max{k}B"),
            (-(top // 2) - 1, k + 1, f"-min{k + 1}B"),
        ):
            if lo <= n <= hi:
                params.append(pytest.param(n, length, id=name))
    return params


VARINT_BOUNDARIES = _boundaries(5, INT32_MIN, INT32_MAX)
VARLONG_BOUNDARIES = _boundaries(10, INT64_MIN, INT64_MAX)


def test_boundary_tables_cover_every_length():
    # a table that silently lost rows would make the boundary tests vacuous
    assert sorted({p.values[1] for p in VARINT_BOUNDARIES}) == [1, 2, 3, 4, 5]
    assert sorted({p.values[1] for p in VARLONG_BOUNDARIES}) == list(range(1, 11))


@pytest.mark.parametrize(("value", "length"), VARINT_BOUNDARIES)
def test_varint_length_boundaries(value, length):
    encoded = build_varint(value)
    assert encoded == _reference_uvarint(_zigzag(value))
    assert len(encoded) == length
    assert read_varint(encoded + b"\xaa", 0, len(encoded) + 1) == (value, length)


@pytest.mark.parametrize(("value", "length"), VARLONG_BOUNDARIES)
def test_varlong_length_boundaries(value, length):
    encoded = build_varlong(value)
    assert encoded == _reference_uvarint(_zigzag(value))
    assert len(encoded) == length
    assert read_varlong(encoded + b"\xaa", 0, len(encoded) + 1) == (value, length)


@pytest.mark.parametrize(
    ("value", "length"),
    [
        pytest.param(0, 1, id="0"),
        pytest.param(2**7 - 1, 1, id="max1B"),
        pytest.param(2**7, 2, id="min2B"),
        pytest.param(2**14 - 1, 2, id="max2B"),
        pytest.param(2**14, 3, id="min3B"),
        pytest.param(2**21 - 1, 3, id="max3B"),
        pytest.param(2**21, 4, id="min4B"),
        pytest.param(2**28 - 1, 4, id="max4B"),
        pytest.param(2**28, 5, id="min5B"),
        pytest.param(2**32 - 1, 5, id="UINT32_MAX"),
    ],
)
def test_unsigned_varint_length_boundaries(value, length):
    encoded = build_unsigned_varint(value)
    assert encoded == _reference_uvarint(value)
    assert len(encoded) == length
    assert read_unsigned_varint(encoded, 0, length) == (value, length)


# -- Kafka's decoder edge rules ----------------------------------------------------------------


def test_varint_reads_from_the_given_position_and_reports_the_next():
    data = b"\xff" + bytes.fromhex("d8 04") + b"\x7f"
    assert read_varint(data, 1, len(data)) == (300, 3)
    assert read_varint(data, 3, len(data)) == (-64, 4)


@pytest.mark.parametrize(
    "hexed",
    [
        pytest.param("80 80 80 80 80", id="5th-byte-0x80"),
        pytest.param("ff ff ff ff ff 01", id="5th-byte-0xff"),
        pytest.param("80 80 80 80 f0 00", id="5th-byte-0xf0"),
    ],
)
def test_varint_fifth_byte_with_high_bit_is_malformed(hexed):
    data = bytes.fromhex(hexed)
    with pytest.raises(Malformed):
        read_varint(data, 0, len(data))
    with pytest.raises(Malformed):
        read_unsigned_varint(data, 0, len(data))


@pytest.mark.parametrize(
    ("hexed", "expected"),
    [
        # 5th byte 0x7f: bit 3 lands on bit 31, bits 4-6 are dropped silently
        pytest.param("ff ff ff ff 7f", 0xFFFFFFFF, id="0x7f"),
        pytest.param("80 80 80 80 70", 0, id="only-dropped-bits"),
        pytest.param("80 80 80 80 10", 0, id="bit4"),
        pytest.param("80 80 80 80 40", 0, id="bit6"),
        pytest.param("81 80 80 80 78", 0x80000001, id="bit3-and-dropped"),
    ],
)
def test_unsigned_varint_fifth_byte_bits_4_to_6_dropped(hexed, expected):
    data = bytes.fromhex(hexed)
    assert read_unsigned_varint(data, 0, len(data)) == (expected, 5)


def test_varint_fifth_byte_dropped_bits_do_not_change_the_signed_value():
    plain = bytes.fromhex("fe ff ff ff 0f")  # INT32_MAX
    noisy = bytes.fromhex("fe ff ff ff 7f")  # same, with bits 4-6 of the 5th byte set
    assert read_varint(plain, 0, 5) == (INT32_MAX, 5)
    assert read_varint(noisy, 0, 5) == (INT32_MAX, 5)


def test_varlong_tenth_byte_with_high_bit_is_malformed():
    data = bytes.fromhex("80 80 80 80 80 80 80 80 80 80 01")
    with pytest.raises(Malformed):
        read_varlong(data, 0, len(data))


def test_varlong_tenth_byte_only_lowest_bit_counts():
    # "fe ff .. ff 01" is INT64_MAX; a 10th byte of 0x7f must read the same (bits 1-6 dropped)
    data = bytes.fromhex("fe ff ff ff ff ff ff ff ff 7f")
    assert read_varlong(data, 0, len(data)) == (INT64_MAX, 10)
    data = bytes.fromhex("80 80 80 80 80 80 80 80 80 7e")
    assert read_varlong(data, 0, len(data)) == (0, 10)


@pytest.mark.parametrize(
    ("hexed", "expected"),
    [
        pytest.param("80 00", 0, id="0-in-2B"),
        pytest.param("81 80 00", -1, id="-1-in-3B"),
        pytest.param("82 80 80 80 00", 1, id="1-in-5B"),
        pytest.param("fe 80 00", 63, id="63-in-3B"),
    ],
)
def test_varint_non_minimal_encodings_accepted(hexed, expected):
    data = bytes.fromhex(hexed)
    assert read_varint(data, 0, len(data)) == (expected, len(data))
    assert read_varlong(data, 0, len(data)) == (expected, len(data))


@pytest.mark.parametrize(
    "hexed",
    [
        pytest.param("", id="empty"),
        pytest.param("80", id="one-continuation"),
        pytest.param("ff ff ff ff", id="four-continuations"),
    ],
)
def test_varint_truncated(hexed):
    data = bytes.fromhex(hexed)
    with pytest.raises(Truncated):
        read_varint(data, 0, len(data))
    with pytest.raises(Truncated):
        read_varlong(data, 0, len(data))


def test_varint_end_bound_is_respected_even_when_buffer_continues():
    data = bytes.fromhex("ac 02")  # 150, but only one byte is ours
    with pytest.raises(Truncated):
        read_varint(data, 0, 1)


def test_varlong_truncated_after_nine_continuations():
    data = bytes.fromhex("ff" * 9)
    with pytest.raises(Truncated):
        read_varlong(data, 0, len(data))


def test_errors_carry_position_and_field():
    data = bytes.fromhex("00 80 80 80 80 80")
    with pytest.raises(Malformed) as info:
        read_varint(data, 1, len(data), field="offset_delta")
    assert info.value.field == "offset_delta"
    assert info.value.position == 5  # the 5th byte of the varint starting at 1
    with pytest.raises(Truncated) as info:
        read_varint(b"\x00\x80", 1, 2, field="key_length")
    assert info.value.position == 2
    assert info.value.field == "key_length"


# -- round trips ------------------------------------------------------------------------------


@given(st.integers(INT32_MIN, INT32_MAX), st.binary(max_size=4))
def test_varint_round_trip(value, trailer):
    encoded = build_varint(value)
    assert encoded == _reference_uvarint(_zigzag(value))
    data = encoded + trailer
    assert read_varint(data, 0, len(data)) == (value, len(encoded))


@given(st.integers(INT64_MIN, INT64_MAX), st.binary(max_size=4))
def test_varlong_round_trip(value, trailer):
    encoded = build_varlong(value)
    assert encoded == _reference_uvarint(_zigzag(value))
    data = encoded + trailer
    assert read_varlong(data, 0, len(data)) == (value, len(encoded))


@given(st.integers(0, 2**32 - 1))
def test_unsigned_varint_round_trip(value):
    encoded = build_unsigned_varint(value)
    assert read_unsigned_varint(encoded, 0, len(encoded)) == (value, len(encoded))


@given(st.binary(max_size=12))
def test_any_bytes_give_a_value_or_a_format_error(data):
    for reader, bits in ((read_varint, 32), (read_varlong, 64), (read_unsigned_varint, 0)):
        try:
            value, pos = reader(data, 0, len(data))
        except FormatError:
            continue
        assert 1 <= pos <= (5 if bits <= 32 else 10)
        if bits:
            assert -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
        else:
            assert 0 <= value < 2**32
