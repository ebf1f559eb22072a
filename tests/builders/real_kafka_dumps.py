"""What ``kafka-dump-log`` said of the internal partitions of the recorded corpus
(``<point>/dump-log/``, written by ``tests/realkafka/recording.py``'s ``dump_logs`` with
``--offsets-decoder``, ``--transaction-log-decoder`` or ``--cluster-metadata-decoder``), parsed
record by record, and the same records as ``kreplica inspect-log --records --decode internal``
lists them, both in one shape so that they compare field by field.

The dump prints one line a record after its batch's line::

    | offset: 4 CreateTime: 1796296268644 keySize: 45 valueSize: 62 sequence: 0 headerKeys: []
      [endTxnMarker: COMMIT coordinatorEpoch: 0 | LeaderChange: {...} | controlType: LEADER_CHANGE(2)]
      [key: <the key decoder's text>] [payload: <the value decoder's text, <DELETE> for a tombstone>]

(one line; a decoder sets ``--print-data-log``, which prints the key and payload of data
records only). What each decoder prints, and how it maps onto kreplica's ``decoded`` member
(``kreplica/report/schemas/internal_records.py``):

* ``--offsets-decoder`` (3.9 and 4.x alike, ``CoordinatorRecordSerde`` and the generated JSON
  converters): key ``{"type": "<record type>", "data": {<key fields>}}``, payload
  ``{"version": "<value version>", "data": {<value fields>}}``. Field names are Kafka's schema
  names in camelCase, kreplica's the same in snake_case (:func:`snake_case`).
* ``--transaction-log-decoder``: 4.x prints JSON as the offsets decoder does, except that
  ``transactionStatus`` is the state's name (kreplica: the int, mapped here through
  ``TRANSACTION_STATES``); 3.x prints text (``TransactionLog.formatRecordKeyAndValue``):
  ``transaction_metadata::transactionalId=<id>`` and ``producerId:<id>,producerEpoch:<epoch>,
  state=<name>,partitions=[<topic-partition>,...],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>``
  (the partitions a set, in no order; no value version), parsed here onto kreplica's field names.
* ``--cluster-metadata-decoder``: payload ``{"type": "<MetadataRecordType>", "version": <v>,
  "data": {...}}``, no key; the type is kreplica's ``record_type`` upper-cased. Raft control
  records: 4.x prints ``LeaderChange: {...}`` (and ``KRaftVersion``, ``KRaftVoters``,
  ``SnapshotHeader``, ``SnapshotFooter`` likewise), 3.9 the last four as ``<Name> {...}`` and a
  leader change only as ``controlType: LEADER_CHANGE(2)``, without its fields.
* Transaction markers (control batches of the coordinator topics): ``endTxnMarker: COMMIT
  coordinatorEpoch: 0``; kreplica's ``control_type`` and ``coordinator_epoch``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES

OFFSETS = "--offsets-decoder"
TRANSACTION_LOG = "--transaction-log-decoder"
CLUSTER_METADATA = "--cluster-metadata-decoder"

_RECORD = re.compile(r"^\| offset: (?P<offset>-?\d+) (?P<timestamp_type>\w+): (?P<timestamp>-?\d+) "
                     r"keySize: (?P<key_size>-?\d+) valueSize: (?P<value_size>-?\d+)"
                     r"(?: sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<header_keys>[^\]]*)\])?(?P<rest>.*)$")
_BATCH = re.compile(r"^baseOffset: (?P<base>-?\d+) lastOffset: (?P<last>-?\d+) .*isControl: (?P<control>true|false)"
                    r" .*position: (?P<position>\d+) ")
_MARKER = re.compile(r"^ endTxnMarker: (?P<type>COMMIT|ABORT) coordinatorEpoch: (?P<epoch>-?\d+)")
_CONTROL_TYPE = re.compile(r"^ controlType: (?P<name>\w+)\((?P<id>-?\d+)\)")
_CONTROL_JSON = re.compile(r"^ (?P<name>LeaderChange|SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters):? (?=\{)")
#: the names the dump gives Raft control records -> kreplica's ``record_type`` (``control_type``)
CONTROL_NAMES = {"LeaderChange": "leader_change", "LEADER_CHANGE": "leader_change",
                 "SnapshotHeader": "snapshot_header", "SNAPSHOT_HEADER": "snapshot_header",
                 "SnapshotFooter": "snapshot_footer", "SNAPSHOT_FOOTER": "snapshot_footer",
                 "KRaftVersion": "kraft_version", "KRAFT_VERSION": "kraft_version",
                 "KRaftVoters": "kraft_voters", "KRAFT_VOTERS": "kraft_voters"}
_TXN_KEY = re.compile(r"^transaction_metadata::transactionalId=(?P<id>.*)$")
_TXN_VALUE = re.compile(r"^producerId:(?P<producer_id>-?\d+),producerEpoch:(?P<producer_epoch>-?\d+),"
                        r"state=(?P<state>\w+),partitions=\[(?P<partitions>[^\]]*)\],"
                        r"txnLastUpdateTimestamp=(?P<last_update>-?\d+),txnTimeoutMs=(?P<timeout>-?\d+)$")
#: Kafka's camelCase names whose snake_case is not kreplica's (``kRaftVersion``: ``kraft_version``)
RENAMES = {"k_raft_version": "kraft_version", "k_raft_version_feature": "kraft_version_feature"}


@dataclass
class DumpRecord:
    """One record line of a dump: its offset and what the decoder (or the control record's
    printer) made of it, in kreplica's shape (``decoded``: record_type or record_type_id, key,
    value_version, value; ``None`` for a transaction marker)."""

    offset: int
    timestamp: int
    key_size: int
    value_size: int
    sequence: int | None
    batch_position: int
    in_control_batch: bool
    marker: tuple[str, int] | None = None       # (commit|abort, coordinator epoch)
    decoded: dict | None = None
    undecoded: str | None = None                # the decoder's words for a record it skipped
    text: str = ""


@dataclass
class Dump:
    """A dump of one partition: its records in order and what else it said (invalid bytes)."""

    records: list[DumpRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def snake_case(name: str) -> str:
    """``transactionalId`` -> ``transactional_id``: an underscore before each capital that follows
    a lower-case letter or digit, then lower case (``RENAMES`` for the rest)."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return RENAMES.get(snake, snake)


