"""``inspect-log --records`` on Kafka's internal topics: every record type of every topic at every
value version decoded, in every output format, as ``kafka-dump-log.sh``'s decoders show them
(``DumpLogSegments.OffsetsMessageParser``, ``TransactionLogMessageParser``,
``ShareGroupStateMessageParser``, ``ClusterMetadataLogMessageParser``); records that do not decode
listed raw with a finding; data topics untouched."""

from __future__ import annotations

import base64
import io
import json

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.coordinator.consumer_protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kreplica.formats.coordinator.records import (CONSUMER_OFFSETS, SHARE_GROUP_STATE, TRANSACTION_STATE,
                                                  build_key, build_value)
from kreplica.formats.coordinator.transaction_records import TransactionLogValue
from kreplica.formats.kraft.records import build_snapshot
from kreplica.formats.log import default_records
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.generated_messages import encode
from kreplica.report.schemas.internal_records import snake_case
from tests.builders.internal_topics import (SEGMENT, TIMESTAMP, as_json, control_sample, coordinator_cases,
                                       coordinator_records, metadata_cases, write_metadata_partition,
                                       write_partition)
from tests.conftest import FIXTURES

COORDINATOR_TOPICS = [CONSUMER_OFFSETS, TRANSACTION_STATE, SHARE_GROUP_STATE]
MACHINE = ["json", "ndjson", "msgpack"]
WIDTH = 80


@pytest.fixture(autouse=True, params=["compiled", "python"])
def renderer(request, monkeypatch):
    """Both ndjson renderers: decoded records always take the Python path, the rest the
    compiled one where it is built (see tests/cli/commands/test_inspect_log.py)."""
    from kreplica.report.schemas import inspect_log

    if request.param == "compiled":
        compiled = inspect_log.load_compiled()
        if compiled is None:
            pytest.skip("the compiled renderer is not built here")
        monkeypatch.setattr(inspect_log, "_crender", compiled)
    else:
        monkeypatch.setattr(inspect_log, "_crender", None)
    return request.param


def run(*args: object, fmt: str = "ndjson", width: int = WIDTH):
    return CliRunner().invoke(app, ["inspect-log", "--records", *(str(a) for a in args), "-f", fmt],
                              env={"COLUMNS": str(width)})


def objects(result, fmt: str) -> list[dict]:
    """The output objects of a machine format."""
    if fmt == "json":
        return json.loads(result.stdout)
    if fmt == "ndjson":
        return [json.loads(line) for line in result.stdout.splitlines()]
    return list(msgpack.Unpacker(io.BytesIO(result.stdout_bytes), raw=False))


def records_of(result, fmt: str) -> list[dict]:
    return [o for o in objects(result, fmt) if o["type"] == "record"]


def expected_coordinator(case: dict) -> dict:
    return {"record_type": case["name"], "record_type_id": case["record_type_id"], "key": as_json(case["key"]),
            "value_version": case["value_version"],
            "value": None if case["value"] is None else as_json(case["value"])}


# -- every record type, every version, every format ----------------------------------------------


@pytest.mark.parametrize("fmt", MACHINE)
@pytest.mark.parametrize("topic", COORDINATOR_TOPICS)
def test_every_coordinator_record_type_and_value_version_decodes(tmp_path, topic, fmt) -> None:
    cases = coordinator_cases(topic)
    write_partition(tmp_path / f"{topic}-0", coordinator_records(topic, cases))
    result = run(tmp_path / f"{topic}-0", fmt=fmt)
    assert result.exit_code == 0, result.output
    records = records_of(result, fmt)
    assert [r["decoded"] for r in records] == [expected_coordinator(c) for c in cases]
    assert not [o for o in objects(result, fmt) if o["type"] == "finding"]


