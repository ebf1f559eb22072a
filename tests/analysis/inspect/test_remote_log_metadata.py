"""``inspect-log --records --decode internal`` on a ``__remote_log_metadata`` partition: each record
decoded into its named fields (``RemoteLogMetadataSerde``'s reading), each one Kafka's
deserializer refuses a finding naming the file and the batch's byte position, never an exception."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.cli.main import app
from kreplica.formats.findings import Finding
from kreplica.formats.remote_storage.metadata_records import RemoteLogMetadataRecord
from tests.analysis.inspect.test_internal_records import events_of
from tests.builders.internal_topics import SEGMENT, write_partition
from tests.formats.remote_storage.test_metadata_records import (PARTITION_DELETE, SEGMENT_ID, SEGMENT_METADATA,
                                                                SEGMENT_UPDATE, TOPIC_ID)
from kreplica.formats.generated_messages import uuid_text

TOPIC_DIR = "__remote_log_metadata-0"
#: a record whose state Kafka has no name for (RemoteLogSegmentState.forId(7) is null)
BAD_STATE = SEGMENT_UPDATE[:-2] + b"\x07\x00"


def _partition(tmp_path, values):
    return write_partition(tmp_path / TOPIC_DIR, [(None, v) for v in values])


def test_every_record_type_decodes_into_named_fields(tmp_path) -> None:
    events = events_of(_partition(tmp_path, [SEGMENT_METADATA, SEGMENT_UPDATE, PARTITION_DELETE]))
    assert not [e for e in events if isinstance(e, Finding)]
    decoded = [e.decoded for e in events if isinstance(e, DecodedRecord)]
    assert [d.name for d in decoded] == ["RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
                                         "RemotePartitionDeleteMetadataRecord"]
    assert all(isinstance(d, RemoteLogMetadataRecord) for d in decoded)


def test_a_tombstone_an_unknown_type_and_an_unknown_state_are_findings_at_their_batch(tmp_path) -> None:
    unknown_key = b"\x01\x09\x00"
    path = _partition(tmp_path, [None, unknown_key, BAD_STATE, SEGMENT_UPDATE])
    events = events_of(path)
    findings = [e for e in events if isinstance(e, Finding)]
    assert [(f.kind, f.details["offset"]) for f in findings] == [
        ("remote_log_metadata_invalid_record", 0), ("remote_log_metadata_unknown_record", 1),
        ("remote_log_metadata_invalid_record", 2)]
    assert all(f.path == str(path / SEGMENT) and f.position >= 0 for f in findings)
    decoded = {e.offset: e.decoded for e in events if isinstance(e, DecodedRecord)}
    # the unknown state is kept raw, decoded; the counter-case (state 1) has no finding
    assert (decoded[0], decoded[1], decoded[2].state, decoded[3].state_name) == (None, None, 7,
                                                                                 "COPY_SEGMENT_FINISHED")


def _run(path, fmt):
    return CliRunner().invoke(app, ["inspect-log", "--records", str(path), "-f", fmt], env={"COLUMNS": "100"})


def test_the_decoded_member_is_the_json_kafkas_converter_writes(tmp_path) -> None:
    result = _run(_partition(tmp_path, [SEGMENT_METADATA, SEGMENT_UPDATE]), "ndjson")
    assert result.exit_code == 0, result.output
    first, second = [o["decoded"] for o in map(json.loads, result.stdout.splitlines()) if o["type"] == "record"]
    assert first == {
        "record_type": "remote_log_segment_metadata_record", "record_type_id": 0, "key": None, "value_version": 0,
        "value": {"remote_log_segment_id": {"topic_id_partition": {"name": "orders", "id": uuid_text(TOPIC_ID),
                                                                   "partition": 3},
                                            "id": uuid_text(SEGMENT_ID)},
                  "start_offset": 100, "end_offset": 199, "broker_id": 2, "max_timestamp_ms": 1_700_000_000_000,
                  "event_timestamp_ms": 1_700_000_000_500,
                  "segment_leader_epochs": [{"leader_epoch": 4, "offset": 100}, {"leader_epoch": 5, "offset": 150}],
                  "segment_size_in_bytes": 4096, "custom_metadata": None, "remote_log_segment_state": 0,
                  "txn_index_empty": True}}
    assert second["value"]["custom_metadata"] == "yv4="   # --payload base64 of ca fe
    assert "txn_index_empty" not in second["value"]       # the update record has no such field


def test_text_names_the_state_and_a_bad_record_exits_1(tmp_path) -> None:
    result = _run(_partition(tmp_path, [SEGMENT_UPDATE, None]), "text")
    assert result.exit_code == 1, result.output
    assert '"remote_log_segment_state":"COPY_SEGMENT_FINISHED"' in result.stdout
    assert "remote_log_metadata_invalid_record" in result.stdout
