"""Which records ``inspect-log --records`` decodes, from the partition directory's name, and the
findings of those that do not decode: counted in the segment's totals, placed after the batch's
records, and never a crash."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.analysis.inspect.inspect_log import InspectOptions, SegmentSummary, inspect_groups
from kreplica.analysis.inspect.internal_records import DecodedRecord, record_decoder
from kreplica.formats.checksums import crc32
from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, CoordinatorRecord, build_key, build_value
from kreplica.formats.findings import Finding
from kreplica.formats.log import legacy_records
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.model.logdir.segments import find_segment_groups, find_segments
from kreplica.report.schemas.internal_records import decoded_object
from kreplica.report.output.formats import Payload
from kreplica.report.output.payload import encoder
from tests.builders.internal_topics import SEGMENT, write_partition

DECODING_KINDS = {"coordinator_invalid_record", "coordinator_unknown_record", "kraft_invalid_record",
                  "kraft_unknown_record", "remote_log_metadata_invalid_record", "remote_log_metadata_unknown_record"}
KEY = build_key(CONSUMER_OFFSETS, 1, {"group": "g", "topic": "t", "partition": 0})
VALUE = build_value(CONSUMER_OFFSETS, 1, 3, {"offset": 5, "leader_epoch": 1, "metadata": "", "commit_timestamp": 9})


def events_of(path: Path, **options) -> list:
    return list(inspect_groups(find_segment_groups([str(path)]), InspectOptions(records=True, **options)))


@pytest.mark.parametrize(("topic", "decodes"), [
    pytest.param("__consumer_offsets", True, id="consumer-offsets"),
    pytest.param("__transaction_state", True, id="transaction-state"),
    pytest.param("__share_group_state", True, id="share-group-state"),
    pytest.param("__cluster_metadata", True, id="cluster-metadata"),
    pytest.param("__remote_log_metadata", True, id="remote-log-metadata"),
    pytest.param("consumer_offsets", False, id="look-alike"),
    pytest.param(None, False, id="no-topic"),
])
def test_only_the_internal_topics_are_decoded(topic, decodes) -> None:
    assert (record_decoder(topic) is not None) == decodes


@pytest.mark.parametrize(("where", "topic"), [
    pytest.param("__consumer_offsets-12", "__consumer_offsets", id="partition-dir"),
    pytest.param("__consumer_offsets-12.0123456789abcdef0123456789abcdef-delete", "__consumer_offsets",
                 id="deleted-dir"),
    pytest.param("offsets", None, id="not-a-partition-name"),
])
def test_the_topic_comes_from_the_directory_name(tmp_path, where, topic) -> None:
    write_partition(tmp_path / "logdir" / where, [(KEY, VALUE)])
    for path in (tmp_path / "logdir", tmp_path / "logdir" / where, tmp_path / "logdir" / where / SEGMENT):
        (group,) = find_segments([str(path)]).groups
        assert group.topic == topic, path


def test_a_kraft_snapshot_is_metadata_wherever_it_lies_and_stdin_has_no_topic(tmp_path) -> None:
    write_partition(tmp_path / "x", [(None, b"\x01\x14\x00\x00")])   # a NoOpRecord
    (tmp_path / "x" / SEGMENT).rename(tmp_path / "bootstrap.checkpoint")
    assert [g.topic for g in find_segments([str(tmp_path / "bootstrap.checkpoint"), "-"]).groups] == [
        "__cluster_metadata", None]


def test_decoded_records_are_counted_and_filtered_like_records(tmp_path) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(KEY, VALUE)] * 4)
    events = events_of(tmp_path / f"{CONSUMER_OFFSETS}-0", first_offset=1, last_offset=2)
    decoded = [e for e in events if isinstance(e, DecodedRecord)]
    assert [d.offset for d in decoded] == [1, 2]
    assert all(isinstance(d.decoded, CoordinatorRecord) and d.decoded.value["offset"] == 5 for d in decoded)
    (summary,) = [e for e in events if isinstance(e, SegmentSummary)]
    assert (summary.records, summary.findings, summary.errors) == (4, 0, 0)


def test_findings_cover_records_the_filters_leave_out(tmp_path) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(KEY, VALUE), (KEY, VALUE + b"\x00")])
    events = events_of(tmp_path / f"{CONSUMER_OFFSETS}-0", last_offset=0)
    assert [e.kind for e in events if isinstance(e, Finding)] == ["coordinator_invalid_record"]
    (summary,) = [e for e in events if isinstance(e, SegmentSummary)]
    assert (summary.findings, summary.errors) == (1, 1)


def test_decode_internal_off_yields_plain_records(tmp_path) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(KEY, VALUE)])
    events = events_of(tmp_path / f"{CONSUMER_OFFSETS}-0", decode_internal=False)
    assert [type(e) for e in events if isinstance(e, (Record, DecodedRecord))] == [Record]


def _legacy_message_with_unreadable_value(offset: int) -> bytes:
    """A magic 1 message (Kafka 0.10's __consumer_offsets) whose value length runs past its end,
    its CRC right: Kafka's iterator yields it and throws only when ``value()`` is read."""
    entry = bytearray(legacy_records.build_message(offset, KEY, VALUE, magic=1, timestamp=7))
    value_length_at = 12 + 4 + 2 + 8 + 4 + len(KEY)   # prefix, crc, magic+attributes, timestamp, key
    struct.pack_into(">i", entry, value_length_at, 10_000)
    struct.pack_into(">I", entry, 12, crc32(bytes(entry[16:])))
    return bytes(entry)


def test_a_legacy_message_whose_value_cannot_be_read_is_not_taken_for_a_tombstone(tmp_path) -> None:
    part = tmp_path / f"{CONSUMER_OFFSETS}-0"
    part.mkdir()
    good = legacy_records.build_message(0, KEY, build_value(CONSUMER_OFFSETS, 1, 1, {
        "offset": 3, "metadata": "", "commit_timestamp": 9, "expire_timestamp": 99}), magic=1, timestamp=7)
    (part / SEGMENT).write_bytes(good + _legacy_message_with_unreadable_value(1))
    events = [e for e in events_of(part) if isinstance(e, (DecodedRecord, Finding))]
    first, second, finding = events
    assert first.decoded.value_version == 1 and first.decoded.value["expire_timestamp"] == 99
    assert (second.offset, second.decoded, second.record.value) == (1, None, None)
    assert finding.kind == "invalid_record"


_RECORD_TYPE = st.integers(-2, 20).map(lambda t: struct.pack(">h", t))
_KEYS = st.one_of(st.none(), st.binary(max_size=40), st.tuples(_RECORD_TYPE, st.binary(max_size=40)).map(b"".join),
                  st.just(KEY).flatmap(lambda k: st.integers(0, len(k)).map(lambda n: k[:n])))
_VALUES = st.one_of(st.none(), st.binary(max_size=60), st.integers(0, len(VALUE)).map(lambda n: VALUE[:n]),
                    st.tuples(st.integers(0, 6).map(lambda v: struct.pack(">h", v)), st.binary(max_size=60)).map(b"".join))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(topic=st.sampled_from(["__consumer_offsets", "__transaction_state", "__share_group_state",
                              "__cluster_metadata", "__remote_log_metadata"]),
       key=_KEYS, value=_VALUES, control=st.booleans(), control_type=st.one_of(st.none(), st.integers(-1, 8)))
def test_any_bytes_decode_or_give_a_finding_never_an_exception(topic, key, value, control, control_type) -> None:
    batch = RecordBatch(path="p", position=0, size=80, magic=2, base_offset=0, last_offset=0, count=1,
                        partition_leader_epoch=0, crc=0, crc_valid=True, attributes=control << 5, compression=0,
                        timestamp_type=0, base_timestamp=0, max_timestamp=0, producer_id=-1, producer_epoch=-1,
                        base_sequence=-1, is_transactional=False, is_control=control, delete_horizon_ms=None)
    record = Record(0, 0, 0, -1, key, value, (), control_type if control else None)
    decoded, findings = record_decoder(topic)(record, batch)
    assert all(f.kind in DECODING_KINDS for f in findings)
    assert decoded is not None or findings or (control and topic != "__cluster_metadata")
    assert not (decoded is not None and control and topic == "__remote_log_metadata")
    json.dumps(decoded_object(decoded, encoder(Payload.base64)), allow_nan=False)