@pytest.mark.parametrize("fmt", MACHINE)
def test_every_metadata_record_and_control_record_decodes(tmp_path, fmt) -> None:
    cases = metadata_cases()
    write_metadata_partition(tmp_path / "__cluster_metadata-0", cases)
    result = run(tmp_path / "__cluster_metadata-0", fmt=fmt)
    assert result.exit_code == 0, result.output
    decoded = [r["decoded"] for r in records_of(result, fmt)]
    controls = [(2, "leader_change"), (3, "snapshot_header"), (4, "snapshot_footer"), (5, "kraft_version"),
                (6, "kraft_voters")]
    assert decoded[:len(controls)] == [
        {"record_type": name, "record_type_id": ctype, "key": None, "value_version": 0,
         "value": as_json(control_sample(ctype))} for ctype, name in controls]
    assert decoded[len(controls):] == [
        {"record_type": snake_case(c["name"]), "record_type_id": c["api_key"], "key": None,
         "value_version": c["version"], "value": as_json(c["value"])} for c in cases]


@pytest.mark.parametrize("topic", COORDINATOR_TOPICS + ["__cluster_metadata"])
def test_text_is_one_wrapped_line_per_record_within_80_columns(tmp_path, topic) -> None:
    if topic == "__cluster_metadata":
        cases = metadata_cases()
        write_metadata_partition(tmp_path / f"{topic}-0", cases)
        heads = [f"@{5 + i} ts={TIMESTAMP} {snake_case(c['name'])} value(v{c['version']})=" for i, c in enumerate(cases)]
    else:
        cases = coordinator_cases(topic)
        write_partition(tmp_path / f"{topic}-0", coordinator_records(topic, cases))
        heads = [f"@{i} ts={TIMESTAMP + i} {c['name']} key=" for i, c in enumerate(cases)]
    result = run(tmp_path / f"{topic}-0", fmt="text")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    starts = [line.strip() for line in result.stdout.replace("\n        ", " ").splitlines()
              if line.startswith("      @")][-len(heads):]
    assert [s[:len(h)] for s, h in zip(starts, heads)] == heads and len(starts) == len(heads)


def test_the_machine_formats_agree_and_ndjson_lines_are_the_objects(tmp_path) -> None:
    cases = coordinator_cases(CONSUMER_OFFSETS)
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", coordinator_records(CONSUMER_OFFSETS, cases))
    outputs = [objects(run(tmp_path, fmt=fmt), fmt) for fmt in MACHINE]
    assert outputs[0] == outputs[1] == outputs[2]


# -- what Kafka's JSON shows, by hand -------------------------------------------------------------


@pytest.mark.parametrize(("version", "value"), [
    # OffsetCommitValue.json: leaderEpoch "3+", expireTimestamp "1" only
    pytest.param(0, {"offset": 42, "metadata": "m", "commit_timestamp": 1000}, id="v0"),
    pytest.param(1, {"offset": 42, "metadata": "m", "commit_timestamp": 1000, "expire_timestamp": 2000}, id="v1"),
    pytest.param(2, {"offset": 42, "metadata": "m", "commit_timestamp": 1000}, id="v2-no-expiry"),
    pytest.param(3, {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000}, id="v3"),
    pytest.param(4, {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000}, id="v4-flexible"),
])
def test_an_offset_commit_shows_the_fields_its_version_has(tmp_path, version, value) -> None:
    written = {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000, "expire_timestamp": 2000}
    key = {"group": "g", "topic": "orders", "partition": 3}
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-7", [
        (build_key(CONSUMER_OFFSETS, 1, key), build_value(CONSUMER_OFFSETS, 1, version, written))])
    (record,) = records_of(run(tmp_path / f"{CONSUMER_OFFSETS}-7"), "ndjson")
    assert record["decoded"] == {"record_type": "offset_commit", "record_type_id": 1, "key": key,
                                 "value_version": version, "value": value}


