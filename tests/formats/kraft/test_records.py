"""KRaft metadata records: the generated-message encoding (compact lengths, tagged fields),
the frame, every record type round-tripping through the writer, control records and snapshot
files, and the property that any bytes give records, findings or a FormatError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.log import default_records
from kreplica.formats.kraft import records as kraft
from kreplica.formats.generated_messages import decode_fields
from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion
from kreplica.formats.findings import Finding

TID = "i0R5fWe7xePgy_14PzXogQ"
DIR = "AAAAAAAAAAAAAAAAAAAAAQ"

SAMPLES = {
    "RegisterBrokerRecord": {"broker_id": 1, "is_migrating_zk_broker": True, "incarnation_id": TID,
                             "broker_epoch": 42,
                             "end_points": ({"name": "PLAINTEXT", "host": "h", "port": 9092, "security_protocol": 0},),
                             "features": ({"name": "metadata.version", "min_supported_version": 1,
                                           "max_supported_version": 20},),
                             "rack": "r1", "fenced": False, "in_controlled_shutdown": True, "log_dirs": (DIR,),
                             "cordoned_log_dirs": (DIR,)},
    "UnregisterBrokerRecord": {"broker_id": 3, "broker_epoch": 9},
    "TopicRecord": {"name": "orders", "topic_id": TID},
    "PartitionRecord": {"partition_id": 2, "topic_id": TID, "replicas": (1, 2, 3), "isr": (1, 2),
                        "removing_replicas": (3,), "adding_replicas": (), "leader": 1,
                        "leader_recovery_state": 1, "leader_epoch": 5, "partition_epoch": 8,
                        "directories": (DIR, DIR, DIR), "eligible_leader_replicas": (3,), "last_known_elr": None},
    "ConfigRecord": {"resource_type": 2, "resource_name": "orders", "name": "min.insync.replicas", "value": None},
    "PartitionChangeRecord": {"partition_id": 2, "topic_id": TID, "isr": (1,), "leader": -1,
                              "replicas": None, "removing_replicas": None, "adding_replicas": (4,),
                              "leader_recovery_state": 1, "eligible_leader_replicas": None,
                              "last_known_elr": None, "directories": None},
    "FenceBrokerRecord": {"id": 2, "epoch": 11},
    "UnfenceBrokerRecord": {"id": 2, "epoch": 11},
    "RemoveTopicRecord": {"topic_id": TID},
    "DelegationTokenRecord": {"owner": "User:a", "requester": "User:b", "renewers": ("User:c",),
                              "issue_timestamp": 1, "max_timestamp": 2, "expiration_timestamp": 3,
                              "token_id": "tok"},
    "UserScramCredentialRecord": {"name": "u", "mechanism": 1, "salt": b"s", "stored_key": b"k",
                                  "server_key": b"v", "iterations": 4096},
    "FeatureLevelRecord": {"name": "metadata.version", "feature_level": 20},
    "ClientQuotaRecord": {"entity": ({"entity_type": "user", "entity_name": None},), "key": "producer_byte_rate",
                          "value": 1024.5, "remove": False},
    "ProducerIdsRecord": {"broker_id": 1, "broker_epoch": 5, "next_producer_id": 1000},
    "BrokerRegistrationChangeRecord": {"broker_id": 1, "broker_epoch": 5, "fenced": -1,
                                       "in_controlled_shutdown": 1, "log_dirs": (DIR,),
                                       "cordoned_log_dirs": ()},
    "AccessControlEntryRecord": {"id": TID, "resource_type": 2, "resource_name": "t", "pattern_type": 3,
                                 "principal": "User:x", "host": "*", "operation": 3, "permission_type": 3},
    "RemoveAccessControlEntryRecord": {"id": TID},
    "NoOpRecord": {},
    "ZkMigrationStateRecord": {"zk_migration_state": 3},
    "RemoveUserScramCredentialRecord": {"name": "u", "mechanism": 2},
    "BeginTransactionRecord": {"name": "create topics"},
    "EndTransactionRecord": {},
    "AbortTransactionRecord": {"reason": None},
    "RemoveDelegationTokenRecord": {"token_id": "tok"},
    "RegisterControllerRecord": {"controller_id": 3000, "incarnation_id": TID, "zk_migration_ready": False,
                                 "end_points": ({"name": "CONTROLLER", "host": "c", "port": 9093,
                                                 "security_protocol": 0},), "features": ()},
    "ClearElrRecord": {"topic_name": "orders"},
    "UnregisterControllerRecord": {"controller_id": 3000},
}


def test_every_record_type_has_a_sample():
    assert set(SAMPLES) == set(kraft.RECORD_KEYS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trip_at_highest_version(name):
    key = kraft.RECORD_KEYS[name]
    version = kraft.METADATA_RECORDS[key][1]
    value = kraft.build_metadata_value(name, version, SAMPLES[name])
    api_key, v, got_name, data, _raw = kraft.parse_metadata_value(value)
    assert (api_key, v, got_name) == (key, version, name)
    assert data == SAMPLES[name]


def test_frame_header_bytes():
    value = kraft.build_metadata_value("TopicRecord", 0, SAMPLES["TopicRecord"])
    # frame version 1, api key 2, version 0, compact string "orders" (len+1 = 7), 16-byte uuid, no tags
    assert value[:4] == b"\x01\x02\x00\x07" and value[4:10] == b"orders"
    assert value[10:26] == kraft.uuid_bytes(TID) and value[26:] == b"\x00"


def test_tagged_fields_written_only_when_not_default():
    plain = kraft.build_metadata_value("PartitionChangeRecord", 0, {"partition_id": 1, "topic_id": TID})
    assert plain.endswith(b"\x00")               # no tagged fields
    with_leader = kraft.build_metadata_value("PartitionChangeRecord", 0,
                                             {"partition_id": 1, "topic_id": TID, "leader": 3})
    # one tagged field: tag 1 (Leader), 4 bytes
    assert with_leader.endswith(b"\x01\x01\x04\x00\x00\x00\x03")
    _k, _v, _n, data, _r = kraft.parse_metadata_value(plain)
    assert data["leader"] == -2 and data["isr"] is None and data["leader_recovery_state"] == -1


def test_older_versions_leave_out_newer_fields():
    v0 = kraft.build_metadata_value("RegisterBrokerRecord", 0, SAMPLES["RegisterBrokerRecord"])
    _k, _v, _n, data, _r = kraft.parse_metadata_value(v0)
    assert data["is_migrating_zk_broker"] is False and data["in_controlled_shutdown"] is False
    assert data["log_dirs"] == () and data["rack"] == "r1"
    # KIP-1066's CordonedLogDirs (v4, tag 1): absent below v4 and null by default, never empty
    assert data["cordoned_log_dirs"] is None
    v3 = kraft.build_metadata_value("RegisterBrokerRecord", 3, SAMPLES["RegisterBrokerRecord"])
    assert kraft.parse_metadata_value(v3)[3]["cordoned_log_dirs"] is None
    assert len(v0) < len(kraft.build_metadata_value("RegisterBrokerRecord", 3, SAMPLES["RegisterBrokerRecord"]))


def test_unknown_tags_are_skipped_by_size():
    value = bytearray(kraft.build_metadata_value("TopicRecord", 0, SAMPLES["TopicRecord"]))
    value[-1:] = b"\x01\x63\x02\xab\xcd"          # one tag 99 of 2 bytes
    _k, _v, _n, data, _r = kraft.parse_metadata_value(bytes(value))
    assert data["name"] == "orders" and data["_unknown_tags"] == {99: b"\xab\xcd"}


@pytest.mark.parametrize("value, error", [
    pytest.param(b"\x00\x02\x00", UnsupportedVersion, id="frame-version-0"),
    pytest.param(b"\x02\x02\x00", UnsupportedVersion, id="frame-version-2"),
    pytest.param(kraft.build_metadata_value("TopicRecord", 0, SAMPLES["TopicRecord"]) + b"\x00", Malformed,
                 id="garbage-after-body"),
    pytest.param(b"\x01\x02\x00\x00", Malformed, id="null-non-nullable-string"),
    pytest.param(b"\x01\x02\x00\x07ord", FormatError, id="truncated"),
])
def test_frame_errors(value, error):
    with pytest.raises(error):
        kraft.parse_metadata_value(value)


def test_unknown_api_key_is_kept_raw():
    api_key, version, name, data, raw = kraft.parse_metadata_value(b"\x01\x63\x00\xaa")
    assert (api_key, version, name, data, raw) == (99, 0, None, {}, b"\xaa")


def test_uuid_text_form():
    assert kraft.uuid_text(bytes(16)) == kraft.ZERO_UUID
    assert kraft.uuid_text(bytes(15) + b"\x01") == "AAAAAAAAAAAAAAAAAAAAAQ"
    with pytest.raises(ValueError):
        kraft.uuid_bytes("AAAA")


def test_snapshot_file_structure():
    records = [("FeatureLevelRecord", 0, SAMPLES["FeatureLevelRecord"]), ("TopicRecord", 0, SAMPLES["TopicRecord"])]
    raw = kraft.build_snapshot(records * 3, epoch=7, timestamp=1234, batch_size=4)
    items = list(kraft.iter_metadata(raw, path="s"))
    assert [type(x).__name__ for x in items] == ["ControlRecord"] + ["MetadataRecord"] * 6 + ["ControlRecord"]
    assert items[0].name == "SnapshotHeaderRecord" and items[0].data["last_contained_log_timestamp"] == 1234
    assert items[-1].name == "SnapshotFooterRecord"
    assert [x.offset for x in items] == list(range(8)) and {x.epoch for x in items} == {7}


def test_leader_change_control_record():
    raw = kraft.build_control_batch([(kraft.LEADER_CHANGE, {"version": 0, "leader_id": 3000,
                                                            "voters": ({"voter_id": 3000},),
                                                            "granting_voters": ({"voter_id": 3000},)})],
                                    base_offset=5, epoch=2, timestamp=9)
    (rec,) = kraft.iter_metadata(raw, path="l")
    assert (rec.offset, rec.epoch, rec.control_type, rec.data["leader_id"]) == (5, 2, kraft.LEADER_CHANGE, 3000)
    # read at version 0, as Kafka reads it: version 1's directory id takes its default
    assert rec.data["voters"] == ({"voter_id": 3000, "voter_directory_id": kraft.ZERO_UUID},)


def test_voters_record_with_nested_struct():
    data = {"version": 0, "voters": ({"voter_id": 1, "voter_directory_id": TID,
                                      "endpoints": ({"name": "CONTROLLER", "host": "c", "port": 9093},),
                                      "kraft_version_feature": {"min_supported_version": 0,
                                                                "max_supported_version": 1}},)}
    value = kraft.build_control_value(kraft.KRAFT_VOTERS, data)
    got, end = decode_fields(kraft.CONTROL_RECORDS[kraft.KRAFT_VOTERS][1], 0, value)
    assert got == data and end == len(value)


def test_record_with_a_key_is_rejected_as_kraft_does():
    from kreplica.formats.log.batch import NewRecord
    raw = default_records.build_batch([NewRecord(0, 1, b"k", kraft.build_metadata_value("TopicRecord", 0,
                                                                                        SAMPLES["TopicRecord"]))],
                                      base_offset=0)
    (finding,) = kraft.iter_metadata(raw, path="l")
    assert finding.kind == "kraft_invalid_record"


def test_bad_crc_stops_the_walk_where_recovery_truncates():
    good = kraft.build_metadata_batch([("TopicRecord", 0, SAMPLES["TopicRecord"])], base_offset=0, epoch=1, timestamp=1)
    bad = bytearray(kraft.build_metadata_batch([("FenceBrokerRecord", 0, SAMPLES["FenceBrokerRecord"])],
                                               base_offset=1, epoch=1, timestamp=1))
    bad[-2] ^= 0xFF
    after = kraft.build_metadata_batch([("NoOpRecord", 0, {})], base_offset=2, epoch=1, timestamp=1)
    items = list(kraft.iter_metadata(good + bytes(bad) + after, path="l"))
    assert [x.offset for x in items if isinstance(x, kraft.MetadataRecord)] == [0]
    assert "crc_mismatch" in [x.kind for x in items if isinstance(x, Finding)]


def test_incomplete_snapshot_is_a_finding(tmp_path):
    raw = kraft.build_snapshot([("NoOpRecord", 0, {})], epoch=1, timestamp=1)
    footer_len = len(kraft.build_control_batch([(kraft.SNAPSHOT_FOOTER, {"version": 0})], base_offset=2,
                                               epoch=1, timestamp=1))
    f = tmp_path / kraft.checkpoint_name(2, 1)
    f.write_bytes(raw[:-footer_len])
    assert [x.kind for x in kraft.read_metadata_file(f) if isinstance(x, Finding)] == ["kraft_incomplete_snapshot"]


@pytest.mark.parametrize("name, expected", [
    pytest.param("00000000000000012345-0000000007.checkpoint", (12345, 7), id="checkpoint"),
    pytest.param("00000000000000012345-0000000007-abc.checkpoint.part", None, id="part"),
    pytest.param("00000000000000012345-0000000007.checkpoint.deleted", None, id="deleted"),
])
def test_checkpoint_names(name, expected):
    assert kraft.parse_checkpoint_name(name) == expected


# -- properties -------------------------------------------------------------------------------

VALID = b"".join([
    kraft.build_control_batch([(kraft.LEADER_CHANGE, {"version": 0, "leader_id": 1, "voters": (),
                                                       "granting_voters": ()})],
                              base_offset=0, epoch=1, timestamp=1),
    kraft.build_metadata_batch([(n, kraft.METADATA_RECORDS[kraft.RECORD_KEYS[n]][1], d) for n, d in SAMPLES.items()],
                               base_offset=1, epoch=1, timestamp=1),
])


def _check(data: bytes) -> None:
    for x in kraft.iter_metadata(data, path="p"):
        assert isinstance(x, (kraft.MetadataRecord, kraft.ControlRecord, Finding))


@given(st.binary(max_size=300))
def test_any_bytes(data):
    _check(data)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(VALID)))
def test_mutated_metadata_logs(patches, cut):
    data = bytearray(VALID)
    for at, value in patches:
        data[at] = value
    _check(bytes(data[:cut]))


@given(st.binary(max_size=120))
def test_any_record_value(value):
    try:
        kraft.parse_metadata_value(value)
    except FormatError:
        pass


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=80))
def test_any_record_value_inside_a_valid_batch(value):
    from kreplica.formats.log.batch import NewRecord
    raw = default_records.build_batch([NewRecord(0, 1, None, value)], base_offset=0)
    _check(raw)


def test_huge_compact_array_count_does_not_allocate():
    import tracemalloc
    value = b"\x01\x03\x00" + bytes(4) + bytes(16) + b"\xff\xff\xff\xff\x0f"   # replicas: 2^32-2 elements
    tracemalloc.start()
    try:
        with pytest.raises(FormatError):
            kraft.parse_metadata_value(value)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
