"""The segment walker (spec §2): exactly Kafka's ``FileLogInputStream`` walk up to the first
break, then kreplica's resynchronisation past damage, with a finding for every problem.

Segments are built here with the writers; the expectations come from the positions and sizes
of the pieces put together, and from the spec's rules (17-byte minimum, size < 14 throws,
an incomplete final entry is a silent stop, magic > 2 is read as v2).
"""

from __future__ import annotations

import mmap
import random
import struct
import zlib

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats import codecs
from kreplica.formats.errors import DecompressionError, Malformed, Truncated
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import NewRecord, RecordBatch
from kreplica.formats.checksums import reference_crc32c
from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.mapped import PageReleaser
from kreplica.formats.log.segment import SegmentEnd, find_next_batch, is_plausible_batch, iter_segment, records_finding

TS = 1700000000000
PATH = "/data/t-0/00000000000000000000.log"

TV3 = bytes.fromhex(
    "0000000000000000000000400000000002db5e9cdd0000000000000000018bcfe568000000018bcfe56800"
    "ffffffffffffffffffffffffffff000000011c000000066b65790a76616c756500"
)
TV8_V0 = bytes.fromhex("0000000000000000000000162356c1370000000000036b65790000000576616c7565")
TV8_V1 = bytes.fromhex("00000000000000010000001e6ad05db801000000018bcfe56800000000036b65790000000576616c7565")


def _batch(base: int, n: int = 3, *, value: bytes = b"value", **kw) -> bytes:
    records = [NewRecord(base + i, TS + i, b"k%d" % i, value + bytes([i])) for i in range(n)]
    return default_records.build_batch(records, base_offset=base, **kw)


def _segment(*parts: bytes) -> tuple[bytes, list[int]]:
    """The concatenation, and the position each part starts at."""
    positions, pos = [], 0
    for p in parts:
        positions.append(pos)
        pos += len(p)
    return b"".join(parts), positions


def _walk(buf, **kw):
    items = list(iter_segment(buf, path=PATH, **kw))
    assert isinstance(items[-1], SegmentEnd)
    assert all(isinstance(i, (RecordBatch, Finding)) for i in items[:-1])
    batches = [i for i in items if isinstance(i, RecordBatch)]
    findings = [i for i in items if isinstance(i, Finding)]
    return items, batches, findings, items[-1]


def _kinds(findings):
    return [(f.kind, f.position) for f in findings]


B1, B2, B3 = _batch(0), _batch(3), _batch(6)


# -- clean segments ----------------------------------------------------------------------------


def test_clean_segment_gives_exact_batches():
    buf, pos = _segment(B1, B2, B3)
    items, batches, findings, end = _walk(buf)
    assert findings == []
    assert [(b.position, b.size, b.base_offset, b.last_offset, b.count) for b in batches] == [
        (pos[0], len(B1), 0, 2, 3), (pos[1], len(B2), 3, 5, 3), (pos[2], len(B3), 6, 8, 3)]
    assert all(b.crc_valid is True and b.after_break is False and b.magic == 2 for b in batches)
    assert all(b.path == PATH for b in batches)
    assert end == SegmentEnd(PATH, len(buf), len(buf), len(buf), "end_of_file")


def test_empty_file():
    _, batches, findings, end = _walk(b"")
    assert (batches, findings) == ([], [])
    assert end == SegmentEnd(PATH, 0, 0, 0, "end_of_file")


def test_mixed_magic_segment():
    v2 = _batch(2, 2)
    buf, pos = _segment(TV8_V0, TV8_V1, v2)
    _, batches, findings, end = _walk(buf)
    assert findings == []
    assert [(b.magic, b.position, b.base_offset, b.last_offset) for b in batches] == [
        (0, 0, 0, 0), (1, 34, 1, 1), (2, 76, 2, 3)]
    assert end.valid_bytes == len(buf) and end.stopped_by == "end_of_file"


def test_accepts_memoryview_and_bytearray():
    buf, _ = _segment(B1, B2)
    for view in (memoryview(buf), bytearray(buf)):
        _, batches, findings, end = _walk(view)
        assert [b.base_offset for b in batches] == [0, 3] and findings == []
        assert end.valid_bytes == len(buf)


# -- a cut-off last batch ----------------------------------------------------------------------

# base offset with a non-zero first byte, so that no prefix of the cut batch is all zeros
B_CUT = _batch(0x0102030405060708, 2)


