"""The records of ``__remote_log_metadata``: where each remote segment of a tiered partition is,
and what state its copy or deletion is in (KIP-405, ``TopicBasedRemoteLogMetadataManager``).

Sources (apache/kafka, checked against the 4.4.0 and 3.9.2 jars of Maven Central):
``storage/src/main/resources/message/RemoteLogSegmentMetadataRecord.json``,
``RemoteLogSegmentMetadataUpdateRecord.json``, ``RemotePartitionDeleteMetadataRecord.json``,
``RemoteLogSegmentMetadataSnapshotRecord.json`` (the schemas: api keys 0 to 3, each at version 0
only, flexible from 0; 4.0 added the tagged ``TxnIndexEmpty``, tag 0, to the segment metadata
and snapshot records); ``storage/.../remote/metadata/storage/serialization/RemoteLogMetadataSerde.java``
and ``server-common/.../serialization/BytesApiMessageSerde.java``,
``AbstractApiMessageSerde.java`` (the frame); ``storage/api/.../remote/storage/
RemoteLogSegmentState.java`` and ``RemotePartitionDeleteState.java`` (the state ids).

The producer of ``TopicBasedRemoteLogMetadataManager`` writes each record with a null key to
the partition of the user partition's hash; the value is framed as KRaft's metadata records
are (:mod:`kreplica.formats.kraft.records`)::

    RemoteLogMetadata => FrameVersion => UnsignedVarint   (1; 0 is refused)
                         ApiKey       => UnsignedVarint   (record type, table below)
                         Version      => UnsignedVarint   (0)
                         Body         => generated message, flexible encoding

    RemoteLogSegmentMetadataRecord (0)       a copy started: the whole segment's metadata
      RemoteLogSegmentId => TopicIdPartition => Name String, Id Uuid, Partition Int32
                            Id => Uuid                 (the remote segment's id)
      StartOffset Int64, EndOffset Int64, BrokerId Int32, MaxTimestampMs Int64,
      EventTimestampMs Int64, SegmentLeaderEpochs => [LeaderEpoch Int32, Offset Int64],
      SegmentSizeInBytes Int32, CustomMetadata NullableBytes, RemoteLogSegmentState Int8,
      TxnIndexEmpty Bool (tagged 0, 4.0+)
    RemoteLogSegmentMetadataUpdateRecord (1) a state change of one segment
      RemoteLogSegmentId (as above), BrokerId Int32, EventTimestampMs Int64,
      CustomMetadata NullableBytes, RemoteLogSegmentState Int8
    RemotePartitionDeleteMetadataRecord (2)  the deletion of a whole partition's remote data
      TopicIdPartition (as above), BrokerId Int32, EventTimestampMs Int64,
      RemotePartitionDeleteState Int8
    RemoteLogSegmentMetadataSnapshotRecord (3) one segment in a remote_log_snapshot file
      SegmentId Uuid, StartOffset Int64, EndOffset Int64, BrokerId Int32, MaxTimestampMs Int64,
      EventTimestampMs Int64, SegmentLeaderEpochs, SegmentSizeInBytes Int32,
      CustomMetadata NullableBytes, RemoteLogSegmentState Int8, TxnIndexEmpty Bool (tagged 0)

The snapshot record never goes to the topic: ``RemoteLogMetadataSnapshotFile`` (3.1 to 3.7,
:mod:`.metadata_snapshot`) wrote it, framed the same way. Kafka's deserializer refuses an api key
it does not know (``MetadataRecordType.fromId``) and bytes after the body ("Found N byte(s) of
garbage"); the transforms map the state ids with ``forId``, which knows only the ids below.
Field names are Kafka's in snake_case; uuids are Kafka's text (22 characters of URL-safe base64).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kreplica.formats.errors import Malformed, UnsupportedVersion
from kreplica.formats.generated_messages import Cursor, F, Field, decode_fields, encode_fields
from kreplica.formats.varint import build_unsigned_varint

#: ``Topic.REMOTE_LOG_METADATA_TOPIC_NAME``
REMOTE_LOG_METADATA_TOPIC = "__remote_log_metadata"
#: ``AbstractApiMessageSerde.DEFAULT_FRAME_VERSION``
FRAME_VERSION = 1
#: ``AbstractApiMessageSerde.unsignedIntToShort``: a type or version above it is refused
_SHORT_MAX = 0x7FFF

# api keys (MetadataRecordType of storage/.../remote/metadata/storage/generated)
REMOTE_LOG_SEGMENT_METADATA = 0
REMOTE_LOG_SEGMENT_METADATA_UPDATE = 1
REMOTE_PARTITION_DELETE_METADATA = 2
REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT = 3

# RemoteLogSegmentState ids
COPY_SEGMENT_STARTED = 0
COPY_SEGMENT_FINISHED = 1
DELETE_SEGMENT_STARTED = 2
DELETE_SEGMENT_FINISHED = 3
#: RemoteLogSegmentState id -> Kafka's name of it
SEGMENT_STATES = {COPY_SEGMENT_STARTED: "COPY_SEGMENT_STARTED", COPY_SEGMENT_FINISHED: "COPY_SEGMENT_FINISHED",
                  DELETE_SEGMENT_STARTED: "DELETE_SEGMENT_STARTED", DELETE_SEGMENT_FINISHED: "DELETE_SEGMENT_FINISHED"}

# RemotePartitionDeleteState ids
DELETE_PARTITION_MARKED = 0
DELETE_PARTITION_STARTED = 1
DELETE_PARTITION_FINISHED = 2
#: RemotePartitionDeleteState id -> Kafka's name of it
PARTITION_DELETE_STATES = {DELETE_PARTITION_MARKED: "DELETE_PARTITION_MARKED",
                           DELETE_PARTITION_STARTED: "DELETE_PARTITION_STARTED",
                           DELETE_PARTITION_FINISHED: "DELETE_PARTITION_FINISHED"}

_TOPIC_ID_PARTITION = (F("name", "string"), F("id", "uuid"), F("partition", "int32"))
_SEGMENT_ID = (F("topic_id_partition", "struct", fields=_TOPIC_ID_PARTITION), F("id", "uuid"))
_LEADER_EPOCH = (F("leader_epoch", "int32"), F("offset", "int64"))
_SEGMENT_FIELDS = (
    F("start_offset", "int64"), F("end_offset", "int64"), F("broker_id", "int32"),
    F("max_timestamp_ms", "int64"), F("event_timestamp_ms", "int64"),
    F("segment_leader_epochs", "[]", fields=_LEADER_EPOCH), F("segment_size_in_bytes", "int32"),
    F("custom_metadata", "bytes", nullable=True), F("remote_log_segment_state", "int8"),
    F("txn_index_empty", "bool", tag=0, default=False))

#: api key -> (record name, highest version, fields): the schemas of the 4.4.0 jar
RECORDS: dict[int, tuple[str, int, tuple[Field, ...]]] = {
    REMOTE_LOG_SEGMENT_METADATA: ("RemoteLogSegmentMetadataRecord", 0, (
        F("remote_log_segment_id", "struct", fields=_SEGMENT_ID), *_SEGMENT_FIELDS)),
    REMOTE_LOG_SEGMENT_METADATA_UPDATE: ("RemoteLogSegmentMetadataUpdateRecord", 0, (
        F("remote_log_segment_id", "struct", fields=_SEGMENT_ID), F("broker_id", "int32"),
        F("event_timestamp_ms", "int64"), F("custom_metadata", "bytes", nullable=True),
        F("remote_log_segment_state", "int8"))),
    REMOTE_PARTITION_DELETE_METADATA: ("RemotePartitionDeleteMetadataRecord", 0, (
        F("topic_id_partition", "struct", fields=_TOPIC_ID_PARTITION), F("broker_id", "int32"),
        F("event_timestamp_ms", "int64"), F("remote_partition_delete_state", "int8"))),
    REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT: ("RemoteLogSegmentMetadataSnapshotRecord", 0, (
        F("segment_id", "uuid"), *_SEGMENT_FIELDS)),
}
RECORD_KEYS = {name: key for key, (name, _v, _f) in RECORDS.items()}


@dataclass(frozen=True, slots=True)
class RemoteLogMetadataRecord:
    """One record of ``__remote_log_metadata`` (or one entry of a ``remote_log_snapshot``):
    its api key, version, schema name and fields (``data``, every field filled in)."""

    api_key: int
    version: int
    name: str
    data: Mapping

    @property
    def state(self) -> int:
        """The record's state id: a ``RemoteLogSegmentState`` or, for partition-delete
        metadata, a ``RemotePartitionDeleteState``."""
        if self.api_key == REMOTE_PARTITION_DELETE_METADATA:
            return self.data["remote_partition_delete_state"]
        return self.data["remote_log_segment_state"]

    @property
    def state_name(self) -> str | None:
        """Kafka's name of :attr:`state`, ``None`` for an id Kafka's ``forId`` does not know."""
        states = PARTITION_DELETE_STATES if self.api_key == REMOTE_PARTITION_DELETE_METADATA else SEGMENT_STATES
        return states.get(self.state)


def parse_remote_log_metadata(value, *, path: str | None = None, base: int = 0) -> RemoteLogMetadataRecord:
    """The record framed in ``value`` (a record's value bytes, or a snapshot file's entry);
    ``base`` is the absolute position errors are reported at.

    Raises :class:`UnsupportedVersion` for a frame version other than 1, an api key or a version
    this table does not know (a newer Kafka wrote it, or the bytes are not this topic's), and
    :class:`Malformed` or :class:`Truncated` for bytes that do not fit the schema or garbage after
    it: where ``RemoteLogMetadataSerde.deserialize`` throws. An unknown state id is not refused
    here (:attr:`RemoteLogMetadataRecord.state_name` is ``None``)."""
    if value is None:
        raise Malformed("a null value (tombstone): RemoteLogMetadataSerde cannot deserialize it", path=path,
                        position=base, field="value")
    c = Cursor(value, 0, len(value), base, path)
    frame = c.uvarint("frame version")
    if frame != FRAME_VERSION:
        raise UnsupportedVersion("Could not deserialize metadata record: unknown frame version"
                                 if frame else "Could not deserialize metadata record with frame version 0",
                                 path=path, position=base, field="frame version", expected=FRAME_VERSION,
                                 actual=frame)
    api_key = c.uvarint("type")
    version = c.uvarint("version")
    if api_key > _SHORT_MAX or version > _SHORT_MAX:
        raise Malformed("Value for type or version was too large", path=path, position=base, field="type",
                        actual=max(api_key, version))
    schema = RECORDS.get(api_key)
    if schema is None:
        raise UnsupportedVersion(f"Unknown metadata id {api_key} (kreplica knows {min(RECORDS)} to {max(RECORDS)})",
                                 path=path, position=base, field="type", actual=api_key)
    name, top, fields = schema
    if version > top:
        raise UnsupportedVersion(f"Unknown {name} version {version} (kreplica knows 0 to {top})", path=path,
                                 position=base, field="version", actual=version)
    data, end = decode_fields(fields, version, value, start=c.pos, base=base, path=path)
    if end != len(value):
        raise Malformed(f"Found {len(value) - end} byte(s) of garbage after {name}", path=path, position=base + end,
                        field="body")
    return RemoteLogMetadataRecord(api_key, version, name, data)


def build_remote_log_metadata(api_key: int | str, version: int, data: Mapping) -> bytes:
    """The framed value of one record, as ``RemoteLogMetadataSerde.serialize`` writes it
    (fixtures and tests; missing fields take their defaults)."""
    key = RECORD_KEYS[api_key] if isinstance(api_key, str) else api_key
    return (build_unsigned_varint(FRAME_VERSION) + build_unsigned_varint(key) + build_unsigned_varint(version)
            + encode_fields(RECORDS[key][2], version, data))
