"""File and directory names in a Kafka log directory (kafka-formats spec §9).

Sources (apache/kafka trunk 2024-10 baseline): ``core/src/main/scala/kafka/log/LocalLog.scala``
(object ``LocalLog``: ``parseTopicPartitionName``, the ``-delete``/``-future``/``-stray``
patterns), ``storage/src/main/java/org/apache/kafka/storage/internals/log/LogFileUtils.java``
(``filenamePrefixFromOffset``: 20-digit zero-padded base offsets; ``offsetFromFileName``: the
text before the first ``.`` as a long), ``LogLoader.java`` (which leftovers are deleted or
completed at start-up), ``raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java`` (KRaft
snapshot names), ``storage/.../log/RemoteIndexCache.java`` (4.4.0: ``DIR_NAME``, ``init``, the
names of its files).

Partition directories::

    <topic>-<partition>                          live replica
    <topic>-<partition>.<uniqueId>-delete        queued for deletion (topic part may be truncated)
    <topic>-<partition>.<uniqueId>-future        target of an intra-broker move (JBOD)
    <topic>-<partition>.<uniqueId>-stray         no longer assigned to this broker (KRaft, 3.6+)

Kafka splits at the **last** ``-``, so topics may hold dots and dashes; the partition is
``Integer.parseInt`` of the rest (a leading ``+`` and leading zeros pass). A suffixed name must
match ``^(\\S+)-(\\S+)\\.(\\S+)<suffix>$`` and loses everything from its last ``.``. Names Kafka
refuses make the broker fail to start ("Found directory …, '…' is not in the form of
topic-partition or topic-partition.uniqueId-delete (if marked for deletion).").

Tiered storage's ``remote-log-index-cache`` (in the first ``log.dirs`` entry; the log manager
skips it) holds the indexes ``RemoteIndexCache`` fetched from remote storage, one triple per
remote segment::

    <startOffset>_<remoteLogSegmentId>.index | .timeindex | .txnindex   (the id in Kafka's uuid text)
    ... .deleted                                 evicted, deleted asynchronously
    ... .tmp                                     a fetch being written
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from kreplica.formats._java import java_parse_int, java_parse_long
from kreplica.formats.errors import FormatError
from kreplica.formats.uuid import parse_uuid

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
TMP_SUFFIX = ".tmp"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
KRAFT_SNAPSHOT_PART_SUFFIX = ".checkpoint.part"

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
QUORUM_STATE = "quorum-state"

DIR_SUFFIXES = ("delete", "future", "stray")
REMOTE_LOG_INDEX_CACHE = "remote-log-index-cache"   # RemoteIndexCache.DIR_NAME; skipped by the log manager
CLUSTER_METADATA_DIR = "__cluster_metadata-0"      # loaded by the Raft layer
CLUSTER_METADATA_TOPIC = "__cluster_metadata"      # Topic.CLUSTER_METADATA_TOPIC_NAME

_SEGMENT = re.compile(r"^(\d{20})\.log$")
_NOT_JAVA_WS = "[^ \t\n\x0b\f\r]"                    # java.util.regex \S
_SUFFIXED_DIR = {
    suffix: re.compile(f"({_NOT_JAVA_WS}+)-({_NOT_JAVA_WS}+)\\.({_NOT_JAVA_WS}+)-{suffix}")
    for suffix in DIR_SUFFIXES
}
_KRAFT_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    """A parsed partition directory name; ``suffix`` is ``delete``, ``future``, ``stray`` or
    ``None``; ``unique_id`` the text between the last ``.`` and the suffix (a UUID as 32 hex
    digits when Kafka wrote it)."""

    topic: str
    partition: int
    suffix: str | None = None
    unique_id: str | None = None

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def segment_base_offset(file_name: str) -> int | None:
    """The base offset a segment file name declares (``00000000000000000262.log`` → 262), else ``None``."""
    m = _SEGMENT.match(file_name)
    return int(m.group(1)) if m else None


def segment_file_name(base_offset: int) -> str:
    """The name Kafka gives the segment starting at ``base_offset``."""
    return f"{base_offset:020d}{LOG_SUFFIX}"


def parse_partition_dir(name: str) -> PartitionDirName | None:
    """Parse a directory name exactly as Kafka's ``LocalLog.parseTopicPartitionName``, or ``None``
    where Kafka throws (and a broker would refuse to start).

    ``orders-0`` → (orders, 0); ``my.topic-with-dash-12`` → (my.topic-with-dash, 12);
    ``orders-3.0123456789abcdef0123456789abcdef-delete`` → (orders, 3, ``delete``). The
    special directories ``remote-log-index-cache`` (skipped by Kafka) and
    ``__cluster_metadata-0`` (the KRaft log) are not special-cased here.
    """
    if not name or "-" not in name:
        return None
    suffix = next((s for s in DIR_SUFFIXES if name.endswith("-" + s)), None)
    unique_id = None
    base = name
    if suffix is not None:
        if not _SUFFIXED_DIR[suffix].fullmatch(name):
            return None
        dot = name.rindex(".")
        base = name[:dot]
        unique_id = name[dot + 1:len(name) - len(suffix) - 1]
    dash = base.rfind("-")
    if dash < 0:
        return None
    topic, partition_text = base[:dash], base[dash + 1:]
    if not topic or not partition_text:
        return None
    try:
        partition = java_parse_int(partition_text)
    except ValueError:
        return None
    return PartitionDirName(topic, partition, suffix, unique_id)


class FileKind(StrEnum):
    """What a file inside a partition directory is (§9.2, §9.5)."""

    LOG = "log"
    INDEX = "index"
    TIMEINDEX = "timeindex"
    TXNINDEX = "txnindex"
    SNAPSHOT = "snapshot"                        # producer-state snapshot
    LEADER_EPOCH_CHECKPOINT = "leader_epoch_checkpoint"
    PARTITION_METADATA = "partition_metadata"
    DELETED = "deleted"                          # <file>.deleted: awaiting asynchronous deletion
    CLEANED = "cleaned"                          # <file>.cleaned: unfinished compaction output
    SWAP = "swap"                                # <file>.swap: compaction output being swapped in
    TMP = "tmp"                                  # <file>.tmp: interrupted checkpoint write
    QUORUM_STATE = "quorum_state"                # __cluster_metadata-0 only
    KRAFT_SNAPSHOT = "kraft_snapshot"            # <endOffset>-<epoch>.checkpoint
    KRAFT_SNAPSHOT_PART = "kraft_snapshot_part"  # snapshot being written
    OTHER = "other"


_BY_SUFFIX = (
    (LOG_SUFFIX, FileKind.LOG),
    (INDEX_SUFFIX, FileKind.INDEX),
    (TIME_INDEX_SUFFIX, FileKind.TIMEINDEX),
    (TXN_INDEX_SUFFIX, FileKind.TXNINDEX),
    (SNAPSHOT_SUFFIX, FileKind.SNAPSHOT),
)
_LEFTOVERS = (
    (DELETED_SUFFIX, FileKind.DELETED),
    (CLEANED_SUFFIX, FileKind.CLEANED),
    (SWAP_SUFFIX, FileKind.SWAP),
    (TMP_SUFFIX, FileKind.TMP),
)
_WITH_OFFSET = {FileKind.LOG, FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX, FileKind.SNAPSHOT}


@dataclass(frozen=True, slots=True)
class PartitionFile:
    """A classified file name. ``base_offset`` is Kafka's ``offsetFromFileName`` (the text before
    the first ``.`` as a long) for segment files, indexes, producer snapshots and leftovers of
    them, or the end offset of a KRaft snapshot; ``None`` when not applicable or not a number
    (Kafka would fail on such a segment name). ``inner_kind`` is, for ``deleted``, ``cleaned``,
    ``swap`` and ``tmp``, the kind of the name without that suffix. ``epoch`` is a KRaft
    snapshot's epoch."""

    name: str
    kind: FileKind
    base_offset: int | None = None
    inner_kind: FileKind | None = None
    epoch: int | None = None