@pytest.mark.parametrize("keep", [pytest.param(k, id=f"keep-{k}") for k in (1, 12, 17, 18, 30, 61, len(B_CUT) - 1)])
def test_cut_off_last_batch(keep):
    buf, pos = _segment(B1, B2, B_CUT[:keep])
    _, batches, findings, end = _walk(buf)
    assert [b.position for b in batches] == pos[:2]
    assert all(not b.after_break for b in batches)
    assert _kinds(findings) == [("truncated_tail", pos[2])]
    assert findings[0].severity == "error"
    assert end == SegmentEnd(PATH, len(buf), len(buf), pos[2], "incomplete_trailing_data")


# -- a file that is not a segment, under a segment's name --------------------------------------

PASSWD = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" * 8


@pytest.mark.parametrize("data, first", [
    pytest.param(PASSWD, "text", id="text"),
    pytest.param(bytes(range(1, 32)) * 20, "binary", id="binary"),
])
def test_a_file_with_no_batch_anywhere_is_not_a_segment(data, first):
    # its first "entry" declares a size past the end (Kafka's reader stops there, reading nothing),
    # and no batch follows anywhere: another file, not a segment cut off by a crash
    _, batches, findings, end = _walk(data)
    assert batches == [] and _kinds(findings) == [("not_a_segment", 0)]
    assert (findings[0].severity, findings[0].details) == ("error", {"first_bytes": first, "size": len(data)})
    assert (end.valid_bytes, end.stopped_by) == (0, "incomplete_trailing_data")


def test_a_damaged_first_batch_with_batches_after_it_is_a_damaged_segment():
    # the counter-case: a segment whose first batch's length is garbage, with a valid batch after
    bad = bytearray(B1)
    struct.pack_into(">i", bad, 8, 1_000_000)
    buf, pos = _segment(bytes(bad), B2)
    _, batches, findings, _ = _walk(buf)
    assert _kinds(findings) == [("invalid_length", 0), ("resynchronised", 0)]
    assert [(b.position, b.after_break) for b in batches] == [(pos[1], True)]


# -- impossible lengths ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "length",
    [pytest.param(0x7FFFFFFF, id="INT32_MAX"), pytest.param(1_000_000, id="past-the-end")],
)
def test_huge_batch_length_in_the_middle_then_resync(length):
    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, length)
    buf, pos = _segment(B1, bytes(bad), B3)
    _, batches, findings, end = _walk(buf)
    assert [(b.position, b.after_break) for b in batches] == [(pos[0], False), (pos[2], True)]
    assert _kinds(findings) == [("invalid_length", pos[1]), ("resynchronised", pos[1])]
    assert findings[1].details["resumed_at"] == pos[2]
    assert findings[1].details["skipped_bytes"] == pos[2] - pos[1]
    assert end == SegmentEnd(PATH, len(buf), len(buf), pos[1], "incomplete_trailing_data")


@pytest.mark.parametrize(
    "size",
    [pytest.param(s, id=str(s)) for s in (-(2**31), -1, 0, 1, 13)],
)
def test_size_below_14_in_non_zero_data_then_resync(size):
    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, size)
    buf, pos = _segment(B1, bytes(bad), B3)
    _, batches, findings, end = _walk(buf)
    assert [(b.position, b.after_break) for b in batches] == [(pos[0], False), (pos[2], True)]
    assert _kinds(findings) == [("invalid_length", pos[1]), ("resynchronised", pos[1])]
    assert findings[0].details["size"] == size
    assert end == SegmentEnd(PATH, len(buf), len(buf), pos[1], "exception")


def test_size_below_14_with_no_batch_after_it():
    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, 3)
    buf, pos = _segment(B1, bytes(bad))
    _, batches, findings, end = _walk(buf)
    assert [b.position for b in batches] == [0]
    assert _kinds(findings) == [("invalid_length", pos[1])]
    assert (end.valid_bytes, end.stopped_by) == (pos[1], "exception")


@pytest.mark.parametrize("size", [pytest.param(s, id=str(s)) for s in (14, 20, 48)])
def test_v2_size_between_14_and_48_is_an_invalid_length_batch(size):
    # Kafka's file reader yields it (size >= 14) and then reads on from pos + 12 + size
    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, size)
    buf, pos = _segment(B1, bytes(bad), B3)
    _, batches, findings, _ = _walk(buf)
    assert (batches[1].position, batches[1].size, batches[1].crc_valid) == (pos[1], 12 + size, False)
    assert ("invalid_length", pos[1]) in _kinds(findings)
    assert ("crc_mismatch", pos[1]) not in _kinds(findings)  # one finding for one problem
    assert batches[-1].position == pos[2]  # the batch after it is found again


# -- damage the walk steps over ----------------------------------------------------------------


