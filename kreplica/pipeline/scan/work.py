"""What a fleet scan's driver and its tasks hand each other: the work of stage 2 (a
:class:`Stretch`: a segment, or a stretch of a large one), what a stage 2 task reports of it (a
:class:`SegmentWalk`, a few hundred bytes, nothing per batch) and the counts summed over tasks
(:class:`ScanTotals`). Small values, pickled between the driver and the tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.logdir.log_dir import SegmentFiles


@dataclass(frozen=True, slots=True)
class ScanTotals:
    """What a scan found, summed over tasks (small: one value each)."""

    replicas: int = 0
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    findings: int = 0
    errors: int = 0

    def __add__(self, other: ScanTotals) -> ScanTotals:
        return ScanTotals(*(a + b for a, b in zip(self._values(), other._values())))

    def _values(self) -> tuple[int, ...]:
        return (self.replicas, self.segments, self.bytes, self.batches, self.records, self.findings, self.errors)


@dataclass(frozen=True, slots=True)
class Stretch:
    """Stage 2 work: one segment, or one of ``chunks`` stretches of a large one. A stretch is
    given by guesses (``begin`` and ``until``, byte positions); the task starts at the first
    batch at or after ``begin`` (:func:`~kreplica.formats.log.segment.find_next_batch`) and walks
    to the first one at or after ``until``, so the stretches of a segment meet at batch boundaries
    every task finds alike."""

    key: tuple
    files: SegmentFiles
    size: int
    chunk: int = 0
    chunks: int = 1
    begin: int = 0
    until: int | None = None
    txn_index_below_base: bool = False  # read with the segment's directory in stage 1


@dataclass(frozen=True, slots=True)
class SegmentWalk:
    """What a stage 2 task tells the driver about one segment or stretch: a few hundred bytes,
    nothing per batch.

    ``context`` is what :func:`~kreplica.model.log.batch_order.check_batch` leaves after the
    stretch's batches checked on their own; with ``min_base_offset`` and ``min_epoch`` it lets the
    driver tell, without the batches, whether the batches before would change any of its findings
    (stage 3). A stretch ``start`` to ``stop`` (``None``: the end of the file; ``start``
    ``None``: no batch to walk) is part of the whole walk when the stretch before it ended
    cleanly: ``scanned_bytes`` and ``valid_bytes`` both at its ``stop``.
    """

    stretch: Stretch
    start: int | None
    stop: int | None
    file_size: int
    scanned_bytes: int
    valid_bytes: int
    stopped_by: str
    txn_index_below_base: bool
    findings: int          # the walker's and the records' findings
    checks: int            # findings of the checks across batches, within the stretch
    check_errors: int
    part: str              # part files: its batch rows are batches/part-<part> rows
    first_row: int         # [first_row, first_row + rows)
    rows: int
    min_base_offset: int | None
    min_epoch: int | None
    context: PartitionContext
    totals: ScanTotals

    @property
    def key(self) -> tuple:
        return self.stretch.key

    @property
    def files(self) -> SegmentFiles:
        return self.stretch.files

    @property
    def order(self) -> tuple:
        return (self.files.base_offset, self.files.log, self.start or 0)

    @property
    def ends_cleanly(self) -> bool:
        return self.stop is None or self.scanned_bytes == self.valid_bytes == self.stop
