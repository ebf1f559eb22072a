"""KRaft metadata: the records of ``__cluster_metadata-0`` segments and ``*.checkpoint`` snapshots.

Sources (apache/kafka trunk ``1eb76443``, 4.0.0-SNAPSHOT): ``metadata/src/main/resources/common/
metadata/*.json`` (the record schemas), ``server-common/src/main/java/org/apache/kafka/server/
common/serialization/AbstractApiMessageSerde.java`` (the frame), ``metadata/.../
MetadataRecordSerde.java``, ``raft/src/main/java/org/apache/kafka/raft/internals/
RecordsIterator.java``, ``raft/.../snapshot/RecordsSnapshotWriter.java``,
``clients/src/main/resources/common/message/{LeaderChangeMessage,SnapshotHeaderRecord,
SnapshotFooterRecord,KRaftVersionRecord,VotersRecord}.json``; ``../shared/specs/kafka-formats.md``
§1.3, §1.4, §10.

Both file kinds are ordinary v2 record batches (:mod:`kreplica.formats.log.default_records`). A data
record's key is null and its value is framed as::

    MetadataRecord => FrameVersion => UnsignedVarint   (1; the 2.8 preview wrote 0)
                      ApiKey       => UnsignedVarint   (record type, table below)
                      Version      => UnsignedVarint   (schema version of that type)
                      Body         => generated message, flexible encoding

Flexible encoding (:mod:`kreplica.formats.generated_messages`, ``MessageDataGenerator``): fixed-width ints big-endian, ``uuid`` 16 bytes,
compact strings/bytes/arrays with an unsigned-varint length + 1 (0 = null), and after every
struct (the top level included) a tagged-field section: varint count, then (varint tag, varint
size, value) in ascending tag order. Tagged fields are written only when they differ from
their default; unknown tags are skipped by size. Control batches (attribute bit 5) carry Raft
control records: key ``int16 version, int16 type``, value the control message at version 0
(flexible, no frame). A snapshot file is: a control batch starting with SNAPSHOT_HEADER, data
batches with the full state, a control batch with SNAPSHOT_FOOTER; offsets start at 0.

Field names are Kafka's schema names in snake_case; uuids are given in Kafka's text form
(URL-safe base64, no padding, 22 characters).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kreplica.formats.log import default_records
from kreplica.formats.log.batch import NewRecord, RecordBatch
from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import open_buffer
from kreplica.formats.log.segment import SegmentEnd, iter_segment
from kreplica.formats.generated_messages import (ZERO_UUID, Cursor, F, Field, decode_fields, encode_fields, uuid_bytes,
                                      uuid_text)
from kreplica.formats.varint import build_unsigned_varint

FRAME_VERSION = 1

# Raft control record types (ControlRecordType)
LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
KRAFT_VERSION = 5
KRAFT_VOTERS = 6

# ConfigResource.Type ids used in ConfigRecord.ResourceType
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4

# BrokerRegistrationChangeRecord.Fenced (BrokerRegistrationFencingChange; 0: no change)
FENCE = 1
UNFENCE = -1
# BrokerRegistrationChangeRecord.InControlledShutdown (BrokerRegistrationInControlledShutdownChange)
IN_CONTROLLED_SHUTDOWN = 1


_ENDPOINT = (F("name", "string"), F("host", "string"), F("port", "uint16"), F("security_protocol", "int16"))
_FEATURE = (F("name", "string"), F("min_supported_version", "int16"), F("max_supported_version", "int16"))

#: apiKey -> (record name, highest version, fields) — ``MD/*.json`` at the baseline.
METADATA_RECORDS: dict[int, tuple[str, int, tuple[Field, ...]]] = {
    0: ("RegisterBrokerRecord", 4, (
        F("broker_id", "int32"), F("is_migrating_zk_broker", "bool", since=2, default=False),
        F("incarnation_id", "uuid"), F("broker_epoch", "int64"),
        F("end_points", "[]", fields=_ENDPOINT), F("features", "[]", fields=_FEATURE),
        F("rack", "string", nullable=True), F("fenced", "bool", default=True),
        F("in_controlled_shutdown", "bool", since=1, default=False),
        F("log_dirs", "[]uuid", since=3, tag=0, default=()),
        F("cordoned_log_dirs", "[]uuid", since=4, tag=1, nullable=True))),
    1: ("UnregisterBrokerRecord", 0, (F("broker_id", "int32"), F("broker_epoch", "int64"))),
    2: ("TopicRecord", 0, (F("name", "string"), F("topic_id", "uuid"))),
    3: ("PartitionRecord", 2, (
        F("partition_id", "int32"), F("topic_id", "uuid"), F("replicas", "[]int32"), F("isr", "[]int32"),
        F("removing_replicas", "[]int32"), F("adding_replicas", "[]int32"), F("leader", "int32", default=-1),
        F("leader_recovery_state", "int8", tag=0, default=0), F("leader_epoch", "int32", default=-1),
        F("partition_epoch", "int32", default=-1), F("directories", "[]uuid", since=1),
        F("eligible_leader_replicas", "[]int32", since=2, tag=1, nullable=True),
        F("last_known_elr", "[]int32", since=2, tag=2, nullable=True))),
    4: ("ConfigRecord", 0, (F("resource_type", "int8"), F("resource_name", "string"), F("name", "string"),
                            F("value", "string", nullable=True))),
    5: ("PartitionChangeRecord", 2, (
        F("partition_id", "int32", default=-1), F("topic_id", "uuid"),
        F("isr", "[]int32", tag=0, nullable=True), F("leader", "int32", tag=1, default=-2),
        F("replicas", "[]int32", tag=2, nullable=True), F("removing_replicas", "[]int32", tag=3, nullable=True),
        F("adding_replicas", "[]int32", tag=4, nullable=True),
        F("leader_recovery_state", "int8", tag=5, default=-1),
        F("eligible_leader_replicas", "[]int32", since=2, tag=6, nullable=True),
        F("last_known_elr", "[]int32", since=2, tag=7, nullable=True),
        F("directories", "[]uuid", since=1, tag=8, nullable=True))),
    7: ("FenceBrokerRecord", 0, (F("id", "int32"), F("epoch", "int64"))),
    8: ("UnfenceBrokerRecord", 0, (F("id", "int32"), F("epoch", "int64"))),
    9: ("RemoveTopicRecord", 0, (F("topic_id", "uuid"),)),
    10: ("DelegationTokenRecord", 0, (
        F("owner", "string"), F("requester", "string"), F("renewers", "[]string"),
        F("issue_timestamp", "int64"), F("max_timestamp", "int64"), F("expiration_timestamp", "int64"),
        F("token_id", "string"))),
    11: ("UserScramCredentialRecord", 0, (
        F("name", "string"), F("mechanism", "int8"), F("salt", "bytes"), F("stored_key", "bytes"),
        F("server_key", "bytes"), F("iterations", "int32"))),
    12: ("FeatureLevelRecord", 0, (F("name", "string"), F("feature_level", "int16"))),
    14: ("ClientQuotaRecord", 0, (
        F("entity", "[]", fields=(F("entity_type", "string"), F("entity_name", "string", nullable=True))),
        F("key", "string"), F("value", "float64"), F("remove", "bool"))),
    15: ("ProducerIdsRecord", 0, (F("broker_id", "int32"), F("broker_epoch", "int64"),
                                  F("next_producer_id", "int64"))),
    17: ("BrokerRegistrationChangeRecord", 3, (
        F("broker_id", "int32"), F("broker_epoch", "int64"), F("fenced", "int8", tag=0, default=0),
        F("in_controlled_shutdown", "int8", since=1, tag=1, default=0),
        F("log_dirs", "[]uuid", since=2, tag=2, default=()),
        F("cordoned_log_dirs", "[]uuid", since=3, tag=3, nullable=True))),
    18: ("AccessControlEntryRecord", 0, (
        F("id", "uuid"), F("resource_type", "int8"), F("resource_name", "string"), F("pattern_type", "int8"),
        F("principal", "string"), F("host", "string"), F("operation", "int8"), F("permission_type", "int8"))),
    19: ("RemoveAccessControlEntryRecord", 0, (F("id", "uuid"),)),
    20: ("NoOpRecord", 0, ()),
    21: ("ZkMigrationStateRecord", 0, (F("zk_migration_state", "int8"),)),
    22: ("RemoveUserScramCredentialRecord", 0, (F("name", "string"), F("mechanism", "int8"))),
    23: ("BeginTransactionRecord", 0, (F("name", "string", tag=0, nullable=True),)),
    24: ("EndTransactionRecord", 0, ()),
    25: ("AbortTransactionRecord", 0, (F("reason", "string", tag=0, nullable=True),)),
    26: ("RemoveDelegationTokenRecord", 0, (F("token_id", "string"),)),
    27: ("RegisterControllerRecord", 0, (
        F("controller_id", "int32"), F("incarnation_id", "uuid"), F("zk_migration_ready", "bool"),
        F("end_points", "[]", fields=_ENDPOINT), F("features", "[]", fields=_FEATURE))),
    # KIP-966 (4.0+): written when min.insync.replicas changes, for one topic or (empty name) all
    28: ("ClearElrRecord", 0, (F("topic_name", "string"),)),
    # KIP-853 (4.1+): a controller removed from the quorum's registrations
    29: ("UnregisterControllerRecord", 0, (F("controller_id", "int32"),)),
}
RECORD_KEYS = {name: key for key, (name, _v, _f) in METADATA_RECORDS.items()}

#: LeaderChangeMessage's voter; version 1 (KIP-853) adds its directory id
_VOTER = (F("voter_id", "int32"), F("voter_directory_id", "uuid", since=1))

#: Control record type -> (message name, fields at every version of ``CONTROL_VERSIONS``).
CONTROL_RECORDS: dict[int, tuple[str, tuple[Field, ...]]] = {
    LEADER_CHANGE: ("LeaderChangeMessage", (
        F("version", "int16"), F("leader_id", "int32"),
        F("voters", "[]", fields=_VOTER), F("granting_voters", "[]", fields=_VOTER))),
    SNAPSHOT_HEADER: ("SnapshotHeaderRecord", (F("version", "int16"), F("last_contained_log_timestamp", "int64"))),
    SNAPSHOT_FOOTER: ("SnapshotFooterRecord", (F("version", "int16"),)),
    KRAFT_VERSION: ("KRaftVersionRecord", (F("version", "int16"), F("kraft_version", "int16"))),
    KRAFT_VOTERS: ("VotersRecord", (
        F("version", "int16"),
        F("voters", "[]", fields=(
            F("voter_id", "int32"), F("voter_directory_id", "uuid"),
            F("endpoints", "[]", fields=(F("name", "string"), F("host", "string"), F("port", "uint16"))),
            F("kraft_version_feature", "struct", fields=(F("min_supported_version", "int16"),
                                                         F("max_supported_version", "int16"))))))),
}

#: Control record type -> the highest version of its message kreplica's table holds. Kafka writes
#: and reads control records at version 0 (``ControlRecordUtils.*_CURRENT_VERSION``).
CONTROL_VERSIONS = {LEADER_CHANGE: 1, SNAPSHOT_HEADER: 0, SNAPSHOT_FOOTER: 0, KRAFT_VERSION: 0, KRAFT_VOTERS: 0}

# -- records --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """One metadata record: where it is, its frame, and its decoded fields (``data``).

    ``epoch`` is the batch's partition leader epoch (the Raft epoch of the leader that wrote
    it); ``name`` is the record type's schema name, or ``None`` for an unknown api key (then
    ``data`` is empty and ``raw`` holds the body).
    """

    path: str
    offset: int
    batch_position: int
    epoch: int
    timestamp: int
    api_key: int
    version: int
    name: str | None
    data: Mapping = field(default_factory=dict)
    raw: bytes = b""


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A Raft control record (LEADER_CHANGE, SNAPSHOT_HEADER/FOOTER, KRAFT_VERSION/VOTERS)."""

    path: str
    offset: int
    batch_position: int
    epoch: int
    timestamp: int
    control_type: int
    name: str | None
    data: Mapping = field(default_factory=dict)


