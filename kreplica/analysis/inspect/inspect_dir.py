"""``inspect-dir`` as an analysis: everything one partition directory says, read together.

Per partition: segments with their index files checked against them, offsets (log start, log
end, high watermark, recovery point), the leader-epoch lineage rebuilt from batch headers next
to the ``leader-epoch-checkpoint`` with every disagreement named, producer state and open
transactions, the topic id, leftovers of deletion and compaction, and the verdict of a restart
(:mod:`kreplica.analysis.log.log_loading`). Problems are findings; the report layer renders them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kreplica.analysis.log.epoch_reconciliation import compare_checkpoint
from kreplica.analysis.log.index_verification import verify_offset_index, verify_time_index, verify_txn_index
from kreplica.analysis.log.log_loading import CLEAN, RestartVerdict, load_partition
from kreplica.analysis.log.remote_index_cache import remote_index_cache_findings
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import IndexEnd
from kreplica.formats.log.producer_snapshot import ProducerSnapshotEntry
from kreplica.model.log.lineage import LineageEntry
from kreplica.model.logdir.log_dir import LogDir, read_checkpoints
from kreplica.model.log.partition_log import PartitionLog, SegmentLog, mapped_indexes, read_partition_log
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion

SUFFIX_MEANINGS = {
    "delete": "scheduled for asynchronous deletion (topic deleted or replica moved away); the topic name may be "
              "truncated — partition.metadata holds the topic id",
    "future": "the destination of an intra-broker move between log directories, still catching up",
    "stray": "a replica the broker decided no longer belongs to it (KRaft), kept for later deletion",
}
LEFTOVER_MEANINGS = {
    "deleted": "renamed for asynchronous deletion (retention, compaction or truncation), removed "
               "file.delete.delay.ms later or at the next start; the data in it may still be recoverable",
    "cleaned": "output of an interrupted compaction or segment split; deleted at the next start",
    "swap": "compaction output being swapped in; the next start completes the swap",
    "tmp": "an interrupted write of a checkpoint or metadata file; the main file holds the previous version",
}


@dataclass(frozen=True, slots=True)
class SegmentReport:
    path: str
    base_offset: int
    size: int
    batches: int
    first_offset: int | None
    last_offset: int | None
    valid_bytes: int
    index: str | None
    index_entries: int | None
    timeindex: str | None
    time_index_entries: int | None
    txnindex: str | None
    txn_index_entries: int | None


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    producer_id: int
    producer_epoch: int
    first_offset: int


@dataclass(frozen=True, slots=True)
class PartitionReport:
    """Everything ``inspect-dir`` says about one partition directory."""

    log_dir: str
    path: str
    name: str
    topic: str | None
    partition: int | None
    suffix: str | None
    topic_id: str | None
    segments: tuple[SegmentReport, ...]
    log_start_offset: int
    log_end_offset: int
    high_watermark: int | None
    recovery_point: int | None
    lineage: tuple[LineageEntry, ...]
    epoch_checkpoint: tuple[tuple[int, int], ...] | None
    snapshot: tuple[str, int] | None
    producers: tuple[ProducerSnapshotEntry, ...]
    open_transactions: tuple[OpenTransaction, ...]
    restart: RestartVerdict
    findings: tuple[Finding, ...] = field(default=())

    @property
    def problems(self) -> int:
        return sum(f.is_error for f in self.findings)


@dataclass(frozen=True, slots=True)
class LogDirReport:
    path: str
    broker_id: int | None
    cluster_id: str | None
    directory_id: str | None
    clean_shutdown: bool
    partitions: int
    findings: tuple[Finding, ...]


def inspect_log_dirs(log_dirs: list[LogDir], *, shutdown: str | None = None,
                     kafka_version: KafkaVersion = DEFAULT_VERSION,
                     advance: Callable[[int], None] | None = None) -> Iterator[LogDirReport | PartitionReport]:
    """A :class:`LogDirReport` per log directory, then a :class:`PartitionReport` per partition
    (``advance`` receives the bytes of segments walked)."""
    for log_dir in log_dirs:
        cps = read_checkpoints(log_dir)
        meta = cps.meta
        findings = list(cps.findings)
        for name in log_dir.bad_subdirs:
            findings.append(Finding("restart_refused", f"{log_dir.path}/{name}", 0,
                                    f"'{name}' is not in the form of topic-partition or topic-partition.uniqueId-delete: "
                                    "the broker fails to start (KafkaException)"))
        if log_dir.remote_index_cache is not None:
            findings.extend(remote_index_cache_findings(log_dir.path, log_dir.remote_index_cache))
        broker_id = None
        if meta is not None:
            broker_id = meta.broker_id if meta.broker_id is not None else meta.node_id
        yield LogDirReport(log_dir.path, broker_id, getattr(meta, "cluster_id", None),
                           getattr(meta, "directory_id", None), cps.clean_shutdown is not None,
                           len(log_dir.partitions), tuple(findings))
        for partition in log_dir.partitions:
            log = read_partition_log(partition, log_dir, checkpoints=cps, advance=advance)
            yield inspect_partition(log, shutdown=shutdown, kafka_version=kafka_version)


def inspect_partition(log: PartitionLog, *, shutdown: str | None = None,
                      kafka_version: KafkaVersion = DEFAULT_VERSION) -> PartitionReport:
    """Everything one partition directory says, from its partition log (read once)."""
    findings: list[Finding] = []
    partition, log_dir = log.partition, log.log_dir
    if partition.parsed is not None and partition.parsed.suffix:
        # -delete (StopReplica with deletion: a topic deleted or a replica reassigned away, removed
        # file.delete.delay.ms later) and -future (an alter-log-dirs move) are steps Kafka takes
        # in its normal course: information; a -stray replica (KRaft) is one the broker found it
        # should not have, a warning
        findings.append(Finding("partition_dir_state", partition.path, 0,
                                f"{partition.name}: -{partition.parsed.suffix} directory, "
                                f"{SUFFIX_MEANINGS[partition.parsed.suffix]}",
                                severity="info" if partition.parsed.suffix in ("delete", "future") else "",
                                details={"suffix": partition.parsed.suffix}))
    for path, kind in partition.leftovers:
        if kind in LEFTOVER_MEANINGS:
            # a .deleted file is a step of every retention, compaction and truncation Kafka does
            # (asyncDeleteSegment renames, the delete follows file.delete.delay.ms later): normal
            # state, told as information (its data may still be read), never a warning
            findings.append(Finding("leftover_file", path, 0, f"{path}: {LEFTOVER_MEANINGS[kind]}",
                                    severity="info" if kind == "deleted" else "", details={"file_kind": kind}))
    for path in partition.orphan_indexes:
        findings.append(Finding("leftover_file", path, 0, f"{path}: an index file without its .log segment; the "
                                "broker deletes it at start (\"Found an orphaned index file\")",
                                details={"file_kind": "orphan_index"}))

    # segments, indexes, transactions (the lineage and log end come from the partition log)
    open_txns: dict[int, OpenTransaction] = {}
    reports = []
    for seg in log.segments:
        findings.extend(seg.findings)
        open_at_start = frozenset(open_txns)
        for b in seg.kafka_batches:
            if b.producer_id >= 0 and b.is_transactional:
                if b.is_control:
                    open_txns.pop(b.producer_id, None)
                elif b.producer_id not in open_txns:
                    open_txns[b.producer_id] = OpenTransaction(b.producer_id, b.producer_epoch, b.base_offset)
        counts = _verify_indexes(seg, findings, open_at_start, active=seg is log.segments[-1])
        files = seg.files
        reports.append(SegmentReport(seg.path, seg.base_offset, seg.file_size, len(seg.batches), seg.first_offset,
                                     seg.last_offset, seg.valid_bytes, files.index, counts[0], files.timeindex,
                                     counts[1], files.txnindex, counts[2]))
    log_end = log.log_end_offset

    topic_id = None
    metadata = log.partition_metadata
    if metadata is not None and metadata.error is None:
        topic_id = metadata.value.topic_id
    elif metadata is not None:
        findings.append(Finding("checkpoint_malformed", metadata.path, 0,
                                f"partition.metadata cannot be read as Kafka reads it: {metadata.error}"))

    restart = load_partition(log, shutdown=shutdown, kafka_version=kafka_version)
    hw, rp, lso = log.high_watermark, log.recovery_point, log.log_start_offset

    checkpoint_entries = None
    epoch_checkpoint = log.epoch_checkpoint
    if epoch_checkpoint is not None and epoch_checkpoint.error is None:
        checkpoint_entries = tuple((ln.epoch, ln.start_offset) for ln in epoch_checkpoint.value)
        findings.extend(compare_checkpoint(log, restart))
    elif epoch_checkpoint is not None:
        findings.append(Finding("checkpoint_malformed", epoch_checkpoint.path, epoch_checkpoint.position,
                                f"leader-epoch-checkpoint cannot be read as Kafka reads it: {epoch_checkpoint.error}; "
                                "the broker marks the whole log directory offline"))
    elif log.batch_cache:
        findings.append(Finding("epoch_checkpoint_stale", partition.path, 0,
                                f"no leader-epoch-checkpoint although the batches carry epochs "
                                f"{[e.epoch for e in log.batch_cache]}: {_without_checkpoint(restart)}"))

    if hw is not None and hw > log_end:
        findings.append(Finding("high_watermark_beyond_log_end", partition.path, 0,
                                f"the high watermark {hw} (replication-offset-checkpoint) is beyond the log end offset "
                                f"{log_end}: acknowledged data may be missing from this replica",
                                details={"high_watermark": hw, "log_end_offset": log_end}))

    producer_state = log.producer_state
    findings.extend(producer_state.findings)
    snapshot, producers = producer_state.snapshot, producer_state.entries
    if restart.truncated_bytes:
        findings.append(_restart_truncation(restart, partition.path))
    if restart.refuses_to_start:
        findings.append(Finding("restart_refused", partition.path, 0,
                                "the broker would not load this partition: " + "; ".join(restart.reasons)))
    parsed = partition.parsed
    return PartitionReport(
        log_dir.path, partition.path, partition.name, parsed.topic if parsed else None,
        parsed.partition if parsed else None, parsed.suffix if parsed else None, topic_id, tuple(reports), lso,
        log_end, hw, rp, log.lineage, checkpoint_entries, snapshot, producers,
        tuple(sorted(open_txns.values(), key=lambda t: t.first_offset)), restart, tuple(findings),
    )


def _restart_truncation(restart: RestartVerdict, partition_path: str) -> Finding:
    """What a restart cuts, in records and offsets: an error when records go
    (``restart_truncation``), a note when only bytes that hold none do (``restart_trims``: zeros
    are not data, and a cut-off tail has its own finding)."""
    where = restart.truncate_at
    path, position = where if where else (partition_path, 0)
    a = f"{'an' if restart.shutdown == 'unclean' else 'a'} {restart.shutdown} restart"
    place = f" from byte {position} of {path}" if where else ""
    later = f" and delete {len(restart.deleted_segments)} later segment(s)" if restart.deleted_segments else ""
    details = {"truncated_bytes": restart.truncated_bytes, "truncated_records": restart.truncated_records}
    offsets = restart.truncated_offsets
    if offsets is None:
        return Finding("restart_trims", path, position,
                       f"{a} would cut {restart.truncated_bytes} bytes{place}{later}, holding no record",
                       details=details)
    details |= {"first_offset": offsets[0], "last_offset": offsets[1]}
    return Finding("restart_truncation", path, position,
                   f"{a} would truncate offsets {offsets[0]}-{offsets[1]} ({restart.truncated_records} records, "
                   f"{restart.truncated_bytes} bytes){place}{later}", details=details)


def _without_checkpoint(restart: RestartVerdict) -> str:
    """What the restart judged does with no leader-epoch-checkpoint, in the words of its own shutdown."""
    if restart.shutdown == CLEAN:
        return ("after a clean shutdown the broker recovers no segment and starts with an empty epoch cache; "
                "only recovery after an unclean shutdown re-adds epochs")
    cache = ", ".join(f"{e}@{o}" for e, o in restart.epoch_cache) or "empty"
    return ("after an unclean shutdown the broker re-adds only the epochs of the segments it recovers "
            f"(from the recovery point on): its epoch cache would be {cache}")


def _verify_indexes(seg: SegmentLog, findings: list[Finding], open_at_start: frozenset[int],
                    active: bool = False) -> tuple[int | None, int | None, int | None]:
    """The segment's indexes checked against it (``open_at_start``: the producers with a
    transaction holding data open where it starts, for the transaction index; ``active``: the
    partition's last segment); the entry counts."""
    counts: list[int | None] = [None, None, None]
    files = seg.files
    with mapped_indexes(files) as mapped:
        for slot, (kind, verify) in enumerate((("index", verify_offset_index), ("timeindex", verify_time_index))):
            if kind not in mapped:
                continue
            path, buf = mapped[kind]
            for item in verify(buf, path=path, segment=seg, active=active):
                if isinstance(item, Finding):
                    findings.append(item)
                elif isinstance(item, IndexEnd):
                    counts[slot] = item.entries
        path, buf = mapped.get("txnindex", (None, b""))
        items = list(verify_txn_index(buf, path=path, segment=seg, open_at_start=open_at_start))
    counts[2] = sum(1 for i in items if not isinstance(i, Finding)) if files.txnindex else None
    findings.extend(i for i in items if isinstance(i, Finding))
    return counts[0], counts[1], counts[2]
