"""Cross-batch checks of the inspect-log pass: offsets and epochs must increase within and
across the segments of a partition, and fit the segment's base offset."""

from __future__ import annotations

from pathlib import Path

from kreplica.analysis.inspection import InspectOptions, inspect_groups
from kreplica.formats.batch import NewRecord, Record, RecordBatch
from kreplica.formats.default_records import build_batch
from kreplica.formats.findings import Finding
from kreplica.model.segments import find_segment_groups

TS = 1_700_000_000_000


def batch(first: int, n: int, epoch: int = 0) -> bytes:
    return build_batch([NewRecord(first + i, TS, b"k", b"v") for i in range(n)], base_offset=first,
                       partition_leader_epoch=epoch)


def kinds(tmp_path: Path, segments: dict[str, bytes], **opts) -> list[tuple[str, int]]:
    part = tmp_path / "orders-0"
    part.mkdir()
    for name, data in segments.items():
        (part / name).write_bytes(data)
    events = list(inspect_groups(find_segment_groups([str(part)]), InspectOptions(**opts)))
    return [(e.kind, e.position) for e in events if isinstance(e, Finding)]


def test_clean_partition_has_no_findings(tmp_path: Path) -> None:
    seg0 = batch(0, 3) + batch(3, 2, epoch=1)
    seg1 = batch(5, 4, epoch=2)
    assert kinds(tmp_path, {"00000000000000000000.log": seg0, "00000000000000000005.log": seg1}) == []


def test_overlap_regression_and_epoch_regression_are_named_with_their_position(tmp_path: Path) -> None:
    a, b, c, d = batch(0, 5, 2), batch(3, 5, 2), batch(1, 2, 2), batch(8, 1, 1)
    found = kinds(tmp_path, {"00000000000000000000.log": a + b + c + d})
    assert ("offset_overlap", len(a)) in found
    assert ("offset_regression", len(a + b)) in found
    assert ("epoch_regression", len(a + b + c)) in found


def test_checks_run_across_segment_boundaries(tmp_path: Path) -> None:
    found = kinds(tmp_path, {"00000000000000000000.log": batch(0, 10, 3), "00000000000000000010.log": batch(10, 2, 1)})
    assert found == [("epoch_regression", 0)]


def test_offsets_below_the_file_name_base_are_reported(tmp_path: Path) -> None:
    found = kinds(tmp_path, {"00000000000000000100.log": batch(50, 2)})
    assert found == [("offset_out_of_segment_range", 0)]


def test_records_are_decoded_and_filtered_by_offset(tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(batch(0, 5) + batch(5, 5))
    events = list(inspect_groups(find_segment_groups([str(part)]),
                                 InspectOptions(records=True, first_offset=3, last_offset=6)))
    assert [e.offset for e in events if isinstance(e, Record)] == [3, 4, 5, 6]
    assert [e.base_offset for e in events if isinstance(e, RecordBatch)] == [0, 5]
    summary = events[-1]
    assert summary.records == 10 and summary.batches == 2
