"""The one walk over a segment's batches (:class:`BatchWalk`): what its four callers used to do
each in its own loop, done once. Segments are built here with kreplica's writers; expected
values are the headers written (Kafka's ``countOrNull``, a marker's ``ControlRecordType``), never
the walk's own output.
"""

from __future__ import annotations

import pytest

from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import CONTROL_COMMIT, NewRecord
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.formats.log.legacy_records import build_message
from kreplica.model.log import walk as walk_module
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.log.walk import BatchWalk, WalkedBatch

TS = 1_700_000_000_000
PATH = "00000000000000000000.log"


def _data(base: int, n: int, **kw) -> bytes:
    return build_batch([NewRecord(base + i, TS, None, b"v" * 100) for i in range(n)], base_offset=base, **kw)


def _segment() -> bytes:
    """Five records, a COMMIT marker, the cleaner's empty batch (offsets 6-9, no record), a legacy
    message, then a batch whose offsets go backwards."""
    return b"".join([
        _data(0, 5, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True),
        build_batch([build_control_record(5, TS, CONTROL_COMMIT)], base_offset=5, producer_id=7, producer_epoch=0,
                    is_transactional=True, is_control=True),
        build_batch([], base_offset=6, last_offset_delta=3, max_timestamp=TS),
        build_message(10, None, b"old", magic=1, timestamp=TS),
        _data(3, 2),
    ])


def _walk(data: bytes, **kw) -> tuple[BatchWalk, list]:
    walk = BatchWalk(data, PATH, 0, PartitionContext(), **kw)
    return walk, list(walk)


def test_batches_come_with_their_markers_and_the_checks_across_batches() -> None:
    walk, items = _walk(_segment())
    batches = [i for i in items if type(i) is WalkedBatch]
    assert [b.batch.base_offset for b in batches] == [0, 5, 6, 10, 3]
    marker = batches[1].marker
    assert (marker.control_type, marker.producer_id, marker.offset) == (CONTROL_COMMIT, 7, 5)
    assert [b.marker for b in batches if b is not batches[1]] == [None] * 4
    assert [[f.kind for f in b.found] for b in batches] == [[], [], [], [], ["offset_regression"]]
    assert walk.end.stopped_by == "end_of_file" and walk.end.valid_bytes == len(_segment())


def test_markers_are_left_unread_when_not_asked_for() -> None:
    _, items = _walk(_segment(), markers=False)
    assert all(i.marker is None for i in items if type(i) is WalkedBatch)


def test_the_header_totals_count_what_kafkas_reader_yields() -> None:
    """5 + 1 (the marker) + 0 (the empty batch: ``count() == 0``, counter-case its 4 offsets) + 1
    (the legacy message) + 2."""
    walk, _ = _walk(_segment())
    assert (walk.batches, walk.records) == (5, 9)


def test_the_walkers_findings_pass_through_in_file_order() -> None:
    data = _segment() + b"\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00"   # a cut prefix at the end
    walk, items = _walk(data)
    assert isinstance(items[-1], Finding)
    assert walk.end.valid_bytes == len(_segment()) < walk.end.file_size == len(data)


@pytest.mark.parametrize("step", [1, 4096, 1 << 30])
def test_progress_adds_up_to_the_file_and_comes_a_step_at_a_time(monkeypatch, step) -> None:
    monkeypatch.setattr(walk_module, "PROGRESS_STEP", step)
    data = b"".join(_data(i * 10, 10) for i in range(20))
    told: list[int] = []
    _walk(data, progress=told.append)
    assert sum(told) == len(data)
    assert all(n >= step for n in told[:-1])
    if step == 1:      # after every batch, then the rest (none)
        assert len(told) == 21 and told[-1] == 0
    if step > len(data):
        assert told == [len(data)]


def test_the_context_carries_the_checks_across_segments() -> None:
    """One :class:`PartitionContext` over two segments: the second's first batch is checked
    against the first's last (``offset_overlap``), as for every partition walked."""
    context = PartitionContext()
    list(BatchWalk(_data(0, 5), "a.log", 0, context))
    found = [i.found for i in BatchWalk(_data(3, 5), "b.log", 3, context) if type(i) is WalkedBatch]
    assert [[f.kind for f in fs] for fs in found] == [["offset_overlap"]]
