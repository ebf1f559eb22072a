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
    (a list, usually empty: this runs once per batch of every scan).

    NOTE: the header's fields are read once each into locals: this runs for every batch of every
    walk, and a NamedTuple field costs an attribute lookup each time (bench/README.md, "One
    segment walk")."""
    out: list[Finding] = []
    if batch.crc_valid is False:
        return out
    base_offset, last_offset = batch.base_offset, batch.last_offset
    if segment_base_offset is not None:
        if base_offset < segment_base_offset or last_offset - segment_base_offset > _INT32_MAX:
            out.append(Finding("offset_out_of_segment_range", batch.path, batch.position,
                          f"offsets {base_offset}-{last_offset} of the batch at byte {batch.position} "
                          f"do not fit segment base offset {segment_base_offset} (relative offsets must lie "
                          f"in 0..{_INT32_MAX})",
                          details={"segment_base_offset": segment_base_offset}))
    prev = context.last_batch
    if prev is None:
        context.last_batch = batch
    else:
        prev_last = prev.last_offset
        if base_offset <= prev_last:
            path = batch.path
            where = f"byte {prev.position}" if prev.path == path else f"byte {prev.position} of {prev.path}"
            if last_offset <= prev_last:
                out.append(Finding("offset_regression", path, batch.position,
                              f"offsets go backwards: the batch at byte {batch.position} holds "
                              f"{base_offset}-{last_offset}, after {prev.base_offset}-{prev_last} "
                              f"at {where}",
                              details={"previous_last_offset": prev_last, "base_offset": base_offset}))
            else:
                out.append(Finding("offset_overlap", path, batch.position,
                              f"the batch at byte {batch.position} starts at offset {base_offset}, at or "
                              f"below {prev_last}, the last offset of the batch at {where}",
                              details={"previous_last_offset": prev_last, "base_offset": base_offset}))
        if last_offset > prev_last:
            context.last_batch = batch
    epoch = batch.partition_leader_epoch
    if epoch >= 0 and batch.magic >= 2:
        if epoch < context.max_epoch:
            seen = context.max_epoch_batch
            out.append(Finding("epoch_regression", batch.path, batch.position,
                          f"partition leader epoch {epoch} of the batch at byte "
                          f"{batch.position} (offset {base_offset}) is below epoch {context.max_epoch} "
                          f"seen at offset {seen.base_offset}",
                          details={"epoch": epoch, "max_epoch_before": context.max_epoch}))
        else:
            context.max_epoch = epoch
            context.max_epoch_batch = batch
    return out
