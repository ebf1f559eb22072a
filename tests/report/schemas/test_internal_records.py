"""The ``decoded`` member of inspect-log's record objects: Kafka's names for the metadata record
types, Kafka's JSON converter rule for which fields a version shows, and values every output
format can carry."""

from __future__ import annotations

import math

import pytest

from kreplica.formats.kraft.records import METADATA_RECORDS, MetadataRecord
from kreplica.formats.generated_messages import F
from kreplica.report.schemas.internal_records import as_written, decoded_object, snake_case
from kreplica.report.output.encoding import dumps


@pytest.mark.parametrize(("name", "kafka"), [
    # MetadataRecordType constants, from MessageGenerator.toSnakeCase(name).toUpperCase()
    pytest.param("TopicRecord", "TOPIC_RECORD", id="topic"),
    pytest.param("ZkMigrationStateRecord", "ZK_MIGRATION_STATE_RECORD", id="zk-migration"),
    pytest.param("NoOpRecord", "NO_OP_RECORD", id="no-op"),
    pytest.param("UserScramCredentialRecord", "USER_SCRAM_CREDENTIAL_RECORD", id="scram"),
    pytest.param("BrokerRegistrationChangeRecord", "BROKER_REGISTRATION_CHANGE_RECORD", id="registration-change"),
])
def test_metadata_record_types_are_kafkas_constants_in_lower_case(name, kafka) -> None:
    assert snake_case(name) == kafka.lower()


def test_every_metadata_record_type_has_a_distinct_name() -> None:
    names = [snake_case(name) for name, _v, _f in METADATA_RECORDS.values()]
    assert len(set(names)) == len(names)


FIELDS = (F("a", "int32"), F("b", "int32", since=2, default=-1), F("c", "int32", until=1),
          F("t", "int64", since=1, tag=0, default=-1), F("s", "struct", tag=1, nullable=True, fields=(F("x", "int8"),)))


@pytest.mark.parametrize(("version", "flexible", "values", "shown"), [
    pytest.param(0, False, {"a": 1, "b": -1, "c": 3, "t": -1, "s": None}, {"a": 1, "c": 3}, id="v0"),
    pytest.param(2, True, {"a": 1, "b": 2, "c": 0, "t": -1, "s": {"x": 0}}, {"a": 1, "b": 2}, id="tagged-at-default"),
    # a tagged struct's default is the empty struct, whatever the schema says: a null one is written
    pytest.param(2, True, {"a": 1, "b": 2, "c": 0, "t": -1, "s": None}, {"a": 1, "b": 2, "s": None},
                 id="tagged-null-struct"),
    pytest.param(2, True, {"a": 1, "b": 2, "c": 0, "t": 9, "s": {"x": 1}}, {"a": 1, "b": 2, "t": 9, "s": {"x": 1}},
                 id="tagged-set"),
    pytest.param(1, True, {"a": 1, "b": -1, "c": 3, "t": -1, "s": None, "_unknown_tags": {7: b"\x01"}},
                 {"a": 1, "c": 3, "s": None, "_unknown_tags": {7: b"\x01"}}, id="unknown-tag-kept"),
])
def test_a_version_shows_its_fields_and_tagged_ones_that_differ_from_the_default(version, flexible, values,
                                                                                 shown) -> None:
    # JsonConverterGenerator.generateWrite: fields outside the version are not written, a tagged
    # field only when it is not its default (FieldSpec.generateNonDefaultValueCheck: a struct's is
    # a new, empty struct, so a null struct is written)
    assert as_written(FIELDS, version, flexible, values) == shown


@pytest.mark.parametrize(("value", "text"), [
    pytest.param(math.nan, "NaN", id="nan"), pytest.param(math.inf, "Infinity", id="inf"),
    pytest.param(-math.inf, "-Infinity", id="-inf"), pytest.param(2.5, 2.5, id="finite"),
])
def test_a_quota_that_is_not_a_finite_number_is_written_as_java_does(value, text) -> None:
    record = MetadataRecord("p", 0, 0, 0, 0, 14, 0, "ClientQuotaRecord",
                            {"entity": ({"entity_type": "user", "entity_name": None},), "key": "k", "value": value,
                             "remove": False})
    obj = decoded_object(record, lambda b: b.hex())
    assert obj["value"]["value"] == text
    dumps(obj)   # what every machine format refuses on a NaN
