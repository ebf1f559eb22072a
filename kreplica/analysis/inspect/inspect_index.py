"""``inspect-index`` as an analysis: an index file's entries, and their agreement with the
segment beside it (which files a path stands for is :mod:`kreplica.model.logdir.index_files`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kreplica.analysis.log.index_verification import (
    SanityVerdict,
    sanity_check,
    verify_offset_index,
    verify_time_index,
    verify_txn_index,
)
from kreplica.formats.findings import Finding
from kreplica.formats.log.offset_index import IndexEnd, iter_offset_index
from kreplica.formats.log.time_index import iter_time_index
from kreplica.formats.log.txn_index import iter_txn_index
from kreplica.formats.logdir.naming import segment_file_name
from kreplica.model.logdir.index_files import IndexFile, mapped_index
from kreplica.model.logdir.log_dir import SegmentFiles
from kreplica.model.log.partition_log import read_segment_log


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


def inspect_index(f: IndexFile, *, verify: bool = True, sanity: bool = True) -> Iterator[object]:
    """The entries and findings of one index file, then an :class:`IndexSummary`."""
    segment = (read_segment_log(SegmentFiles(f.base_offset, f.segment))
               if verify and f.segment else None)
    entries = problems = 0
    end: IndexEnd | None = None
    with mapped_index(f) as buf:
        verdict = sanity_check(f.index, buf, path=f.path, base_offset=f.base_offset) if sanity and f.index != "txn" else None
        if segment is not None:
            active = f.active
            if f.index == "offset":
                items = verify_offset_index(buf, path=f.path, segment=segment, active=active)
            elif f.index == "time":
                items = verify_time_index(buf, path=f.path, segment=segment, active=active)
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
        yield Finding("index_entry_mismatch", f.path, 0, f"no segment {segment_file_name(f.base_offset)} beside this index: "
                      "its entries cannot be verified", severity="warning")
    yield IndexSummary(f.path, f.index, f.segment, entries, end.slots if end else None,
                       end.padding_slots if end else None, verdict, segment is not None, problems)
