"""The two building blocks replica comparisons share: a batch's identity (what makes two
replicas' batches the same) and the merging of batches into offset ranges."""

from __future__ import annotations

import pytest

from kreplica.analysis.replication.truncation import Range, merged_ranges
from kreplica.formats.log import default_records
from kreplica.formats.log.batch import NewRecord

TS = 1700000000000


def _batch(base: int, last: int, *, epoch: int = 0, value: bytes = b"v"):
    records = [NewRecord(o, TS, None, value) for o in range(base, last + 1)]
    raw = default_records.build_batch(records, base_offset=base, partition_leader_epoch=epoch)
    return default_records.parse_header(raw, 0, len(raw), path="p")


def test_identity_is_offsets_epoch_and_crc():
    a = _batch(0, 2, epoch=3)
    assert a.identity == (0, 2, 3, a.crc)
    # the same records under another epoch (the CRC does not cover the epoch) are another batch
    assert _batch(0, 2, epoch=4).identity != a.identity and _batch(0, 2, epoch=4).crc == a.crc
    # the same offsets and epoch with other records differ by the CRC
    assert _batch(0, 2, epoch=3, value=b"w").identity != a.identity
    assert a._replace(path="other", position=99).identity == a.identity


@pytest.mark.parametrize(("spans", "expected"), [
    pytest.param([], [], id="none"),
    pytest.param([(5, 9)], [(5, 9)], id="one"),
    pytest.param([(0, 4), (5, 9)], [(0, 9)], id="adjacent-merge"),
    pytest.param([(0, 4), (6, 9)], [(0, 4), (6, 9)], id="gap-kept"),
    pytest.param([(6, 9), (0, 4), (3, 7)], [(0, 9)], id="unordered-overlapping"),
    pytest.param([(0, 9), (2, 3), (10, 10)], [(0, 10)], id="contained-then-adjacent"),
])
def test_merged_ranges(spans, expected):
    got = merged_ranges(_batch(first, last) for first, last in spans)
    assert got == [Range(first, last) for first, last in expected]