def _consumer_group_metadata(version: int) -> bytes:
    subscription = b"\x00\x01" + encode(ConsumerProtocolSubscription, 1, {
        "topics": ["orders"], "user_data": b"\x07", "owned_partitions": [{"topic": "orders", "partitions": [0]}]})
    assignment = b"\x00\x00" + encode(ConsumerProtocolAssignment, 0, {
        "assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": None})
    member = {"member_id": "m-1", "group_instance_id": "i-1", "client_id": "c", "client_host": "/10.0.0.1",
              "rebalance_timeout": 300000, "session_timeout": 45000, "subscription": subscription,
              "assignment": assignment}
    return build_value(CONSUMER_OFFSETS, 2, version, {
        "protocol_type": "consumer", "generation": 5, "protocol": "range", "leader": "m-1",
        "current_state_timestamp": 1234, "members": [member]})


@pytest.mark.parametrize("version", range(5))
def test_group_metadata_expands_the_consumer_protocol_as_the_dump_tool_does(tmp_path, version) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [
        (build_key(CONSUMER_OFFSETS, 2, {"group": "g"}), _consumer_group_metadata(version)),
        (build_key(CONSUMER_OFFSETS, 2, {"group": "g"}), None)])
    group, tombstone = records_of(run(tmp_path / f"{CONSUMER_OFFSETS}-0", "--payload", "hex"), "ndjson")
    (member,) = group["decoded"]["value"]["members"]
    # GroupMetadataValue.json: rebalanceTimeout "1+", groupInstanceId "3+", currentStateTimestamp "2+"
    assert ("rebalance_timeout" in member, "group_instance_id" in member) == (version >= 1, version >= 3)
    assert ("current_state_timestamp" in group["decoded"]["value"]) == (version >= 2)
    # ConsumerProtocolSubscription v1 has ownedPartitions, not generationId (v2) or rackId (v3)
    assert member["subscription"] == {"topics": ["orders"], "user_data": "07",
                                      "owned_partitions": [{"topic": "orders", "partitions": [0]}], "version": 1}
    assert member["assignment"] == {"assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}],
                                    "user_data": None, "version": 0}
    assert tombstone["decoded"] == {"record_type": "group_metadata", "record_type_id": 2, "key": {"group": "g"},
                                    "value_version": None, "value": None}


def test_another_protocols_subscription_stays_bytes_per_payload(tmp_path) -> None:
    member = {"member_id": "m", "client_id": "c", "client_host": "h", "session_timeout": 1,
              "subscription": b"\x00\x01\x02", "assignment": b""}
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(
        build_key(CONSUMER_OFFSETS, 2, {"group": "connect"}),
        build_value(CONSUMER_OFFSETS, 2, 3, {"protocol_type": "connect", "generation": 1, "protocol": "sessioned",
                                             "leader": "m", "members": [member]}))])
    for payload, expected in (("base64", ("AAEC", "")), ("hex", ("000102", "")), ("none", (None, None))):
        (record,) = records_of(run(tmp_path, "--payload", payload), "ndjson")
        (got,) = record["decoded"]["value"]["members"]
        assert (got["subscription"], got["assignment"]) == expected


@pytest.mark.parametrize(("version", "tagged", "shown"), [
    # TransactionLogValue.json: v1 flexible; previous/next producer id and client transaction
    # version are tagged, written (and shown) only when not their defaults -1, -1 and 0
    pytest.param(0, {"previous_producer_id": 999, "client_transaction_version": 2}, {}, id="v0-has-no-tags"),
    pytest.param(1, {"previous_producer_id": 999, "next_producer_id": -1, "client_transaction_version": 2},
                 {"previous_producer_id": 999, "client_transaction_version": 2}, id="v1-tagged"),
])
def test_a_transaction_shows_its_state_and_tagged_fields(tmp_path, version, tagged, shown) -> None:
    written = {"producer_id": 1000, "producer_epoch": 3, "transaction_timeout_ms": 60000, "transaction_status": 4,
               "transaction_partitions": [{"topic": "orders", "partition_ids": [0, 2]}],
               "transaction_last_update_timestamp_ms": 5000, "transaction_start_timestamp_ms": 4000}
    write_partition(tmp_path / f"{TRANSACTION_STATE}-11", [(
        build_key(TRANSACTION_STATE, 0, {"transactional_id": "tx-1"}),
        build_value(TRANSACTION_STATE, 0, version, {**written, **tagged}))])
    (record,) = records_of(run(tmp_path), "ndjson")
    decoded = record["decoded"]
    assert (decoded["record_type"], decoded["record_type_id"], decoded["key"], decoded["value_version"]) == (
        "transaction_metadata", 0, {"transactional_id": "tx-1"}, version)
    assert decoded["value"] == {**written, **shown}
    assert list(decoded["value"]) == [f.name for f in TransactionLogValue.fields if f.name in decoded["value"]]
    text = run(tmp_path, fmt="text").stdout
    assert '"transaction_status":"CompleteCommit"' in text.replace("\n        ", " ")


