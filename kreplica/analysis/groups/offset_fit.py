"""Committed offsets against the data partitions they point into.

A committed offset is where the group's consumer resumes. Where replicas of its topic-partition
are among the evidence read, it must fit them: at or below the log end offset (the offset of the
next record; a consumer that has read everything committed exactly that), and at or above the
log start offset. An offset beyond the log end of *every* replica present names a position no
copy holds any more: the records the consumer read up to it were truncated away or lost (an
unclean election, a follower truncated to a shorter leader, a restore from an older copy), and
its next fetch is out of range: ``group_offset_beyond_log_end``, an error. One below the log start
of every replica present means retention deleted records the group never read; its next fetch is
out of range too, and ``auto.offset.reset`` decides: ``group_offset_below_log_start``, an info
note, normal for a group that stopped consuming long ago. Replicas that disagree among
themselves (some beyond, some not) are not judged here: the replicas' own comparison says which
holds what.

A replica whose own files record a longer log than its segments hold (a high watermark or
recovery point checkpoint, or a producer snapshot, above its log end offset) is an incomplete
copy, or a broker that lost unflushed records: which, the evidence cannot tell. An offset beyond
the segments but within what such a replica's files record is the same finding as a
warning, saying so, not an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kreplica.formats.findings import WARNING, Finding
from kreplica.model.coordinator.sources import DataReplica
from kreplica.model.coordinator.groups import Group


def check_offsets(groups: Iterable[Group],
                  data: Mapping[tuple[str, int], Sequence[DataReplica]]) -> list[Finding]:
    """The findings for committed offsets of ``groups`` that do not fit the replicas in ``data``
    (topic-partitions without a replica there are not judged)."""
    out: list[Finding] = []
    for g in groups:
        for o in g.offsets:
            replicas = data.get((o.topic, o.partition))
            if not replicas:
                continue
            details = {"group": o.group, "topic": o.topic, "partition": o.partition, "offset": o.offset,
                       "replicas": [{"label": r.label, "path": r.path, "log_start_offset": r.log_start_offset,
                                     "log_end_offset": r.log_end_offset} for r in replicas]}
            ends = ", ".join(f"{r.label} {r.log_end_offset}" for r in replicas)
            if all(o.offset > r.log_end_offset for r in replicas):
                where = (f"group {o.group!r} committed {o.topic}-{o.partition} at {o.offset} (record offset "
                         f"{o.record_offset}), beyond the log end of every replica read ({ends})")
                if all(o.offset > r.end_recorded for r in replicas):
                    out.append(Finding("group_offset_beyond_log_end", o.path or o.source, o.position,
                                       f"{where}: the records it had read up to there are gone", details=details))
                    continue
                recorded = ", ".join(f"{r.label} {r.end_recorded}" for r in replicas if r.end_recorded >= o.offset)
                out.append(Finding("group_offset_beyond_log_end", o.path or o.source, o.position,
                                   f"{where}, but within the log their checkpoints or producer snapshots record "
                                   f"({recorded}): the copy lacks segments, or the broker lost unflushed records",
                                   severity=WARNING, details=details))
            elif all(o.offset < r.log_start_offset for r in replicas):
                starts = ", ".join(f"{r.label} {r.log_start_offset}" for r in replicas)
                out.append(Finding(
                    "group_offset_below_log_start", o.path or o.source, o.position,
                    f"group {o.group!r} committed {o.topic}-{o.partition} at {o.offset}, below the log start of "
                    f"every replica read ({starts}): its next fetch is out of range", details=details))
    return out
