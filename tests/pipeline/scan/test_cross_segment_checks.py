"""The fleet scan checks each segment's batches on their own in parallel, then rechecks only the
segments the ones before them would change (:func:`segments_to_recheck`). Property: that gives
exactly the findings, in order, of one sequential :func:`check_batch` pass over the replica, as
``inspect-dir`` and ``inspect-log`` run it — for any offsets, epochs and CRC verdicts.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.log.batch import RecordBatch
from kreplica.model.log.batch_order import PartitionContext, check_batch
from kreplica.model.logdir.log_dir import SegmentFiles
from kreplica.pipeline.scan.work import ScanTotals, SegmentWalk, Stretch

pytest.importorskip("pyarrow", reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
from kreplica.pipeline.scan.checks import segments_to_recheck  # noqa: E402

KEY = (1, "/data", "t", 0)


def _batch(path: str, position: int, base: int, length: int, epoch: int, magic: int, crc_valid: bool) -> RecordBatch:
    return RecordBatch(path, position, 100, magic, base, base + length, length + 1, epoch, 0, crc_valid, 0, 0, 0,
                       0, 0, -1, -1, -1, False, False, None)


batch_specs = st.tuples(st.integers(0, 60), st.integers(0, 3), st.integers(-1, 6), st.sampled_from([1, 2, 2, 2]),
                        st.sampled_from([True, True, True, None, False]))


def _segments(draw_segments: list[tuple[int, list[tuple]]]) -> list[tuple[SegmentFiles, list[RecordBatch]]]:
    out = []
    for i, (base, specs) in enumerate(draw_segments):
        path = f"/data/t-0/{base:020d}-{i}.log"
        out.append((SegmentFiles(base, path),
                    [_batch(path, 100 * j, *spec) for j, spec in enumerate(specs)]))
    return out


def _walk(files: SegmentFiles, batches: list[RecordBatch]) -> tuple[SegmentWalk, list]:
    context, findings = PartitionContext(), []
    valid = [b for b in batches if b.crc_valid is not False]
    for b in batches:
        findings += check_batch(b, files.base_offset, context)
    epochs = [b.partition_leader_epoch for b in valid if b.magic >= 2 and b.partition_leader_epoch >= 0]
    walk = SegmentWalk(Stretch(KEY, files, 0), 0, None, 0, 0, 0, "end_of_file", False, 0, len(findings), 0, "p", 0,
                       len(batches), min((b.base_offset for b in valid), default=None), min(epochs, default=None),
                       context, ScanTotals())
    return walk, findings


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.lists(batch_specs, max_size=6)), max_size=5))
def test_rechecking_only_the_changed_segments_equals_one_sequential_pass(drawn) -> None:
    segments = sorted(_segments(drawn), key=lambda s: (s[0].base_offset, s[0].log))
    expected, context = [], PartitionContext()
    for files, batches in segments:
        for b in batches:
            expected += check_batch(b, files.base_offset, context)

    walks = {files.log: _walk(files, batches) for files, batches in reversed(segments)}  # any order
    recheck = {w.files.log: before for w, before in segments_to_recheck(w for w, _ in walks.values())}
    got = []
    for files, batches in segments:
        if files.log in recheck:
            before = recheck[files.log]
            context = PartitionContext(before.last_batch, before.max_epoch, before.max_epoch_batch)
            for b in batches:
                got += check_batch(b, files.base_offset, context)
        else:
            got += walks[files.log][1]
    assert got == expected


def test_a_healthy_replica_rechecks_nothing_and_a_spliced_one_rechecks_the_segment_after_the_splice() -> None:
    healthy = _segments([(0, [(0, 4, 1, 2, True), (5, 4, 1, 2, True)]), (10, [(10, 4, 2, 2, True)])])
    assert segments_to_recheck(_walk(f, b)[0] for f, b in healthy) == []
    spliced = _segments([(0, [(0, 4, 3, 2, True), (5, 4, 3, 2, True)]), (10, [(3, 4, 2, 2, True)])])
    (walk, before), = segments_to_recheck(_walk(f, b)[0] for f, b in spliced)
    assert walk.files.base_offset == 10 and before.last_batch.last_offset == 9 and before.max_epoch == 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 2), st.integers(-1, 5)), min_size=1, max_size=8))
def test_a_walk_reports_the_lowest_offset_and_epoch_of_the_batches_checked(tmp_path_factory, drawn) -> None:
    # the task keeps the first batch's values and looks further only where check_batch found a
    # regression; that must be the minimum over every batch check_batch reads
    from kreplica.formats.log.batch import NewRecord
    from kreplica.formats.log.default_records import build_batch
    from kreplica.pipeline.scan.segments import scan_segments

    tmp = tmp_path_factory.mktemp("walk")
    data = b"".join(build_batch([NewRecord(base + i, 0, None, b"v") for i in range(n + 1)], base_offset=base,
                                partition_leader_epoch=epoch) for base, n, epoch in drawn)
    (tmp / "00000000000000000000.log").write_bytes(data)
    (walk,) = scan_segments(str(tmp / "out"), False, False, 0,
                            [Stretch(KEY, SegmentFiles(0, str(tmp / "00000000000000000000.log")), len(data))])
    assert walk.min_base_offset == min(base for base, _, _ in drawn)
    assert walk.min_epoch == min((epoch for _, _, epoch in drawn if epoch >= 0), default=None)
    assert walk.rows == len(drawn)
