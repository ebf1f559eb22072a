"""Transaction index (spec §6.4): TV11 byte-exact both ways and Kafka's reading rules."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.log.txn_index import ENTRY, AbortedTxn, build_txn_index, iter_txn_index

# TV11 (spec §15), quoted: version 0, producerId 4242, first 1003, last 1010, LSO 1003.
TV11_TXN = bytes.fromhex(
    "00 00 00 00 00 00 00 00 10 92 00 00 00 00 00 00 03 eb 00 00 00 00 00 00 03 f2 "
    "00 00 00 00 00 00 03 eb".replace(" ", "")
)


def walk(buf, base=1000):
    items = list(iter_txn_index(buf, path="x.txnindex", base_offset=base))
    return ([i for i in items if isinstance(i, AbortedTxn)],
            [i for i in items if isinstance(i, Finding)], items)


def test_tv11_reads():
    txns, findings, _ = walk(TV11_TXN)
    assert txns == [AbortedTxn(0, 0, 4242, 1003, 1010, 1003)]
    assert findings == []


def test_tv11_is_what_the_writer_produces():
    assert build_txn_index([(4242, 1003, 1010, 1003)]) == TV11_TXN
    assert ENTRY.size == 34


def test_partial_trailing_entry_is_ignored_with_a_warning():
    txns, findings, _ = walk(TV11_TXN + TV11_TXN[:20])
    assert len(txns) == 1
    assert [f.kind for f in findings] == ["txn_index_partial_entry"]
    assert findings[0].severity == "warning" and findings[0].position == 34


@pytest.mark.parametrize("version_bytes, accepted", [
    pytest.param(b"\x00\x00", True, id="version-0"),
    pytest.param(b"\x00\x05", True, id="low-byte-ignored-by-kafka"),
    pytest.param(b"\xff\x00", True, id="negative-high-byte-passes-kafkas-check"),
    pytest.param(b"\x01\x00", False, id="high-byte-1"),
    pytest.param(b"\x7f\xff", False, id="high-byte-127"),
])
def test_version_check_reads_only_the_high_byte(version_bytes, accepted):
    second = build_txn_index([(7, 1011, 1020, 1011)])
    data = TV11_TXN + version_bytes + second[2:] + build_txn_index([(8, 1021, 1030, 1021)])
    txns, findings, _ = walk(data)
    if accepted:
        assert len(txns) == 3 and findings == []
    else:
        assert len(txns) == 1                       # Kafka's iterator throws at entry 2
        assert [f.kind for f in findings] == ["txn_index_unknown_version"]
        assert findings[0].position == 34
        assert "Unexpected aborted transaction version" in findings[0].message


def test_last_offset_must_increase():
    data = build_txn_index([(1, 1003, 1010, 1003), (2, 1004, 1010, 1004), (3, 1005, 1009, 1005)])
    txns, findings, _ = walk(data)
    assert len(txns) == 3
    assert [(f.kind, f.position) for f in findings] == [("txn_index_offset_regression", 34),
                                                        ("txn_index_offset_regression", 68)]


def test_last_offset_below_segment_base_is_kafkas_corrupt_index():
    txns, findings, _ = walk(TV11_TXN, base=2000)
    assert len(txns) == 1
    assert [f.kind for f in findings] == ["txn_index_before_segment"]
    assert "is less than start offset 2000" in findings[0].message
    assert "CorruptIndexException" in findings[0].message


def test_last_offset_equal_to_base_is_fine():
    assert walk(TV11_TXN, base=1010)[1] == []


def test_first_offset_in_an_earlier_segment_is_fine_but_inverted_range_is_not():
    assert walk(build_txn_index([(1, 5, 1010, 5)]))[1] == []
    assert [f.kind for f in walk(build_txn_index([(1, 1011, 1010, 5)]))[1]] == ["txn_index_inverted_range"]


def test_empty_file():
    assert walk(b"")[2] == []


@given(st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(1000, 2**40), st.integers(1, 2**20),
                          st.integers(0, 2**40)), max_size=20))
def test_round_trip(raw):
    last = 1000
    entries = []
    for pid, first, step, lso in raw:
        last += step
        entries.append((pid, min(first, last), last, lso))
    txns, findings, _ = walk(build_txn_index(entries))
    assert findings == []
    assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in txns] == entries
    assert [t.position for t in txns] == [34 * i for i in range(len(entries))]


@settings(max_examples=300)
@given(st.binary(max_size=500))
def test_any_bytes(data):
    txns, findings, items = walk(data)
    assert len(txns) <= len(data) // 34
    assert all(f.kind in KINDS for f in findings)


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=3400))
def test_memory_bound(data):
    tracemalloc.start()
    try:
        for _ in iter_txn_index(data, path="x", base_offset=0):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000 + 50 * len(data)


def test_reads_a_read_only_mmap_and_lets_it_close(tmp_path):
    import mmap

    f = tmp_path / "00000000000000001000.txnindex"
    f.write_bytes(TV11_TXN * 2)
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        txns, findings, _ = walk(m)
    assert len(txns) == 2
    assert [x.kind for x in findings] == ["txn_index_offset_regression"]