def test_zero_filled_tail():
    buf, pos = _segment(B1, B2, bytes(4096))
    _, batches, findings, end = _walk(buf)
    assert [b.position for b in batches] == pos[:2]
    assert _kinds(findings) == [("trailing_zeros", pos[2])]
    assert findings[0].severity == "warning"
    assert findings[0].details["length"] == 4096
    assert end == SegmentEnd(PATH, len(buf), len(buf), pos[2], "exception")


def test_short_zero_tail_is_a_silent_stop_for_kafka():
    # 17 bytes or fewer left: Kafka stops without an error (rule 1)
    buf, pos = _segment(B1, bytes(17))
    _, batches, findings, end = _walk(buf)
    assert [b.position for b in batches] == [0]
    assert [f.kind for f in findings] == ["trailing_zeros"]
    assert (end.valid_bytes, end.stopped_by) == (pos[1], "incomplete_trailing_data")


def test_flipped_value_byte_is_a_crc_mismatch_and_the_walk_goes_on():
    bad = bytearray(B2)
    bad[-3] ^= 0x40  # inside the last record's value
    buf, pos = _segment(B1, bytes(bad), B3)
    _, batches, findings, end = _walk(buf)
    assert [(b.position, b.crc_valid, b.after_break) for b in batches] == [
        (pos[0], True, False), (pos[1], False, False), (pos[2], True, False)]
    assert _kinds(findings) == [("crc_mismatch", pos[1])]
    assert findings[0].details["stored_crc"] == batches[1].crc
    assert findings[0].details["computed_crc"] == reference_crc32c(bytes(bad)[21:])
    assert end == SegmentEnd(PATH, len(buf), len(buf), len(buf), "end_of_file")


def test_legacy_crc_mismatch():
    bad = bytearray(TV8_V1)
    bad[-1] ^= 0x01
    buf, pos = _segment(TV8_V0, bytes(bad))
    _, batches, findings, end = _walk(buf)
    assert [b.crc_valid for b in batches] == [True, False]
    assert _kinds(findings) == [("crc_mismatch", pos[1])]
    assert end.valid_bytes == len(buf)


@pytest.mark.parametrize("magic", [pytest.param(m, id=f"magic{m}") for m in (3, 4, 127)])
def test_magic_above_2_is_read_as_v2_with_a_finding(magic):
    odd = _batch(3, magic=magic)
    assert odd[16] == magic
    buf, pos = _segment(B1, odd, B3)
    _, batches, findings, end = _walk(buf)
    assert [(b.position, b.magic, b.base_offset, b.last_offset) for b in batches] == [
        (pos[0], 2, 0, 2), (pos[1], magic, 3, 5), (pos[2], 2, 6, 8)]
    assert batches[1].crc_valid is True  # the magic is outside the CRC
    assert _kinds(findings) == [("invalid_magic", pos[1] + 16)]
    assert findings[0].details["magic"] == magic
    assert end.stopped_by == "end_of_file" and end.valid_bytes == len(buf)


def test_negative_magic_is_read_as_legacy_with_a_finding():
    odd = bytearray(TV8_V1)
    odd[16] = 0xFF
    buf, pos = _segment(TV8_V0, bytes(odd))
    _, batches, findings, _ = _walk(buf)
    assert batches[1].magic == -1
    assert ("invalid_magic", pos[1] + 16) in _kinds(findings)


def test_unknown_codec_finding():
    odd = bytearray(B2)
    odd[22] = 0x06
    struct.pack_into(">I", odd, 17, reference_crc32c(odd[21:]))
    buf, pos = _segment(B1, bytes(odd))
    _, batches, findings, _ = _walk(buf)
    assert batches[1].compression == 6 and batches[1].crc_valid is True
    assert _kinds(findings) == [("unknown_codec", pos[1] + 21)]


def test_bad_legacy_wrapper_gives_an_inner_finding():
    records = [NewRecord(o, TS, None, b"x") for o in (0, 1, 2)]
    wrapper = bytearray(legacy_records.build_wrapper(records, magic=1, compression=1))
    struct.pack_into(">q", wrapper, 0, 1)  # wrapper offset below the last inner (2)
    buf, pos = _segment(TV8_V0, bytes(wrapper))
    _, batches, findings, end = _walk(buf)
    assert len(batches) == 2 and batches[1].crc_valid is True
    assert _kinds(findings) == [("invalid_record", pos[1])]
    assert end.valid_bytes == len(buf)


def test_undecompressable_legacy_wrapper_gives_a_decompression_finding():
    wrapper = legacy_records.build_message(5, None, b"\x1f\x8b\x08\x00 not deflate", magic=1, timestamp=TS,
                                           compression=1)
    _, batches, findings, _ = _walk(wrapper)
    assert len(batches) == 1
    assert _kinds(findings) == [("decompression_error", 0)]


