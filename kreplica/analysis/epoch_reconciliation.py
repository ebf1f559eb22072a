"""The leader-epoch checkpoint against the lineage the batch headers show (kafka-algorithms
spec §1.6, algorithm C): every disagreement named, with what a restart does about it."""

from __future__ import annotations

from collections.abc import Iterator

from kreplica.analysis.log_loading import RestartVerdict
from kreplica.formats.findings import Finding
from kreplica.model.epoch_cache import EpochEntry
from kreplica.model.log_dir import PartitionDir


def compare_checkpoint(partition: PartitionDir, lines, batch_cache: tuple[EpochEntry, ...], log_end: int,
                       log_start: int, restart: RestartVerdict) -> Iterator[Finding]:
    """Name every way the checkpoint lines and ``batch_cache`` (the cache the batch headers give,
    :attr:`LineageBuilder.cache_entries`) disagree."""
    path = partition.leader_epoch_checkpoint
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
            yield Finding("epoch_checkpoint_beyond_log_end", path, ln.position,
                          f"epoch {ln.epoch} starts at the log end offset {log_end} with no batches yet (a leader "
                          "elected that has not written); the broker drops this entry on load (truncateFromEnd)",
                          severity="warning",
                          details={"epoch": ln.epoch, "start_offset": ln.start_offset, "log_end_offset": log_end})
        elif ln.epoch in batch_starts and batch_starts[ln.epoch] != ln.start_offset:
            actual = batch_starts[ln.epoch]
            compacted = ln.start_offset < actual
            yield Finding("epoch_checkpoint_offset_mismatch", path, ln.position,
                          f"epoch {ln.epoch} starts at {ln.start_offset} in the checkpoint but at {actual} in the batch "
                          "headers" + (" (the log cleaner may have removed the batch that opened it)" if compacted
                                       else ""),
                          severity="warning" if compacted else "",
                          details={"epoch": ln.epoch, "checkpoint_start_offset": ln.start_offset,
                                   "batch_start_offset": actual})
        elif ln.epoch not in batch_starts and ln.start_offset >= log_start:
            yield Finding("epoch_checkpoint_offset_mismatch", path, ln.position,
                          f"epoch {ln.epoch} (from offset {ln.start_offset}) has no batches in this replica: a leader "
                          "elected without writing, or its batches were truncated", severity="warning",
                          details={"epoch": ln.epoch, "checkpoint_start_offset": ln.start_offset})
    latest = max((ln.epoch for ln in lines), default=-1)
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