def parse_metadata_value(value: bytes, *, path: str | None = None, base: int = 0
                         ) -> tuple[int, int, str | None, dict, bytes]:
    """``(api_key, version, name, data, raw_body)`` of a framed metadata record value.

    Raises :class:`UnsupportedVersion` for a frame version other than 1 (``MetadataRecordSerde``
    rejects them), :class:`Malformed` for garbage after the body, and returns ``name=None``
    for an api key or version this table does not know (the body is kept raw).
    """
    c = Cursor(value, 0, len(value), base, path)
    frame = c.uvarint("frame version")
    if frame != FRAME_VERSION:
        raise UnsupportedVersion("Could not deserialize metadata record: unknown frame version",
                                 path=path, position=base, field="frame version",
                                 expected=FRAME_VERSION, actual=frame)
    api_key = c.uvarint("api key")
    if api_key > 0x7FFF:
        raise Malformed("api key above 32767", path=path, position=base, field="api key", actual=api_key)
    version = c.uvarint("version")
    body_start = c.pos
    schema = METADATA_RECORDS.get(api_key)
    if schema is None or version > schema[1]:
        return api_key, version, None, {}, bytes(value[body_start:])
    data, end = decode_fields(schema[2], version, value, start=body_start, base=base, path=path)
    if end != len(value):
        raise Malformed(f"Found {len(value) - end} byte(s) of garbage after {schema[0]}",
                        path=path, position=base + end, field="body")
    return api_key, version, schema[0], data, bytes(value[body_start:])


