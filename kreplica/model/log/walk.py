"""One walk over a segment's batches, the one every command that reads segments makes.

The segment walker (:func:`~kreplica.formats.log.segment.iter_segment`) yields each batch header
as Kafka's file reader sees it, the damage it meets, and how it ended. Every reader of a
partition's segments adds the same four things to it, and used to add them each in its own
loop: the checks across batches (:func:`~kreplica.model.log.batch_order.check_batch`, in file
order, also across the segments of one partition through its :class:`PartitionContext`), the
transaction marker of a control batch (read once, :func:`read_control_marker`), the header's
totals (batches, and records as :attr:`RecordBatch.records_read` counts them) and a progress
report every :data:`PROGRESS_STEP` bytes. :class:`BatchWalk` does them once; its callers
(the partition log, the ``__consumer_offsets`` fold, ``inspect-log`` and the fleet scan's tasks)
keep only what they make of each batch.

It is iterated rather than given callbacks for each batch because ``inspect-log`` streams: a
batch's records are yielded before the walk goes on to the next batch. Its hooks are the
``progress`` callable and the marker switch; the per-batch hook is the caller's loop body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.log.control_marker import ControlMarker, has_marker, read_control_marker
from kreplica.formats.log.segment import SegmentEnd, iter_segment
from kreplica.formats.mapped import Buffer
from kreplica.model.log.batch_order import PartitionContext, check_batch

#: How often (in bytes walked) a walk reports progress.
PROGRESS_STEP = 4 << 20


class WalkedBatch(NamedTuple):
    """One batch of the walk: its header, the findings of the checks across batches (a list,
    usually empty; the caller may keep it) and its control marker (``None`` unless it is a v2
    control batch with a record and markers were asked for)."""

    batch: RecordBatch
    found: list[Finding]
    marker: ControlMarker | None


class BatchWalk:
    """A walk over the segment in ``buf`` (at ``path``, whose file name gives ``base_offset``;
    ``None``: not known, no range check). Iterate it for :class:`WalkedBatch` values and the
    walker's :class:`Finding` values in file order; then :attr:`end` is how it ended and
    :attr:`batches` and :attr:`records` are the header totals (every batch, ``after_break`` ones
    included). ``progress(n_bytes)`` is told how far the walk got every :data:`PROGRESS_STEP`
    bytes and, at the end, the rest of the file. ``verify_crc``, ``max_bytes``, ``start`` and
    ``stop`` are :func:`iter_segment`'s; ``markers=False`` leaves control markers unread."""

    __slots__ = ("buf", "path", "base_offset", "context", "progress", "markers", "verify_crc", "max_bytes", "start",
                 "stop", "end", "batches", "records")

    def __init__(self, buf: Buffer, path: str, base_offset: int | None, context: PartitionContext | None = None, *,
                 progress: Callable[[int], None] | None = None, markers: bool = True, verify_crc: bool = True,
                 max_bytes: int | None = None, start: int = 0, stop: int | None = None) -> None:
        self.buf = buf
        self.path = path
        self.base_offset = base_offset
        self.context = context if context is not None else PartitionContext()
        self.progress = progress
        self.markers = markers
        self.verify_crc = verify_crc
        self.max_bytes = max_bytes
        self.start = start
        self.stop = stop
        self.end: SegmentEnd | None = None
        self.batches = 0
        self.records = 0

    def __iter__(self) -> Iterator[WalkedBatch | Finding]:
        buf, base, context, progress, markers = self.buf, self.base_offset, self.context, self.progress, self.markers
        batches = records = reported = 0
        new, walked, batch_type, check = tuple.__new__, WalkedBatch, RecordBatch, check_batch
        # NOTE: the per-batch path of every scan and model; bench/README.md ("One segment walk") has the
        # figures: the WalkedBatch is built as a tuple (a NamedTuple's __new__ costs 0.3 µs a batch) and a v2
        # count is added inline (RecordBatch.records_read's rule; the property is called for legacy only)
        for ev in iter_segment(buf, path=self.path, verify_crc=self.verify_crc, max_bytes=self.max_bytes,
                               start=self.start, stop=self.stop):
            if type(ev) is batch_type:
                batches += 1
                count = ev.count
                if count is None:
                    records += ev.records_read
                elif count > 0:
                    records += count
                marker = read_control_marker(buf, ev) if markers and ev.is_control and has_marker(ev) else None
                yield new(walked, (ev, check(ev, base, context), marker))
                if progress is not None and ev.end - reported >= PROGRESS_STEP:
                    progress(ev.end - reported)
                    reported = ev.end
            elif type(ev) is SegmentEnd:
                self.end = ev
            else:
                yield ev
        self.batches, self.records = batches, records
        if progress is not None:
            progress(self.end.file_size - reported)
