"""A ``__consumer_offsets`` partition loaded in one streamed walk, offset commits folded by key.

A busy ``__consumer_offsets`` partition holds millions of offset commits, most of them replaced
by a later commit of the same group and partition. Decoding each into a record and replaying it
(:func:`~kreplica.model.coordinator.replay.replay_partition_log`) costs microseconds a record; this
module gets the same state by folding the commits first and decoding only what survives:

* one walk over the segments (:class:`~kreplica.model.log.walk.BatchWalk`, with the checks
  across batches and the control markers), each batch's records read as
  the walk passes it: memory holds one entry per group, topic and partition, not the log's
  batch headers;
* plain offset commits are folded by key bytes in compiled code
  (:func:`~kreplica.formats.log.key_fold.fold_section`; its layouts accept exactly the commits
  the generic decoder reads), the last commit of each key kept;
* every other record (group metadata, KIP-848 and KIP-932 records, anything the layouts do not
  match) is decoded as the walk meets it, its findings made as the plain replay makes them, and
  replayed at once: group state is replayed in log order, record by record;
* transactional commits wait per producer id as the coordinator holds them, and markers apply
  them to the fold in log order (a commit replaces the folded entry unless that entry is a newer
  non-null commit, the rule of :meth:`GroupReplay.end_transaction`); while a transaction is open
  under the new coordinator, whose tombstones also drop pending commits, batches are read
  record by record;
* at the end the surviving commits (and the open transactions') are replayed in offset order.
  A commit's only effect on groups, the simple group the new coordinator makes for a commit of
  a group that does not exist, is replayed from each key's last non-null commit, and only when
  no record removed the group after it (:meth:`GroupReplay.touch`).

A compacted log is loaded the same way by Kafka itself (the log cleaner keeps the last record of
each key), which is why the result is the plain replay's: tests/model/coordinator/test_fold.py checks
that it is, groups, offsets and findings alike, with the compiled fold and with its pure-Python
twin. One order can differ, and Kafka does not write it: a consumer or share group tombstone for
a group that exists only as the simple group of an earlier commit (the plain replay turns that
simple group into a consumer group first, ``getOrMaybeCreatePersistedConsumerGroup``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kreplica.formats.coordinator.group_records import OFFSET_COMMIT_TYPES, OffsetCommitKey, OffsetCommitValue
from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, decode_matched, decode_record
from kreplica.formats import codecs
from kreplica.formats.errors import FormatError
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, LOG_APPEND_TIME, NO_PRODUCER_ID, Record, RecordBatch
from kreplica.formats.log.key_fold import FOLD_CUT, FOLD_DONE, FOLD_OTHER, fold_section, new_table
from kreplica.formats.mapped import open_buffer
from kreplica.formats.generated_messages import flat_layout
from kreplica.model.log.batch_order import PartitionContext
from kreplica.model.log.partition_log import loaded_log_start
from kreplica.model.log.walk import BatchWalk, WalkedBatch
from kreplica.model.coordinator.replay import (EvidenceBounds, GroupPartitionState, GroupReplay, RecordPlace, ReplayPoint,
                                         coordinator_partition_of, marker_time, partition_state, unreadable_marker)
from kreplica.model.logdir.log_dir import LogDir, LogDirCheckpoints, PartitionDir, broker_id_of, read_checkpoints

#: the offset commit layouts the compiled fold matches: record types 0 and 1 share an entry
#: (stored as type 1), value versions 0 to the newest known
_COMMIT = (1, flat_layout(OffsetCommitKey, 0),
           tuple(flat_layout(OffsetCommitValue, v) for v in range(OffsetCommitValue.max_version + 1)))
OFFSET_COMMIT_LAYOUTS = (_COMMIT, _COMMIT)
_TYPE_1 = (1).to_bytes(2, "big")

# a folded entry: (offset, timestamp, value, value_offset, path, batch_position)
_OFFSET, _TIME, _VALUE, _VALUE_OFFSET, _PATH, _POSITION = range(6)


def fold_key_of(key: bytes) -> bytes:
    """The key an offset commit is folded under: with type 1 (both key versions of one group,
    topic and partition share an entry)."""
    return _TYPE_1 + key[2:]


class GroupFold:
    """The fold of one partition's records (module docstring); :meth:`batch` per Kafka-visible batch
    in log order, then :meth:`finish` replays the survivors into ``replay``."""

    def __init__(self, replay: GroupReplay, point: ReplayPoint, log_start_offset: int) -> None:
        self.replay = replay
        self.point = point
        self.log_start_offset = log_start_offset
        self.table = new_table()
        self.pending: dict[int, dict[bytes, tuple]] = {}
        self.committed: dict[bytes, tuple[int, int]] = {}   # key -> (offset, producer) of a committed txn commit
        self.touches: dict[bytes, int] = {}                 # key -> offset of its last transactional commit
        self.stopped = False
        self.last: int | None = None
        self.newest: int | None = None
        self.count = 0

    # -- one batch ---------------------------------------------------------------------------

    def batch(self, batch: RecordBatch, buf, marker=None) -> None:
        """Fold one batch of the walk (``buf`` holds its segment; ``marker`` a control batch's)."""
        if self.stopped or batch.last_offset < self.log_start_offset:
            return
        if batch.is_control:
            self._control(batch, marker)
            return
        if (batch.magic < 2 or self._record_by_record(batch) or batch.count < 0
                or batch.size < default_records.RECORD_BATCH_OVERHEAD or batch.compression > codecs.ZSTD):
            self._records(batch, buf)     # read as Kafka's reader reads it, its errors included
            return
        inflated = default_records.records_payload(buf, batch)
        if inflated.error is not None:
            self._records(batch, buf)
            return
        self._fold(batch, inflated.data)

    def _record_by_record(self, batch: RecordBatch) -> bool:
        """A transactional batch, or any while the new coordinator has a transaction open."""
        if self.replay.is_new:
            return batch.producer_id != NO_PRODUCER_ID or bool(self.pending)
        return batch.is_transactional

    def _control(self, batch: RecordBatch, marker) -> None:
        if marker is None:
            return
        if self.point.beyond(batch.base_offset, marker_time(batch)):
            self.stopped = True
            return
        if marker.control_type is None:
            self.replay.findings.append(unreadable_marker(batch, marker))
        else:
            self._end_transaction(batch.producer_id, marker.control_type)
        self._whole(batch, 1)

    def _end_transaction(self, producer_id: int, control_type: int) -> None:
        """:meth:`GroupReplay.end_transaction` on the fold: a folded tombstone is no commit."""
        if self.replay.is_new and control_type not in (CONTROL_COMMIT, CONTROL_ABORT):
            return
        commits = self.pending.pop(producer_id, None)
        if not commits or control_type != CONTROL_COMMIT:
            return
        for key, entry in commits.items():
            existing = self.table.get(key)
            if existing is None or existing[_VALUE] is None or entry[_OFFSET] > existing[_OFFSET]:
                self.table[key] = entry
                self.committed[key] = (entry[_OFFSET], producer_id)

    def _whole(self, batch: RecordBatch, records: int) -> None:
        self.last = batch.last_offset
        self.newest = batch.max_timestamp if self.newest is None else max(self.newest, batch.max_timestamp)
        self.count += records

    def _partial(self, records: list[Record]) -> None:
        """A batch cut by the point or by damage: its replayed records count one by one."""
        if records:
            self.last = records[-1].offset
            newest = max(r.timestamp for r in records)
            self.newest = newest if self.newest is None else max(self.newest, newest)
            self.count += len(records)

    def _fold(self, batch: RecordBatch, data) -> None:
        """The compiled fold over a v2 records section, with every record it hands back handled here."""
        lat = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
        pos = index = 0
        count = batch.count
        stop_offset, stop_time = self.point.stop_offset, self.point.stop_time
        while True:
            pos, index, status, other = fold_section(data, pos, index, count, batch.base_offset, batch.base_timestamp,
                                                     lat, stop_offset, stop_time, batch.position, batch.path,
                                                     OFFSET_COMMIT_LAYOUTS, self.table)
            if status == FOLD_DONE:
                if count:
                    self._whole(batch, count)
                return
            if status == FOLD_OTHER:
                offset, timestamp, key, value = other
                self._record(batch, Record(batch.position, offset, timestamp, -1, key, value, ()))
                continue
            if status == FOLD_CUT:
                self.stopped = True
                self._partial(_first_records(data, batch, lat, index))
                return
            self._framing(batch, data, lat, pos, index)
            return

    def _framing(self, batch: RecordBatch, data, lat: int | None, pos: int, index: int) -> None:
        """The rest of a section from a record the compiled fold would not frame: the reference reader."""
        section = data if isinstance(data, bytes) else bytes(data)
        records = default_records.decode_records(section, batch.count, batch.base_offset, batch.base_timestamp,
                                                 batch.base_sequence, lat, batch.position, start_index=index,
                                                 start_pos=pos)
        self._replay(batch, records, _first_records(section, batch, lat, index))

    def _records(self, batch: RecordBatch, buf) -> None:
        """A batch replayed record by record, read as Kafka's reader reads it."""
        reader = legacy_records.iter_records if batch.magic < 2 else default_records.iter_records
        self._replay(batch, reader(buf, batch), [])

    def _replay(self, batch: RecordBatch, records: Iterator[Record], done: list[Record]) -> None:
        """Records of ``batch`` after the ``done`` ones, up to the point or to the damage the reader raises."""
        try:
            for record in records:
                if self.point.beyond(record.offset, record.timestamp):
                    self.stopped = True
                    self._partial(done)
                    return
                self._record(batch, record)
                done.append(record)
        except FormatError as exc:
            self._partial(done)
            self.replay.batch_error(batch, exc)
            return
        if done:
            self._whole(batch, len(done))

    def _record(self, batch: RecordBatch, record: Record) -> None:
        """One record the compiled fold did not take: decoded now (findings as the plain replay
        makes them), then folded, or held for its transaction."""
        place = RecordPlace(record.offset, record.timestamp, batch.path, batch.position)
        decoded = self.replay.decode(record.key, record.value, place)
        if decoded is None:
            return
        if decoded.record_type not in OFFSET_COMMIT_TYPES:
            self.replay.apply(decoded, place)     # group records: replayed in log order, as they come
            return
        key = fold_key_of(record.key)
        entry_value = record.value
        if self.replay.waits_for_marker(batch, decoded):
            commits = self.pending.setdefault(batch.producer_id, {})
            if decoded.tombstone:
                commits.pop(key, None)
                return
            commits[key] = (record.offset, record.timestamp, entry_value, record.offset, batch.path, batch.position)
            if self.replay.is_new:
                self.touches[key] = record.offset
            return
        if decoded.tombstone:
            old = self.table.get(key)
            value_offset = old[_VALUE_OFFSET] if old is not None else -1
            if self.replay.is_new:
                for commits in self.pending.values():
                    commits.pop(key, None)
        else:
            value_offset = record.offset
        self.table[key] = (record.offset, record.timestamp, entry_value, value_offset, batch.path, batch.position)

    # -- the survivors -----------------------------------------------------------------------

    def finish(self) -> None:
        """Replay what survived, in offset order, into :attr:`replay`."""
        replay = self.replay
        events: list[tuple] = []
        for key, entry in self.table.items():
            events.append((entry[_OFFSET], 1, key, entry, None))
            if replay.is_new and entry[_VALUE] is None and entry[_VALUE_OFFSET] >= 0:
                events.append((entry[_VALUE_OFFSET], 0, key, None, None))
        for key, offset in self.touches.items():
            events.append((offset, 0, key, None, None))
        for producer_id, commits in self.pending.items():
            for key, entry in commits.items():
                events.append((entry[_OFFSET], 2, key, entry, producer_id))
        events.sort(key=lambda e: (e[0], e[1]))
        for offset, kind, key, entry, producer_id in events:
            if kind == 0:   # a commit's offset: the new coordinator makes its group there if none exists
                replay.touch(decode_record(CONSUMER_OFFSETS, key, None).key["group"], offset)
                continue
            place = RecordPlace(entry[_OFFSET], entry[_TIME], entry[_PATH], entry[_POSITION])
            record = decode_matched(CONSUMER_OFFSETS, key, entry[_VALUE])   # decoded once already, or matched
            if kind == 2:
                replay.apply(record, place, pending_producer=producer_id)
                continue
            committed = self.committed.get(key)
            owner = committed[1] if committed is not None and committed[0] == entry[_OFFSET] else None
            replay.apply(record, place, producer_id=owner)
        replay.finish()


def _first_records(data, batch: RecordBatch, lat: int | None, n: int) -> list[Record]:
    """The first ``n`` records of a v2 section (read again: a batch cut by the point or damage)."""
    if n == 0:
        return []
    section = data if isinstance(data, bytes) else bytes(data)
    out = []
    for record in default_records.decode_records(section, batch.count, batch.base_offset, batch.base_timestamp,
                                                 batch.base_sequence, lat, batch.position):
        out.append(record)
        if len(out) == n:
            break
    return out


# -- the streamed walk ---------------------------------------------------------------------------


def load_group_partition(partition: PartitionDir, log_dir: LogDir, coordinator: str,
                         point: ReplayPoint = ReplayPoint(), *, checkpoints: LogDirCheckpoints | None = None,
                         label: str | None = None,
                         advance: Callable[[int], None] | None = None) -> GroupPartitionState:
    """One replica of ``__consumer_offsets-N`` loaded as its coordinator loads it, in one walk
    (module docstring): the same :class:`GroupPartitionState` as
    :func:`~kreplica.model.coordinator.replay.replay_partition_log` of its partition log, the walk's
    findings included. ``advance(n_bytes)`` is told how far the walk got."""
    n = coordinator_partition_of(partition.key)
    if n is None:
        raise ValueError(f"{partition.path} is not a __consumer_offsets partition")
    cps = checkpoints if checkpoints is not None else read_checkpoints(log_dir)
    broker_id = broker_id_of(cps)
    label = label or (f"broker-{broker_id}" if broker_id is not None else partition.path)
    log_start, end = loaded_log_start(partition, cps)
    replay = GroupReplay(coordinator, n, partition.path)
    fold = GroupFold(replay, point, log_start)
    findings = list(cps.findings)
    context = PartitionContext()
    bounds = EvidenceBounds(log_start)
    for files in partition.segments:
        with open_buffer(files.log) as buf:
            for item in BatchWalk(buf, files.log, files.base_offset, context, progress=advance):
                if type(item) is not WalkedBatch:
                    findings.append(item)
                    continue
                batch, found, marker = item
                if found:
                    findings.extend(found)
                if batch.after_break:
                    continue
                nxt = batch.next_offset
                if nxt > end:
                    end = nxt
                bounds.add(batch)
                fold.batch(batch, buf, marker)
    fold.finish()
    return partition_state(replay, label, partition.path, broker_id, findings, end, bounds, fold.last, fold.newest,
                           fold.count)


def iter_group_partitions(log_dir: LogDir) -> Iterator[PartitionDir]:
    """The ``__consumer_offsets`` partitions of a log directory, in partition order."""
    found = [p for p in log_dir.partitions if coordinator_partition_of(p.key) is not None]
    return iter(sorted(found, key=lambda p: p.key[1]))


__all__ = ["GroupFold", "OFFSET_COMMIT_LAYOUTS", "fold_key_of", "iter_group_partitions",
           "load_group_partition"]
