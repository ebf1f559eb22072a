"""Recovery computing the checksums itself: a walk that did not verify CRCs (``verify_crc=False``,
as ``inspect-log`` streams a segment) hands ``LogSegment.recover`` batches whose validity is
unknown, so ``ensureValid`` is the recovery's own: CRC-32C from the attributes to the end of a v2
batch (``DefaultRecordBatch.isValid``), CRC-32 from the magic byte to the end of a legacy message
(``LegacyRecord.isValid``). A corrupt one stops recovery at its first byte; everything before it
is kept."""

from __future__ import annotations

import struct

import pytest

from kreplica.analysis.log.recovery import SegmentRecovery
from kreplica.formats.log.batch import NewRecord, RecordBatch
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.log.legacy_records import build_message
from kreplica.formats.log.segment import iter_segment

TS = 1_700_000_000_000


def v2(first: int, n: int = 2) -> bytes:
    return build_batch([NewRecord(first + i, TS + i, b"k", b"v" * 30) for i in range(n)], base_offset=first,
                       partition_leader_epoch=1)


def legacy(offset: int, magic: int) -> bytes:
    return build_message(offset, b"k", b"v" * 30, magic=magic, timestamp=TS if magic else None)


def recover_unverified(data: bytes):
    rec = SegmentRecovery(data, segment_base_offset=0)
    batches = [ev for ev in iter_segment(data, path="t.log", verify_crc=False) if isinstance(ev, RecordBatch)]
    assert all(b.crc_valid is None for b in batches)   # the walk left the checksums to recovery
    for b in batches:
        rec.feed(b)
    return rec.verdict(len(data))


def stored_crc(unit: bytes, magic: int) -> int:
    # v2: the CRC follows offset, length, leader epoch and magic; legacy: it follows offset and size
    return struct.unpack_from(">I", unit, 17 if magic >= 2 else 12)[0]


UNITS = [pytest.param(v2, 2, id="v2"), pytest.param(lambda o, m: legacy(o, 0), 0, id="magic-0"),
         pytest.param(lambda o, m: legacy(o, 1), 1, id="magic-1")]


@pytest.mark.parametrize("make, magic", UNITS)
def test_intact_units_are_all_kept(make, magic: int) -> None:
    data = make(0, magic) + make(2 if magic >= 2 else 1, magic)
    v = recover_unverified(data)
    assert (v.valid_bytes, v.truncated_bytes, v.stop_reason) == (len(data), 0, None)


@pytest.mark.parametrize("make, magic", UNITS)
@pytest.mark.parametrize("where", ["last byte", "first checksummed byte"])
def test_a_corrupt_unit_stops_recovery_at_its_first_byte(make, magic: int, where: str) -> None:
    good = make(0, magic)
    bad = bytearray(make(2 if magic >= 2 else 1, magic))
    # v2: the attributes (byte 21) open the checksummed range; legacy: the magic byte (16) does,
    # so flip the attributes' high byte there, the same in every magic
    at = -1 if where == "last byte" else (21 if magic >= 2 else 17)
    bad[at] ^= 0x40
    tail = make(4 if magic >= 2 else 2, magic)
    v = recover_unverified(good + bytes(bad) + tail)
    assert (v.valid_bytes, v.truncated_bytes, v.stop_position) == (len(good), len(bad) + len(tail), len(good))
    assert v.stop_reason == f"Record is corrupt (stored crc = {stored_crc(bytes(bad), magic)})"
