"""The leader-epoch checkpoint against the lineage the batch headers show (kafka-algorithms
spec §1.6, algorithm C): every disagreement named, with what a restart does about it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.analysis.log.log_loading import RestartVerdict
from kreplica.analysis.log.replica_state import ReplicaState, replica_state
from kreplica.formats.findings import Finding
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion


@dataclass(frozen=True, slots=True)
class EpochsVerdict:
    """``epochs`` for one replica: its state after a broker loads it, the checkpoint's entries
    (``None`` when absent or unreadable) and every disagreement."""

    state: ReplicaState
    checkpoint: tuple[tuple[int, int], ...] | None
    findings: tuple[Finding, ...]


def reconcile_epochs(log: PartitionLog, kafka_version: KafkaVersion) -> EpochsVerdict:
    """The lineage from batch headers, the checkpoint, and the cache a broker of ``kafka_version``
    loads, with every way they disagree."""
    state = replica_state(log, kafka_version=kafka_version)
    findings: list[Finding] = []
    cp = log.epoch_checkpoint
    if cp is not None and cp.error is not None:
        findings.append(Finding("checkpoint_malformed", cp.path, 0,
                                f"leader-epoch-checkpoint cannot be read as Kafka reads it: {cp.error}"))
    lines = log.epoch_checkpoint_lines
    if lines is not None:
        findings.extend(compare_checkpoint(log, state.restart))
    checkpoint = None if lines is None else tuple((x.epoch, x.start_offset) for x in lines)
    return EpochsVerdict(state, checkpoint, tuple(findings))


def _moved_to_log_start(line, lines, batch_cache, log_start: int) -> bool:
    """The checkpoint's first entry is the one Kafka rewrites when the log start offset moves
    (DeleteRecords, retention): ``LeaderEpochFileCache.truncateFromStartAsyncFlush`` drops the
    entries at or below the new log start and puts the last of them back starting *at* it. So a
    first entry starting exactly at the log start offset, for the epoch whose batches hold that
    offset, is what Kafka writes, although that epoch's batches begin earlier (segments below
    the log start offset stay until retention deletes them)."""
    if line is not lines[0] or line.start_offset != log_start:
        return False
    holding = [e.epoch for e in batch_cache if e.start_offset <= log_start]
    return bool(holding) and holding[-1] == line.epoch


def compare_checkpoint(log: PartitionLog, restart: RestartVerdict) -> Iterator[Finding]:
    """Name every way the checkpoint's lines and the cache the batch headers give
    (:attr:`PartitionLog.batch_cache`) disagree."""
    path = log.partition.leader_epoch_checkpoint
    lines = log.epoch_checkpoint_lines or ()
    batch_cache, log_end, log_start = log.batch_cache, log.log_end_offset, log.log_start_offset
    # the cleaner-offset-checkpoint's entry: the log is compacted and cleaned below that offset
    cleaned_to = (log.checkpoints.cleaner_offsets or {}).get(log.partition.key)
    prev = None
    for ln in lines:
        if prev is not None and (ln.epoch <= prev.epoch or ln.start_offset <= prev.start_offset):
            yield Finding("epoch_checkpoint_out_of_order", path, ln.position,
                          f"line {ln.line} ({ln.epoch} {ln.start_offset}) does not follow ({prev.epoch} "
                          f"{prev.start_offset}): epochs and start offsets must both increase; the broker repairs this "
                          "in memory (the later line wins and earlier conflicting entries are dropped)",
                          details={"epoch": ln.epoch, "start_offset": ln.start_offset})
        prev = ln
    batch_starts = {e.epoch: e.start_offset for e in batch_cache}
    checkpoint = {ln.epoch: ln for ln in lines}
    for ln in lines:
        if ln.start_offset > log_end:
            yield Finding("epoch_checkpoint_beyond_log_end", path, ln.position,
                          f"epoch {ln.epoch} starts at offset {ln.start_offset}, beyond the log end offset {log_end}: "
                          "the broker drops this entry on load (truncateFromEnd); the offsets it claims are not in "
                          "this replica", details={"epoch": ln.epoch, "start_offset": ln.start_offset,
                                                   "log_end_offset": log_end})
        elif ln.start_offset == log_end:
            # what Kafka itself writes: a leader assigns its epoch at its log end when elected
            # (Partition.makeLeader, maybeAssignEpochStartOffset), and a log start moved to the
            # log end moves the entry there (truncateFromStart): normal state, not a warning
            yield Finding("epoch_checkpoint_beyond_log_end", path, ln.position,
                          f"epoch {ln.epoch} starts at the log end offset {log_end} with no batches yet (a leader "
                          "elected that has not written); the broker drops this entry on load (truncateFromEnd)",
                          severity="info",
                          details={"epoch": ln.epoch, "start_offset": ln.start_offset, "log_end_offset": log_end})
        elif ln.epoch in batch_starts and batch_starts[ln.epoch] != ln.start_offset \
                and not _moved_to_log_start(ln, lines, batch_cache, log_start):
            actual = batch_starts[ln.epoch]
            compacted = ln.start_offset < actual
            cleaned = compacted and cleaned_to is not None and actual <= cleaned_to
            yield Finding("epoch_checkpoint_offset_mismatch", path, ln.position,
                          f"epoch {ln.epoch} starts at {ln.start_offset} in the checkpoint but at {actual} in the batch "
                          "headers" + (f" (the log cleaner, which has cleaned this log to offset {cleaned_to}, removed "
                                       "the batches that opened it)" if cleaned else
                                       " (the log cleaner may have removed the batch that opened it)" if compacted
                                       else ""),
                          severity="info" if cleaned else "warning" if compacted else "",
                          details={"epoch": ln.epoch, "checkpoint_start_offset": ln.start_offset,
                                   "batch_start_offset": actual})
        elif ln.epoch not in batch_starts and ln.start_offset >= log_start:
            yield Finding("epoch_checkpoint_offset_mismatch", path, ln.position,
                          f"epoch {ln.epoch} (from offset {ln.start_offset}) has no batches in this replica: a leader "
                          "elected without writing, or its batches were truncated", severity="warning",
                          details={"epoch": ln.epoch, "checkpoint_start_offset": ln.start_offset})
    latest = max((ln.epoch for ln in lines), default=UNDEFINED_EPOCH)
    for epoch, start in batch_starts.items():
        if epoch in checkpoint or start < log_start:
            continue
        restored = (epoch, start) in restart.epoch_cache
        yield Finding("epoch_checkpoint_stale", path, 0,
                      f"the checkpoint lacks epoch {epoch} (its batches start at offset {start})"
                      + (" — newer than any checkpoint entry, as when the broker crashed before flushing the "
                         "checkpoint" if epoch > latest else "")
                      + (f"; a {restart.shutdown} restart re-assigns it from the batches" if restored
                         else f"; a {restart.shutdown} restart would NOT restore it"),
                      details={"epoch": epoch, "start_offset": start, "restored_on_restart": restored})
