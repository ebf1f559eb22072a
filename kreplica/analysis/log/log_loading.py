"""What a broker does with a partition directory when it starts: Kafka's ``LogLoader``.

Sources (apache/kafka 3.9): ``storage/src/main/java/org/apache/kafka/storage/internals/log/
LogLoader.java``, ``LocalLog.java``, ``LogSegment.java``, ``core/src/main/scala/kafka/log/
LogManager.scala``; kafka-formats spec §12 and kafka-algorithms spec §1.6.

In order: leftovers of deletion and compaction are removed or completed; the leader-epoch
checkpoint is replayed through ``assign`` (repairing out-of-order lines in memory); segments
without an offset index, or whose transaction index fails its sanity check, are recovered at
once; after an unclean shutdown every segment from the one holding the recovery point on is
recovered, and the first truncation deletes every later segment; the epoch cache is truncated
to the recovered log end and to the checkpointed log start offset. Nothing here touches the
files: it says what a broker would do to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kreplica.analysis.log.recovery import SegmentRecovery
from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log import epoch_cache
from kreplica.model.log.epoch_cache import EpochEntry
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion

CLEAN = "clean"
UNCLEAN = "unclean"


@dataclass(frozen=True, slots=True)
class RestartVerdict:
    """The outcome of loading one partition directory.

    ``truncate_at`` is ``(segment path, byte position)`` of the first truncation; ``epoch_cache``
    is what the broker's leader-epoch cache holds afterwards, ``epoch_cache_changes`` says what
    happened to the checkpoint's lines on the way (repaired, re-assigned, dropped).
    ``truncated_batches`` are the readable batches the truncation removes (those Kafka's reader
    reached and those found past damage): none when only zeros or bytes that hold no batch go.
    """

    shutdown: str
    kafka_version: str
    recovery_point: int
    recovered_segments: tuple[str, ...]
    truncate_at: tuple[str, int] | None
    truncated_bytes: int
    deleted_segments: tuple[str, ...]
    rebuilt_indexes: tuple[str, ...]
    created_files: tuple[str, ...]
    deleted_files: tuple[str, ...]
    epoch_cache: tuple[tuple[int, int], ...]
    epoch_cache_changes: tuple[str, ...]
    log_start_offset: int
    log_end_offset: int
    refuses_to_start: bool
    reasons: tuple[str, ...]
    truncated_batches: tuple[RecordBatch, ...] = ()

    @property
    def truncated_records(self) -> int:
        return sum(b.records_read for b in self.truncated_batches)

    @property
    def truncated_offsets(self) -> tuple[int, int] | None:
        """The first and last offset of the batches the truncation removes."""
        if not self.truncated_batches:
            return None
        return (min(b.base_offset for b in self.truncated_batches), max(b.last_offset for b in self.truncated_batches))


@dataclass
class _Load:
    reasons: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    rebuilt: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    deleted_segments: list[str] = field(default_factory=list)
    truncate_at: tuple[str, int] | None = None
    truncated: int = 0
    truncated_batches: list = field(default_factory=list)
    refuses: bool = False


def loaded_high_watermark(checkpointed: int | None, log_start_offset: int, log_end_offset: int) -> int:
    """The high watermark a broker starts a loaded replica with: the checkpointed value (0 without
    one, ``Partition.createLog``), held between the log start and the log end
    (``UnifiedLog.updateHighWatermark``: below the log start it is the log start, at or past the
    log end the log end)."""
    hw = 0 if checkpointed is None else checkpointed
    return min(max(hw, log_start_offset), log_end_offset)


def load_partition(log: PartitionLog, *, shutdown: str | None = None,
                   kafka_version: KafkaVersion = DEFAULT_VERSION) -> RestartVerdict:
    """Emulate loading the partition after a clean or unclean shutdown (default: what the log
    directory's ``.kafka_cleanshutdown`` says), from the headers the partition walk read."""
    st = _Load()
    partition, checkpoints = log.partition, log.checkpoints
    if shutdown is None:
        shutdown = CLEAN if checkpoints.clean_shutdown is not None else UNCLEAN
    key = partition.key
    if partition.parsed is None:
        st.refuses = True
        st.reasons.append(f"Found directory {partition.path}, '{partition.name}' is not in the form of topic-partition "
                          "or topic-partition.uniqueId-delete (if marked for deletion): the broker fails to start")

    # 1. leftovers: *.deleted and *.cleaned removed, *.swap completed, orphan indexes removed
    for path, kind in partition.leftovers:
        if kind in ("deleted", "cleaned"):
            st.deleted_files.append(path)
        elif kind == "swap":
            st.changes.append(f"{path} would be swapped in, replacing the segments it covers")
    st.deleted_files.extend(partition.orphan_indexes)

    # 2. the epoch checkpoint, replayed through assign
    cache = epoch_cache.for_version(kafka_version)
    if log.epoch_checkpoint is not None:
        lines = log.epoch_checkpoint_lines or ()
        if log.epoch_checkpoint.error is not None:
            st.refuses = True
            st.reasons.append(f"leader-epoch-checkpoint cannot be read ({log.epoch_checkpoint.error}): "
                              "KafkaStorageException, the whole log directory goes offline")
        for line in lines:
            before = list(cache.entries)
            try:
                changed = cache.assign(line.epoch, line.start_offset)
            except ValueError:
                st.refuses = True
                st.reasons.append(f"leader-epoch-checkpoint line {line.line} ({line.epoch} {line.start_offset}): "
                                  "Received invalid partition leader epoch entry (IllegalArgumentException)")
                continue
            dropped = [e for e in before if e not in cache.entries]
            if dropped:
                st.changes.append(f"checkpoint line {line.line} ({line.epoch} {line.start_offset}) removes earlier "
                                  f"entries {[tuple(e) for e in dropped]} (out of order: the later line wins)")
            elif not changed:
                st.changes.append(f"checkpoint line {line.line} ({line.epoch} {line.start_offset}) is ignored")
    if log.partition_metadata is not None and log.partition_metadata.error is not None:
        st.refuses = True
        st.reasons.append(f"partition.metadata cannot be read ({log.partition_metadata.error})")

    segments = list(log.segments)
    # 3. segments recovered while loading, whatever the shutdown: no offset index, bad txn index
    forced = set()
    for seg in segments:
        if seg.files.index is None:
            forced.add(seg.base_offset)
            st.changes.append(f"{seg.path} has no offset index: recovered while loading")
        elif seg.txn_index_below_base:
            forced.add(seg.base_offset)
            st.changes.append(f"{seg.files.txnindex} fails its sanity check (an entry below the base offset): the "
                              "segment is recovered while loading")
        if seg.files.timeindex is None:
            st.created.append(seg.path[:-len(".log")] + ".timeindex")

    # 4. log recovery
    recovery_points = checkpoints.recovery_points or {}
    recovery_point = recovery_points.get(key, 0) if key else 0
    floor = None
    if shutdown == UNCLEAN and segments:
        floor = segments[0].base_offset
        for seg in segments:
            if seg.base_offset <= recovery_point:
                floor = seg.base_offset
    assign_zero = not kafka_version.has(Feature.RECOVERY_SKIPS_EPOCH_ZERO)
    log_end = segments[0].base_offset if segments else 0
    for i, seg in enumerate(segments):
        in_log_recovery = floor is not None and seg.base_offset >= floor
        if not in_log_recovery and seg.base_offset not in forced:
            log_end = max(log_end, seg.next_offset)
            continue
        st.recovered.append(seg.path)
        stem = seg.path[:-len(".log")]
        st.rebuilt.extend(p for p in (seg.files.index or stem + ".index", seg.files.timeindex or stem + ".timeindex",
                                      seg.files.txnindex) if p)
        rec = SegmentRecovery(segment_base_offset=seg.base_offset, cache=cache, assign_epoch_zero=assign_zero,
                              check_offset_range=kafka_version.has(Feature.RECOVERY_CHECKS_OFFSET_RANGE),
                              markers=seg.markers)
        for batch in seg.kafka_batches:
            rec.feed(batch)
        verdict = rec.verdict(seg.file_size, truncate_cache=False)
        if verdict.refuses_to_load:
            st.refuses = True
            st.reasons.append(f"{seg.path}: {verdict.stop_reason}")
        log_end = max(log_end, rec.next_offset if rec.next_offset is not None else seg.base_offset)
        if verdict.truncated_bytes > 0:
            if st.truncate_at is None:
                st.truncate_at = (seg.path, verdict.valid_bytes)
            st.truncated += verdict.truncated_bytes
            st.truncated_batches.extend(b for b in seg.batches if b.position >= verdict.valid_bytes)
            if in_log_recovery:
                # LogLoader.recoverLog: a truncating segment deletes every later one and ends recovery
                # (a segment recovered while loading for a missing index is only truncated itself)
                later = segments[i + 1:]
                st.deleted_segments.extend(s.path for s in later)
                st.truncated += sum(s.file_size for s in later)
                st.truncated_batches.extend(b for s in later for b in s.batches)
                break
    # 5. log start offset and the epoch cache's final trims
    start_checkpoint = (checkpoints.log_start_offsets or {}).get(key, 0) if key else 0
    first_base = segments[0].base_offset if segments else 0
    log_start = max(start_checkpoint, first_base)
    if segments and log_end < start_checkpoint:
        st.deleted_segments = [s.path for s in segments]
        st.changes.append(f"log end offset {log_end} is below the checkpointed log start offset {start_checkpoint}: "
                          "every segment is deleted (\"This could happen if segment files were deleted from the file "
                          "system.\")")
        cache.entries.clear()
        log_end = start_checkpoint
    elif not segments:
        # LogLoader.recoverLog: with no segment, a new one is created at the log start offset
        log_end = start_checkpoint
    before_end = list(cache.entries)
    cache.truncate_from_end(log_end)
    for e in before_end:
        if e not in cache.entries:
            st.changes.append(f"epoch {e.epoch} at {e.start_offset} is dropped: it starts at or beyond the log end "
                              f"offset {log_end} (truncateFromEnd)")
    before_start = list(cache.entries)
    cache.truncate_from_start(start_checkpoint)
    if before_start != cache.entries and before_start:
        st.changes.append(f"entries below the log start offset {start_checkpoint} are folded into "
                          f"{tuple(cache.entries[0]) if cache.entries else '()'} (truncateFromStart)")
    if shutdown == CLEAN:
        recovery_point = log_end
    return RestartVerdict(
        shutdown, str(kafka_version), recovery_point, tuple(st.recovered), st.truncate_at, st.truncated,
        tuple(st.deleted_segments), tuple(st.rebuilt), tuple(st.created), tuple(st.deleted_files),
        tuple((e.epoch, e.start_offset) for e in cache.entries), tuple(st.changes), log_start, log_end,
        st.refuses, tuple(st.reasons), tuple(st.truncated_batches),
    )


__all__ = ["CLEAN", "UNCLEAN", "RestartVerdict", "load_partition", "EpochEntry"]
