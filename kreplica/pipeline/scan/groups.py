"""``fleet scan``'s rows of Kafka's internal topics, and ``fleet analyze``'s committed offsets.

Stage 1 (:mod:`.scan_log_dirs`) hands each ``__consumer_offsets`` and ``__transaction_state``
replica here, and it is loaded by the loaders the single-partition commands use: a
``__consumer_offsets`` replica as ``kreplica groups`` loads it
(:func:`~kreplica.model.coordinator.fold.load_group_partition`, expiry marked as of its newest record
by :func:`~kreplica.analysis.groups.state.partition_groups`), one ``group_offsets`` row per
committed (and pending) offset; a ``__transaction_state`` replica as ``kreplica transactions``
replays it (:func:`~kreplica.model.coordinator.transactions.replay_transaction_state`), one
``transactions`` row per transactional id. A ``__consumer_offsets`` replica with no offset gets one
``group_offsets`` row with only its key and log end (:func:`replica_row`). Rows are per live replica (a ``-delete``, ``-future`` or
``-stray`` copy has none): replicas of one partition are not reconciled here. Evidence read
through Spark (:mod:`.remote_scan`) has no segments in stage 1, and gets no rows.

``fleet analyze`` reads the committed offsets back (:func:`committed_by_partition`): of the
replicas of one coordinator partition, the one ``groups`` would take answers
(:func:`~kreplica.analysis.groups.replicas.answering_replica`: the highest log end offset, which
every row carries as ``replica_log_end_offset``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, TRANSACTION_STATE
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.logdir.log_dir import LogDir, LogDirCheckpoints, PartitionDir
from kreplica.model.coordinator.transactions import TransactionMetadata
from kreplica.model.versions import DEFAULT_VERSION, KafkaVersion

#: the replica key columns, then the CommittedOffset fields; its topic-partition renamed
_OFFSET_COLUMNS = {"topic": "committed_topic", "partition": "committed_partition"}
_OFFSET_FIELDS = CommittedOffset.__slots__


def group_offset_row(key: tuple, committed: CommittedOffset, log_end_offset: int, *, pending: bool = False) -> dict:
    """The ``group_offsets`` row of one committed offset of the replica ``key``, whose log ends
    at ``log_end_offset``."""
    row = dict(zip(("broker", "log_dir", "topic", "partition"), key))
    row.update({_OFFSET_COLUMNS.get(f, f): getattr(committed, f) for f in _OFFSET_FIELDS})
    row["pending"] = pending
    row["replica_log_end_offset"] = log_end_offset
    return row


def replica_row(key: tuple, log_end_offset: int) -> dict:
    """The one ``group_offsets`` row of a replica ``key`` that holds no offset (its groups deleted,
    or none ever committed): every offset column null, so that its log end is seen when the
    replicas of its partition are compared (:func:`committed_by_partition`)."""
    row = dict(zip(("broker", "log_dir", "topic", "partition"), key))
    row.update({_OFFSET_COLUMNS.get(f, f): None for f in _OFFSET_FIELDS})
    row.update(coordinator_partition=key[3], pending=None, replica_log_end_offset=log_end_offset)
    return row


def committed_from_row(row: Mapping) -> CommittedOffset:
    """The :class:`CommittedOffset` a ``group_offsets`` row holds."""
    return CommittedOffset(**{f: row[_OFFSET_COLUMNS.get(f, f)] for f in _OFFSET_FIELDS})


def transaction_row(key: tuple, t: TransactionMetadata) -> dict:
    """The ``transactions`` row of one transactional id of the replica ``key``."""
    row = dict(zip(("broker", "log_dir", "topic", "partition"), key))
    row.update({f: getattr(t, f) for f in TransactionMetadata.__dataclass_fields__})
    row["partitions"] = [{"topic": topic, "partition": p} for topic, p in t.partitions]
    return row


def coordinator_rows(key: tuple, partition: PartitionDir, log_dir: LogDir, cps: LogDirCheckpoints, *,
                     kafka_version: KafkaVersion = DEFAULT_VERSION) -> Iterator[tuple[str, dict]]:
    """``(table, row)`` for a replica of ``__consumer_offsets`` or ``__transaction_state``
    (module docstring); nothing for any other partition."""
    if partition.key is None or partition.parsed.suffix is not None:
        return
    topic = partition.key[0]
    if topic == CONSUMER_OFFSETS:
        from kreplica.analysis.groups.state import partition_groups
        from kreplica.model.coordinator.expiry import default_retention_minutes
        from kreplica.model.coordinator.fold import load_group_partition
        from kreplica.model.coordinator.replay import coordinator_for

        state = load_group_partition(partition, log_dir, coordinator_for(kafka_version), checkpoints=cps)
        answer = partition_groups([state], kafka_version, retention_minutes=default_retention_minutes(kafka_version))
        end = state.log_end_offset
        rows = [group_offset_row(key, o, end) for g in answer.chosen.groups for o in g.offsets]
        rows += [group_offset_row(key, o, end, pending=True) for g in answer.chosen.groups for o in g.pending_offsets]
        yield from (("group_offsets", row) for row in rows or [replica_row(key, end)])
    elif topic == TRANSACTION_STATE:
        from kreplica.model.log.partition_log import read_partition_log
        from kreplica.model.coordinator.transactions import replay_transaction_state

        log = read_partition_log(partition, log_dir, checkpoints=cps)
        yield from (("transactions", transaction_row(key, t)) for t in replay_transaction_state(log).transactions)


def committed_by_partition(rows: Iterable[Mapping]) -> dict[tuple[str, int], tuple[CommittedOffset, ...]]:
    """(topic, partition) -> the groups' committed offsets in it, from ``group_offsets`` rows
    (pending ones left out; module docstring for which replica answers, the replicas taken in
    broker and log directory order). A replica with no offset is one row with a null ``group``
    (:func:`replica_row`), which answers with nothing; rows of a scan before
    ``replica_log_end_offset`` existed tie, and the first replica answers (such a scan wrote no
    row for a replica with no offset, which is then not seen)."""
    from kreplica.analysis.groups.replicas import answering_replica

    by_replica: dict[tuple, list[Mapping]] = {}
    for r in rows:
        by_replica.setdefault((r["coordinator_partition"], r["broker"], r["log_dir"]), []).append(r)
    by_partition: dict[int, list[list[Mapping]]] = {}
    for (n, _broker, _log_dir), replica in sorted(by_replica.items()):
        by_partition.setdefault(n, []).append(replica)
    out: dict[tuple[str, int], list[CommittedOffset]] = {}
    for replicas in by_partition.values():
        chosen = replicas[answering_replica([replica[0].get("replica_log_end_offset", -1) for replica in replicas])]
        for r in chosen:
            if r["group"] is not None and not r["pending"]:
                out.setdefault((r["committed_topic"], r["committed_partition"]), []).append(committed_from_row(r))
    return {k: tuple(v) for k, v in out.items()}
