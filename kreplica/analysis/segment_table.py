"""One pass over a segment that keeps what directory-level analyses need: the batches (headers
only), the transaction markers, the findings and the totals."""

from __future__ import annotations

from dataclasses import dataclass, field

from kreplica.analysis.inspection import InspectOptions, SegmentSummary, _PartitionContext, inspect_segment
from kreplica.formats import default_records
from kreplica.formats.batch import RecordBatch
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.model.segments import SegmentFile


@dataclass(frozen=True, slots=True)
class Marker:
    """A transaction marker: the control batch's producer and its control type (0 ABORT, 1 COMMIT)."""

    offset: int
    position: int
    producer_id: int
    producer_epoch: int
    control_type: int | None
    coordinator_epoch: int | None


@dataclass
class SegmentTable:
    """Headers of every batch of a segment (Kafka-visible first, then any after a break)."""

    segment: SegmentFile
    batches: list[RecordBatch] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    summary: SegmentSummary | None = None

    @property
    def kafka_batches(self) -> list[RecordBatch]:
        return [b for b in self.batches if not b.after_break]


def scan_segment(segment: SegmentFile, context: _PartitionContext | None = None) -> SegmentTable:
    """Walk ``segment`` once (headers, CRCs, cross-batch checks, recovery verdict, markers)."""
    table = SegmentTable(segment)
    from kreplica.formats.mapped import open_buffer

    with open_buffer(segment.path) as buf:
        for ev in inspect_segment(segment, InspectOptions(), context):
            if isinstance(ev, RecordBatch):
                table.batches.append(ev)
                if ev.is_control and ev.magic >= 2 and ev.count:
                    table.markers.append(_marker(buf, ev))
            elif isinstance(ev, Finding):
                table.findings.append(ev)
            elif isinstance(ev, SegmentSummary):
                table.summary = ev
    return table


def _marker(buf, batch: RecordBatch) -> Marker:
    control_type = coordinator_epoch = None
    try:
        record = next(default_records.iter_records(buf, batch))
        control_type, coordinator_epoch = record.control_type, record.coordinator_epoch
    except (FormatError, StopIteration):
        pass
    return Marker(batch.base_offset, batch.position, batch.producer_id, batch.producer_epoch, control_type,
                  coordinator_epoch)