def build_metadata_value(api_key: int | str, version: int, data: Mapping) -> bytes:
    """The framed value of one metadata record (``MetadataRecordSerde.write``)."""
    key = RECORD_KEYS[api_key] if isinstance(api_key, str) else api_key
    _name, _max, fields = METADATA_RECORDS[key]
    return (build_unsigned_varint(FRAME_VERSION) + build_unsigned_varint(key)
            + build_unsigned_varint(version) + encode_fields(fields, version, data))


def build_control_value(control_type: int, data: Mapping) -> bytes:
    return encode_fields(CONTROL_RECORDS[control_type][1], 0, data)


def build_metadata_batch(records: Sequence[tuple[int | str, int, Mapping]], *, base_offset: int,
                         epoch: int, timestamp: int) -> bytes:
    """A data batch as the KRaft ``BatchBuilder`` writes it: null keys, one timestamp, epoch."""
    news = [NewRecord(base_offset + i, timestamp, None, build_metadata_value(k, v, d))
            for i, (k, v, d) in enumerate(records)]
    return default_records.build_batch(news, base_offset=base_offset, partition_leader_epoch=epoch)


def build_control_batch(records: Sequence[tuple[int, Mapping]], *, base_offset: int, epoch: int,
                        timestamp: int) -> bytes:
    """A Raft control batch (attribute 0x20, not transactional)."""
    news = [NewRecord(base_offset + i, timestamp, default_records.CONTROL_KEY.pack(0, t), build_control_value(t, d))
            for i, (t, d) in enumerate(records)]
    return default_records.build_batch(news, base_offset=base_offset, partition_leader_epoch=epoch,
                                       is_control=True)


