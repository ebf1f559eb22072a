"""Partitions of Kafka's internal topics for the ``inspect-log --records`` tests: every record
type of every coordinator topic at every value version, every KRaft metadata record at every
version and every Raft control record, written with the repository's writers
(:func:`~kreplica.formats.coordinator.records.build_key`/``build_value``,
:func:`~kreplica.formats.kraft.records.build_metadata_value`,
:func:`~kreplica.formats.log.default_records.build_batch`) into directories named like the
topic's partitions.

Field values are drawn from the schema (:func:`sample`), so a schema kreplica gains is covered
without editing the test; what Kafka's JSON shows of them is written out by hand in the tests.
"""

from __future__ import annotations

import base64
from pathlib import Path

from kreplica.formats.coordinator.records import TOPIC_RECORD_TYPES, build_key, build_value
from kreplica.formats.kraft.records import (CONTROL_RECORDS, METADATA_RECORDS, build_control_value,
                                            build_metadata_value)
from kreplica.formats.log import default_records
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.generated_messages import Field, uuid_text

TIMESTAMP = 1_700_000_000_000
SEGMENT = "00000000000000000000.log"
UUID = uuid_text(bytes(range(1, 17)))
_SCALARS = {"int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint16": 5, "float64": 1.5, "bool": True,
            "uuid": UUID, "bytes": b"\x00\x01\xfe"}


def _sample_value(f: Field, type_: str, version: int, flexible: bool):
    if type_ in _SCALARS:
        return _SCALARS[type_]
    if type_ == "string":
        return f.name
    if type_ == "struct":
        return sample(f.fields, version, flexible)
    if type_ == "[]":
        return [sample(f.fields, version, flexible)]
    return [_sample_value(f, type_[2:], version, flexible)]


def sample(fields: tuple[Field, ...], version: int, flexible: bool) -> dict:
    """A value for every field ``version`` has (tagged ones in flexible versions only), none of
    them the field's default, so Kafka's JSON shows every one."""
    return {f.name: _sample_value(f, f.type, version, flexible) for f in fields
            if f.present(version) and (f.tag is None or flexible)}


def as_json(value, payload=lambda b: base64.b64encode(b).decode("ascii")):
    """``value`` as the machine formats carry it: lists, bytes per ``--payload`` (base64)."""
    if isinstance(value, dict):
        return {k: as_json(v, payload) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(v, payload) for v in value]
    if isinstance(value, bytes):
        return payload(value)
    return value


def write_partition(directory: Path, records: list[tuple[bytes | None, bytes | None]], *,
                    control: list[bytes | None] | None = None) -> Path:
    """``directory`` holding one segment: each ``(key, value)`` in a batch of its own."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for offset, (key, value) in enumerate(records):
        out.append(default_records.build_batch([NewRecord(offset, TIMESTAMP + offset, key, value)],
                                               base_offset=offset))
    (directory / SEGMENT).write_bytes(b"".join(out))
    return directory


def coordinator_cases(topic: str) -> list[dict]:
    """Every record type of ``topic`` at every value version, then a tombstone of each type:
    ``{record_type_id, name, key, value_version, value}`` with the fields written."""
    cases = []
    for record_type, (name, key_schema, value_schema) in sorted(TOPIC_RECORD_TYPES[topic].items()):
        key = sample(key_schema.fields, 0, False)
        for version in range(value_schema.max_version + 1):
            value = sample(value_schema.fields, version, value_schema.flexible(version))
            cases.append({"record_type_id": record_type, "name": name, "key": key, "value_version": version,
                          "value": value})
        cases.append({"record_type_id": record_type, "name": name, "key": key, "value_version": None,
                      "value": None})
    return cases


def coordinator_records(topic: str, cases: list[dict]) -> list[tuple[bytes, bytes | None]]:
    return [(build_key(topic, c["record_type_id"], c["key"]),
             build_value(topic, c["record_type_id"], c["value_version"], c["value"])) for c in cases]


def metadata_cases() -> list[dict]:
    """Every metadata record type at every version: ``{api_key, name, version, value}``."""
    return [{"api_key": key, "name": name, "version": version, "value": sample(fields, version, True)}
            for key, (name, max_version, fields) in sorted(METADATA_RECORDS.items())
            for version in range(max_version + 1)]


def write_metadata_partition(directory: Path, cases: list[dict]) -> Path:
    """``__cluster_metadata-0``: a control batch of every Raft control record, then a batch of
    each metadata record of ``cases``."""
    directory.mkdir(parents=True, exist_ok=True)
    controls = [NewRecord(i, TIMESTAMP, default_records.CONTROL_KEY.pack(0, ctype),
                          build_control_value(ctype, control_sample(ctype)))
                for i, ctype in enumerate(sorted(CONTROL_RECORDS))]
    out = [default_records.build_batch(controls, base_offset=0, is_control=True)]
    for i, c in enumerate(cases, start=len(controls)):
        out.append(default_records.build_batch(
            [NewRecord(i, TIMESTAMP, None, build_metadata_value(c["api_key"], c["version"], c["value"]))],
            base_offset=i))
    (directory / SEGMENT).write_bytes(b"".join(out))
    return directory


def control_sample(control_type: int) -> dict:
    return sample(CONTROL_RECORDS[control_type][1], 0, True)