def test_a_partition_change_names_only_what_changed(tmp_path) -> None:
    from kreplica.formats.kraft.records import build_metadata_value

    value = build_metadata_value("PartitionChangeRecord", 0, {"partition_id": 2, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
                                                              "leader": 3})
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    (directory / SEGMENT).write_bytes(default_records.build_batch([NewRecord(0, TIMESTAMP, None, value)],
                                                                  base_offset=0))
    (record,) = records_of(run(directory), "ndjson")
    assert record["decoded"] == {"record_type": "partition_change_record", "record_type_id": 5, "key": None,
                                 "value_version": 0,
                                 "value": {"partition_id": 2, "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ", "leader": 3}}


def test_a_kraft_snapshot_given_by_name_is_decoded_wherever_it_lies(tmp_path) -> None:
    snapshot = tmp_path / "bootstrap.checkpoint"
    snapshot.write_bytes(build_snapshot([("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 21})],
                                        epoch=0, timestamp=TIMESTAMP))
    decoded = [r["decoded"] for r in records_of(run(snapshot), "ndjson")]
    assert [d["record_type"] for d in decoded] == ["snapshot_header", "feature_level_record", "snapshot_footer"]
    assert decoded[1]["value"] == {"name": "metadata.version", "feature_level": 21}


# -- records that do not decode -------------------------------------------------------------------


OFFSET_KEY = build_key(CONSUMER_OFFSETS, 1, {"group": "g", "topic": "t", "partition": 0})
GOOD_VALUE = build_value(CONSUMER_OFFSETS, 1, 3, {"offset": 1, "leader_epoch": 0, "metadata": "", "commit_timestamp": 9})


@pytest.mark.parametrize(("key", "value", "kind", "exit_code"), [
    pytest.param(b"\x00\x63" + OFFSET_KEY[2:], GOOD_VALUE, "coordinator_unknown_record", 0, id="unknown-type-99"),
    pytest.param(OFFSET_KEY, b"\x00\x09" + GOOD_VALUE[2:], "coordinator_unknown_record", 0, id="unknown-version-9"),
    pytest.param(OFFSET_KEY, GOOD_VALUE + b"\x00", "coordinator_invalid_record", 1, id="garbage-after-value"),
    pytest.param(OFFSET_KEY + b"\xff", GOOD_VALUE, "coordinator_invalid_record", 1, id="garbage-after-key"),
    pytest.param(OFFSET_KEY, GOOD_VALUE[:-3], "coordinator_invalid_record", 1, id="truncated-value"),
    pytest.param(None, GOOD_VALUE, "coordinator_invalid_record", 1, id="null-key"),
    pytest.param(b"\x00", GOOD_VALUE, "coordinator_invalid_record", 1, id="one-byte-key"),
])
@pytest.mark.parametrize("fmt", MACHINE + ["text"])
def test_a_record_that_does_not_decode_is_listed_raw_with_a_finding(tmp_path, key, value, kind, exit_code,
                                                                    fmt) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(OFFSET_KEY, GOOD_VALUE), (key, value)])
    batch_position = len(default_records.build_batch([NewRecord(0, TIMESTAMP, OFFSET_KEY, GOOD_VALUE)],
                                                     base_offset=0))
    result = run(tmp_path / f"{CONSUMER_OFFSETS}-0", fmt=fmt)
    assert result.exit_code == exit_code, result.output
    if fmt == "text":
        assert f"{kind} at byte {batch_position}:" in result.stdout.replace("\n    ", " ")
        assert "record at offset 1" in result.stdout.replace("\n    ", " ")
        return
    objs = objects(result, fmt)
    good, bad = [o for o in objs if o["type"] == "record"]
    assert good["decoded"]["record_type"] == "offset_commit"
    assert bad["decoded"] is None
    assert bad["key"] == (None if key is None else base64.b64encode(key).decode())
    (finding,) = [o for o in objs if o["type"] == "finding"]
    assert (finding["kind"], finding["position"], finding["offset"]) == (kind, batch_position, 1)
    assert finding["path"].endswith(SEGMENT) and "at offset 1" in finding["message"]


