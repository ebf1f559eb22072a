"""``inspect-index`` (``analysis/inspect/inspect_index.py``) on copies of the bundled sample's
indexes: every entry, the findings, the missing-segment warning and the closing summary, each
kind of index with and without its segment (README, inspect-index: entries are checked against
the segment beside them unless ``--no-verify``).

Kafka's rules behind the expected values: an offset index entry is (relative offset, position),
8 bytes, a time index entry (timestamp, relative offset), 12 bytes; ``OffsetIndex.sanityCheck``
calls an index corrupt when its length is not a multiple of its entry size; the walk stops at an
entry whose offset is not above the previous one (``OffsetIndex.parseEntry`` order, the lookup's
binary search needs it); a transaction index (``TransactionIndex``) has no sanity check."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_index import inspect_index
from kreplica.model.logdir.index_files import find_index_files
from tests.conftest import FIXTURES

S17 = "00000000000000000017"
NO_SEGMENT = "Finding(kind='index_entry_mismatch', path='D/{name}', position=0, message='no segment {log} beside this " \
             "index: its entries cannot be verified', severity='warning', details={{}})"


def _run(tmp_path: Path, src: str, name: str, *, segment: bool, verify: bool, extra: bytes = b"") -> list[str]:
    shutil.copy(FIXTURES / "logs" / src / name, tmp_path / name)
    if extra:
        with open(tmp_path / name, "ab") as fh:
            fh.write(extra)
    if segment:
        log = name.rsplit(".", 1)[0] + ".log"
        shutil.copy(FIXTURES / "logs" / src / log, tmp_path / log)
    (f,) = find_index_files([str(tmp_path / name)])
    return [str(i).replace(str(tmp_path), "D") for i in inspect_index(f, verify=verify)]


def _summary(name: str, index: str, segment: bool, entries: int, slots, padding, sanity: bool, verified: bool,
             problems: int) -> str:
    seg = f"'D/{name.rsplit('.', 1)[0]}.log'" if segment else "None"
    verdict = f"SanityVerdict(path='D/{name}', error=None)" if sanity else "None"
    return (f"IndexSummary(path='D/{name}', index='{index}', segment={seg}, entries={entries}, slots={slots}, "
            f"padding_slots={padding}, sanity={verdict}, verified={verified}, problems={problems})")


OFFSET = "OffsetIndexEntry(slot=0, offset=35, position=1033)"
TIMES = ["TimeIndexEntry(slot=0, timestamp=1700000001087, offset=35)",
         "TimeIndexEntry(slot=1, timestamp=1700000001343, offset=37)"]
TXN = "AbortedTxn(position=0, version=0, producer_id=7001, first_offset=13, last_offset=17, last_stable_offset=18)"


@pytest.mark.parametrize("segment, verify", [(True, True), (True, False), (False, True), (False, False)])
def test_each_kind_of_index(tmp_path: Path, segment: bool, verify: bool) -> None:
    warn = verify and not segment
    checked = verify and segment
    off, tim, txn = f"{S17}.index", f"{S17}.timeindex", "00000000000000000000.txnindex"
    (tmp_path / "o").mkdir()
    assert _run(tmp_path / "o", "orders-0", off, segment=segment, verify=verify) == [OFFSET] + (
        [NO_SEGMENT.format(name=off, log=f"{S17}.log")] if warn else []) + [
        _summary(off, "offset", segment, 1, 1, 0, True, checked, 0)]
    (tmp_path / "t").mkdir()
    assert _run(tmp_path / "t", "orders-0", tim, segment=segment, verify=verify) == TIMES + (
        [NO_SEGMENT.format(name=tim, log=f"{S17}.log")] if warn else []) + [
        _summary(tim, "time", segment, 2, 2, 0, True, checked, 0)]
    (tmp_path / "x").mkdir()
    assert _run(tmp_path / "x", "payments-0", txn, segment=segment, verify=verify) == [TXN] + (
        [NO_SEGMENT.format(name=txn, log="00000000000000000000.log")] if warn else []) + [
        _summary(txn, "txn", segment, 1, None, None, False, checked, 0)]


REGRESSION = ("Finding(kind='index_offset_regression', path='D/{name}', position=8, message=\"slot 1: offset 18 is not "
              "above the previous entry's 35; the walk stops here\", severity='error', details={{'slot': 1, "
              "'offset': 18, 'previous_offset': 35}})")


@pytest.mark.parametrize("verify", [True, False])
def test_an_offset_regression_is_one_problem(tmp_path: Path, verify: bool) -> None:
    name = f"{S17}.index"
    out = _run(tmp_path, "orders-0", name, segment=True, verify=verify, extra=struct.pack(">ii", 1, 5))
    finding = REGRESSION.format(name=name)
    body = [finding, OFFSET] if verify else [OFFSET, finding]
    assert out == body + [_summary(name, "offset", True, 1, 2, 0, True, verify, 1)]


def test_a_length_not_a_multiple_of_the_entry_size_fails_the_sanity_check(tmp_path: Path) -> None:
    name = f"{S17}.index"
    out = _run(tmp_path, "orders-0", name, segment=False, verify=False, extra=b"\x00\x00\x00")
    assert "error=None" not in out[-1] and "sanity=SanityVerdict(" in out[-1]


@pytest.mark.parametrize("src, name, extra", [
    ("orders-0", f"{S17}.timeindex", struct.pack(">qi", 1700000001400, 1)),   # offset 18 below 37
    ("payments-0", "00000000000000000000.txnindex", b"\x00\x00\x00"),         # a partial entry
])
def test_findings_without_a_segment_name_the_index_file(tmp_path: Path, src, name, extra) -> None:
    out = _run(tmp_path, src, name, segment=False, verify=False, extra=extra)
    findings = [o for o in out if o.startswith("Finding(")]
    assert findings and all(f"path='D/{name}'" in f for f in findings)
