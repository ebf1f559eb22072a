"""``inspect-index`` as an analysis: which index files a path stands for, their entries, and
their agreement with the segment beside them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kreplica.analysis.index_verification import (
    SanityVerdict,
    sanity_check,
    verify_offset_index,
    verify_time_index,
    verify_txn_index,
)
from kreplica.formats.findings import Finding
from kreplica.formats.naming import classify_partition_file
from kreplica.formats.offset_index import IndexEnd, iter_offset_index
from kreplica.formats.time_index import iter_time_index
from kreplica.formats.txn_index import iter_txn_index
from kreplica.formats.mapped import EvidenceError, open_buffer, refuse_special
from kreplica.model.batch_order import PartitionContext
from kreplica.model.log_dir import SegmentFiles
from kreplica.model.partition_log import read_segment_log

KINDS = {"index": "offset", "timeindex": "time", "txnindex": "txn"}


@dataclass(frozen=True, slots=True)
class IndexFile:
    path: str
    index: str              # offset | time | txn
    base_offset: int
    segment: str | None     # the sibling .log, when present


@dataclass(frozen=True, slots=True)
class IndexSummary:
    path: str
    index: str
    segment: str | None
    entries: int
    slots: int | None
    padding_slots: int | None
    sanity: SanityVerdict | None
    verified: bool
    problems: int


def find_index_files(paths: list[str]) -> list[IndexFile]:
    """Index files named directly, or every index file in the partition directories given."""
    out: list[IndexFile] = []
    for raw in paths:
        refuse_special(raw)
        p = Path(raw)
        if p.is_dir():
            names = sorted(e.path for e in os.scandir(p) if e.is_file())
            found = [f for f in (_index_file(n) for n in names) if f is not None]
            if not found:
                raise EvidenceError("holds no index files (*.index, *.timeindex, *.txnindex)", path=raw)
            out.extend(found)
        elif p.is_file():
            f = _index_file(str(p))
            if f is None:
                raise EvidenceError("is not an index file (expected <20-digit offset>.index, .timeindex or .txnindex)",
                                    path=raw)
            out.append(f)
        else:
            raise EvidenceError("no such file or directory", path=raw)
    return out


def _index_file(path: str) -> IndexFile | None:
    f = classify_partition_file(os.path.basename(path))
    if f.kind not in KINDS or f.base_offset is None:
        return None
    log = os.path.join(os.path.dirname(path), f"{f.base_offset:020d}.log")
    return IndexFile(path, KINDS[f.kind], f.base_offset, log if os.path.isfile(log) else None)


def inspect_index(f: IndexFile, *, verify: bool = True, sanity: bool = True) -> Iterator[object]:
    """The entries and findings of one index file, then an :class:`IndexSummary`."""
    segment = (read_segment_log(SegmentFiles(f.base_offset, f.segment), PartitionContext())
               if verify and f.segment else None)
    entries = problems = 0
    end: IndexEnd | None = None
    with open_buffer(f.path) as buf:
        verdict = sanity_check(f.index, buf, path=f.path, base_offset=f.base_offset) if sanity and f.index != "txn" else None
        if segment is not None:
            if f.index == "offset":
                items = verify_offset_index(buf, path=f.path, segment=segment)
            elif f.index == "time":
                items = verify_time_index(buf, path=f.path, segment=segment)
            else:
                items = verify_txn_index(buf, path=f.path, segment=segment)
        elif f.index == "offset":
            items = iter_offset_index(buf, path=f.path, base_offset=f.base_offset)
        elif f.index == "time":
            items = iter_time_index(buf, path=f.path, base_offset=f.base_offset)
        else:
            items = iter_txn_index(buf, path=f.path, base_offset=f.base_offset)
        for item in items:
            if isinstance(item, IndexEnd):
                end = item
                continue
            if isinstance(item, Finding):
                problems += item.is_error
            else:
                entries += 1
            yield item
    if verify and f.segment is None:
        yield Finding("index_entry_mismatch", f.path, 0, f"no segment {f.base_offset:020d}.log beside this index: "
                      "its entries cannot be verified", severity="warning")
    yield IndexSummary(f.path, f.index, f.segment, entries, end.slots if end else None,
                       end.padding_slots if end else None, verdict, segment is not None, problems)
