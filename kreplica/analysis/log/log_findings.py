"""Which of a replica's log findings bear on what the replication commands answer.

``epochs``, ``offset-for-epoch``, ``truncate-plan`` and ``diverge`` answer from the batch headers
of a replica's log. When the walk found those headers damaged (a CRC mismatch, offsets or epochs
going backwards, an invalid length, a truncated tail, a batch whose offsets do not fit its
segment...), the answer stands on damaged evidence, and saying it without the damage would be a
silent "OK": ``inspect-log`` and ``inspect-dir`` report the same bytes as problems. So every
error finding of the log is reported with the answer, and the warnings about the epoch lineage.
Other warnings (preallocated zeros at a segment's end) and info findings say nothing about
these answers.
"""

from __future__ import annotations

from kreplica.formats.findings import KINDS, WARNING, Finding
from kreplica.model.log.partition_log import PartitionLog

#: The finding kinds about the leader-epoch lineage: a warning of one of them bears on the answer.
EPOCH_LINEAGE_KINDS = frozenset(name for name in KINDS if name.startswith("epoch_"))


def bears_on_answer(f: Finding) -> bool:
    """An error, or a warning about the epoch lineage."""
    return f.is_error or (f.severity == WARNING and f.kind in EPOCH_LINEAGE_KINDS)


def log_findings(log: PartitionLog) -> tuple[Finding, ...]:
    """The findings of ``log``'s walk (and of its log directory's checkpoints) that bear on a
    replication command's answer, in the order the walk found them."""
    return tuple(f for f in log.findings if bears_on_answer(f))