def _offset_from_file_name(name: str) -> int | None:
    dot = name.find(".")
    if dot < 0:
        return None
    try:
        return java_parse_long(name[:dot])
    except ValueError:
        return None


def classify_partition_file(name: str) -> PartitionFile:
    """What Kafka makes of a file name inside a partition directory.

    ``00000000000000000262.log`` → (``log``, 262); ``…262.log.swap`` → (``swap``, 262, inner
    ``log``); ``leader-epoch-checkpoint.tmp`` → (``tmp``, inner ``leader_epoch_checkpoint``).
    At start-up Kafka deletes ``deleted`` files (except KRaft ``.checkpoint.deleted``) and
    ``cleaned`` files, and completes ``swap`` ones (§12.1).
    """
    for suffix, kind in _LEFTOVERS:
        if name.endswith(suffix) and len(name) > len(suffix):
            inner = classify_partition_file(name[:-len(suffix)])
            return PartitionFile(name, kind, inner.base_offset, inner.kind, inner.epoch)
    if name == LEADER_EPOCH_CHECKPOINT:
        return PartitionFile(name, FileKind.LEADER_EPOCH_CHECKPOINT)
    if name == PARTITION_METADATA:
        return PartitionFile(name, FileKind.PARTITION_METADATA)
    if name == QUORUM_STATE:
        return PartitionFile(name, FileKind.QUORUM_STATE)
    if name.endswith(KRAFT_SNAPSHOT_PART_SUFFIX):
        return PartitionFile(name, FileKind.KRAFT_SNAPSHOT_PART)
    m = _KRAFT_SNAPSHOT.match(name)
    if m:
        return PartitionFile(name, FileKind.KRAFT_SNAPSHOT, int(m.group(1)), None, int(m.group(2)))
    for suffix, kind in _BY_SUFFIX:
        if name.endswith(suffix):
            return PartitionFile(name, kind, _offset_from_file_name(name))
    return PartitionFile(name, FileKind.OTHER)


