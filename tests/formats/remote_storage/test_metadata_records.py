"""``__remote_log_metadata`` records: byte layouts written out from Kafka's schemas
(``storage/src/main/resources/message/Remote*.json`` of the 4.4.0 jar) and
``AbstractApiMessageSerde``'s frame, each rule with its counter-case. Kafka's own classes writing
every type at every version are ``tests/realkafka/test_record_coverage.py``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.generated_messages import uuid_text
from kreplica.formats.remote_storage.metadata_records import (
    COPY_SEGMENT_FINISHED, PARTITION_DELETE_STATES, RECORDS, SEGMENT_STATES, build_remote_log_metadata,
    parse_remote_log_metadata)

TOPIC_ID = bytes(range(16))
SEGMENT_ID = bytes(range(16, 32))


def _i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)


def _i64(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)


#: TopicIdPartitionEntry "orders"/TOPIC_ID/3: compact string (length + 1), uuid, int32, no tags
TOPIC_ID_PARTITION = b"\x07orders" + TOPIC_ID + _i32(3) + b"\x00"
#: RemoteLogSegmentIdEntry: the topic partition struct, the segment uuid, no tags
SEGMENT_ID_ENTRY = TOPIC_ID_PARTITION + SEGMENT_ID + b"\x00"

#: frame version 1, api key 0, version 0; RemoteLogSegmentMetadataRecord's fields in schema order
SEGMENT_METADATA = (b"\x01\x00\x00" + SEGMENT_ID_ENTRY
                    + _i64(100) + _i64(199)            # StartOffset, EndOffset
                    + _i32(2)                          # BrokerId
                    + _i64(1_700_000_000_000)          # MaxTimestampMs
                    + _i64(1_700_000_000_500)          # EventTimestampMs
                    + b"\x03" + _i32(4) + _i64(100) + b"\x00" + _i32(5) + _i64(150) + b"\x00"   # 2 epochs
                    + _i32(4096)                       # SegmentSizeInBytes
                    + b"\x00"                          # CustomMetadata: null (compact, 0)
                    + b"\x00"                          # RemoteLogSegmentState COPY_SEGMENT_STARTED
                    + b"\x01" + b"\x00\x01\x01")       # tagged fields: 1, TxnIndexEmpty (tag 0, size 1) true

#: api key 1: the segment id, BrokerId, EventTimestampMs, CustomMetadata 2 bytes, state 1
SEGMENT_UPDATE = (b"\x01\x01\x00" + SEGMENT_ID_ENTRY + _i32(2) + _i64(7) + b"\x03\xca\xfe" + b"\x01" + b"\x00")
#: api key 2: the topic partition, BrokerId, EventTimestampMs, RemotePartitionDeleteState 0 (MARKED)
PARTITION_DELETE = b"\x01\x02\x00" + TOPIC_ID_PARTITION + _i32(9) + _i64(8) + b"\x00" + b"\x00"


def test_segment_metadata_as_the_schema_lays_it_out() -> None:
    r = parse_remote_log_metadata(SEGMENT_METADATA)
    assert (r.api_key, r.version, r.name) == (0, 0, "RemoteLogSegmentMetadataRecord")
    assert r.data == {
        "remote_log_segment_id": {"topic_id_partition": {"name": "orders", "id": uuid_text(TOPIC_ID), "partition": 3},
                                  "id": uuid_text(SEGMENT_ID)},
        "start_offset": 100, "end_offset": 199, "broker_id": 2, "max_timestamp_ms": 1_700_000_000_000,
        "event_timestamp_ms": 1_700_000_000_500,
        "segment_leader_epochs": ({"leader_epoch": 4, "offset": 100}, {"leader_epoch": 5, "offset": 150}),
        "segment_size_in_bytes": 4096, "custom_metadata": None, "remote_log_segment_state": 0,
        "txn_index_empty": True}
    assert (r.state, r.state_name) == (0, "COPY_SEGMENT_STARTED")
    assert build_remote_log_metadata(0, 0, r.data) == SEGMENT_METADATA


def test_without_the_tag_txn_index_empty_is_false_as_3x_wrote_it() -> None:
    # 3.x's schema has no TxnIndexEmpty: its bytes end with an empty tagged-field section
    r = parse_remote_log_metadata(SEGMENT_METADATA[:-4] + b"\x00")
    assert r.data["txn_index_empty"] is False


def test_update_and_partition_delete() -> None:
    update = parse_remote_log_metadata(SEGMENT_UPDATE)
    assert (update.name, update.data["custom_metadata"], update.state_name) == (
        "RemoteLogSegmentMetadataUpdateRecord", b"\xca\xfe", "COPY_SEGMENT_FINISHED")
    assert update.data["remote_log_segment_id"]["id"] == uuid_text(SEGMENT_ID)
    delete = parse_remote_log_metadata(PARTITION_DELETE)
    assert (delete.name, delete.data["broker_id"], delete.state, delete.state_name) == (
        "RemotePartitionDeleteMetadataRecord", 9, 0, "DELETE_PARTITION_MARKED")
    assert delete.data["topic_id_partition"]["name"] == "orders"


def test_the_state_ids_are_kafkas() -> None:
    # RemoteLogSegmentState and RemotePartitionDeleteState (storage/api, 4.4.0)
    assert SEGMENT_STATES == {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                              3: "DELETE_SEGMENT_FINISHED"}
    assert PARTITION_DELETE_STATES == {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                                       2: "DELETE_PARTITION_FINISHED"}
    assert {k: (n, v) for k, (n, v, _f) in RECORDS.items()} == {
        0: ("RemoteLogSegmentMetadataRecord", 0), 1: ("RemoteLogSegmentMetadataUpdateRecord", 0),
        2: ("RemotePartitionDeleteMetadataRecord", 0), 3: ("RemoteLogSegmentMetadataSnapshotRecord", 0)}


def test_a_state_kafka_does_not_know_is_kept_raw() -> None:
    r = parse_remote_log_metadata(SEGMENT_UPDATE[:-2] + b"\x04\x00")
    assert (r.state, r.state_name) == (4, None)
    assert parse_remote_log_metadata(SEGMENT_UPDATE[:-2] + bytes([COPY_SEGMENT_FINISHED]) + b"\x00").state_name


@pytest.mark.parametrize(("value", "error", "field"), [
    pytest.param(b"\x00\x00\x00", UnsupportedVersion, "frame version", id="frame-0-the-2.8-preview"),
    pytest.param(b"\x02\x00\x00", UnsupportedVersion, "frame version", id="frame-2"),
    pytest.param(b"\x01\x04\x00", UnsupportedVersion, "type", id="unknown-api-key"),
    pytest.param(b"\x01\x00\x01" + SEGMENT_METADATA[3:], UnsupportedVersion, "version", id="version-1"),
    pytest.param(SEGMENT_METADATA + b"\x00", Malformed, "body", id="garbage-after-the-body"),
    pytest.param(SEGMENT_METADATA[:40], Truncated, None, id="cut-short"),
    pytest.param(b"", Truncated, "frame version", id="empty"),
    pytest.param(None, Malformed, "value", id="tombstone"),
])
def test_what_kafkas_deserializer_refuses_is_an_error_with_its_position(value, error, field) -> None:
    with pytest.raises(error) as caught:
        parse_remote_log_metadata(value, path="p", base=1000)
    assert caught.value.path == "p" and caught.value.position >= 1000
    if field is not None:
        assert caught.value.field == field


def test_the_counter_cases_of_the_refusals_decode() -> None:
    for value in (SEGMENT_METADATA, SEGMENT_UPDATE, PARTITION_DELETE):
        assert parse_remote_log_metadata(value).version == 0


@settings(max_examples=400)
@given(st.one_of(st.binary(max_size=120),
                 st.integers(0, len(SEGMENT_METADATA)).map(lambda n: SEGMENT_METADATA[:n]),
                 st.tuples(st.integers(0, len(SEGMENT_METADATA) - 1), st.integers(0, 255)).map(
                     lambda p: SEGMENT_METADATA[:p[0]] + bytes([p[1]]) + SEGMENT_METADATA[p[0] + 1:])))
def test_any_bytes_give_a_record_or_a_format_error(value) -> None:
    try:
        parse_remote_log_metadata(value)
    except FormatError:
        pass
