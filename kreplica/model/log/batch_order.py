"""Checks that need more than one batch: what the batches before it leave for the next one.

Kafka's reader checks each batch on its own; a log where offsets or leader epochs go backwards,
or where a batch's offsets do not fit its segment's base offset, reads without an error but is
damaged evidence (two logs spliced together, or a header changed where the CRC does not cover
it). Every walk over a partition's segments, streaming (``inspect-log``) or building the
partition model, applies these checks through :func:`check_batch`, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.findings import Finding
from kreplica.model.log.epoch_cache import UNDEFINED_EPOCH

_INT32_MAX = 0x7FFFFFFF


@dataclass
class PartitionContext:
    """What the previous batches of a partition leave for the next one to be checked against."""

    last_batch: RecordBatch | None = None
    max_epoch: int = UNDEFINED_EPOCH
    max_epoch_batch: RecordBatch | None = None


def check_batch(batch: RecordBatch, segment_base_offset: int | None, context: PartitionContext) -> list[Finding]:
    """Offsets and epochs against the batches before it, and against the segment's base offset
    (a list, usually empty: this runs once per batch of every scan)."""
    out: list[Finding] = []
    if batch.crc_valid is False:
        return out
    path = batch.path
    if segment_base_offset is not None:
        relative = batch.last_offset - segment_base_offset
        if batch.base_offset < segment_base_offset or relative > _INT32_MAX:
            out.append(Finding("offset_out_of_segment_range", path, batch.position,
                          f"offsets {batch.base_offset}-{batch.last_offset} of the batch at byte {batch.position} "
                          f"do not fit segment base offset {segment_base_offset} (relative offsets must lie "
                          f"in 0..{_INT32_MAX})",
                          details={"segment_base_offset": segment_base_offset}))
    prev = context.last_batch
    if prev is not None and batch.base_offset <= prev.last_offset:
        where = f"byte {prev.position}" if prev.path == path else f"byte {prev.position} of {prev.path}"
        if batch.last_offset <= prev.last_offset:
            out.append(Finding("offset_regression", path, batch.position,
                          f"offsets go backwards: the batch at byte {batch.position} holds "
                          f"{batch.base_offset}-{batch.last_offset}, after {prev.base_offset}-{prev.last_offset} "
                          f"at {where}",
                          details={"previous_last_offset": prev.last_offset, "base_offset": batch.base_offset}))
        else:
            out.append(Finding("offset_overlap", path, batch.position,
                          f"the batch at byte {batch.position} starts at offset {batch.base_offset}, at or "
                          f"below {prev.last_offset}, the last offset of the batch at {where}",
                          details={"previous_last_offset": prev.last_offset, "base_offset": batch.base_offset}))
    if prev is None or batch.last_offset > prev.last_offset:
        context.last_batch = batch
    if batch.magic >= 2 and batch.partition_leader_epoch >= 0:
        if batch.partition_leader_epoch < context.max_epoch:
            seen = context.max_epoch_batch
            out.append(Finding("epoch_regression", path, batch.position,
                          f"partition leader epoch {batch.partition_leader_epoch} of the batch at byte "
                          f"{batch.position} (offset {batch.base_offset}) is below epoch {context.max_epoch} "
                          f"seen at offset {seen.base_offset}",
                          details={"epoch": batch.partition_leader_epoch, "max_epoch_before": context.max_epoch}))
        else:
            context.max_epoch = batch.partition_leader_epoch
            context.max_epoch_batch = batch
    return out
