"""``kreplica transactions`` as one call: the coordinator's state, every data partition's open
transactions, and which of them hang.

Every partition directory of the log directories given is read once
(:func:`~kreplica.model.log.partition_log.read_partition_log`): a ``__transaction_state-N`` replica is
replayed as the coordinator loads it (:mod:`kreplica.model.coordinator.transactions`; of several
replicas of one partition the one that reaches furthest stands for it), any other partition's
open transactions and last stable offset are rebuilt as its broker rebuilds them
(:mod:`kreplica.analysis.log.open_transactions`), one partition at a time, keeping only the
result. Directories with a ``-delete``, ``-future`` or ``-stray`` suffix are not the partition a
broker serves and are left out. Then each open transaction is judged
(:mod:`kreplica.analysis.transactions.hanging`) at the evidence time: ``now`` when given, else the
point asked for (``at_time``), else the newest batch timestamp read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kreplica.analysis.transactions.hanging import (DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
                                                 DEFAULT_TRANSACTION_STATE_PARTITIONS, CoordinatorView,
                                                 TransactionVerdict, coordinator_view, judge_partitions)
from kreplica.analysis.log.log_findings import log_findings
from kreplica.analysis.log.open_transactions import PartitionTransactions, open_transactions
from kreplica.formats.coordinator.records import TRANSACTION_STATE
from kreplica.formats.findings import Finding
from kreplica.model.evidence_span import EvidenceSpan
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.evidence_span import merge_spans
from kreplica.model.log.log_cut import log_span
from kreplica.model.logdir.log_dir import LogDir, PartitionDir, read_checkpoints
from kreplica.model.log.partition_log import read_partition_log
from kreplica.model.coordinator.transactions import TransactionLogState, latest_replicas, replay_transaction_state


@dataclass(frozen=True, slots=True)
class TransactionsAnalysis:
    """What ``kreplica transactions`` reports.

    ``partitions`` are the data partitions read (each replica), ``verdicts`` their open
    transactions judged; ``findings`` those of the logs read that bear on the answer and of the
    coordinator's records. ``time_span`` is the batch times of everything read,
    ``coordinator_span`` the offsets of the ``__transaction_state`` replicas (the span an
    ``--at-offset`` must fall in); both as the evidence holds them, before any cut.
    ``max_timeout_ms`` is the ``transaction.max.timeout.ms`` judged by.
    """

    view: CoordinatorView
    partitions: tuple[PartitionTransactions, ...]
    verdicts: tuple[TransactionVerdict, ...]
    findings: tuple[Finding, ...]
    now: int | None
    time_span: EvidenceSpan
    coordinator_span: EvidenceSpan
    max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS

    @property
    def hanging(self) -> tuple[TransactionVerdict, ...]:
        return tuple(v for v in self.verdicts if v.hanging)


def served_partitions(log_dirs: Iterable[LogDir]) -> Iterable[tuple[LogDir, PartitionDir]]:
    """The partition directories a broker serves (no ``-delete``/``-future``/``-stray`` suffix)."""
    for log_dir in log_dirs:
        for partition in log_dir.partitions:
            if partition.parsed is not None and not partition.parsed.suffix:
                yield log_dir, partition


def coordinator_partitions(log_dirs: Iterable[LogDir]) -> set[int]:
    """The ``__transaction_state`` partitions the log directories hold (by name; nothing is read)."""
    return {p.key[1] for _, p in served_partitions(log_dirs) if p.key[0] == TRANSACTION_STATE}


def analyze_transactions(log_dirs: Iterable[LogDir], *, at_offset: int | None = None, at_time: int | None = None,
                         now: int | None = None, max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
                         partition_count: int = DEFAULT_TRANSACTION_STATE_PARTITIONS,
                         committed: Iterable[CommittedOffset] = (),
                         advance: Callable[[int], None] | None = None) -> TransactionsAnalysis:
    """Read, replay and judge (module docstring). ``at_offset`` cuts the ``__transaction_state``
    replay (inclusive), ``at_time`` every log; ``committed`` are the groups' committed offsets
    (for the read_committed consumers a hanging transaction stalls); ``advance`` receives the
    bytes of segments walked."""
    states: list[TransactionLogState] = []
    partitions: list[PartitionTransactions] = []
    findings: list[Finding] = []
    time_span = coordinator_span = EvidenceSpan("log", None, None, None, None)
    checkpoints = {}
    for log_dir, partition in served_partitions(log_dirs):
        if log_dir.path not in checkpoints:
            checkpoints[log_dir.path] = read_checkpoints(log_dir)
        log = read_partition_log(partition, log_dir, checkpoints=checkpoints[log_dir.path], advance=advance)
        findings.extend(log_findings(log))
        span = log_span([log])
        time_span = merge_spans(time_span, span)
        if partition.key[0] == TRANSACTION_STATE:
            coordinator_span = merge_spans(coordinator_span, span)
            states.append(replay_transaction_state(log, at_offset=at_offset, at_time=at_time))
        else:
            partitions.append(open_transactions(log, at_time=at_time))
    chosen = latest_replicas(states)
    for s in chosen:
        findings.extend(s.findings)
    view = coordinator_view(chosen, partition_count)
    if now is None:
        now = at_time if at_time is not None else time_span.last_time
    verdicts = judge_partitions(partitions, view, now=now if now is not None else 0, max_timeout_ms=max_timeout_ms,
                                committed=committed)
    return TransactionsAnalysis(view, tuple(partitions), verdicts, tuple(dict.fromkeys(findings)), now, time_span,
                                coordinator_span, max_timeout_ms)
