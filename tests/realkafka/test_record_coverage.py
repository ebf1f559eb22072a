"""kreplica's record tables proved against Kafka's own message classes, release by release.

``RecordCoverage.java`` has Kafka's jars write every record type of ``__cluster_metadata`` (the
framed metadata records and the Raft control records), ``__consumer_offsets``,
``__transaction_state``, ``__share_group_state`` and tiered storage's ``__remote_log_metadata``
(kafka-storage's ``MetadataRecordType``, framed by ``BytesApiMessageSerde``) at every version the
generated classes support, each field set to a value other than its default, and prints the bytes with the
generated JsonConverter's reading. kreplica must know exactly the (type, version) pairs the
newest jars know (less those an older release wrote, or its tables mark retired), know every
pair an older release knows, and decode each record to Kafka's values field by field: a field
either side lacks, or an unknown tag, fails. Needs Java and Maven (the jars resolve once into
the cache): skipped with the reason without them, required in CI (CI=true) for the newest.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import subprocess
from collections.abc import Mapping, Sequence

import pytest

from kreplica.formats.coordinator import group_records
from kreplica.formats.coordinator.records import (CONSUMER_OFFSETS, SHARE_GROUP_STATE, TOPIC_RECORD_TYPES,
                                                  TRANSACTION_STATE, decode_record)
from kreplica.formats.errors import FormatError
from kreplica.formats.generated_messages import Field, decode_fields, default_of
from kreplica.formats.kraft.records import (CONTROL_RECORDS, CONTROL_VERSIONS, METADATA_RECORDS,
                                            parse_metadata_value)
from kreplica.formats.remote_storage.metadata_records import RECORDS as REMOTE_RECORDS
from kreplica.formats.remote_storage.metadata_records import parse_remote_log_metadata
from tests.realkafka.jars import Unavailable, java, record_coverage

NEWEST = "4.4.0"
RELEASES = (NEWEST, "3.9.2")
RUN_TIMEOUT_S = 120
#: RecordCoverage's coordinator names -> the topic whose records they are
TOPICS = {"group": CONSUMER_OFFSETS, "transaction": TRANSACTION_STATE, "share": SHARE_GROUP_STATE}
FAMILIES = ("metadata", "control", "coordinator", "remote")

Pair = tuple  # (family, topic or None, type, version)


@functools.cache
def _written(version: str) -> tuple[dict, ...] | str:
    """RecordCoverage's lines for ``version``, or why it cannot run here (run once per session)."""
    try:
        found = record_coverage(version)
        command = [java(), "-cp", found.classpath(found.classes), "RecordCoverage"]
    except Unavailable as exc:
        return str(exc)
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if done.returncode != 0:
        raise AssertionError(f"RecordCoverage failed on Kafka {version}: {done.stderr.strip()[-2000:]}")
    return tuple(json.loads(line) for line in done.stdout.splitlines())


def _lines(version: str) -> tuple[dict, ...]:
    written = _written(version)
    if isinstance(written, str):
        if os.environ.get("CI") == "true" and version == NEWEST:
            pytest.fail(f"Kafka {version}'s jars are required in CI (CI=true): {written}")
        pytest.skip(f"Kafka {version}'s jars cannot run here: {written}")
    return written


def _pair(line: Mapping) -> Pair:
    return line["family"], TOPICS.get(line.get("topic")), line["type"], line["version"]


def _kafka_pairs(version: str) -> set[Pair]:
    return {_pair(line) for line in _lines(version)}


def _kreplica_pairs() -> set[Pair]:
    """Every (type, version) kreplica's tables decode, from the tables themselves."""
    pairs = {("metadata", None, key, v) for key, (_n, top, _f) in METADATA_RECORDS.items() for v in range(top + 1)}
    pairs |= {("control", None, t, v) for t in CONTROL_RECORDS for v in range(CONTROL_VERSIONS[t] + 1)}
    pairs |= {("remote", None, key, v) for key, (_n, top, _f) in REMOTE_RECORDS.items() for v in range(top + 1)}
    pairs |= {("coordinator", topic, t, v) for topic, types in TOPIC_RECORD_TYPES.items()
              for t, (_n, _k, value) in types.items() for v in range(value.max_version + 1)}
    return pairs


def _retired() -> set[Pair]:
    """The pairs kreplica's tables keep for releases no tested jar is (``RETIRED_TYPES``)."""
    value = {t: TOPIC_RECORD_TYPES[CONSUMER_OFFSETS][t][2] for t in group_records.RETIRED_TYPES}
    return {("coordinator", CONSUMER_OFFSETS, t, v) for t, schema in value.items()
            for v in range(schema.max_version + 1)}


@pytest.mark.parametrize("version", RELEASES)
def test_kreplica_knows_every_record_kafka_knows(version) -> None:
    assert sorted(_kafka_pairs(version) - _kreplica_pairs(), key=str) == []


def test_kreplica_knows_no_record_kafka_never_wrote() -> None:
    newest = _kafka_pairs(NEWEST)
    older = set().union(*(_kafka_pairs(v) for v in RELEASES if v != NEWEST))
    assert sorted(_kreplica_pairs() - newest - older - _retired(), key=str) == []
    assert sorted(_retired() & (newest | older), key=str) == []   # retired means no tested jar knows it


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("version", RELEASES)
def test_every_record_decodes_to_kafkas_values(version, family) -> None:
    lines = [line for line in _lines(version) if line["family"] == family]
    assert lines or (family == "coordinator" and version != NEWEST)
    problems = [f"{line['name']} v{line['version']} (type {line['type']}): {problem}"
                for line in lines for problem in _problems(line, newest=version == NEWEST)]
    assert not problems, "\n".join(problems)