def test_legacy_wrapper_memory_error_is_raised_not_a_finding(monkeypatch):
    # running out of memory while inflating says nothing about the evidence (exit 3, not a finding)
    wrapper = legacy_records.build_wrapper([NewRecord(o, TS, None, b"x") for o in (0, 1)], magic=1, compression=1)

    def out_of_memory(*args):
        raise MemoryError

    monkeypatch.setattr(zlib, "decompressobj", out_of_memory)
    with pytest.raises(MemoryError):
        _walk(wrapper)


def _with_records_section(batch: bytes, section: bytes) -> bytes:
    """``batch`` with its records section replaced by ``section`` (length field adjusted)."""
    out = bytearray(batch[:default_records.RECORDS_OFFSET] + section)
    struct.pack_into(">i", out, struct.calcsize(">q"), len(out) - default_records.LOG_OVERHEAD)  # batchLength
    return bytes(out)


def _lz4_bad_block(data: bytes) -> bytes:
    frame = bytearray(codecs.compress(codecs.LZ4, data))
    frame[11:15] = b"\xff\xff\xff\xff"
    return bytes(frame)


@pytest.mark.parametrize(("codec", "damage"), [
    pytest.param(codecs.GZIP, lambda data: codecs.GZIP_HEADER_JDK + b"\xff" * 40, id="gzip"),
    pytest.param(codecs.SNAPPY, lambda data: codecs.compress(codecs.SNAPPY, data)[:-5] + b"\xff" * 5, id="snappy"),
    pytest.param(codecs.LZ4, _lz4_bad_block, id="lz4"),
    pytest.param(codecs.ZSTD, lambda data: codecs.compress(codecs.ZSTD, data)[:20], id="zstd"),
])
def test_damaged_compressed_records_are_a_decompression_error_finding(codec, damage):
    records = [NewRecord(i, TS + i, b"k%d" % i, bytes(range(200))) for i in range(20)]
    whole = default_records.build_batch(records, base_offset=0, compression=codec)
    plain = default_records.build_batch(records, base_offset=0)
    buf = _with_records_section(whole, damage(plain[default_records.RECORDS_OFFSET:]))
    batch = default_records.parse_header(buf, 0, len(buf), path=PATH)
    with pytest.raises(DecompressionError) as raised:
        list(default_records.iter_records(buf, batch))
    finding = records_finding(batch, raised.value)
    assert (finding.kind, finding.position, finding.details) == ("decompression_error", 0, {"field": "records"})
    assert finding.message.startswith("batch at byte 0 (offsets 0-19): records do not decompress: ")


def test_compressed_records_memory_error_is_raised_not_an_error(monkeypatch):
    records = [NewRecord(i, TS + i, None, b"v") for i in range(3)]
    buf = default_records.build_batch(records, base_offset=0, compression=codecs.ZSTD)
    batch = default_records.parse_header(buf, 0, len(buf), path=PATH)

    def out_of_memory(*args):
        raise MemoryError

    monkeypatch.setattr(cramjam.zstd, "decompress_into", out_of_memory)
    with pytest.raises(MemoryError):
        list(default_records.iter_records(buf, batch))


_B = default_records.parse_header(TV3, 0, len(TV3), path=PATH)


@pytest.mark.parametrize(("error", "wrapper", "kind", "message"), [
    pytest.param(DecompressionError("records do not decompress: zstd data does not decompress: x", field="records"),
                 False, "decompression_error",
                 "batch at byte 0 (offsets 0-0): records do not decompress: zstd data does not decompress: x",
                 id="decompression-error"),
    pytest.param(Malformed("Found invalid record structure (cannot decompress a varint)", field="record 0"),
                 False, "invalid_record",
                 "batch at byte 0 (offsets 0-0): Found invalid record structure (cannot decompress a varint)",
                 id="malformed-whose-words-say-decompress"),
    pytest.param(Truncated("Found invalid record structure (a field runs past the end)"), True, "invalid_record",
                 "wrapper message at byte 0 (offset 0): Found invalid record structure (a field runs past the end)",
                 id="truncated-wrapper"),
])
def test_records_finding_kind_follows_the_error_type_not_its_words(error, wrapper, kind, message):
    finding = records_finding(_B, error, wrapper=wrapper)
    assert (finding.kind, finding.path, finding.position, finding.message) == (kind, PATH, 0, message)
    assert finding.details == ({"field": error.field} if error.field else {})


def test_verify_crc_off():
    bad = bytearray(B2)
    bad[-3] ^= 0x40
    buf, _ = _segment(B1, bytes(bad))
    _, batches, findings, _ = _walk(buf, verify_crc=False)
    assert [b.crc_valid for b in batches] == [None, None]
    assert findings == []