#: the suffixes of ``RemoteIndexCache``'s files: the index kinds, and the leftovers its start deletes
_REMOTE_INDEX_KINDS = {INDEX_SUFFIX: FileKind.INDEX, TIME_INDEX_SUFFIX: FileKind.TIMEINDEX,
                       TXN_INDEX_SUFFIX: FileKind.TXNINDEX}
_REMOTE_INDEX_LEFTOVERS = {DELETED_SUFFIX: FileKind.DELETED, TMP_SUFFIX: FileKind.TMP}


@dataclass(frozen=True, slots=True)
class RemoteIndexFile:
    """A file name in ``remote-log-index-cache``, read as ``RemoteIndexCache.init`` reads it.

    ``kind`` is ``index``, ``timeindex`` or ``txnindex`` (``other`` for another suffix), or
    ``deleted``/``tmp`` for the leftovers ``init`` deletes first (``inner_kind`` the name's
    kind without that suffix). ``prefix`` is the name before its first ``.`` (the three files of
    one segment share it), ``start_offset`` and ``segment_id`` what Kafka parses from it.
    ``error`` is why Kafka's parse of the id throws, which ``init`` does not catch (``None``: it
    parses); ``start_offset`` is ``None`` where ``Long.parseLong`` of the offset throws, which
    ``init`` meets only for a complete triple. A leftover is deleted before it is parsed."""

    name: str
    kind: FileKind
    prefix: str | None
    start_offset: int | None
    segment_id: str | None
    inner_kind: FileKind | None = None
    error: str | None = None


def classify_remote_index_file(name: str) -> RemoteIndexFile:
    """What ``RemoteIndexCache.init`` (4.4.0) makes of ``name``.

    ``45_<uuid>.index`` → (``index``, 45, uuid); ``45_<uuid>.index.deleted`` → (``deleted``,
    inner ``index``). A name whose id is not ``Uuid.fromString`` text, with no ``.`` or no
    ``_`` before it has an ``error``: ``init`` parses the id of every file left after deleting
    leftovers (``remoteLogSegmentIdFromRemoteIndexFileName``).
    """
    for suffix, kind in _REMOTE_INDEX_LEFTOVERS.items():
        if name.endswith(suffix):
            inner = classify_remote_index_file(name[:-len(suffix)])
            return RemoteIndexFile(name, kind, inner.prefix, inner.start_offset, inner.segment_id, inner.kind)
    kind = next((k for suffix, k in _REMOTE_INDEX_KINDS.items() if name.endswith(suffix)), FileKind.OTHER)
    underscore, dot = name.find("_"), name.find(".")
    if dot < 0 or underscore + 1 > dot:
        return RemoteIndexFile(name, kind, None, None, None,
                               error="no '<offset>_<id>.' prefix (String.substring throws)")
    prefix, text = name[:dot], name[underscore + 1:dot]
    try:
        parse_uuid(text)
    except FormatError as exc:
        return RemoteIndexFile(name, kind, prefix, None, None, error=f"Uuid.fromString: {exc.reason}")
    try:
        offset = java_parse_long(name[:underscore]) if underscore >= 0 else None
    except ValueError:
        offset = None
    return RemoteIndexFile(name, kind, prefix, offset, text)