def test_every_field_kafka_wrote_is_set() -> None:
    """The program sets every field: a struct or array left empty would prove nothing of its fields."""
    empty = [f"{line['name']} v{line['version']}: {path}" for line in _lines(NEWEST)
             for which in ("json", "key_json") if which in line for path in _empty(line[which], which)]
    assert empty == []


def _empty(value, path: str) -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _empty(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [path] if not value else [p for i, v in enumerate(value) for p in _empty(v, f"{path}[{i}]")]
    return [path] if value is None else []


def _problems(line: Mapping, *, newest: bool) -> list[str]:
    """How kreplica's reading of one record Kafka wrote differs from Kafka's own."""
    if "error" in line:
        return [f"Kafka's classes could not write it: {line['error']}"]
    try:
        return _read_problems(line, newest)
    except FormatError as exc:
        return [f"kreplica cannot read it: {exc}"]


def _read_problems(line: Mapping, newest: bool) -> list[str]:
    version = line["version"]
    if line["family"] == "metadata":
        api_key, got_version, name, data, _raw = parse_metadata_value(bytes.fromhex(line["hex"]))
        if (api_key, got_version, name) != (line["type"], version, line["name"]):
            return [f"read as {name} (api key {api_key}) version {got_version}"]
        return _differences(METADATA_RECORDS[api_key][2], version, data, line["json"], "", newest)
    if line["family"] == "remote":
        record = parse_remote_log_metadata(bytes.fromhex(line["hex"]))
        if (record.api_key, record.version, record.name) != (line["type"], version, line["name"]):
            return [f"read as {record.name} (api key {record.api_key}) version {record.version}"]
        return _differences(REMOTE_RECORDS[record.api_key][2], version, record.data, line["json"], "", newest)
    if line["family"] == "control":
        name, fields = CONTROL_RECORDS[line["type"]]
        value = bytes.fromhex(line["hex"])
        data, end = decode_fields(fields, version, value)
        problems = [] if end == len(value) else [f"{len(value) - end} byte(s) left after the message"]
        if name != line["name"]:
            problems.append(f"kreplica names it {name}")
        return problems + _differences(fields, version, data, line["json"], "", newest)
    topic = TOPICS[line["topic"]]
    record = decode_record(topic, bytes.fromhex(line["key_hex"]), bytes.fromhex(line["value_hex"]))
    _name, key_schema, value_schema = TOPIC_RECORD_TYPES[topic][line["type"]]
    if record.value_version != version:
        return [f"read at value version {record.value_version}"]
    return (_differences(key_schema.fields, 0, record.key, line["key_json"], "key.", newest)
            + _differences(value_schema.fields, version, record.value, line["json"], "", newest))


def _normal(name: str) -> str:
    """Kafka's camelCase JSON name and kreplica's snake_case name spelled alike."""
    return name.replace("_", "").lower()


def _differences(fields: Sequence[Field], version: int, ours: Mapping, theirs: Mapping, path: str,
                 newest: bool) -> list[str]:
    """Field by field; a tagged field a later release added to the version (absent from an older
    release's schema and bytes) must read as its default."""
    out = [f"{path}tags kreplica does not know: {sorted(ours['_unknown_tags'])}"] if "_unknown_tags" in ours else []
    left = {_normal(name): (name, value) for name, value in theirs.items()}
    for f in fields:
        found = left.pop(_normal(f.name), None)
        if found is None:
            added_later = not newest and f.tag is not None and ours.get(f.name) == default_of(f)
            if f.present(version) and not added_later:
                out.append(f"{path}{f.name}: kreplica reads it at version {version}, Kafka has no such field")
        elif not f.present(version):
            out.append(f"{path}{f.name}: Kafka has it at version {version}, kreplica's table does not")
        else:
            out += _value_differences(f, f.type, ours.get(f.name), found[1], version, f"{path}{f.name}",
                                      newest)
    return out + [f"{path}{name}: a field kreplica's table lacks" for name, _v in left.values()]


def _value_differences(f: Field, type_: str, ours, theirs, version: int, path: str, newest: bool) -> list[str]:
    if ours is None or theirs is None:
        return [] if ours is None and theirs is None else [f"{path}: kreplica {ours!r}, Kafka {theirs!r}"]
    if type_ == "struct":
        return _differences(f.fields, version, ours, theirs, f"{path}.", newest)
    if type_.startswith("[]"):
        if len(ours) != len(theirs):
            return [f"{path}: kreplica {len(ours)} elements, Kafka {len(theirs)}"]
        inner = type_[2:] or "struct"
        return [d for i, (o, t) in enumerate(zip(ours, theirs))
                for d in _value_differences(f, inner, o, t, version, f"{path}[{i}]", newest)]
    if type_ == "bytes":
        ours = base64.b64encode(ours).decode("ascii")
    return [] if ours == theirs else [f"{path}: kreplica {ours!r}, Kafka {theirs!r}"]
