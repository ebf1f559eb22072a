"""The records of Kafka's internal topics decoded, one by one, for ``inspect-log --records``.

A partition of ``__consumer_offsets``, ``__transaction_state`` or ``__share_group_state`` holds
coordinator records (:func:`kreplica.formats.coordinator.records.decode_record`); one of
``__cluster_metadata`` (and a KRaft ``*.checkpoint`` snapshot) holds metadata and Raft control
records, decoded by :func:`kreplica.formats.kraft.records.decode_log_record`, the decoding
``cluster-state`` replays. The topic comes from the partition directory's name, as
``kafka-dump-log.sh`` leaves the user to choose ``--offsets-decoder``,
``--transaction-log-decoder``, ``--share-group-state-decoder`` or
``--cluster-metadata-decoder``; one of ``__remote_log_metadata`` (tiered storage) holds remote
log metadata records (:func:`kreplica.formats.remote_storage.metadata_records.parse_remote_log_metadata`),
as ``kafka-console-consumer.sh`` prints them with ``RemoteLogMetadataSerde$RemoteLogMetadataFormatter``.
A segment on stdin or outside a partition directory has no topic, and its records stay raw.

A record that does not decode is listed raw (``decoded`` ``None``) with a finding naming the
file, the batch's byte position and the record offset: ``coordinator_invalid_record`` for bytes
that do not fit the schema (the coordinator's loader fails on them), ``coordinator_unknown_record``
for a record type or value version kreplica does not know (a newer Kafka wrote it), and
``kraft_invalid_record`` / ``kraft_unknown_record`` for metadata,
``remote_log_metadata_invalid_record`` / ``remote_log_metadata_unknown_record`` for tiered
storage's metadata (a tombstone, which ``RemoteLogMetadataSerde`` cannot read, is invalid; a
record with a state id Kafka's ``forId`` does not know is decoded and invalid). Transaction markers in a
coordinator topic are control records, not coordinator records: they stay raw, without a
finding (their ``control_type`` says what they are), as the dump tool leaves control batches
to its marker line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kreplica.formats.coordinator.records import CoordinatorRecord, decode_record, internal_topic
from kreplica.formats.errors import FormatError, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.kraft.records import ControlRecord, MetadataRecord, decode_log_record
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.formats.logdir.naming import CLUSTER_METADATA_TOPIC
from kreplica.formats.remote_storage.metadata_records import (REMOTE_LOG_METADATA_TOPIC, RemoteLogMetadataRecord,
                                                              parse_remote_log_metadata)

#: What a record of an internal topic decodes to.
Decoded = CoordinatorRecord | MetadataRecord | ControlRecord | RemoteLogMetadataRecord


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """A record of an internal topic and its decoded form (``None``: not decoded; a finding
    says why, unless it is a transaction marker)."""

    record: Record
    decoded: Decoded | None

    @property
    def offset(self) -> int:
        return self.record.offset


#: A record of a batch -> its decoded form (or None) and the findings on it.
RecordDecoder = Callable[[Record, RecordBatch], tuple[Decoded | None, list[Finding]]]


def _coordinator_decoder(topic: str) -> RecordDecoder:
    def decode(record: Record, batch: RecordBatch) -> tuple[Decoded | None, list[Finding]]:
        if batch.is_control:
            return None, []
        try:
            return decode_record(topic, record.key, record.value, path=batch.path, position=batch.position), []
        except FormatError as exc:
            kind = "coordinator_unknown_record" if isinstance(exc, UnsupportedVersion) else "coordinator_invalid_record"
            return None, [Finding(kind, batch.path, batch.position,
                                  f"{topic} record at offset {record.offset} (batch at byte {batch.position}): "
                                  f"{exc.reason}", details={"offset": record.offset, "field": exc.field})]

    return decode


def _metadata_decoder(record: Record, batch: RecordBatch) -> tuple[Decoded | None, list[Finding]]:
    decoded = None
    findings = []
    for item in decode_log_record(batch.path, batch, record):
        if isinstance(item, Finding):
            findings.append(item)
        elif item.name is not None:   # an unknown api key or version: listed raw, the finding says so
            decoded = item
    return decoded, findings


def _remote_log_metadata_decoder(record: Record, batch: RecordBatch) -> tuple[Decoded | None, list[Finding]]:
    if batch.is_control:   # a transaction marker: the topic's producer is not transactional, but say nothing
        return None, []
    where = f"{REMOTE_LOG_METADATA_TOPIC} record at offset {record.offset} (batch at byte {batch.position})"
    try:
        decoded = parse_remote_log_metadata(record.value, path=batch.path, base=batch.position)
    except FormatError as exc:
        kind = ("remote_log_metadata_unknown_record" if isinstance(exc, UnsupportedVersion)
                else "remote_log_metadata_invalid_record")
        return None, [Finding(kind, batch.path, batch.position, f"{where}: {exc.reason}",
                              details={"offset": record.offset, "field": exc.field})]
    if decoded.state_name is not None:
        return decoded, []
    enum = "RemotePartitionDeleteState" if "remote_partition_delete_state" in decoded.data else "RemoteLogSegmentState"
    return decoded, [Finding("remote_log_metadata_invalid_record", batch.path, batch.position,
                             f"{where}: {decoded.name} has state {decoded.state}, which is no {enum} "
                             "(Kafka's deserializer cannot map it)",
                             details={"offset": record.offset, "field": "state"})]


def record_decoder(topic: str | None) -> RecordDecoder | None:
    """The decoder of ``topic``'s records, or ``None`` for a data topic (or no topic)."""
    if topic == CLUSTER_METADATA_TOPIC:
        return _metadata_decoder
    if topic == REMOTE_LOG_METADATA_TOPIC:
        return _remote_log_metadata_decoder
    if internal_topic(topic) is not None:
        return _coordinator_decoder(topic)
    return None


def decode_records(items: Iterator[Record | Finding], batch: RecordBatch,
                   decode: RecordDecoder) -> Iterator[DecodedRecord | Finding]:
    """``items`` (a batch's records and the findings on them, in order) with each record
    decoded: a :class:`DecodedRecord`, then the findings its decoding made.

    A legacy message whose value Kafka cannot read comes with an ``invalid_record`` finding
    right after it (its value is ``None`` only because it was unreadable); it is not decoded, so
    it is never taken for a tombstone.
    """
    held: Record | None = None
    for item in items:
        if isinstance(item, Finding):
            if held is not None and item.kind == "invalid_record" and item.details.get("offset") == held.offset:
                yield DecodedRecord(held, None)
                held = None
            yield item
            continue
        if held is not None:
            yield from _decoded(held, batch, decode)
        held = item
    if held is not None:
        yield from _decoded(held, batch, decode)


def _decoded(record: Record, batch: RecordBatch, decode: RecordDecoder) -> Iterator[DecodedRecord | Finding]:
    decoded, findings = decode(record, batch)
    yield DecodedRecord(record, decoded)
    yield from findings