def test_an_unknown_or_undecodable_metadata_record_is_listed_raw_with_a_finding(tmp_path) -> None:
    from kreplica.formats.kraft.records import build_metadata_value

    good = build_metadata_value("TopicRecord", 0, {"name": "orders", "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ"})
    unknown_key = b"\x01\x63\x00"                     # frame 1, api key 99, version 0
    unknown_version = b"\x01\x02\x09" + good[3:]      # TopicRecord version 9
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    batches = [default_records.build_batch([NewRecord(i, TIMESTAMP, None, v)], base_offset=i)
               for i, v in enumerate([good, unknown_key, unknown_version, good + b"\x00"])]
    (directory / SEGMENT).write_bytes(b"".join(batches))
    result = run(directory)
    assert result.exit_code == 1
    objs = objects(result, "ndjson")
    assert [r["decoded"] is not None for r in objs if r["type"] == "record"] == [True, False, False, False]
    positions = [sum(len(b) for b in batches[:i]) for i in range(4)]
    assert [(f["kind"], f["position"], f["offset"]) for f in objs if f["type"] == "finding"] == [
        ("kraft_unknown_record", positions[1], 1), ("kraft_unknown_record", positions[2], 2),
        ("kraft_invalid_record", positions[3], 3)]


def test_transaction_markers_in_a_coordinator_topic_stay_markers(tmp_path) -> None:
    commit = NewRecord(0, TIMESTAMP, OFFSET_KEY, GOOD_VALUE)
    directory = tmp_path / f"{CONSUMER_OFFSETS}-0"
    directory.mkdir()
    (directory / SEGMENT).write_bytes(
        default_records.build_batch([commit], base_offset=0, producer_id=7, producer_epoch=0,
                                    is_transactional=True)
        + default_records.build_batch([default_records.build_control_record(1, TIMESTAMP, default_records.CONTROL_COMMIT)],
                                      base_offset=1, producer_id=7, producer_epoch=0, is_transactional=True,
                                      is_control=True))
    result = run(directory)
    assert result.exit_code == 0
    offset_commit, marker = records_of(result, "ndjson")
    assert offset_commit["decoded"]["value"]["offset"] == 1
    assert (marker["control_type"], marker["decoded"]) == ("commit", None)
    assert "control=commit" in run(directory, fmt="text").stdout


# -- what stays as it was -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", MACHINE + ["text"])
def test_decode_none_lists_internal_records_as_a_data_topics(tmp_path, fmt) -> None:
    cases = coordinator_cases(CONSUMER_OFFSETS)
    internal = write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", coordinator_records(CONSUMER_OFFSETS, cases))
    raw = tmp_path / "ordersxxxxxxxxxxxx-0"     # the same bytes under a data topic's name as long
    raw.mkdir()
    (raw / SEGMENT).write_bytes((internal / SEGMENT).read_bytes())
    undecoded = run(internal, "--decode", "none", fmt=fmt)
    as_data = run(raw, fmt=fmt)
    assert undecoded.exit_code == as_data.exit_code == 0
    if fmt == "text":   # the paths are as long, so lines break alike, a path may be broken across two
        assert undecoded.stdout == as_data.stdout.replace(raw.name, internal.name)
    else:
        assert undecoded.stdout_bytes == as_data.stdout_bytes.replace(str(raw).encode(), str(internal).encode())
    assert b"decoded" not in undecoded.stdout_bytes