def test_findings_carry_catalogue_severity_and_path():
    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, 5)
    buf, _ = _segment(B1, bytes(bad), B3, bytes(100))
    _, _, findings, _ = _walk(buf)
    assert findings
    for f in findings:
        assert f.kind in KINDS
        assert f.severity == KINDS[f.kind].severity
        assert f.path == PATH
        assert isinstance(f.position, int) and 0 <= f.position <= len(buf)
        assert f.message


# -- max_bytes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("into_b3", [pytest.param(n, id=f"b3+{n}") for n in (1, 17, 18, 40, len(B3) - 1)])
def test_max_bytes_cut_is_not_damage(into_b3):
    buf, pos = _segment(B1, B2, B3)
    limit = pos[2] + into_b3
    _, batches, findings, end = _walk(buf, max_bytes=limit)
    assert [b.position for b in batches] == pos[:2]
    assert findings == []
    assert end == SegmentEnd(PATH, len(buf), limit, pos[2], "max_bytes")


def test_max_bytes_at_a_batch_boundary_is_still_a_max_bytes_stop():
    buf, pos = _segment(B1, B2, B3)
    _, batches, findings, end = _walk(buf, max_bytes=pos[2])
    assert [b.position for b in batches] == pos[:2] and findings == []
    assert end == SegmentEnd(PATH, len(buf), pos[2], pos[2], "max_bytes")


def test_max_bytes_beyond_the_file_is_no_limit():
    buf, pos = _segment(B1, B2, B3)
    _, batches, findings, end = _walk(buf, max_bytes=len(buf) + 1000)
    assert len(batches) == 3 and findings == []
    assert end == SegmentEnd(PATH, len(buf), len(buf), len(buf), "end_of_file")


def test_max_bytes_still_reports_damage_inside_the_limit():
    bad = bytearray(B2)
    bad[-3] ^= 0x40
    buf, pos = _segment(B1, bytes(bad), B3)
    _, _, findings, end = _walk(buf, max_bytes=pos[2] + 5)
    assert _kinds(findings) == [("crc_mismatch", pos[1])]
    assert end.stopped_by == "max_bytes"


# -- find_next_batch / is_plausible_batch -----------------------------------------------------

GARBAGE = random.Random(7).randbytes(5000)


def test_garbage_holds_no_batch():
    # premise of the tests below: the fixed garbage has no plausible batch in it
    assert find_next_batch(GARBAGE, 0, len(GARBAGE)) is None


@pytest.mark.parametrize(
    ("prefix", "target"),
    [
        pytest.param(bytes(100_000), B1, id="zeros-v2"),
        pytest.param(GARBAGE, B1, id="garbage-v2"),
        pytest.param(bytes(3000) + GARBAGE + bytes(3000), B2, id="zeros-garbage-zeros-v2"),
        pytest.param(GARBAGE, TV8_V0, id="garbage-v0"),
        pytest.param(GARBAGE, TV8_V1, id="garbage-v1"),
        pytest.param(b"\xff" * 1000, TV3, id="ff-TV3"),
    ],
)
def test_find_next_batch_skips_zero_runs_and_garbage(prefix, target):
    buf = prefix + target + GARBAGE
    assert find_next_batch(buf, 0, len(buf)) == len(prefix)
    assert find_next_batch(buf, len(prefix) + 1, len(buf)) is None
    assert is_plausible_batch(buf, len(prefix), len(buf))


def test_find_next_batch_respects_start_and_end():
    buf, pos = _segment(B1, B2, B3)
    assert find_next_batch(buf, 0, len(buf)) == 0
    assert find_next_batch(buf, 1, len(buf)) == pos[1]
    assert find_next_batch(buf, pos[1] + 1, len(buf)) == pos[2]
    assert find_next_batch(buf, pos[1] + 1, len(buf) - 1) is None  # B3 would cross the end


def test_find_next_batch_skips_a_batch_with_a_bad_crc():
    bad = bytearray(B2)
    bad[-3] ^= 0x40
    buf = GARBAGE + bytes(bad) + B3
    assert find_next_batch(buf, 0, len(buf)) == len(GARBAGE) + len(bad)


@pytest.mark.parametrize(
    ("data", "plausible"),
    [
        pytest.param(TV3, True, id="TV3"),
        pytest.param(TV8_V0, True, id="TV8-v0"),
        pytest.param(TV8_V1, True, id="TV8-v1"),
        pytest.param(TV3[:-1], False, id="TV3-cut"),
        pytest.param(bytes(76), False, id="zeros"),
        pytest.param(b"\xff" * 8 + TV3[8:], False, id="negative-offset"),
        pytest.param(TV3[:16] + b"\x03" + TV3[17:], False, id="magic3"),
    ],
)
def test_is_plausible_batch(data, plausible):
    assert is_plausible_batch(data, 0, len(data)) is plausible