def build_snapshot(records: Sequence[tuple[int | str, int, Mapping]], *, epoch: int, timestamp: int,
                   batch_size: int = 100) -> bytes:
    """A ``*.checkpoint`` file as ``RecordsSnapshotWriter`` writes it (offsets from 0)."""
    out = [build_control_batch([(SNAPSHOT_HEADER, {"version": 0, "last_contained_log_timestamp": timestamp})],
                               base_offset=0, epoch=epoch, timestamp=timestamp)]
    offset = 1
    for i in range(0, len(records), batch_size):
        chunk = records[i:i + batch_size]
        out.append(build_metadata_batch(chunk, base_offset=offset, epoch=epoch, timestamp=timestamp))
        offset += len(chunk)
    out.append(build_control_batch([(SNAPSHOT_FOOTER, {"version": 0})], base_offset=offset, epoch=epoch,
                                   timestamp=timestamp))
    return b"".join(out)


def iter_metadata(buf, *, path: str) -> Iterator[MetadataRecord | ControlRecord | Finding]:
    """The records of a metadata segment or snapshot held in ``buf``, in offset order.

    Follows the segment walk of :func:`~kreplica.formats.log.segment.iter_segment` and stops where
    Kafka's recovery of ``__cluster_metadata`` would truncate (the first batch with a bad CRC,
    an impossible length, or a torn tail); its findings are passed on. A record that does not
    decode is a ``kraft_invalid_record`` finding, an unknown type a ``kraft_unknown_record``
    finding with the record kept raw; neither stops the walk. A batch whose records cannot be
    framed at all yields nothing of itself and ends the walk (Kafka's loader fails there).
    Nothing raises.
    """
    stopped = False
    for item in iter_segment(buf, path=path):
        if isinstance(item, Finding):
            # findings about a batch follow it; after the stopping batch, pass on its findings
            yield item
            if item.kind in ("crc_mismatch", "invalid_length", "resynchronised", "invalid_magic"):
                stopped = True
            continue
        if isinstance(item, SegmentEnd) or stopped:
            return
        batch: RecordBatch = item
        if batch.after_break or batch.crc_valid is False or batch.magic != default_records.MAGIC:
            stopped = True
            continue
        try:
            # RecordsIterator decodes a whole batch before handing it out: all or nothing
            records = list(default_records.iter_records(buf, batch))
        except FormatError as exc:
            yield Finding("kraft_invalid_record", path, batch.position,
                          f"batch at byte {batch.position} (offset {batch.base_offset}): {exc.reason}",
                          details={"base_offset": batch.base_offset})
            return
        for rec in records:
            yield from decode_log_record(path, batch, rec)


