"""The ``decoded`` member of an ``inspect-log`` record object: the records of Kafka's internal
topics as their decoders read them (:mod:`kreplica.analysis.inspect.internal_records`); their
text is :mod:`kreplica.report.text.internal_records`.

One shape for every internal topic::

    decoded  {record_type, record_type_id, key, value_version, value} | null

* ``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``: ``record_type`` is
  the record type's name (``offset_commit``, ``group_metadata``, ``consumer_group_member_metadata``,
  ``transaction_metadata``, ``share_snapshot``...), ``record_type_id`` the key's leading int16,
  ``key`` the key's fields, ``value_version`` the value's leading int16 and ``value`` its fields;
  a tombstone (the key's state deleted) has ``value_version`` and ``value`` null.
* ``__cluster_metadata`` and KRaft snapshots: ``record_type`` is Kafka's ``MetadataRecordType``
  in snake_case (``topic_record``, ``partition_change_record``, ``register_broker_record``...),
  ``record_type_id`` its api key, ``value_version`` the record's version; a Raft control record
  has its control type's name (``leader_change``, ``snapshot_header``, ``snapshot_footer``,
  ``kraft_version``, ``kraft_voters``) and id, version 0. ``key`` is null (metadata records
  have none; a control record's key is its ``control_type``).
* ``__remote_log_metadata`` (tiered storage): ``record_type`` is the schema's name in snake_case
  (``remote_log_segment_metadata_record``, ``remote_log_segment_metadata_update_record``,
  ``remote_partition_delete_metadata_record``), ``record_type_id`` its api key, ``value_version``
  its version; ``key`` is null (the records have none). The state stays its id
  (``remote_log_segment_state`` 1 is COPY_SEGMENT_FINISHED); ``custom_metadata`` follows
  ``--payload``; ``txn_index_empty`` is there only when true, as Kafka's converter writes it.

A value holds the fields its version has, as Kafka's generated JSON converters write them
(``JsonConverterGenerator.generateWrite``, what the dump tool prints): a field added in a later
version, or dropped in an earlier one, is absent (``leader_epoch`` of an offset commit before
v3), and a tagged field is there only when it differs from its default (a
``PartitionChangeRecord`` names only what changed; a tagged struct's default is the empty
struct, so a null one is there, null). A ``consumer`` protocol member's
``subscription`` and ``assignment`` are expanded the same way, with their ``version``.
Field names are Kafka's schema names in snake_case; values are the schema's raw values (ints
stay ints: ``transaction_status`` 4 is CompleteCommit); uuids are Kafka's text (22 characters of
URL-safe base64); bytes (``user_data``, the subscription and assignment of a protocol other than
``consumer``, which are expanded, SCRAM salts and keys) follow ``--payload``; a float that is
not finite is Java's text (``NaN``, ``Infinity``, ``-Infinity``); tagged fields kreplica does not
know are under ``_unknown_tags`` (tag -> bytes). ``decoded`` is null for a record that did not
decode (a finding says why) and for a transaction marker in a coordinator topic; a record of any
other topic has no ``decoded`` member, its object exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from kreplica.formats.coordinator.consumer_protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kreplica.formats.coordinator.records import TOPIC_RECORD_TYPES, CoordinatorRecord
from kreplica.formats.generated_messages import Field, Message, default_of
from kreplica.formats.kraft.records import CONTROL_RECORDS, METADATA_RECORDS, ControlRecord, MetadataRecord
from kreplica.formats.remote_storage.metadata_records import RECORDS as REMOTE_LOG_METADATA_RECORDS
from kreplica.formats.remote_storage.metadata_records import RemoteLogMetadataRecord
from kreplica.report.schemas import describe

#: The schema version Kafka reads every Raft control record at (``ControlRecordUtils``).
CONTROL_RECORD_VERSION = 0
#: value schema name -> its schema, for every coordinator topic
_VALUE_SCHEMAS: dict[str, Message] = {value.name: value for types in TOPIC_RECORD_TYPES.values()
                                      for _name, _key, value in types.values()}
#: the consumer protocol's embedded messages, by the member field holding them
_EMBEDDED = {"subscription": ConsumerProtocolSubscription, "assignment": ConsumerProtocolAssignment}
#: Java's ``Double.toString`` of the floats JSON has no form for.
_JAVA_FLOATS = {math.inf: "Infinity", -math.inf: "-Infinity"}


def snake_case(name: str) -> str:
    """``TopicRecord`` -> ``topic_record``, as Kafka's ``MessageGenerator.toSnakeCase`` names
    the ``MetadataRecordType`` constants (an underscore before a capital that follows a
    lower-case letter or digit)."""
    out = []
    previous_upper = True
    for ch in name:
        if ch.isupper():
            if not previous_upper:
                out.append("_")
            out.append(ch.lower())
            previous_upper = True
        else:
            out.append(ch)
            previous_upper = False
    return "".join(out)


def as_written(fields: tuple[Field, ...], version: int, flexible: bool, values: Mapping) -> dict:
    """``values`` (a decoded message, every field filled in) cut to what Kafka's JSON converter
    writes at ``version``: the fields that version has, tagged ones only when not their
    default (module docstring); unknown tags are kept."""
    out = {}
    for f in fields:
        if not f.present(version) or (f.tag is not None and (not flexible or values[f.name] == _written_default(f))):
            continue
        value = values[f.name]
        if value is not None and f.type == "[]":
            value = [as_written(f.fields, version, flexible, item) for item in value]
        elif value is not None and f.type == "struct":
            value = as_written(f.fields, version, flexible, value)
        elif f.name in _EMBEDDED and isinstance(value, Mapping) and value.get("version") is not None:
            embedded = _EMBEDDED[f.name]
            value = {**as_written(embedded.fields, min(value["version"], embedded.max_version), False, value),
                     "version": value["version"]}
        out[f.name] = value
    if "_unknown_tags" in values:
        out["_unknown_tags"] = values["_unknown_tags"]
    return out


def _written_default(f: Field):
    """What Kafka's JSON converter takes for a tagged field's default: a struct's is a new, empty
    struct whatever the schema says (``FieldSpec.generateNonDefaultValueCheck``), so a null
    struct is written, as null (``classic_member_metadata`` of a consumer group member)."""
    if f.type == "struct":
        return {g.name: default_of(g) for g in f.fields}
    return default_of(f)


def _plain(value, enc: Callable[[bytes], object]):
    """``value`` with only what every output format carries: str keys, lists, encoded bytes."""
    kind = type(value)
    if kind is int or kind is str or value is None or kind is bool:   # most values, without an ABC check
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v, enc) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v, enc) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return enc(bytes(value))
    if isinstance(value, float) and not math.isfinite(value):
        return _JAVA_FLOATS.get(value, "NaN")
    return value


def decoded_object(decoded: CoordinatorRecord | MetadataRecord | ControlRecord | RemoteLogMetadataRecord | None,
                   enc: Callable[[bytes], object]) -> dict | None:
    """The ``decoded`` member (module docstring); ``enc`` turns bytes into their ``--payload`` form."""
    if decoded is None:
        return None
    if isinstance(decoded, CoordinatorRecord):
        value = None
        if decoded.value is not None:
            schema = _VALUE_SCHEMAS[decoded.schema]
            version = decoded.value_version
            value = _plain(as_written(schema.fields, version, schema.flexible(version), decoded.value), enc)
        return {"record_type": decoded.name, "record_type_id": decoded.record_type,
                "key": _plain(decoded.key, enc), "value_version": decoded.value_version, "value": value}
    if isinstance(decoded, MetadataRecord):
        fields = METADATA_RECORDS[decoded.api_key][2]
        return {"record_type": snake_case(decoded.name), "record_type_id": decoded.api_key, "key": None,
                "value_version": decoded.version,
                "value": _plain(as_written(fields, decoded.version, True, decoded.data), enc)}
    if isinstance(decoded, RemoteLogMetadataRecord):
        fields = REMOTE_LOG_METADATA_RECORDS[decoded.api_key][2]
        return {"record_type": snake_case(decoded.name), "record_type_id": decoded.api_key, "key": None,
                "value_version": decoded.version,
                "value": _plain(as_written(fields, decoded.version, True, decoded.data), enc)}
    fields = CONTROL_RECORDS[decoded.control_type][1]
    return {"record_type": describe.control_type(decoded.control_type), "record_type_id": decoded.control_type,
            "key": None, "value_version": CONTROL_RECORD_VERSION,
            "value": _plain(as_written(fields, CONTROL_RECORD_VERSION, True, decoded.data), enc)}
