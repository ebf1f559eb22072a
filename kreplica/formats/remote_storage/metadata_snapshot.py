"""``remote_log_snapshot``: the remote segments of one user partition, as Kafka 3.1 to 3.7 kept
them on local disk so a restarting broker need not re-read ``__remote_log_metadata``.

Source (apache/kafka 3.7.1): ``storage/src/main/java/org/apache/kafka/server/log/remote/metadata/
storage/RemoteLogMetadataSnapshotFile.java`` (added in 3.1, KAFKA-12802), written by
``FileBasedRemoteLogMetadataCache`` into the *user* partition's own directory
(``RemotePartitionMetadataStore.partitionLogDirectory``: ``<log.dir>/<topic>-<partition>``), not
into a ``__remote_log_metadata`` partition. Kafka 3.8.0 removed the file, its reader and writer
(KAFKA-16161, "Avoid empty remote metadata snapshot file in partition dir"): no later broker
writes or reads it, so one found beside a 3.8+ broker's segments is a leftover of an upgrade.
Before 3.8 the constructor created it empty when missing, so an empty file is the normal state
of a partition whose metadata was never flushed (``read`` returns nothing for it).

Layout (big-endian)::

    remote_log_snapshot => Header Entry*
      Header => Version Int16                   (0: Snapshot.CURRENT_VERSION; others refused)
                MetadataPartition Int32         (the __remote_log_metadata partition consumed)
                MetadataPartitionOffset Int64   (consumed up to this offset)
                EntriesSize Int32               (how many entries follow)
      Entry  => Length Int32, then Length bytes: RemoteLogMetadataSerde's frame of a
                RemoteLogSegmentMetadataSnapshotRecord (:mod:`.metadata_records`)

There is no checksum. ``read`` reads entries until the end of the file and fails (``IOException``,
the partition's metadata not loaded) on a short length or entry, or when the count differs from
``EntriesSize``; an entry of another record type fails its cast. The file is written to
``remote_log_snapshot.tmp`` and moved into place.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kreplica.formats.errors import Malformed, Truncated, UnsupportedVersion
from kreplica.formats.remote_storage.metadata_records import (REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT, RECORDS,
                                                              RemoteLogMetadataRecord, build_remote_log_metadata,
                                                              parse_remote_log_metadata)

#: ``RemoteLogMetadataSnapshotFile.COMMITTED_LOG_METADATA_SNAPSHOT_FILE_NAME``
REMOTE_LOG_SNAPSHOT = "remote_log_snapshot"
#: ``Snapshot.CURRENT_VERSION``, the only version Kafka wrote or reads
SNAPSHOT_VERSION = 0

HEADER = struct.Struct(
    ">"
    "h"  # version
    "i"  # metadataPartition
    "q"  # metadataPartitionOffset
    "i"  # entries size
)
HEADER_SIZE = HEADER.size  # 18
ENTRY_LENGTH = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class RemoteLogSnapshot:
    """A ``remote_log_snapshot`` file read whole: its header and entries in file order."""

    version: int
    metadata_partition: int
    metadata_partition_offset: int
    entries: tuple[RemoteLogMetadataRecord, ...]


def parse_remote_log_snapshot(buf, *, path: str | None = None) -> RemoteLogSnapshot | None:
    """The snapshot in ``buf``, or ``None`` for an empty file (Kafka's ``read`` returns nothing).

    Raises :class:`Truncated` for a header, length or entry cut short, :class:`Malformed` for a
    negative length, an entry that is not a snapshot record or a count other than the header's,
    and :class:`UnsupportedVersion` for a version other than 0: each where Kafka's ``read`` or
    ``Snapshot`` throws, so the partition's remote metadata is not loaded from the file."""
    size = len(buf)
    if size == 0:
        return None
    if size < HEADER_SIZE:
        raise Truncated(f"needs {HEADER_SIZE} header bytes but the file has {size}", path=path, position=0,
                        field="header")
    version, partition, offset, count = HEADER.unpack_from(buf, 0)
    if version != SNAPSHOT_VERSION:
        raise UnsupportedVersion("Unexpected version received", path=path, position=0, field="version",
                                 expected=SNAPSHOT_VERSION, actual=version)
    entries = []
    pos = HEADER_SIZE
    while pos < size:
        if size - pos < ENTRY_LENGTH.size:
            raise Truncated("Invalid amount of data read for the length of an entry, file may have been corrupted",
                            path=path, position=pos, field="entry length")
        (n,) = ENTRY_LENGTH.unpack_from(buf, pos)
        if n < 0:
            raise Malformed(f"entry length {n}", path=path, position=pos, field="entry length")
        start = pos + ENTRY_LENGTH.size
        if n > size - start:
            raise Truncated(f"Invalid amount of data read, file may have been corrupted: an entry of {n} bytes, "
                            f"{size - start} left", path=path, position=pos, field="entry")
        record = parse_remote_log_metadata(bytes(buf[start:start + n]), path=path, base=start)
        if record.api_key != REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT:
            raise Malformed(f"the entry is a {record.name}, not a RemoteLogSegmentMetadataSnapshotRecord",
                            path=path, position=pos, field="entry")
        entries.append(record)
        pos = start + n
    if len(entries) != count:
        raise Malformed(f"Unexpected entries in the snapshot file. Expected size: {count}, but found: "
                        f"{len(entries)}", path=path, position=0, field="entries size", expected=count,
                        actual=len(entries))
    return RemoteLogSnapshot(version, partition, offset, tuple(entries))


def build_remote_log_snapshot(metadata_partition: int, metadata_partition_offset: int, entries) -> bytes:
    """A ``remote_log_snapshot`` as ``RemoteLogMetadataSnapshotFile.write`` lays it out;
    ``entries`` are the fields of snapshot records (tests)."""
    out = [HEADER.pack(SNAPSHOT_VERSION, metadata_partition, metadata_partition_offset, len(entries))]
    name = RECORDS[REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT][0]
    for data in entries:
        raw = build_remote_log_metadata(name, 0, data)
        out.append(ENTRY_LENGTH.pack(len(raw)) + raw)
    return b"".join(out)