def decode_log_record(path: str, batch: RecordBatch, rec) -> Iterator[MetadataRecord | ControlRecord | Finding]:
    """One record of a metadata batch decoded, as :func:`iter_metadata` (and so ``cluster-state``)
    reads it: a :class:`ControlRecord` of a control batch, else a :class:`MetadataRecord`, each
    preceded or replaced by the ``kraft_invalid_record`` or ``kraft_unknown_record`` finding
    that says why it did not decode (an unknown api key or version yields the finding and the
    record, its body kept raw and ``name`` ``None``). Nothing raises."""
    if batch.is_control:
        ctype = rec.control_type
        schema = CONTROL_RECORDS.get(ctype) if ctype is not None else None
        if schema is None or not rec.value:
            yield Finding("kraft_unknown_record", path, batch.position,
                          f"control record at offset {rec.offset} has unknown type {ctype}",
                          details={"offset": rec.offset, "control_type": ctype})
            return
        try:
            data, _end = decode_fields(schema[1], 0, rec.value, path=path, base=batch.position)
        except FormatError as exc:
            yield Finding("kraft_invalid_record", path, batch.position,
                          f"control record at offset {rec.offset}: {exc.reason}",
                          details={"offset": rec.offset, "field": exc.field})
            return
        yield ControlRecord(path, rec.offset, batch.position, batch.partition_leader_epoch, rec.timestamp,
                            ctype, schema[0], data)
        return
    if rec.key is not None or not rec.value:
        yield Finding("kraft_invalid_record", path, batch.position,
                      f"metadata record at offset {rec.offset} has a key or an empty value "
                      "(Kafka's KRaft reader requires a null key and a non-empty value)",
                      details={"offset": rec.offset})
        return
    try:
        api_key, version, name, data, raw = parse_metadata_value(rec.value, path=path, base=batch.position)
    except FormatError as exc:
        yield Finding("kraft_invalid_record", path, batch.position,
                      f"metadata record at offset {rec.offset}: {exc.reason}",
                      details={"offset": rec.offset, "field": exc.field})
        return
    if name is None:
        yield Finding("kraft_unknown_record", path, batch.position,
                      f"metadata record at offset {rec.offset} has api key {api_key} version {version}, "
                      "unknown to kreplica", details={"offset": rec.offset, "api_key": api_key,
                                                      "version": version})
    yield MetadataRecord(path, rec.offset, batch.position, batch.partition_leader_epoch, rec.timestamp,
                         api_key, version, name, data, raw)


def read_metadata_file(path: str | os.PathLike) -> list[MetadataRecord | ControlRecord | Finding]:
    """Every record (and finding) of a ``.log`` segment or ``.checkpoint`` file, mmapped read-only.

    For a snapshot, a missing SNAPSHOT_HEADER first or SNAPSHOT_FOOTER last is a
    ``kraft_incomplete_snapshot`` finding (``RecordsSnapshotReader`` insists on the header; an
    unfinished snapshot has no footer).
    """
    p = os.fspath(path)
    with open_buffer(p) as buf:
        items: list = list(iter_metadata(buf, path=p)) if buf else []
    if p.endswith(".checkpoint"):
        recs = [x for x in items if not isinstance(x, Finding)]
        if not recs or not isinstance(recs[0], ControlRecord) or recs[0].control_type != SNAPSHOT_HEADER:
            items.append(Finding("kraft_incomplete_snapshot", p, 0,
                                 "the snapshot does not start with a SNAPSHOT_HEADER control record"))
        elif not isinstance(recs[-1], ControlRecord) or recs[-1].control_type != SNAPSHOT_FOOTER:
            items.append(Finding("kraft_incomplete_snapshot", p, 0,
                                 "the snapshot has no SNAPSHOT_FOOTER: it was never completed"))
    return items


_CHECKPOINT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT = re.compile(r"^(\d{20})\.log$")


def parse_checkpoint_name(name: str) -> tuple[int, int] | None:
    """``(end_offset, epoch)`` of ``<endOffset 20 digits>-<epoch 10 digits>.checkpoint``."""
    m = _CHECKPOINT.match(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse_segment_name(name: str) -> int | None:
    m = _SEGMENT.match(name)
    return int(m.group(1)) if m else None


def checkpoint_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"
