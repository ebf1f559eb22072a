"""A partition log up to a point in time or offset, and how far its evidence reaches.

``--at-offset`` and ``--at-time`` ask for a state as it was, not as the evidence ends. On a
partition log the point cuts the batch headers: ``--at-offset`` keeps the batches that start at
or before the offset (inclusive, as KRaft's ``--at-offset`` keeps its record); ``--at-time``
stops before the first batch stamped later (its ``max_timestamp``, the time Kafka's time index
and producer state use), as the KRaft replay stops before the first record stamped later. A
batch's timestamps need not increase, so "stops before" is the rule, not "keeps every batch
stamped earlier".

:func:`log_span` is the :class:`~kreplica.model.evidence_span.EvidenceSpan` of logs, for the one
rule on points outside the evidence (``kreplica.cli.options.sources.check_point``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.formats.log.batch import NO_TIMESTAMP, RecordBatch
from kreplica.model.evidence_span import EvidenceSpan
from kreplica.model.log.partition_log import PartitionLog


def batches_until(log: PartitionLog, *, at_offset: int | None = None,
                  at_time: int | None = None) -> tuple[RecordBatch, ...]:
    """``log``'s Kafka-visible batches from its log start offset (the batch holding it included,
    as Kafka's ``log.read(logStartOffset)`` returns it) up to the point (module docstring)."""
    out = []
    start = log.log_start_offset
    for b in log.batches:
        if b.last_offset < start:
            continue
        if at_offset is not None and b.base_offset > at_offset:
            break
        if at_time is not None and b.max_timestamp > at_time:
            break
        out.append(b)
    return tuple(out)


def log_span(logs: Iterable[PartitionLog]) -> EvidenceSpan:
    """The offsets (from the log start offset to the last offset) and the batch times the logs
    hold; one log's offsets when the span bounds an ``--at-offset`` (offsets of different
    partitions do not compare). Batches without a timestamp (message format v0) date nothing."""
    first = last = first_time = last_time = None
    for log in logs:
        for b in log.batches:
            if b.last_offset < log.log_start_offset:
                continue
            first = b.base_offset if first is None else min(first, b.base_offset)
            last = b.last_offset if last is None else max(last, b.last_offset)
            if b.max_timestamp != NO_TIMESTAMP:
                first_time = b.max_timestamp if first_time is None else min(first_time, b.max_timestamp)
                last_time = b.max_timestamp if last_time is None else max(last_time, b.max_timestamp)
    return EvidenceSpan("log", first, last, first_time, last_time)
