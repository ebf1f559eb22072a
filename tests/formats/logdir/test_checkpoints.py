"""Checkpoint files (spec §8.1-§8.3): TV14 byte-exact both ways, and every rejection rule of
Kafka's CheckpointReadBuffer and formatters as its own case, with Kafka's message text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats._java import java_parse_int, java_parse_long, java_split_whitespace, java_trim
from kreplica.formats.logdir.checkpoint_file import CheckpointVersionMismatch, build_checkpoint, parse_checkpoint
from kreplica.formats.logdir.leader_epoch_checkpoint import (
    EpochEntryLine,
    build_leader_epoch_checkpoint,
    parse_leader_epoch_checkpoint,
)
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint, parse_offset_checkpoint
from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion

P = "/data/kafka/recovery-point-offset-checkpoint"

# TV14 (spec §15), quoted.
TV14_RECOVERY = b"0\n2\norders 0 102\norders 1 0\n"
TV14_EPOCHS = b"0\n2\n0 0\n7 100\n"


def test_tv14_recovery_point_checkpoint():
    assert parse_offset_checkpoint(TV14_RECOVERY, path=P) == {("orders", 0): 102, ("orders", 1): 0}
    assert build_offset_checkpoint({("orders", 0): 102, ("orders", 1): 0}) == TV14_RECOVERY


def test_tv14_leader_epoch_checkpoint():
    assert parse_leader_epoch_checkpoint(TV14_EPOCHS, path="l") == [
        EpochEntryLine(epoch=0, start_offset=0, line=3, position=4),
        EpochEntryLine(epoch=7, start_offset=100, line=4, position=8),
    ]
    assert build_leader_epoch_checkpoint([(0, 0), (7, 100)]) == TV14_EPOCHS


def test_generic_reader_returns_split_parts():
    assert parse_checkpoint(TV14_RECOVERY, path=P, expected_version=0, fields=3) == [
        ["orders", "0", "102"], ["orders", "1", "0"]]
    assert build_checkpoint([("a", 1, 2)], version=3) == b"3\n1\na 1 2\n"


# Accepted inputs: (content, expected offsets)
ACCEPTED = [
    pytest.param(b"", {}, id="empty-file"),
    pytest.param(b"0\n", {}, id="only-version-line"),
    pytest.param(b"0", {}, id="only-version-no-newline"),
    pytest.param(b"0\n0\n", {}, id="zero-entries"),
    pytest.param(b"0\n1\norders 0 5", {("orders", 0): 5}, id="no-final-newline"),
    pytest.param(b"0\r\n1\r\norders 0 5\r\n", {("orders", 0): 5}, id="crlf"),
    pytest.param(b"0\r1\rorders 0 5\r", {("orders", 0): 5}, id="cr-only"),
    pytest.param(b"0\n1\norders 0 5  \t", {("orders", 0): 5}, id="trailing-whitespace-tolerated"),
    pytest.param(b"0\n1\norders\t0 \x0b 5", {("orders", 0): 5}, id="java-whitespace-runs"),
    pytest.param(b"0\n2\norders 0 5\norders 0 9\n", {("orders", 0): 9}, id="later-line-wins"),
    pytest.param(b"+0\n+1\norders +1 +5\n", {("orders", 1): 5}, id="plus-sign-parses"),
    pytest.param(b"0\n1\norders -1 -5\n", {("orders", -1): -5}, id="negatives-returned-as-written"),
    pytest.param("0\n1\norders \u0661 \u0662\n".encode(), {("orders", 1): 2},
                 id="unicode-decimal-digits-parse-like-java"),
    pytest.param(b"0\n1\nmy.topic-with_dash 2147483647 9223372036854775807\n",
                 {("my.topic-with_dash", 2147483647): 9223372036854775807}, id="max-values"),
]


@pytest.mark.parametrize("content, expected", ACCEPTED)
def test_accepted(content, expected):
    assert parse_offset_checkpoint(content, path=P) == expected


# Rejected inputs: (content, reason (exact or prefix), byte position of the offending line)
REJECTED = [
    pytest.param(b"0 \n0\n", f"Malformed line in checkpoint file [{P}]: 0 ", 0,
                 id="version-with-trailing-space"),
    pytest.param(b" 0\n0\n", f"Malformed line in checkpoint file [{P}]:  0", 0,
                 id="version-with-leading-space"),
    pytest.param(b"x\n", f"Malformed line in checkpoint file [{P}]: x", 0, id="version-not-a-number"),
    pytest.param(b"\n", f"Malformed line in checkpoint file [{P}]: ", 0, id="blank-version-line"),
    pytest.param(b"1_0\n", f"Malformed line in checkpoint file [{P}]: 1_0", 0,
                 id="underscore-is-not-java"),
    pytest.param(b"0\n2 \norders 0 1\n", f"Malformed line in checkpoint file [{P}]: 2 ", 2,
                 id="count-with-trailing-space"),
    pytest.param(b"0\nx\n", f"Malformed line in checkpoint file [{P}]: x", 2, id="count-not-a-number"),
    pytest.param(b"0\n2147483648\n", f"Malformed line in checkpoint file [{P}]: 2147483648", 2,
                 id="count-overflows-int"),
    pytest.param(b"0\n-1\n", "Illegal Capacity: -1", 2, id="negative-count"),
    pytest.param(b"0\n1\n orders 0 5\n", f"Malformed line in checkpoint file [{P}]:  orders 0 5", 4,
                 id="leading-space-entry"),
    pytest.param(b"0\n1\norders 0 5\n\n", f"Malformed line in checkpoint file [{P}]: ", 15,
                 id="trailing-blank-line"),
    pytest.param(b"0\n1\norders 0\n", f"Malformed line in checkpoint file [{P}]: orders 0", 4,
                 id="too-few-fields"),
    pytest.param(b"0\n1\norders 0 5 6\n", f"Malformed line in checkpoint file [{P}]: orders 0 5 6", 4,
                 id="too-many-fields"),
    pytest.param(b"0\n3\norders 0 102\n",
                 f"Expected [3] entries in checkpoint file [{P}], but found only [1]", 2,
                 id="fewer-entries-than-count"),
    pytest.param(b"0\n1\norders 0 1\norders 1 2\n",
                 f"Expected [1] entries in checkpoint file [{P}], but found only [2]", 2,
                 id="more-entries-than-count"),
    pytest.param(b"0\n1\norders x 5\n", 'java.lang.NumberFormatException: For input string: "x"', 4,
                 id="partition-not-a-number"),
    pytest.param(b"0\n1\norders 0 5x\n", 'java.lang.NumberFormatException: For input string: "5x"', 4,
                 id="offset-not-a-number"),
    pytest.param(b"0\n1\norders 2147483648 5\n",
                 'java.lang.NumberFormatException: For input string: "2147483648"', 4,
                 id="partition-overflows-int"),
    pytest.param(b"0\n5\norders 0 1\norders x 5\n", 'java.lang.NumberFormatException', 15,
                 id="number-error-before-count-check"),
    pytest.param(b"0\n1\norders \xff 5\n", "Input length = 1", 11, id="invalid-utf8"),
]


@pytest.mark.parametrize("content, reason, position", REJECTED)
def test_rejected(content, reason, position):
    with pytest.raises(Malformed) as info:
        parse_offset_checkpoint(content, path=P)
    assert info.value.reason.startswith(reason)
    assert info.value.position == position
    assert info.value.path == P


@pytest.mark.parametrize("content, version", [
    pytest.param(b"1\n0\n", 1, id="tv14-version-1"),
    pytest.param(b"-3\n0\n", -3, id="negative-version"),
])
def test_version_mismatch(content, version):
    with pytest.raises(CheckpointVersionMismatch) as info:
        parse_offset_checkpoint(content, path=P)
    assert info.value.reason == (f"Unrecognised version:{version}, expected version: 0 "
                                 f"in checkpoint file at: {P}")
    assert isinstance(info.value, Malformed) and isinstance(info.value, UnsupportedVersion)
    assert info.value.position == 0


@pytest.mark.parametrize("content, reason", [
    pytest.param(b"0\n1\n0 0 0\n", "Malformed line in checkpoint file [l]: 0 0 0", id="three-fields"),
    pytest.param(b"0\n1\n0\n", "Malformed line in checkpoint file [l]: 0", id="one-field"),
    pytest.param(b"0\n1\nx 0\n", 'java.lang.NumberFormatException: For input string: "x"', id="bad-epoch"),
    pytest.param(b"0\n1\n0 9223372036854775808\n", "java.lang.NumberFormatException", id="offset-overflow"),
    pytest.param(b"1\n1\n0 0\n", "Unrecognised version:1, expected version: 0 in checkpoint file at: l",
                 id="version-1"),
])
def test_leader_epoch_rejections(content, reason):
    with pytest.raises(Malformed) as info:
        parse_leader_epoch_checkpoint(content, path="l")
    assert info.value.reason.startswith(reason)


def test_leader_epoch_lines_are_not_repaired():
    content = b"0\n4\n5 100\n3 50\n-1 7\n5 100\n"
    got = parse_leader_epoch_checkpoint(content, path="l")
    assert [(e.epoch, e.start_offset) for e in got] == [(5, 100), (3, 50), (-1, 7), (5, 100)]
    assert [e.line for e in got] == [3, 4, 5, 6]
    assert [e.position for e in got] == [4, 10, 15, 20]


@pytest.mark.parametrize("text, value", [
    pytest.param("0", 0, id="zero"), pytest.param("-2147483648", -2**31, id="min"),
    pytest.param("+7", 7, id="plus"), pytest.param("007", 7, id="leading-zeros"),
    pytest.param("\uff11\uff12", 12, id="fullwidth-digits"),
])
def test_java_parse_int_accepts(text, value):
    assert java_parse_int(text) == value


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"), pytest.param("-", id="sign-only"), pytest.param("+", id="plus-only"),
    pytest.param(" 1", id="space"), pytest.param("1_000", id="underscore"),
    pytest.param("2147483648", id="overflow"), pytest.param("0x10", id="hex"),
    pytest.param("\U0001d7ce", id="supplementary-digit-is-two-utf16-units"),
    pytest.param("1.0", id="decimal-point"),
])
def test_java_parse_int_refuses(text):
    with pytest.raises(ValueError, match="For input string"):
        java_parse_int(text)


def test_java_parse_long_range():
    assert java_parse_long("-9223372036854775808") == -2**63
    with pytest.raises(ValueError):
        java_parse_long("9223372036854775808")


@pytest.mark.parametrize("text, parts", [
    pytest.param("a b", ["a", "b"], id="simple"),
    pytest.param(" a b", ["", "a", "b"], id="leading-empty-kept"),
    pytest.param("a b  ", ["a", "b"], id="trailing-empties-dropped"),
    pytest.param("", [""], id="empty-is-one-part"),
    pytest.param("   ", [], id="only-whitespace-is-no-parts"),
    pytest.param("a\u00a0b", ["a\u00a0b"], id="nbsp-is-not-java-whitespace"),
])
def test_java_split_whitespace(text, parts):
    assert java_split_whitespace(text) == parts


def test_java_trim():
    assert java_trim("\x00 \t1 \x1f") == "1"
    assert java_trim("\u00a01\u00a0") == "\u00a01\u00a0"


topic_st = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                   min_size=1, max_size=30)


@given(st.dictionaries(st.tuples(topic_st, st.integers(-2**31, 2**31 - 1)),
                       st.integers(-2**63, 2**63 - 1), max_size=20))
def test_offset_checkpoint_round_trip(offsets):
    assert parse_offset_checkpoint(build_offset_checkpoint(offsets), path=P) == offsets


@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)), max_size=20))
def test_leader_epoch_round_trip(entries):
    got = parse_leader_epoch_checkpoint(build_leader_epoch_checkpoint(entries), path="l")
    assert [(e.epoch, e.start_offset) for e in got] == entries


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes(data):
    for parse in (lambda d: parse_offset_checkpoint(d, path=P),
                  lambda d: parse_leader_epoch_checkpoint(d, path=P),
                  lambda d: parse_checkpoint(d, path=P, expected_version=0, fields=2)):
        try:
            parse(data)
        except FormatError as exc:
            assert exc.position is not None and 0 <= exc.position <= len(data)


@settings(max_examples=300)
@given(st.dictionaries(st.tuples(topic_st, st.integers(0, 100)), st.integers(0, 10**6), max_size=5),
       st.data())
def test_mutated(offsets, data):
    raw = bytearray(build_offset_checkpoint(offsets))
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(
            st.sampled_from([0x20, 0x0A, 0x0D, 0x09, 0x30, 0x2D, 0x2B, 0x78, 0xFF, 0x00]))
    try:
        result = parse_offset_checkpoint(bytes(raw), path=P)
    except FormatError:
        pass
    else:
        assert isinstance(result, dict)
