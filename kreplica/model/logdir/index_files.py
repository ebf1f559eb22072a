"""Which index files a path stands for (``inspect-index``): index files named directly, or every
index file of a partition directory, each with the segment beside it when there is one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kreplica.formats.mapped import Buffer, EvidenceError, open_buffer, refuse_special
from kreplica.formats.logdir.naming import classify_partition_file, segment_file_name

KINDS = {"index": "offset", "timeindex": "time", "txnindex": "txn"}


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One index file to read, of kind ``index``, with the segment its entries point into."""

    path: str
    index: str              # offset | time | txn
    base_offset: int
    segment: str | None     # the sibling .log, when present
    #: no segment of a higher base offset beside it: the partition's active segment, whose
    #: index may hold a truncation's stale tail
    active: bool = False


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
    folder = os.path.dirname(path)
    log = os.path.join(folder, segment_file_name(f.base_offset))
    later = (g for g in map(classify_partition_file, os.listdir(folder or "."))
             if g.kind == "log" and g.base_offset is not None and g.base_offset > f.base_offset)
    return IndexFile(path, KINDS[f.kind], f.base_offset, log if os.path.isfile(log) else None,
                     active=next(later, None) is None)



@contextmanager
def mapped_index(f: IndexFile) -> Iterator[Buffer]:
    """A read-only buffer over the index file, unmapped on exit."""
    with open_buffer(f.path) as buf:
        yield buf
