"""A coordinator record: the key and value of a record in Kafka's internal coordinator topics.

Sources (apache/kafka): ``coordinator-common/.../runtime/CoordinatorRecordSerde.java`` (the frame
and its errors), ``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` (how the stock tool
prints them), ``core/.../group/GroupMetadataManager.scala`` (3.x and older); ``../shared/specs/
kafka-formats.md`` §11.

Every record of ``__consumer_offsets``, ``__transaction_state`` and ``__share_group_state`` is::

    Key   => RecordType => Int16, then the key message of that type (never flexible)
    Value => Version => Int16, then the value message of that type at that version
             or null: a tombstone, the key's state deleted

Which topic a partition belongs to is known from its directory name; the records carry no
topic. A record type, or a value version, that this table does not know (a newer Kafka wrote
it) raises :class:`UnsupportedVersion`; bytes that do not fit the schema raise
:class:`Malformed` or :class:`Truncated`. The caller turns them into findings: the coordinator's
loader fails on the first, as :mod:`kreplica.formats.kraft.records` does for metadata.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

from kreplica.formats._java import INT32_MIN, java_string_hash
from kreplica.formats.coordinator import group_records, share_records, transaction_records
from kreplica.formats.coordinator.consumer_protocol import (CONSUMER_PROTOCOL_TYPE, decode_assignment,
                                                            decode_subscription)
from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.generated_messages import Message, decode, decode_flat, encode

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
SHARE_GROUP_STATE = "__share_group_state"
#: ``offsets.topic.num.partitions`` and ``transaction.state.log.num.partitions`` by default.
DEFAULT_PARTITION_COUNT = 50

#: internal topic -> its record types (type -> (short name, key schema, value schema))
TOPIC_RECORD_TYPES: dict[str, dict[int, tuple[str, Message, Message]]] = {
    CONSUMER_OFFSETS: group_records.RECORD_TYPES,
    TRANSACTION_STATE: transaction_records.RECORD_TYPES,
    SHARE_GROUP_STATE: share_records.RECORD_TYPES,
}

_TYPE = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    """One decoded record: its type, key fields, and value (``None``: a tombstone).

    ``name`` is the type's short name (``offset_commit``, ``group_metadata``,
    ``transaction_metadata``, ...); ``schema`` the value schema's Kafka name.
    """

    record_type: int
    name: str
    schema: str
    key: Mapping
    value_version: int | None
    value: Mapping | None

    @property
    def tombstone(self) -> bool:
        return self.value is None


def _version(raw, what: str, path: str | None, base: int) -> int:
    if raw is None or len(raw) < _TYPE.size:
        raise Truncated(f"Could not read version from {what}'s buffer", path=path, position=base,
                        field=f"{what} version")
    return _TYPE.unpack_from(raw)[0]


def _message(message: Message, version: int, raw, what: str, path: str | None, base: int) -> dict:
    try:
        data, end = decode(message, version, raw, start=_TYPE.size, base=base, path=path)
    except FormatError as exc:
        raise type(exc)(f"Could not read {message.name} version {version} from the {what}: {exc.reason}",
                        path=path, position=exc.position, field=exc.field) from None
    if end != len(raw):
        raise Malformed(f"{len(raw) - end} byte(s) after {message.name} version {version} in the {what}",
                        path=path, position=base, field=what)
    return data


def decode_record(topic: str, key: bytes | None, value: bytes | None, *, path: str | None = None,
                  position: int = 0) -> CoordinatorRecord:
    """The record of ``topic`` with these key and value bytes; ``position`` (its batch's byte
    position) locates errors. Raises :class:`FormatError`."""
    types = TOPIC_RECORD_TYPES[topic]
    if key is None:
        raise Malformed("a coordinator record needs a key (it names the state it updates)",
                        path=path, position=position, field="key")
    record_type = _version(key, "key", path, position)
    schemas = types.get(record_type)
    if schemas is None:
        raise UnsupportedVersion(f"Unknown record type {record_type} in {topic}", path=path, position=position,
                                 field="record type", actual=record_type)
    name, key_schema, value_schema = schemas
    key_data = _message(key_schema, 0, key, "key", path, position)
    if value is None:
        return CoordinatorRecord(record_type, name, value_schema.name, key_data, None, None)
    version = _version(value, "value", path, position)
    if not 0 <= version <= value_schema.max_version:
        raise UnsupportedVersion(f"Unknown {value_schema.name} version {version} (kreplica knows 0 to "
                                 f"{value_schema.max_version})", path=path, position=position,
                                 field="value version", actual=version)
    value_data = _message(value_schema, version, value, "value", path, position)
    if record_type == group_records.GROUP_METADATA:
        value_data = _expand_members(value_data)
    return CoordinatorRecord(record_type, name, value_schema.name, key_data, version, value_data)


def decode_matched(topic: str, key: bytes, value: bytes | None) -> CoordinatorRecord:
    """:func:`decode_record` of a record whose key and value match their schemas' flat layouts
    (:func:`~kreplica.formats.generated_messages.flat_layout`: what the key fold keeps), read without the
    generic reader's checks; the same record."""
    (record_type,) = _TYPE.unpack_from(key)
    name, key_schema, value_schema = TOPIC_RECORD_TYPES[topic][record_type]
    key_data = decode_flat(key_schema, 0, key, _TYPE.size)
    if value is None:
        return CoordinatorRecord(record_type, name, value_schema.name, key_data, None, None)
    (version,) = _TYPE.unpack_from(value)
    value_data = decode_flat(value_schema, version, value, _TYPE.size)
    if key_data is None or value_data is None:
        return decode_record(topic, key, value)
    return CoordinatorRecord(record_type, name, value_schema.name, key_data, version, value_data)


def _expand_members(value: dict) -> dict:
    """Decode members' subscription and assignment bytes for protocol type ``consumer``, as the
    dump tool does; bytes that do not decode stay bytes (other protocol types are opaque)."""
    if value.get("protocol_type") != CONSUMER_PROTOCOL_TYPE:
        return value
    members = []
    for m in value["members"]:
        m = dict(m)
        for name, reader in (("subscription", decode_subscription), ("assignment", decode_assignment)):
            try:
                m[name] = reader(m[name])
            except FormatError:
                pass
        members.append(m)
    return {**value, "members": tuple(members)}


def build_key(topic: str, record_type: int, key: Mapping) -> bytes:
    """Key bytes as the coordinator writes them (fixtures and tests)."""
    _name, key_schema, _value = TOPIC_RECORD_TYPES[topic][record_type]
    return _TYPE.pack(record_type) + encode(key_schema, 0, key)


def build_value(topic: str, record_type: int, version: int, value: Mapping | None) -> bytes | None:
    """Value bytes at ``version`` (``None`` for a tombstone)."""
    if value is None:
        return None
    _name, _key, value_schema = TOPIC_RECORD_TYPES[topic][record_type]
    return _TYPE.pack(version) + encode(value_schema, version, value)


def partition_for(key: str, partition_count: int = DEFAULT_PARTITION_COUNT) -> int:
    """The partition holding the records of group id or transactional id ``key``:
    ``Utils.abs(key.hashCode) % partitionCount`` (``GroupMetadataManager.partitionFor``,
    ``TransactionStateManager.partitionFor``; ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0)."""
    h = java_string_hash(key)
    return (0 if h == INT32_MIN else abs(h)) % partition_count


def internal_topic(topic: str | None) -> str | None:
    """``topic`` if its records are coordinator records, else None."""
    return topic if topic in TOPIC_RECORD_TYPES else None
