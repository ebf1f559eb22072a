"""The coordinator topics' records against the byte layouts Kafka writes.

Expected bytes are laid out by hand from Kafka's schemas (``OffsetCommitValue.json``,
``GroupMetadataValue.json``, ``TransactionLogValue.json``) and the generated-message rules
(``MessageDataGenerator``): non-flexible strings are int16-length, arrays and bytes
int32-length; flexible versions use unsigned-varint length + 1 and end every struct with
tagged fields. Each version is checked where its layout differs from its neighbour.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.coordinator import group_records, share_records, transaction_records
from kreplica.formats.coordinator.consumer_protocol import decode_assignment, decode_subscription
from kreplica.formats.coordinator.records import (CONSUMER_OFFSETS, SHARE_GROUP_STATE, TRANSACTION_STATE,
                                                  TOPIC_RECORD_TYPES, build_key, build_value, decode_record)
from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.generated_messages import ZERO_UUID, Field, Message, decode, default_of, encode, uuid_text


def s16(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def compact(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


KEY_V1 = struct.pack(">h", 1) + s16("g") + s16("orders") + struct.pack(">i", 3)


def test_offset_commit_key_is_group_topic_partition():
    rec = decode_record(CONSUMER_OFFSETS, KEY_V1, None)
    assert (rec.record_type, rec.name, rec.key) == (1, "offset_commit", {"group": "g", "topic": "orders", "partition": 3})
    assert rec.tombstone and rec.value_version is None
    assert build_key(CONSUMER_OFFSETS, 1, rec.key) == KEY_V1


@pytest.mark.parametrize("version, body, expected", [
    # v0: offset, metadata, commit timestamp
    (0, struct.pack(">q", 42) + s16("m") + struct.pack(">q", 1000),
     {"offset": 42, "leader_epoch": -1, "metadata": "m", "commit_timestamp": 1000, "expire_timestamp": -1,
      "topic_id": ZERO_UUID}),
    # v1 adds the explicit expire timestamp
    (1, struct.pack(">q", 42) + s16("") + struct.pack(">qq", 1000, 2000),
     {"offset": 42, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1000, "expire_timestamp": 2000,
      "topic_id": ZERO_UUID}),
    # v2 drops it again
    (2, struct.pack(">q", 42) + s16("") + struct.pack(">q", 1000),
     {"offset": 42, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1000, "expire_timestamp": -1,
      "topic_id": ZERO_UUID}),
    # v3 adds the leader epoch after the offset (KIP-320)
    (3, struct.pack(">qi", 42, 7) + s16("") + struct.pack(">q", 1000),
     {"offset": 42, "leader_epoch": 7, "metadata": "", "commit_timestamp": 1000, "expire_timestamp": -1,
      "topic_id": ZERO_UUID}),
    # v4 is flexible: compact string and a tagged-field section
    (4, struct.pack(">qi", 42, 7) + compact("x") + struct.pack(">q", 1000) + b"\x00",
     {"offset": 42, "leader_epoch": 7, "metadata": "x", "commit_timestamp": 1000, "expire_timestamp": -1,
      "topic_id": ZERO_UUID}),
    # 4.x tags v4 with the topic's id (tag 0)
    (4, struct.pack(">qi", 42, 7) + compact("x") + struct.pack(">q", 1000) + b"\x01\x00\x10" + bytes(range(16)),
     {"offset": 42, "leader_epoch": 7, "metadata": "x", "commit_timestamp": 1000, "expire_timestamp": -1,
      "topic_id": uuid_text(bytes(range(16)))}),
])
def test_offset_commit_value_every_version(version, body, expected):
    value = struct.pack(">h", version) + body
    rec = decode_record(CONSUMER_OFFSETS, KEY_V1, value)
    assert rec.value_version == version and rec.value == expected
    assert build_value(CONSUMER_OFFSETS, 1, version, expected) == value


def test_flexible_value_keeps_an_unknown_tagged_field_and_reads_on():
    body = struct.pack(">qi", 42, 7) + compact("") + struct.pack(">q", 1000) + b"\x01" + b"\x05\x02ab"
    rec = decode_record(CONSUMER_OFFSETS, KEY_V1, struct.pack(">h", 4) + body)
    assert rec.value["offset"] == 42 and rec.value["_unknown_tags"] == {5: b"ab"}


def _member(version: int) -> bytes:
    out = s16("m-1")
    if version >= 3:
        out += struct.pack(">h", -1)               # group instance id: null
    out += s16("client") + s16("/10.0.0.1")
    if version >= 1:
        out += struct.pack(">i", 300000)           # rebalance timeout
    out += struct.pack(">i", 45000)                # session timeout
    sub = struct.pack(">h", 0) + struct.pack(">i", 1) + s16("orders") + struct.pack(">i", -1)
    asg = struct.pack(">h", 0) + struct.pack(">i", 1) + s16("orders") + struct.pack(">ii", 1, 3) + struct.pack(">i", -1)
    return out + struct.pack(">i", len(sub)) + sub + struct.pack(">i", len(asg)) + asg


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_group_metadata_value_non_flexible_versions(version):
    body = s16("consumer") + struct.pack(">i", 5) + s16("range") + s16("m-1")
    if version >= 2:
        body += struct.pack(">q", 1234)
    body += struct.pack(">i", 1) + _member(version)
    key = struct.pack(">h", 2) + s16("g")
    rec = decode_record(CONSUMER_OFFSETS, key, struct.pack(">h", version) + body)
    v = rec.value
    assert (rec.name, v["protocol_type"], v["generation"], v["protocol"], v["leader"]) == \
        ("group_metadata", "consumer", 5, "range", "m-1")
    assert v["current_state_timestamp"] == (1234 if version >= 2 else -1)
    (m,) = v["members"]
    assert m["rebalance_timeout"] == (300000 if version >= 1 else -1) and m["session_timeout"] == 45000
    assert m["group_instance_id"] is None
    assert m["subscription"]["topics"] == ("orders",)
    assert m["assignment"]["assigned_partitions"] == ({"topic": "orders", "partitions": (3,)},)


def test_group_metadata_of_another_protocol_keeps_member_bytes():
    value = {"protocol_type": "connect", "generation": 1, "protocol": "default", "leader": "a",
             "current_state_timestamp": 1, "members": ({"member_id": "a", "client_id": "c", "client_host": "h",
                                                        "rebalance_timeout": 1, "session_timeout": 1,
                                                        "subscription": b"\x00\x01", "assignment": b"\x02"},)}
    raw = build_value(CONSUMER_OFFSETS, 2, 3, value)
    rec = decode_record(CONSUMER_OFFSETS, build_key(CONSUMER_OFFSETS, 2, {"group": "g"}), raw)
    assert rec.value["members"][0]["subscription"] == b"\x00\x01"


def test_group_metadata_null_protocol_type_is_refused_null_protocol_is_not():
    key = struct.pack(">h", 2) + s16("g")
    ok = struct.pack(">h", 0) + s16("") + struct.pack(">i", 0) + struct.pack(">hh", -1, -1) + struct.pack(">i", 0)
    rec = decode_record(CONSUMER_OFFSETS, key, ok)
    assert rec.value["protocol"] is None and rec.value["leader"] is None and rec.value["members"] == ()
    bad = struct.pack(">h", 0) + struct.pack(">h", -1) + ok[4:]
    with pytest.raises(Malformed, match="null value"):
        decode_record(CONSUMER_OFFSETS, key, bad)


def test_transaction_log_value_v0_and_flexible_v1_with_tagged_producer_ids():
    key = struct.pack(">h", 0) + s16("tx-1")
    parts = struct.pack(">i", 1) + s16("orders") + struct.pack(">iii", 2, 0, 1)
    v0 = struct.pack(">h", 0) + struct.pack(">qhib", 9, 3, 60000, 1) + parts + struct.pack(">qq", 20, 10)
    rec = decode_record(TRANSACTION_STATE, key, v0)
    assert rec.key == {"transactional_id": "tx-1"} and rec.name == "transaction_metadata"
    assert rec.value["producer_id"] == 9 and rec.value["producer_epoch"] == 3
    assert transaction_records.TRANSACTION_STATES[rec.value["transaction_status"]] == "Ongoing"
    assert rec.value["transaction_partitions"] == ({"topic": "orders", "partition_ids": (0, 1)},)
    assert (rec.value["previous_producer_id"], rec.value["next_producer_id"]) == (-1, -1)
    v1 = (struct.pack(">h", 1) + struct.pack(">qhib", 9, 3, 60000, 4) + b"\x01"
          + struct.pack(">qq", 20, 10) + b"\x02" + b"\x00\x08" + struct.pack(">q", 8) + b"\x01\x08" + struct.pack(">q", 11))
    rec = decode_record(TRANSACTION_STATE, key, v1)
    assert rec.value["transaction_partitions"] == () and rec.value["client_transaction_version"] == 0
    assert (rec.value["previous_producer_id"], rec.value["next_producer_id"]) == (8, 11)
    assert build_value(TRANSACTION_STATE, 0, 1, rec.value) == v1


def test_unknown_record_type_and_value_version_are_unsupported_not_garbage():
    with pytest.raises(UnsupportedVersion, match="Unknown record type 99"):
        decode_record(CONSUMER_OFFSETS, struct.pack(">h", 99) + s16("g"), None)
    with pytest.raises(UnsupportedVersion, match="OffsetCommitValue version 5"):
        decode_record(CONSUMER_OFFSETS, KEY_V1, struct.pack(">h", 5) + bytes(30))
    # the transaction log has one record type only
    with pytest.raises(UnsupportedVersion):
        decode_record(TRANSACTION_STATE, KEY_V1, None)


def test_bytes_after_the_message_and_short_values_are_errors_with_position():
    value = build_value(CONSUMER_OFFSETS, 1, 3, {"offset": 1, "leader_epoch": 0, "metadata": "", "commit_timestamp": 0})
    with pytest.raises(Malformed, match="byte"):
        decode_record(CONSUMER_OFFSETS, KEY_V1, value + b"\x00", path="p.log", position=61)
    with pytest.raises(Truncated) as exc:
        decode_record(CONSUMER_OFFSETS, KEY_V1, value[:-3], path="p.log", position=61)
    assert exc.value.path == "p.log" and exc.value.position is not None
    with pytest.raises(Truncated, match="version"):
        decode_record(CONSUMER_OFFSETS, KEY_V1, b"\x00")
    with pytest.raises(Malformed, match="needs a key"):
        decode_record(CONSUMER_OFFSETS, None, value)


def test_negative_length_other_than_null_is_refused():
    f = (Field("s", "string", nullable=True),)
    with pytest.raises(Malformed):
        decode(Message("M", 0, None, f), 0, struct.pack(">h", -2))
    assert decode(Message("M", 0, None, f), 0, struct.pack(">h", -1)) == ({"s": None}, 2)


def test_consumer_protocol_newer_version_reads_with_the_newest_layout():
    raw = struct.pack(">h", 9) + struct.pack(">i", 1) + s16("t") + struct.pack(">i", -1) + struct.pack(">i", 0) \
        + struct.pack(">i", 4) + struct.pack(">h", -1) + b"future"
    sub = decode_subscription(raw)
    assert sub["version"] == 9 and sub["topics"] == ("t",) and sub["generation_id"] == 4
    assert decode_assignment(b"")["assigned_partitions"] == ()
    with pytest.raises(FormatError):
        decode_subscription(struct.pack(">h", -1))


def _values(fields, version, draw):
    out = {}
    for f in fields:
        if not f.present(version):
            continue
        out[f.name] = _value(f, f.type, version, draw)
    return out


_INT_RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}


def _value(f, type_, version, draw):
    if f.nullable_at(version) and type_ != "struct" and draw(st.booleans()):
        return None
    if type_ in _INT_RANGES:
        bits = _INT_RANGES[type_]
        return draw(st.integers(-(1 << bits), (1 << bits) - 1))
    if type_ == "uint16":
        return draw(st.integers(0, 0xFFFF))
    if type_ == "bool":
        return draw(st.booleans())
    if type_ == "uuid":
        return "AAAAAAAAAAAAAAAAAAAAAQ"
    if type_ == "string":
        return draw(st.text(max_size=5))
    if type_ == "bytes":
        return draw(st.binary(max_size=5))
    if type_ == "struct":
        return _values(f.fields, version, draw)
    inner = type_[2:]
    n = draw(st.integers(0, 2))
    if inner:
        return tuple(_value(Field(f.name, inner), inner, version, draw) for _ in range(n))
    return tuple(_values(f.fields, version, draw) for _ in range(n))


ALL = [(topic, t, v) for topic, types in TOPIC_RECORD_TYPES.items() for t, (_n, _k, vs) in types.items()
       for v in range(vs.max_version + 1)]


@pytest.mark.parametrize("topic, record_type, version", ALL)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_type_and_version_round_trips(topic, record_type, version, data):
    _name, key_schema, value_schema = TOPIC_RECORD_TYPES[topic][record_type]
    key = _values(key_schema.fields, 0, data.draw)
    value = _values(value_schema.fields, version, data.draw)
    raw_key = build_key(topic, record_type, key)
    raw_value = build_value(topic, record_type, version, value)
    rec = decode_record(topic, raw_key, raw_value)
    assert rec.key == key
    flexible = value_schema.flexible(version)
    expected = {f.name: (value[f.name] if f.present(version) and (f.tag is None or flexible) else default_of(f))
                for f in value_schema.fields}
    if record_type == group_records.GROUP_METADATA:
        assert rec.value["members"] == tuple(rec.value["members"])   # expansion is best effort
        expected.pop("members")
        got = {k: v for k, v in rec.value.items() if k != "members"}
    else:
        got = rec.value
    assert got == expected
    assert encode(value_schema, version, rec.value if record_type != group_records.GROUP_METADATA else value) \
        == raw_value[2:]


def test_schema_tables_cover_kafkas_record_types():
    # GroupCoordinatorRecordSerde: 0-15 (trunk), 16 ConsumerGroupRegularExpression (4.0), the
    # streams group's 17 and 19-23 (4.4.0's CoordinatorRecordType: 18 was dropped before release)
    assert sorted(group_records.RECORD_TYPES) == [*range(18), 19, 20, 21, 22, 23]
    assert sorted(share_records.RECORD_TYPES) == [0, 1]
    assert TOPIC_RECORD_TYPES[SHARE_GROUP_STATE] is share_records.RECORD_TYPES
