"""kreplica's reading of segments written by Kafka's own encoder, diffed against Kafka's own
reading of them (``FileRecords.batches()``, ``ensureValid()``, deep iteration, and the
emulation of broker recovery) in ``../shared/oracle/kafka-java/**/<segment>.truth.jsonl``.

Every case folder is discovered by globbing, so held-back cases of the same kinds are checked
the same way. The comparison goes through the CLI's ndjson output, exactly as a user sees it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import ORACLE, oracle_dir

KAFKA_CASES = ORACLE / "kafka-java"
SEGMENTS = sorted(KAFKA_CASES.glob("*/*/*.log")) if KAFKA_CASES.is_dir() else []

BATCH_FIELDS = {
    # truth key -> kreplica key
    "position": "position", "sizeInBytes": "size", "magic": "magic", "baseOffset": "base_offset",
    "lastOffset": "last_offset", "count": "count", "partitionLeaderEpoch": "partition_leader_epoch",
    "crc": "crc", "isValid": "crc_valid", "maxTimestamp": "max_timestamp", "producerId": "producer_id",
    "producerEpoch": "producer_epoch", "baseSequence": "base_sequence",
    "isTransactional": "is_transactional", "isControlBatch": "is_control", "deleteHorizonMs": "delete_horizon_ms",
}
RECORD_FIELDS = {"offset": "offset", "timestamp": "timestamp", "sequence": "sequence", "key": "key", "value": "value"}
TIMESTAMP_TYPES = {"CREATE_TIME": "create_time", "LOG_APPEND_TIME": "log_append_time",
                   "NO_TIMESTAMP_TYPE": "no_timestamp_type"}


def _truth(segment: Path) -> list[dict]:
    with open(str(segment) + ".truth.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _ours(segment: Path) -> list[dict]:
    result = CliRunner().invoke(app, ["inspect-log", "--records", "--payload", "base64", "--format", "ndjson",
                                      str(segment)])
    assert result.exit_code in (0, 1), result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _id(segment: Path) -> str:
    return str(segment.relative_to(KAFKA_CASES))


@pytest.fixture(scope="module", autouse=True)
def _oracle_present():
    oracle_dir("kafka-java")


@pytest.mark.interop
@pytest.mark.parametrize("segment", [pytest.param(s, id=_id(s)) for s in SEGMENTS])
def test_batches_records_and_recovery_agree_with_kafka(segment: Path) -> None:
    truth = _truth(segment)
    ours = _ours(segment)
    t_batches = [t for t in truth if t["type"] == "batch"]
    o_batches = [o for o in ours if o["type"] == "batch" and not o["after_break"]]
    assert len(o_batches) == len(t_batches), "batches before the first break must be exactly Kafka's"
    for t, o in zip(t_batches, o_batches):
        for tk, ok in BATCH_FIELDS.items():
            if isinstance(t[tk], dict) and "error" in t[tk]:
                continue  # Kafka's getter threw; there is no value to compare
            assert o[ok] == t[tk], f"batch at {t['position']}: {ok}"
        if isinstance(t["compressionType"], str):
            assert o["compression"] == t["compressionType"].lower(), f"batch at {t['position']}: compression"
        if isinstance(t["timestampType"], str):
            assert o["timestamp_type"] == TIMESTAMP_TYPES[t["timestampType"]]

    # records: every record Kafka's deep iteration returned, in order
    t_records = [t for t in truth if t["type"] == "record"]
    kafka_positions = {t["position"] for t in t_batches}
    o_records = [o for o in ours if o["type"] == "record" and o["batch_position"] in kafka_positions]
    assert len(o_records) == len(t_records)
    for t, o in zip(t_records, o_records):
        assert o["batch_position"] == t["batchPosition"]
        for tk, ok in RECORD_FIELDS.items():
            assert o[ok] == t[tk], f"record at offset {t['offset']}: {ok}"
        assert o["headers"] == t["headers"], f"record at offset {t['offset']}: headers"
        if "controlType" in t:
            assert o["control_type"] == t["controlType"].lower()
            assert o["coordinator_epoch"] == t.get("coordinatorEpoch")
        else:
            assert o["control_type"] is None

    # where Kafka's deep iteration threw, kreplica must report a finding at that batch
    findings = [o for o in ours if o["type"] == "finding"]
    for err in (t for t in truth if t["type"] == "error" and t.get("stage") == "record_iteration"):
        assert any(f["position"] == err.get("batchPosition", err.get("position")) for f in findings), err

    t_summary = next(t for t in truth if t["type"] == "summary")
    o_summary = next(o for o in ours if o["type"] == "summary")
    assert o_summary["valid_bytes"] == t_summary["endOfLastBatch"]
    assert o_summary["trailing_bytes"] == t_summary["trailingBytes"]
    assert o_summary["file_size"] == t_summary["fileSize"]
    emulation = t_summary["brokerRecoveryEmulation"]
    assert o_summary["recovery"] == {
        "valid_bytes": emulation["validBytes"],
        "truncated_bytes": emulation["truncatedBytes"],
        "epoch_assignments": emulation["leaderEpochAssignments"],
    }
    # a damaged segment must say so: where Kafka stopped early or a batch failed, there is an error finding
    damaged = (t_summary["stoppedBy"] != "end_of_file" or not t_summary["allBatchesValid"]
               or t_summary.get("recordIterationErrors") or (t_summary.get("memoryRecordsView") or {}).get("error"))
    if damaged:
        assert any(f["severity"] == "error" or f["kind"] == "trailing_zeros" for f in findings)
    else:
        assert not [f for f in findings if f["severity"] == "error"], findings