def test_data_topics_are_not_decoded_and_mixed_directories_render_alike(tmp_path, renderer) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", coordinator_records(CONSUMER_OFFSETS,
                                                                            coordinator_cases(CONSUMER_OFFSETS)))
    write_partition(tmp_path / "orders-0", [(OFFSET_KEY, GOOD_VALUE), (None, b"v")])
    result = run(tmp_path)
    assert result.exit_code == 0
    records = records_of(result, "ndjson")
    assert all("decoded" not in r for r in records if "/orders-0/" in r["path"])
    assert all("decoded" in r for r in records if f"/{CONSUMER_OFFSETS}-0/" in r["path"])


def test_the_fixtures_output_has_no_decoded_member() -> None:
    result = run(FIXTURES / "logs")
    assert result.exit_code == 0 and '"decoded"' not in result.stdout


@pytest.mark.parametrize(("args", "note"), [
    pytest.param([], False, id="default-quiet"),
    pytest.param(["--decode", "internal"], True, id="asked-by-name"),
    pytest.param(["--decode", "none"], False, id="none"),
])
def test_a_segment_on_stdin_has_no_topic_and_is_listed_raw(tmp_path, args, note) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(OFFSET_KEY, GOOD_VALUE)])
    data = (tmp_path / f"{CONSUMER_OFFSETS}-0" / SEGMENT).read_bytes()
    result = CliRunner().invoke(app, ["inspect-log", "--records", *args, "-", "-f", "ndjson"], input=data)
    assert result.exit_code == 0
    (record,) = [json.loads(line) for line in result.stdout.splitlines() if '"record"' in line]
    assert "decoded" not in record
    assert ("listed undecoded" in result.stderr) == note
    if note:
        assert result.stderr.count("\n") == 1


def test_a_segment_outside_a_partition_directory_is_listed_raw(tmp_path) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(OFFSET_KEY, GOOD_VALUE)])
    loose = tmp_path / "loose" / SEGMENT
    loose.parent.mkdir()
    loose.write_bytes((tmp_path / f"{CONSUMER_OFFSETS}-0" / SEGMENT).read_bytes())
    (record,) = records_of(run(loose), "ndjson")
    assert "decoded" not in record
    (record,) = records_of(run(tmp_path / f"{CONSUMER_OFFSETS}-0" / SEGMENT), "ndjson")
    assert record["decoded"]["record_type"] == "offset_commit"


def test_without_records_nothing_changes(tmp_path) -> None:
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [(OFFSET_KEY, GOOD_VALUE), (OFFSET_KEY, b"\x00\x09")])
    result = CliRunner().invoke(app, ["inspect-log", str(tmp_path), "-f", "ndjson"])
    assert result.exit_code == 0 and "finding" not in result.stdout


def test_text_shows_tombstones_and_clips_bytes(tmp_path) -> None:
    member = {"member_id": "m", "client_id": "c", "client_host": "h", "session_timeout": 1,
              "subscription": bytes(range(200)), "assignment": b""}
    write_partition(tmp_path / f"{CONSUMER_OFFSETS}-0", [
        (build_key(CONSUMER_OFFSETS, 2, {"group": "connect"}),
         build_value(CONSUMER_OFFSETS, 2, 3, {"protocol_type": "connect", "generation": 1, "protocol": "p",
                                              "leader": "m", "members": [member]})),
        (build_key(CONSUMER_OFFSETS, 2, {"group": "connect"}), None)])
    text = run(tmp_path, fmt="text").stdout
    assert '"subscription":"AAECAwQFBgcICQoLDA0ODxA…"' in text.replace("\n        ", " ")
    assert '@1 ts=1700000000001 group_metadata key={"group":"connect"} value=tombstone' in text