def snake_keys(value):
    """A JSON value with every object's names in snake_case."""
    if isinstance(value, dict):
        return {snake_case(k): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


def parse_dump(text: str, decoder: str) -> Dump:
    """A ``kafka-dump-log --deep-iteration <decoder>`` output, record by record."""
    dump = Dump()
    batch_position, control = -1, False
    for line in text.splitlines():
        if m := _BATCH.match(line):
            batch_position, control = int(m["position"]), m["control"] == "true"
            continue
        if line.startswith("Found ") or line.startswith("Error") or "Exception" in line:
            dump.notes.append(line)
            continue
        m = _RECORD.match(line)
        if m is None:
            continue
        record = DumpRecord(int(m["offset"]), int(m["timestamp"]), int(m["key_size"]), int(m["value_size"]),
                            None if m["sequence"] is None else int(m["sequence"]), batch_position, control,
                            text=line)
        _parse_rest(record, m["rest"], decoder)
        dump.records.append(record)
    return dump


def _parse_rest(record: DumpRecord, rest: str, decoder: str) -> None:
    if m := _MARKER.match(rest):
        record.marker = (m["type"].lower(), int(m["epoch"]))
        return
    if m := _CONTROL_TYPE.match(rest):
        record.decoded = {"record_type": CONTROL_NAMES.get(m["name"], m["name"].lower()),
                          "record_type_id": int(m["id"])}
        return
    if m := _CONTROL_JSON.match(rest):
        value, _end = json.JSONDecoder().raw_decode(rest, m.end())
        record.decoded = {"record_type": CONTROL_NAMES[m["name"]], "value_version": 0, "value": snake_keys(value)}
        return
    key_text, payload_text = _key_and_payload(rest)
    if decoder == CLUSTER_METADATA:
        _metadata(record, payload_text)
    elif decoder == TRANSACTION_LOG and key_text is not None and not key_text.startswith("{"):
        _transaction_text(record, key_text, payload_text)
    else:
        _coordinator_json(record, key_text, payload_text, decoder)


def _key_and_payload(rest: str) -> tuple[str | None, str | None]:
    """The decoder's key and payload texts: a JSON key is read as JSON (a string inside may hold
    `` payload: ``), a text key up to the payload's marker."""
    key = payload = None
    if rest.startswith(" key: "):
        body = rest[len(" key: "):]
        if body.startswith("{"):
            _value, end = json.JSONDecoder().raw_decode(body)
        else:
            end = body.find(" payload: ")
            end = len(body) if end < 0 else end
        key, rest = body[:end], body[end:]
    if rest.startswith(" payload: "):
        payload = rest[len(" payload: "):]
    return key, payload


def _metadata(record: DumpRecord, payload: str | None) -> None:
    if payload is None or not payload.startswith("{"):
        record.undecoded = payload
        return
    message = json.loads(payload)
    record.decoded = {"record_type": message["type"].lower(), "value_version": message["version"],
                      "value": snake_keys(message["data"])}


def _coordinator_json(record: DumpRecord, key: str | None, payload: str | None, decoder: str) -> None:
    if key is None or not key.startswith("{"):
        record.undecoded = key
        return
    key_message = json.loads(key)
    decoded = {"record_type_id": int(key_message["type"]), "key": snake_keys(key_message["data"]),
               "value_version": None, "value": None}
    if payload is not None and payload != "<DELETE>":
        value = json.loads(payload)
        decoded["value_version"] = int(value["version"])
        decoded["value"] = snake_keys(value["data"])
    record.decoded = decoded


def _transaction_text(record: DumpRecord, key: str, payload: str | None) -> None:
    m = _TXN_KEY.match(key)
    if m is None:
        record.undecoded = key
        return
    # the text has no value version: not compared
    decoded = {"record_type_id": 0, "key": {"transactional_id": m["id"]}, "value": None}
    if payload is not None and payload != "<DELETE>":
        v = _TXN_VALUE.match(payload)
        assert v is not None, f"offset {record.offset}: a transaction log value the parser does not know: {payload}"
        decoded["value"] = {
            "producer_id": int(v["producer_id"]), "producer_epoch": int(v["producer_epoch"]),
            "transaction_status": v["state"],
            "transaction_partitions": sorted(p for p in v["partitions"].split(",") if p),
            "transaction_last_update_timestamp_ms": int(v["last_update"]),
            "transaction_timeout_ms": int(v["timeout"]),
        }
    record.decoded = decoded


def read_dump(path: Path, decoder: str) -> Dump:
    return parse_dump(path.read_text(), decoder)


# -- kreplica's side -----------------------------------------------------------------------------


@dataclass
class OurRecord:
    """A record of ``inspect-log --records --decode internal --format ndjson`` (a batch before the
    first break: what Kafka's reader also reads)."""

    offset: int
    timestamp: int
    batch_position: int
    control_type: str | None
    coordinator_epoch: int | None
    decoded: dict | None
    raw: dict


def inspect_records(segments: list[Path]) -> tuple[list[OurRecord], list[dict]]:
    """kreplica's records of these segments (as its CLI prints them, bytes in base64 as Kafka's
    JSON writes them) and its findings."""
    result = CliRunner().invoke(app, ["inspect-log", "--records", "--decode", "internal", "--payload", "base64",
                                      "--format", "ndjson", *map(str, segments)])
    assert result.exit_code in (0, 1), result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    broken = {(o["path"], o["position"]) for o in lines if o["type"] == "batch" and o["after_break"]}
    records = [OurRecord(o["offset"], o["timestamp"], o["batch_position"], o["control_type"], o["coordinator_epoch"],
                         o.get("decoded"), o)
               for o in lines if o["type"] == "record" and (o["path"], o["batch_position"]) not in broken]
    findings = [o for o in lines if o["type"] == "finding"]
    return records, findings


# -- the comparison ------------------------------------------------------------------------------


def kreplica_as_kafka_prints(decoded: dict, decoder: str, kafka_major: int) -> dict:
    """kreplica's ``decoded`` cut and renamed to what the decoder of that Kafka prints (module
    docstring): the embedded consumer protocol's ``version`` dropped (Kafka prints the expanded
    subscription and assignment without it), a transaction's state by name, and on 3.x the
    transaction log's text fields only."""
    out = json.loads(json.dumps(decoded))
    value = out.get("value")
    if decoder == OFFSETS and out.get("record_type") == "group_metadata" and value:
        for member in value.get("members", []):
            for name in ("subscription", "assignment"):
                if isinstance(member.get(name), dict):
                    member[name].pop("version", None)
    if decoder == TRANSACTION_LOG and value:
        value["transaction_status"] = TRANSACTION_STATES.get(value["transaction_status"], value["transaction_status"])
        if kafka_major < 4:
            partitions = value.get("transaction_partitions") or []
            out["value"] = {
                "producer_id": value["producer_id"], "producer_epoch": value["producer_epoch"],
                "transaction_status": value["transaction_status"],
                "transaction_partitions": sorted(f"{p['topic']}-{i}" for p in partitions for i in p["partition_ids"]),
                "transaction_last_update_timestamp_ms": value["transaction_last_update_timestamp_ms"],
                "transaction_timeout_ms": value["transaction_timeout_ms"],
            }
    return out


def differences(kafka, ours, where: str = "") -> list[str]:
    """Where two JSON values differ, one line each: a field only Kafka printed, one only kreplica
    printed, or a value that differs."""
    if isinstance(kafka, dict) and isinstance(ours, dict):
        found = []
        for name in sorted(set(kafka) | set(ours)):
            at = f"{where}.{name}" if where else name
            if name not in ours:
                found.append(f"{at}: only Kafka prints it ({json.dumps(kafka[name])})")
            elif name not in kafka:
                found.append(f"{at}: only kreplica prints it ({json.dumps(ours[name])})")
            else:
                found += differences(kafka[name], ours[name], at)
        return found
    if isinstance(kafka, list) and isinstance(ours, list) and len(kafka) == len(ours):
        return [d for i, (k, o) in enumerate(zip(kafka, ours)) for d in differences(k, o, f"{where}[{i}]")]
    if kafka != ours or type(kafka) is not type(ours):
        return [f"{where}: Kafka {json.dumps(kafka)}, kreplica {json.dumps(ours)}"]
    return []


def record_differences(theirs: DumpRecord, ours: OurRecord, decoder: str, kafka_major: int) -> list[str]:
    """How kreplica's record differs from the dump's (empty: they agree), field by field."""
    found = []
    if theirs.timestamp != ours.timestamp:
        found.append(f"timestamp: Kafka {theirs.timestamp}, kreplica {ours.timestamp}")
    if theirs.marker is not None:
        if (ours.control_type, ours.coordinator_epoch) != theirs.marker:
            found.append(f"transaction marker: Kafka {theirs.marker}, kreplica {(ours.control_type, ours.coordinator_epoch)}")
        return found
    if theirs.decoded is None:
        return found + [f"Kafka's decoder did not decode it: {theirs.undecoded}"]
    if ours.decoded is None:
        return found + ["kreplica did not decode it (listed raw)"]
    mine = kreplica_as_kafka_prints(ours.decoded, decoder, kafka_major)
    for name in ("record_type", "record_type_id", "key", "value_version", "value"):
        if name in theirs.decoded:
            found += differences(theirs.decoded[name], mine.get(name), name)
    return found