def test_resync_after_garbage_in_the_middle():
    buf, pos = _segment(B1, b"\x01" + GARBAGE, B2, B3)
    _, batches, findings, end = _walk(buf)
    assert [(b.position, b.after_break) for b in batches] == [(pos[0], False), (pos[2], True), (pos[3], True)]
    assert [f.kind for f in findings][-1] == "resynchronised"
    assert findings[-1].details["resumed_at"] == pos[2]
    assert end.valid_bytes == pos[1]


# -- work stays proportional to the input -----------------------------------------------------


def _many_plausible_headers(n: int) -> bytes:
    """A break at byte 0, then a v2-looking header every 17 bytes whose length reaches halfway
    to the end of the file: each is a resync candidate whose CRC covers a long range."""
    buf = bytearray(n)
    buf[0:17] = b"\x01" * 8 + struct.pack(">i", 5) + b"\x00\x00\x00\x00\x02"
    for pos in range(17, n - 17, 17):
        struct.pack_into(">qiib", buf, pos, 0, max(49, (n - pos - 12) // 2), 0, 2)
    return bytes(buf)


def test_resync_checksums_at_most_a_multiple_of_the_file(monkeypatch):
    from kreplica.formats.log import segment

    data = _many_plausible_headers(64 * 1024)
    checksummed = [0]
    real_crc32c, real_crc32 = segment.crc32c, segment.crc32

    def counting(real):
        def crc(b):
            checksummed[0] += len(b)
            return real(b)
        return crc

    monkeypatch.setattr(segment, "crc32c", counting(real_crc32c))
    monkeypatch.setattr(segment, "crc32", counting(real_crc32))
    _, batches, findings, end = _walk(data)
    assert (batches, end.valid_bytes, end.stopped_by) == ([], 0, "exception")
    assert checksummed[0] <= 64 * len(data)


def test_walks_a_read_only_mmap_like_bytes(tmp_path):
    import mmap

    bad = bytearray(B2)
    struct.pack_into(">i", bad, 8, 5)
    buf, _ = _segment(B1, bytes(bad), B3, bytes(64))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(buf)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        from_mmap = list(iter_segment(mm, path=PATH))
    assert from_mmap == list(iter_segment(buf, path=PATH))
    assert [type(i).__name__ for i in from_mmap].count("RecordBatch") == 2


# -- long searches go a window at a time and release what they passed (issue 14) -------------


@pytest.mark.parametrize("gap", [pytest.param(g, id=f"gap-{g}") for g in (0, 4096 - 30, 4096 - 5, 4096, 3 * 4096 + 7)])
def test_resynchronisation_finds_a_batch_across_search_windows(monkeypatch, gap):
    from kreplica.formats.log import segment
    monkeypatch.setattr(segment, "SEARCH_WINDOW", 4096)
    data = bytes(gap) + B2
    assert find_next_batch(data, 0, len(data)) == gap
    garbage = bytes(random.Random(gap).randrange(1, 256) for _ in range(gap)) + B2
    assert find_next_batch(garbage, 0, len(garbage)) == gap


class _Mapping:
    """An mmap stand-in that records what the walk hands back to the kernel."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.released: list[tuple[int, int]] = []

    def madvise(self, option, start, length):
        self.released.append((start, length))


def test_a_long_hole_is_searched_with_its_pages_released(monkeypatch):
    # a sparse or preallocated stretch between real batches: read once, never kept resident
    import mmap

    from kreplica.formats.log import segment
    monkeypatch.setattr(segment, "SEARCH_WINDOW", 1 << 16)
    hole = 1 << 20
    data = B1 + bytes(hole) + B2
    mapping = _Mapping(data)
    items = list(segment._walk(memoryview(data), mapping, path=PATH, verify_crc=True, max_bytes=None))
    batches = [i for i in items if isinstance(i, RecordBatch)]
    assert [(b.position, b.after_break) for b in batches] == [(0, False), (len(B1) + hole, True)]
    if hasattr(mmap, "MADV_DONTNEED"):
        released = sum(length for _, length in mapping.released)
        assert released >= hole - 2 * (1 << 16)  # all but the last window or two
        assert all(start + length <= len(B1) + hole for start, length in mapping.released)


@pytest.mark.skipif(not hasattr(mmap, "MADV_DONTNEED"), reason="no madvise(MADV_DONTNEED) here")
def test_the_walk_hands_back_the_pages_behind_it_a_step_at_a_time(monkeypatch):
    from kreplica.formats.log import segment
    step = 4 * mmap.PAGESIZE
    monkeypatch.setattr(segment, "RELEASE_STEP", step)
    data = b"".join(_batch(3 * i, value=bytes(300)) for i in range(200))
    mapping = _Mapping(data)
    seen = []
    for item in segment._walk(memoryview(data), mapping, path=PATH, verify_crc=True, max_bytes=None):
        if isinstance(item, RecordBatch):
            seen.append((item.position, sum(length for _, length in mapping.released)))
    assert len(seen) == 200
    # whole pages, in order, each run at least a step long, never the page before the batch being read
    done = 0
    for start, length in mapping.released:
        assert start == done and start % mmap.PAGESIZE == 0 and length >= step
        done = start + length
    assert all(released <= max(position - mmap.PAGESIZE, 0) for position, released in seen)
    assert done >= len(data) - 2 * step - 2 * mmap.PAGESIZE


def test_page_releaser_next_due_is_where_upto_first_acts():
    class Mapping:
        def __init__(self):
            self.calls = []

        def madvise(self, option, start, length):
            self.calls.append((start, length))

    page = mmap.PAGESIZE
    for start, step in ((0, 4 * page), (3 * page + 5, 2 * page), (7, None)):
        mapping = Mapping()
        releaser = PageReleaser(mapping, start)
        due = releaser.next_due(step)
        releaser.upto(due - 1, step)
        assert mapping.calls == [] or not hasattr(mmap, "MADV_DONTNEED")
        releaser.upto(due, step)
        if hasattr(mmap, "MADV_DONTNEED"):
            assert len(mapping.calls) == 1
    assert PageReleaser(None).next_due() > 1 << 62


# -- a segment walked in stretches split at batch boundaries (the fleet scan's chunks) --------


def _stretches(buf, cuts: list[int]) -> tuple[list, list]:
    bounds = [0, *cuts, None]
    items, ends = [], []
    for start, stop in zip(bounds, bounds[1:]):
        part = list(iter_segment(buf, path=PATH, start=start, stop=stop))
        items += part[:-1]
        ends.append(part[-1])
    return items, ends


@pytest.mark.parametrize("damage", [False, True], ids=["clean", "damaged-last-stretch"])
def test_stretches_cut_at_batch_boundaries_walk_exactly_as_the_whole(damage):
    bad = bytearray(B3)
    bad[-3] ^= 0x40
    buf, pos = _segment(B1, B2, bytes(bad) if damage else B3, b"\x01" + GARBAGE, _batch(9))
    whole = list(iter_segment(buf, path=PATH))
    for cuts in ([pos[1]], [pos[1], pos[2]], [pos[2], pos[2]]):
        items, ends = _stretches(buf, cuts)
        assert items == whole[:-1]
        assert all(e.scanned_bytes == e.valid_bytes == cut for e, cut in zip(ends, cuts))  # each ended cleanly
        assert (ends[-1].valid_bytes, ends[-1].stopped_by) == (whole[-1].valid_bytes, whole[-1].stopped_by)


def test_a_stretch_that_breaks_or_passes_its_stop_does_not_end_cleanly():
    buf, pos = _segment(B1, b"\x01" + GARBAGE, B2, B3)
    _, (first, _) = _stretches(buf, [pos[2]])          # the walk breaks before the cut
    assert first.valid_bytes < first.scanned_bytes == pos[2]
    _, (first, _) = _stretches(buf, [pos[2] + 5])      # a cut inside a batch
    assert first.scanned_bytes != pos[2] + 5


# -- the holes of a sparse file are skipped, not read (issue 14) -------------------------------

HOLE = 4 << 20


def _sparse_file(tmp_path, *parts) -> tuple[str, bytes]:
    """A file of ``parts``: bytes are written, an int leaves a hole that long. Returns its path and
    its content as plain bytes (what reading it gives)."""
    path = str(tmp_path / "00000000000000000000.log")
    content = bytearray()
    with open(path, "wb") as f:
        for part in parts:
            if isinstance(part, int):
                f.seek(part, 1)
                content += bytes(part)
            else:
                f.write(part)
                content += part
        f.truncate(len(content))
    return path, bytes(content)


def _has_holes(path: str) -> bool:
    import os
    fd = os.open(path, os.O_RDONLY)
    try:
        return hasattr(os, "SEEK_HOLE") and os.lseek(fd, 0, os.SEEK_HOLE) < os.fstat(fd).st_size
    except OSError:
        return False
    finally:
        os.close(fd)


class _Searches:
    """A compiled pattern that records which ranges were searched."""

    def __init__(self, pattern, log: list[tuple[int, int]]) -> None:
        self.pattern, self.log = pattern, log

    def search(self, buf, pos, endpos):
        self.log.append((pos, endpos))
        return self.pattern.search(buf, pos, endpos)


@pytest.mark.parametrize("parts", [
    pytest.param((B1, HOLE, B2, B3), id="resync-across-a-hole"),
    pytest.param((B1, B2, HOLE), id="trailing-hole"),
    pytest.param((HOLE, B1, B2), id="hole-first"),
    pytest.param((B1, b"\x01" + GARBAGE, HOLE, B2), id="garbage-then-hole"),
    pytest.param((B1, HOLE, bytes(70_000), HOLE, B2), id="written-zeros-between-holes"),
    pytest.param((B1, B2[:40], HOLE, B3), id="cut-batch-before-a-hole"),
    pytest.param((B1, HOLE, b"\x05" * 30), id="hole-then-a-short-tail"),
])
@pytest.mark.parametrize("window", [pytest.param(None, id="default-window"), pytest.param(1 << 18, id="256KiB-window")])
def test_holes_are_skipped_with_the_findings_of_reading_them(tmp_path, monkeypatch, parts, window):
    # a hole reads as zeros: walking the mapping (holes skipped) must say exactly what walking the
    # same bytes in memory says, without searching through the hole
    from kreplica.formats import mapped
    from kreplica.formats.log import segment

    if window is not None:
        monkeypatch.setattr(segment, "SEARCH_WINDOW", window)
    path, content = _sparse_file(tmp_path, *parts)
    expected = list(iter_segment(content, path=PATH))
    log: list[tuple[int, int]] = []
    monkeypatch.setattr(segment, "_NONZERO", _Searches(segment._NONZERO, log))
    monkeypatch.setattr(segment, "_CANDIDATE", _Searches(segment._CANDIDATE, log))
    with mapped.open_buffer(path) as buf:
        assert list(iter_segment(buf, path=PATH)) == expected
    if not _has_holes(path):
        pytest.skip("this file system does not report holes (SEEK_HOLE)")
    holes, pos = [], 0
    for part in parts:
        size = part if isinstance(part, int) else len(part)
        if isinstance(part, int):
            holes.append((pos + 4096, pos + size - 4096))  # the blocks wholly inside the hole
        pos += size
    searched_in_holes = sum(max(0, min(e, he) - max(s, hs)) for s, e in log for hs, he in holes)
    assert searched_in_holes <= 2 * 4096


def test_data_extent_says_where_the_holes_are(tmp_path):
    from kreplica.formats import mapped

    path, content = _sparse_file(tmp_path, B1, HOLE, B2)
    end = len(content)
    with mapped.open_buffer(path) as buf:
        assert mapped.data_extent(content, 5, end) == (5, end)  # not a file mapping: no idea
        if not _has_holes(path):
            pytest.skip("this file system does not report holes (SEEK_HOLE)")
        start, stop = mapped.data_extent(buf, 0, end)
        assert start == 0 and len(B1) <= stop < len(B1) + HOLE
        start, stop = mapped.data_extent(buf, len(B1) + 8192, end)
        assert len(B1) + 8192 < start <= len(B1) + HOLE and stop == end
        assert content[len(B1) + 8192:start] == bytes(start - len(B1) - 8192)
        assert mapped.data_extent(buf, end - 10, end - 20) == (end - 10, end - 20)
    path, _ = _sparse_file(tmp_path, B1, HOLE)
    with mapped.open_buffer(path) as buf:
        assert mapped.data_extent(buf, len(B1) + 8192, len(buf)) == (len(buf), len(buf))
    assert buf.fd is None  # the descriptor is forgotten when the file is closed


_sparse_parts = st.lists(st.one_of(
    st.sampled_from([B1, B2, B3, TV8_V0, TV8_V1, b"\x01" + GARBAGE[:300], bytes(5000), B2[:30], B3[7:]]),
    st.integers(1, 5).map(lambda blocks: blocks * 65536 + 123),  # a hole, not block-aligned
), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=_sparse_parts)
def test_any_layout_of_holes_walks_as_the_same_bytes_in_memory(parts):
    import tempfile
    from pathlib import Path

    from kreplica.formats import mapped
    from kreplica.formats.log import segment

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(segment, "SEARCH_WINDOW", 1 << 16)
        path, content = _sparse_file(Path(tmp), *parts)
        with mapped.open_buffer(path) as buf:
            assert list(iter_segment(buf, path=PATH)) == list(iter_segment(content, path=PATH))
