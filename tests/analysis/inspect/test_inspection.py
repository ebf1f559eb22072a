"""Cross-batch checks of the inspect-log pass: offsets and epochs must increase within and
across the segments of a partition, and fit the segment's base offset."""

from __future__ import annotations

from pathlib import Path

from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
from kreplica.formats.log.batch import NewRecord, Record, RecordBatch
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.findings import Finding
from kreplica.model.logdir.segments import find_segment_groups

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


# -- hardening (issue 14) ----------------------------------------------------------------------


def _events(tmp_path: Path, data: bytes, **opts) -> list:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(data)
    return list(inspect_groups(find_segment_groups([str(part)]), InspectOptions(records=True, **opts)))


def test_damaged_legacy_message_is_listed_with_its_key_and_a_finding(tmp_path: Path) -> None:
    # Kafka's reader yields the record (key readable, value() throws); so does inspect-log
    import struct

    from kreplica.formats.checksums import crc32
    from kreplica.formats.log.legacy_records import build_message

    good = build_message(0, b"k0", b"v0", magic=1, timestamp=TS)
    bad = bytearray(build_message(1, b"k1", b"v1", magic=1, timestamp=TS))
    struct.pack_into(">i", bad, 12 + 4 + 2 + 8 + 4 + 2, 1 << 20)  # value length past the end
    struct.pack_into(">I", bad, 12, crc32(bytes(bad[16:])))
    events = _events(tmp_path, good + bytes(bad))
    records = [(e.offset, e.key, e.value) for e in events if isinstance(e, Record)]
    assert records == [(0, b"k0", b"v0"), (1, b"k1", None)]
    findings = [e for e in events if isinstance(e, Finding)]
    assert [(f.kind, f.position, f.details["field"], f.details["offset"]) for f in findings] == [
        ("invalid_record", len(good), "value", 1)]
    assert events[-1].records == 2


def test_decompression_bomb_is_a_finding(tmp_path: Path) -> None:
    # a 32 KiB zstd frame of RLE blocks inflating to 1 GiB, in a v2 batch declaring 20 million records
    import struct

    from kreplica.formats import codecs
    from kreplica.formats.checksums import crc32c

    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for i in range(8192):
        frame += (int(i == 8191) | 2 | (128 * 1024) << 3).to_bytes(3, "little") + b"\x00"
    count = 20_000_000
    body = struct.pack(">hiqqqhii", codecs.ZSTD, count - 1, TS, TS, -1, -1, -1, count) + bytes(frame)
    bomb = struct.pack(">qiib", 2, 9 + len(body), 0, 2) + struct.pack(">I", crc32c(body)) + body
    events = _events(tmp_path, batch(0, 2) + bomb)
    findings = [e for e in events if isinstance(e, Finding)]
    assert [f.kind for f in findings] == ["decompression_error"]
    assert "decompression bomb" in findings[0].message
    assert events[-1].batches == 2
