"""A ``__consumer_offsets`` partition replayed as the group coordinator loads it.

When a broker becomes the leader of ``__consumer_offsets-N`` its group coordinator reads the log
from the log start offset to the log end offset (``FetchIsolation.LOG_END``: records above the
high watermark included) and rebuilds its groups and committed offsets in memory. Two
coordinators did this, and both are reproduced here, chosen by :func:`coordinator_for`:

* the *old* coordinator, Kafka 0.11 to 3.x: ``GroupMetadataManager.doLoadGroupsAndOffsets``
  (``core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala``);
* the *new* coordinator (``group-coordinator`` module, KIP-848), the default from 4.0:
  ``CoordinatorLoaderImpl.doLoad`` feeding ``GroupCoordinatorShard.replay``, which hands offset
  commits to ``OffsetMetadataManager.replay`` and group records to ``GroupMetadataManager.replay``.

The rules, each with the method it comes from (tests/model/coordinator/test_replay.py pairs every one
with its counter-case):

* an offset commit (record types 0 and 1) sets the committed offset of (group, topic,
  partition); a tombstone removes it. A commit made in a transaction is *pending* per producer
  id until that producer's marker: COMMIT moves it to the committed offsets unless the offset
  committed there is a newer record (old: ``CommitRecordMetadataAndOffset.olderThan``, by batch
  base offset; new: ``replayEndTransactionMarker``, ``recordOffset >``; a transactional and a
  plain commit never share a batch, so both order them as their record offsets do), ABORT drops
  it. Which commits are pending: old, every offset record of a transactional batch, a tombstone
  then removing only that producer's pending commit; new, a non-null commit of a batch with a
  producer id, while a tombstone of any batch also removes every pending commit of that
  partition. The old loader ends a producer's transaction on any control record
  (``pendingOffsets.remove`` after ``ControlRecordType.parse``), the new one on COMMIT or ABORT
  only.
* classic group metadata (type 2, ``GroupMetadataValue`` v0-v4) makes a group, ``Empty`` without
  members and ``Stable`` with them (``readGroupMessageValue`` / ``replay(GroupMetadataKey)``); a
  v0 member's rebalance timeout is its session timeout; an empty protocol type is none. A
  tombstone removes the group; its offsets stay unless tombstoned.
* offsets whose group has no group record: old, the loader makes an ``Empty`` group without
  protocol type for them (``emptyGroupOffsets``, a standalone consumer using ``assign``); new,
  ``OffsetMetadataManager.replay`` makes that *simple* classic group when a non-null commit is
  replayed for a group that does not exist, and it stays when its offsets are tombstoned
  (until the next cleanup deletes it). Offsets left after their group's tombstone belong to no
  group in the new coordinator: they are shown as a group in state ``Dead``.
* KIP-848 consumer groups (types 3-8 and 16), KIP-932 share groups (9-14) and KIP-1071 streams
  groups (17, 19-23), new coordinator only (``GroupMetadataManager.replay``): epochs, members,
  current and target assignments, subscription metadata, resolved regular expressions and a
  streams group's topology; tombstones as Kafka applies them (a streams group's record of a
  group or member that does not exist is ignored, ``GroupIdNotFoundException`` and
  ``UnknownMemberIdException`` caught). The old coordinator ignores those types (``readMessageKey``'s ``UnknownKey``): one
  ``coordinator_unknown_record`` finding says how many it skipped. A replay Kafka refuses
  (``IllegalStateException``, e.g. a member tombstone before its assignment's) is a
  ``coordinator_replay_error`` finding and the record is skipped.

Decoding: a record that does not decode is a ``coordinator_invalid_record`` finding, one of an
unknown record type or value version a ``coordinator_unknown_record`` finding, naming the
segment and the batch's byte position, and the replay goes on without it. Kafka's loaders
differ: both skip an unknown record *type* with a warning, but fail the whole load on a record
that does not decode or has an unknown value version (the partition's groups are then not
served by that broker). A batch whose records cannot be read is the log's ``invalid_record`` or
``decompression_error`` finding (:func:`~kreplica.formats.log.segment.records_finding`); the
records before the damage are replayed.

A replay may stop at a point (:class:`ReplayPoint`), as ``cluster-state --at-offset`` does:
records at offsets up to ``at_offset`` included, and records up to the first one stamped after
``at_time`` (a prefix of the log: a later record stamped earlier is not replayed). A control
batch counts as one record at its base offset, stamped with its max timestamp.

:func:`replay_partition_log` is the plain replay: every record of a :class:`PartitionLog`
decoded and replayed in order. :mod:`kreplica.model.coordinator.fold` gives the same state from the
last record of each key (the reference for it is this module).
"""

from __future__ import annotations

import struct
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from kreplica.formats.coordinator.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscription_topics
from kreplica.formats.coordinator.group_records import GROUP_METADATA, OFFSET_COMMIT_TYPES
from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, CoordinatorRecord, decode_record
from kreplica.formats.errors import FormatError, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT, LOG_APPEND_TIME, NO_PRODUCER_ID, RecordBatch
from kreplica.formats.log.segment import records_finding
from kreplica.model.coordinator.groups import (CommittedOffset, Group, GroupMember, StreamsSubtopology, StreamsTasks,
                                               StreamsTopology)
from kreplica.model.versions import Feature, KafkaVersion

OLD_COORDINATOR = "old"
NEW_COORDINATOR = "new"

#: the record types of KIP-848 consumer groups, KIP-932 share groups and KIP-1071 streams groups
CONSUMER_GROUP_TYPES = frozenset({3, 4, 5, 6, 7, 8, 16})
SHARE_GROUP_TYPES = frozenset({9, 10, 11, 12, 13, 14})
STREAMS_GROUP_TYPES = frozenset({17, 19, 20, 21, 22, 23})
#: ``ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH``
LEAVE_GROUP_MEMBER_EPOCH = -1
#: ``MemberState.STABLE`` (``modern.MemberState``) and a streams member's (``streams.MemberState``)
MEMBER_STABLE = 0
STREAMS_MEMBER_STABLE = 1
#: ``OffsetCommitValue.leader_epoch`` and ``expire_timestamp`` when absent
NO_VALUE = -1

CLASSIC, SIMPLE, CONSUMER, SHARE, STREAMS = "classic", "simple", "consumer", "share", "streams"

_TYPE = struct.Struct(">h")   # a key's record type


def coordinator_for(version: KafkaVersion) -> str:
    """The coordinator a broker of ``version`` loads groups with (:data:`Feature.NEW_GROUP_COORDINATOR`)."""
    return NEW_COORDINATOR if version.has(Feature.NEW_GROUP_COORDINATOR) else OLD_COORDINATOR


def coordinator_partition_of(key: tuple[str, int] | None) -> int | None:
    """N of a ``__consumer_offsets-N`` partition key, else ``None``."""
    return key[1] if key is not None and key[0] == CONSUMER_OFFSETS else None


@dataclass(frozen=True, slots=True)
class ReplayPoint:
    """Where a replay stops (module docstring); both ``None``: the end of the log."""

    at_offset: int | None = None
    at_time: int | None = None

    @property
    def stop_offset(self) -> int:
        return sys.maxsize if self.at_offset is None else self.at_offset

    @property
    def stop_time(self) -> int:
        return sys.maxsize if self.at_time is None else self.at_time

    def beyond(self, offset: int, timestamp: int) -> bool:
        """Whether a record at ``offset`` stamped ``timestamp`` lies past the point."""
        return offset > self.stop_offset or timestamp > self.stop_time


def marker_time(batch: RecordBatch) -> int:
    """The time a control batch counts as: its max timestamp (its one record's)."""
    return batch.max_timestamp


def batch_first_time(batch: RecordBatch) -> int:
    """The timestamp of a batch's first record, from its header."""
    return batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else batch.base_timestamp


class RecordPlace(NamedTuple):
    """Where a record is: its offset and timestamp, and its batch's segment and byte position."""

    offset: int
    timestamp: int
    path: str
    position: int


class _Commit(NamedTuple):
    """An offset commit as replayed: the decoded value, where it is, and its producer (``None``:
    not transactional)."""

    place: RecordPlace
    version: int
    value: Mapping
    producer_id: int | None


@dataclass
class _GroupState:
    """One group as a coordinator holds it while replaying (mutable; frozen :class:`Group` out)."""

    kind: str
    classic: Mapping | None = None
    classic_version: int | None = None
    epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, dict] = field(default_factory=dict)
    targets: dict[str, Mapping] = field(default_factory=dict)
    topic_names: dict[str, str] = field(default_factory=dict)
    regex_topics: dict[str, tuple[str, ...]] = field(default_factory=dict)
    topology: Mapping | None = None            # a streams group's StreamsGroupTopologyValue
    validated_topology_epoch: int = -1


def _is_simple(state: _GroupState) -> bool:
    """``ClassicGroup.isSimpleGroup``: no protocol type and no member (a group record can say so too)."""
    return state.kind == SIMPLE or (state.kind == CLASSIC and not state.classic["protocol_type"]
                                    and not state.classic["members"])


class ReplayRefused(Exception):
    """Kafka's replay throws on this record (``IllegalStateException``, ``GroupIdNotFoundException``)."""


class GroupReplay:
    """The in-memory state a coordinator builds while it loads one ``__consumer_offsets`` partition.

    Mutable while records are applied (as the coordinator's own maps are); :meth:`groups` gives
    the frozen values. ``decode`` turns key and value bytes into a record (or a finding);
    ``apply`` replays a record; ``end_transaction`` a marker; ``touch`` is the group a non-null
    commit creates in the new coordinator when none exists (the fold replays it apart from the
    commit: a commit replaced by a tombstone still made its group).
    """

    def __init__(self, coordinator: str, coordinator_partition: int, source: str) -> None:
        self.coordinator = coordinator
        self.coordinator_partition = coordinator_partition
        self.source = source
        self.offsets: dict[tuple[str, str, int], _Commit] = {}
        self.pending: dict[int, dict[tuple[str, str, int], _Commit]] = {}
        self.groups: dict[str, _GroupState] = {}
        self.removed_at: dict[str, int] = {}    # group -> offset of the last record removing it
        self.findings: list[Finding] = []
        self._ignored: Counter = Counter()
        self._first_ignored: RecordPlace | None = None

    @property
    def is_new(self) -> bool:
        return self.coordinator == NEW_COORDINATOR

    # -- decoding --------------------------------------------------------------------------

    def decode(self, key: bytes | None, value: bytes | None, place: RecordPlace) -> CoordinatorRecord | None:
        """The record of these bytes, or ``None`` after a finding (module docstring). The old
        coordinator reads only the key's type of a record it does not know (``UnknownKey``)."""
        if not self.is_new and key is not None and len(key) >= _TYPE.size:
            (kind,) = _TYPE.unpack_from(key)
            if kind not in OFFSET_COMMIT_TYPES and kind != GROUP_METADATA:
                self._ignored[kind] += 1
                if self._first_ignored is None:
                    self._first_ignored = place
                return None
        try:
            return decode_record(CONSUMER_OFFSETS, key, value, path=place.path, position=place.position)
        except UnsupportedVersion as exc:
            kind, unknown = "coordinator_unknown_record", exc.field or "record"
            message = (f"offset {place.offset}: {exc.reason}; a coordinator that does not know it "
                       + ("skips the record" if exc.field == "record type" else "fails to load the partition")
                       + ", kreplica leaves it out")
            details = {"offset": place.offset, "field": unknown}
        except FormatError as exc:
            kind = "coordinator_invalid_record"
            message = f"offset {place.offset}: {exc.reason}"
            details = {"offset": place.offset, "field": exc.field} if exc.field else {"offset": place.offset}
        self.findings.append(Finding(kind, place.path, place.position, message, details=details))
        return None

    def batch_error(self, batch: RecordBatch, error: FormatError) -> None:
        """The records of ``batch`` cannot all be read: the log's finding for it."""
        self.findings.append(records_finding(batch, error))

    # -- which commits wait for a marker ------------------------------------------------------

    def waits_for_marker(self, batch: RecordBatch, record: CoordinatorRecord) -> bool:
        """Whether ``record`` (of ``batch``) is a transactional commit held pending (module docstring)."""
        if record.record_type not in OFFSET_COMMIT_TYPES:
            return False
        if self.is_new:
            return batch.producer_id != NO_PRODUCER_ID and not record.tombstone
        return batch.is_transactional

    # -- replay ------------------------------------------------------------------------------

    def apply(self, record: CoordinatorRecord, place: RecordPlace, *, pending_producer: int | None = None,
              producer_id: int | None = None) -> None:
        """Replay one record. ``pending_producer``: a transactional commit held for that producer's
        marker; ``producer_id``: the producer of a commit already committed (shown, not pending)."""
        kind = record.record_type
        if kind in OFFSET_COMMIT_TYPES:
            self._offset_commit(record, place, pending_producer, producer_id)
        elif kind == GROUP_METADATA:
            self._group_metadata(record, place.offset)
        elif self.is_new:
            try:
                self._modern(record, place.offset)
            except ReplayRefused as exc:
                self.findings.append(Finding(
                    "coordinator_replay_error", place.path, place.position,
                    f"offset {place.offset}: {record.name} of group {_group_id(record)!r}: {exc}; the coordinator's "
                    "replay fails here, kreplica skips the record", details={"offset": place.offset}))

    def touch(self, group: str, offset: int) -> None:
        """A non-null commit of ``group`` at ``offset`` replayed: the new coordinator makes a simple
        group if none exists. A commit replayed after the records behind it (the fold's
        survivors) makes none when its group was removed after it (:attr:`removed_at`)."""
        if self.is_new and group not in self.groups and offset > self.removed_at.get(group, -1):
            self.groups[group] = _GroupState(SIMPLE)

    def _offset_commit(self, record: CoordinatorRecord, place: RecordPlace, pending_producer: int | None,
                       producer_id: int | None) -> None:
        k = record.key
        key = (k["group"], k["topic"], k["partition"])
        owner = pending_producer if pending_producer is not None else producer_id
        commit = None if record.tombstone else _Commit(place, record.value_version, record.value, owner)
        if self.is_new:
            if commit is not None:
                self.touch(key[0], place.offset)
                if pending_producer is None:
                    self.offsets[key] = commit
                else:
                    self.pending.setdefault(pending_producer, {})[key] = commit
            else:
                self.offsets.pop(key, None)
                for commits in self.pending.values():
                    commits.pop(key, None)
            return
        if pending_producer is None:
            if commit is None:
                self.offsets.pop(key, None)
            else:
                self.offsets[key] = commit
            return
        commits = self.pending.setdefault(pending_producer, {})
        if commit is None:
            commits.pop(key, None)
        else:
            commits[key] = commit

    def end_transaction(self, producer_id: int, control_type: int | None) -> None:
        """A control record of ``producer_id`` (module docstring: which ones end a transaction)."""
        if self.is_new and control_type not in (CONTROL_COMMIT, CONTROL_ABORT):
            return
        commits = self.pending.pop(producer_id, None)
        if not commits or control_type != CONTROL_COMMIT:
            return
        for key, commit in commits.items():
            existing = self.offsets.get(key)
            if existing is None or commit.place.offset > existing.place.offset:
                self.offsets[key] = commit

    def _group_metadata(self, record: CoordinatorRecord, offset: int) -> None:
        group = record.key["group"]
        if record.tombstone:
            self.groups.pop(group, None)
            self.removed_at[group] = offset
        else:
            self.groups[group] = _GroupState(CLASSIC, record.value, record.value_version)

    # -- KIP-848 and KIP-932 groups (new coordinator) -----------------------------------------

    def _consumer_group(self, group: str, create: bool) -> _GroupState | None:
        """``getOrMaybeCreatePersistedConsumerGroup``: ``None`` when absent and not created."""
        state = self.groups.get(group)
        if state is None or _is_simple(state):
            if state is None and not create:
                return None
            state = self.groups[group] = _GroupState(CONSUMER)   # a simple group is replaced
            return state
        if state.kind != CONSUMER:
            raise ReplayRefused(f"Group {group} is not a consumer group")
        return state

    def _share_group(self, group: str, create: bool) -> _GroupState:
        """``getOrMaybeCreatePersistedShareGroup``."""
        state = self.groups.get(group)
        if state is None:
            if not create:
                raise ReplayRefused(f"Share group {group} not found.")
            state = self.groups[group] = _GroupState(SHARE)
        elif state.kind != SHARE:
            raise ReplayRefused(f"Group {group} is not a share group.")
        return state

    def _streams_group(self, group: str, create: bool) -> _GroupState | None:
        """``getOrMaybeCreatePersistedStreamsGroup``: ``None`` when absent and not created; a
        simple classic group is replaced."""
        state = self.groups.get(group)
        if state is None or _is_simple(state):
            if state is None and not create:
                return None
            state = self.groups[group] = _GroupState(STREAMS)
            return state
        if state.kind != STREAMS:
            raise ReplayRefused(f"Group {group} is not a streams group.")
        return state

    def _modern(self, record: CoordinatorRecord, offset: int) -> None:
        kind, key, value = record.record_type, record.key, record.value
        group = key.get("group_id")
        if kind in CONSUMER_GROUP_TYPES:
            state = self._consumer_group(group, value is not None)
            if state is None:
                return    # a tombstone of a group that does not exist: ignored
            _CONSUMER_REPLAY[kind](state, key, value)
        elif kind in SHARE_GROUP_TYPES:
            state = self._share_group(group, value is not None and kind in (10, 11))
            _SHARE_REPLAY[kind](state, key, value)
        elif kind in STREAMS_GROUP_TYPES:
            state = self._streams_group(group, value is not None)
            if state is None:
                return    # GroupIdNotFoundException: a tombstone of a group that does not exist, ignored
            if _STREAMS_REPLAY[kind](state, key, value):
                del self.groups[group]   # removeGroup
                self.removed_at[group] = offset
            return
        else:
            return        # ShareGroupStatePartitionMetadata: the share coordinator's, no group state here
        if kind in (3, 11) and value is None:
            del self.groups[group]   # removeGroup
            self.removed_at[group] = offset

    # -- the result --------------------------------------------------------------------------

    def finish(self) -> None:
        """The findings only the end of the replay can give (record types the old coordinator ignored)."""
        if self._ignored and self._first_ignored is not None:
            at = self._first_ignored
            types = ", ".join(str(t) for t in sorted(self._ignored))
            total = sum(self._ignored.values())
            self.findings.append(Finding(
                "coordinator_unknown_record", at.path, at.position,
                f"{total} record(s) of KIP-848/KIP-932/KIP-1071 types ({types}), the first at offset {at.offset}: the old "
                "group coordinator (Kafka before 4.0, or 3.7-3.9 without the new one) ignores them "
                "(GroupMetadataManager.readMessageKey: UnknownKey); they were written by the new coordinator: give "
                "--kafka-version 4.0 to load them as it does",
                details={"offset": at.offset, "records": total}))
            self._ignored.clear()

    def result(self) -> tuple[Group, ...]:
        """Every group the coordinator holds, by name, with its offsets (expiry not applied)."""
        by_group: dict[str, list[CommittedOffset]] = {}
        for key, commit in self.offsets.items():
            by_group.setdefault(key[0], []).append(self._committed(key, commit))
        pending: dict[str, list[CommittedOffset]] = {}
        for commits in self.pending.values():
            for key, commit in commits.items():
                pending.setdefault(key[0], []).append(self._committed(key, commit))
        names = set(self.groups) | set(by_group) | set(pending)
        out = []
        for name in sorted(names):
            offsets = tuple(sorted(by_group.get(name, ()), key=_offset_order))
            held = tuple(sorted(pending.get(name, ()), key=_offset_order))
            state = self.groups.get(name)
            if state is None and not self.is_new:
                state = _GroupState(SIMPLE)   # emptyGroupOffsets: the loader's Empty group for them
            out.append(self._group(name, state, offsets, held))
        return tuple(out)

    def _committed(self, key: tuple[str, str, int], commit: _Commit) -> CommittedOffset:
        v = commit.value
        epoch = v.get("leader_epoch", NO_VALUE)
        expire = v.get("expire_timestamp", NO_VALUE) if commit.version == 1 else NO_VALUE
        return CommittedOffset(
            group=key[0], topic=key[1], partition=key[2], offset=v["offset"],
            leader_epoch=None if epoch == NO_VALUE else epoch, metadata=v["metadata"],
            commit_timestamp=v["commit_timestamp"], expire_timestamp=None if expire == NO_VALUE else expire,
            record_offset=commit.place.offset, coordinator_partition=self.coordinator_partition, source=self.source,
            value_version=commit.version, transactional=commit.producer_id is not None,
            producer_id=commit.producer_id, path=commit.place.path, position=commit.place.position)

    def _group(self, name: str, state: _GroupState | None, offsets: tuple, pending: tuple) -> Group:
        common = dict(group=name, coordinator_partition=self.coordinator_partition, offsets=offsets,
                      source=self.source, pending_offsets=pending)
        if state is None:   # new coordinator: offsets whose group was deleted
            return Group(protocol=None, protocol_type=None, generation=None, assignor=None, leader=None,
                         state="Dead", current_state_timestamp=None, members=(), subscribed_topics=None, **common)
        if state.kind == SIMPLE:
            return Group(protocol=None, protocol_type=None, generation=0, assignor=None, leader=None, state="Empty",
                         current_state_timestamp=None, members=(), subscribed_topics=None, **common)
        if state.kind == CLASSIC:
            return _classic_group(state, common)
        if state.kind == STREAMS:
            return _streams_group(state, common)
        return _modern_group(state, common)


def _offset_order(c: CommittedOffset) -> tuple:
    return (c.topic, c.partition, c.producer_id or 0)


def _group_id(record: CoordinatorRecord) -> str:
    return str(record.key.get("group_id", record.key.get("group", "")))


# -- classic groups ------------------------------------------------------------------------------


def _assignment_pairs(assignment) -> tuple[tuple[str, tuple[int, ...]], ...]:
    if not isinstance(assignment, Mapping):
        return ()
    return tuple((a["topic"], tuple(a["partitions"])) for a in assignment.get("assigned_partitions") or ())


def _member_topics(subscription) -> tuple[str, ...]:
    return tuple(subscription["topics"]) if isinstance(subscription, Mapping) else ()


def classic_subscribed_topics(protocol_type: str | None, protocol: str | None,
                              subscriptions: Iterable[object]) -> tuple[str, ...] | None:
    """What a classic group's coordinator knows its members subscribe to
    (``ClassicGroup.computeSubscribedTopics``): for protocol type ``consumer``, the topics of every
    member's subscription read with the version-0 layout, or ``()`` without members; ``None``
    when the protocol is not ``consumer``, no protocol was chosen, or a subscription does not
    read (``SchemaException``)."""
    subscriptions = list(subscriptions)
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    if not subscriptions:
        return ()
    if protocol is None:
        return None
    topics: set[str] = set()
    for sub in subscriptions:
        if isinstance(sub, Mapping):
            topics.update(sub["topics"])
            continue
        try:
            topics.update(subscription_topics(bytes(sub)))
        except FormatError:
            return None
    return tuple(sorted(topics))


def _classic_group(state: _GroupState, common: dict) -> Group:
    v = state.classic
    protocol_type = v["protocol_type"] or None
    members = []
    for m in v["members"]:
        rebalance = m["rebalance_timeout"]
        members.append(GroupMember(
            member_id=m["member_id"], group_instance_id=m["group_instance_id"], client_id=m["client_id"],
            client_host=m["client_host"], session_timeout_ms=m["session_timeout"],
            rebalance_timeout_ms=m["session_timeout"] if rebalance == NO_VALUE else rebalance,
            subscribed_topics=_member_topics(m["subscription"]), assignment=_assignment_pairs(m["assignment"])))
    stamp = v["current_state_timestamp"]
    return Group(protocol=CLASSIC, protocol_type=protocol_type, generation=v["generation"], assignor=v["protocol"],
                 leader=v["leader"], state="Stable" if members else "Empty",
                 current_state_timestamp=None if stamp == NO_VALUE else stamp, members=tuple(members),
                 subscribed_topics=classic_subscribed_topics(protocol_type, v["protocol"],
                                                             (m["subscription"] for m in v["members"])),
                 **common)


# -- consumer and share groups -------------------------------------------------------------------


def _member(state: _GroupState, member_id: str, create: bool) -> dict | None:
    """``getOrMaybeCreateMember``, with ``ConsumerGroupMember.Builder``'s defaults."""
    member = state.members.get(member_id)
    if member is None and create:
        member = state.members[member_id] = {"member_epoch": 0, "previous_member_epoch": -1, "state": MEMBER_STABLE,
                                             "assigned_partitions": (), "metadata": {}}
    return member


def _epoch(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    if value is not None:
        state.epoch = value["epoch"]
    elif state.members:
        raise ReplayRefused(f"Received a tombstone record to delete group {key['group_id']} but the group still "
                            f"has {len(state.members)} members.")
    elif state.targets:
        raise ReplayRefused(f"Received a tombstone record to delete group {key['group_id']} but the target "
                            f"assignment still has {len(state.targets)} members.")
    elif state.assignment_epoch != -1:
        raise ReplayRefused(f"Received a tombstone record to delete group {key['group_id']} but "
                            + ("target assignment epoch in invalid." if state.kind == SHARE
                               else "did not receive ConsumerGroupTargetAssignmentMetadataValue tombstone."))


def _partition_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    state.topic_names = {t["topic_id"]: t["topic_name"] for t in (value or {}).get("topics", ())}


def _member_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    member_id = key["member_id"]
    if value is not None:
        _member(state, member_id, True)["metadata"] = value
        return
    if _member(state, member_id, False) is not None:
        _remove_member(state, member_id, "but did not receive ConsumerGroupCurrentMemberAssignmentValue tombstone.",
                       "but did not receive ConsumerGroupTargetAssignmentMetadataValue tombstone.")


def _remove_member(state: _GroupState, member_id: str, not_left: str, still_targeted: str) -> None:
    """A member's tombstone: refused unless its assignment's tombstone came first and no target
    assignment names it (Kafka's words for each group kind given)."""
    if state.members[member_id]["member_epoch"] != LEAVE_GROUP_MEMBER_EPOCH:
        raise ReplayRefused(f"Received a tombstone record to delete member {member_id} {not_left}")
    if member_id in state.targets:
        raise ReplayRefused(f"Received a tombstone record to delete member {member_id} {still_targeted}")
    del state.members[member_id]


def _target_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    if value is not None:
        state.assignment_epoch = value["assignment_epoch"]
    elif state.targets:
        raise ReplayRefused(f"Received a tombstone record to delete target assignment of {key['group_id']} but the "
                            f"assignment still has {len(state.targets)} members.")
    else:
        state.assignment_epoch = -1


def _target_member(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    if value is not None:
        state.targets[key["member_id"]] = value
    else:
        state.targets.pop(key["member_id"], None)


def _current_assignment(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    member = _member(state, key["member_id"], value is not None)
    if member is None:
        return
    if value is not None:
        member.update(member_epoch=value["member_epoch"], previous_member_epoch=value["previous_member_epoch"],
                      state=value["state"], assigned_partitions=value["assigned_partitions"])
    else:
        member.update(member_epoch=LEAVE_GROUP_MEMBER_EPOCH, previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                      assigned_partitions=())


def _regular_expression(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    if value is not None:
        state.regex_topics[key["regular_expression"]] = tuple(value["topics"])
    else:
        state.regex_topics.pop(key["regular_expression"], None)


def _share_member_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    member_id = key["member_id"]
    if value is not None:
        _member(state, member_id, True)["metadata"] = value
        return
    if member_id not in state.members:
        raise ReplayRefused(f"Member {member_id} is not a member of group {key['group_id']}.")
    _remove_member(state, member_id, "with invalid leave group epoch.", "but member exists in target assignment.")


def _share_current_assignment(state: _GroupState, key: Mapping, value: Mapping | None) -> None:
    member = state.members.get(key["member_id"])
    if member is None:
        raise ReplayRefused(f"Member {key['member_id']} is not a member of group {key['group_id']}.")
    _current_assignment(state, key, value)


_CONSUMER_REPLAY = {3: _epoch, 4: _partition_metadata, 5: _member_metadata, 6: _target_metadata, 7: _target_member,
                    8: _current_assignment, 16: _regular_expression}
_SHARE_REPLAY = {9: _partition_metadata, 10: _share_member_metadata, 11: _epoch, 12: _target_metadata,
                 13: _target_member, 14: _share_current_assignment}


# -- streams groups (KIP-1071): GroupMetadataManager.replay(StreamsGroup*), StreamsGroup ---------


def _streams_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    """``replay(StreamsGroupMetadataKey, ...)``; True: the group is removed."""
    if value is not None:
        state.epoch = value["epoch"]
        state.validated_topology_epoch = value["validated_topology_epoch"]
        return False
    if state.members:
        raise ReplayRefused(f"Received a tombstone record to delete group {key['group_id']} but the group still "
                            f"has {len(state.members)} members.")
    if state.assignment_epoch != -1:
        raise ReplayRefused(f"Received a tombstone record to delete group {key['group_id']} but did not receive "
                            "StreamsGroupTargetAssignmentMetadataValue tombstone.")
    return True


def _streams_member(state: _GroupState, member_id: str) -> dict:
    """``getOrCreateUninitializedMember``: a new member has epoch 0 and no state yet."""
    member = state.members.get(member_id)
    if member is None:
        member = state.members[member_id] = {"member_epoch": 0, "previous_member_epoch": 0, "state": None,
                                             "tasks": None, "metadata": {}}
    return member


def _streams_member_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    member_id = key["member_id"]
    if value is not None:
        _streams_member(state, member_id)["metadata"] = value
    elif member_id in state.members:   # an unknown member's tombstone is ignored
        _remove_member(state, member_id, "but did not receive StreamsGroupCurrentMemberAssignmentValue tombstone.",
                       "but did not receive StreamsGroupTargetAssignmentMetadataValue tombstone.")
    return False


def _streams_target_metadata(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    _target_metadata(state, key, value)
    return False


def _streams_target_member(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    _target_member(state, key, value)
    return False


def _streams_current_assignment(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    member_id = key["member_id"]
    if value is not None:
        _streams_member(state, member_id).update(
            member_epoch=value["member_epoch"], previous_member_epoch=value["previous_member_epoch"],
            state=value["state"], tasks=value)
    elif member_id in state.members:   # an unknown member's tombstone is ignored
        state.members[member_id].update(member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                                        previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH, tasks=None)
    return False


def _streams_topology(state: _GroupState, key: Mapping, value: Mapping | None) -> bool:
    state.topology = value
    return False


_STREAMS_REPLAY = {17: _streams_metadata, 19: _streams_member_metadata, 20: _streams_target_metadata,
                   21: _streams_target_member, 22: _streams_current_assignment, 23: _streams_topology}


def _streams_state(state: _GroupState) -> str:
    """``StreamsGroup.maybeUpdateGroupState``: a member is reconciled when its state is
    ``STABLE`` at the target assignment's epoch (``StreamsGroupMember.isReconciledTo``)."""
    if not state.members:
        return "Empty"
    if state.topology is None or state.topology["epoch"] != state.validated_topology_epoch:
        return "NotReady"
    if state.epoch > state.assignment_epoch:
        return "Assigning"
    if any(m["state"] != STREAMS_MEMBER_STABLE or m["member_epoch"] != state.assignment_epoch
           for m in state.members.values()):
        return "Reconciling"
    return "Stable"


def _tasks(entries) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple(sorted((t["subtopology_id"], tuple(sorted(t["partitions"]))) for t in entries))


def _streams_topology_of(state: _GroupState) -> StreamsTopology | None:
    t = state.topology
    if t is None:
        return None
    return StreamsTopology(
        epoch=t["epoch"], validated=t["epoch"] == state.validated_topology_epoch,
        subtopologies=tuple(sorted((StreamsSubtopology(
            subtopology_id=s["subtopology_id"], source_topics=tuple(sorted(s["source_topics"])),
            source_topic_regex=tuple(s["source_topic_regex"]),
            state_changelog_topics=tuple(sorted(i["name"] for i in s["state_changelog_topics"])),
            repartition_sink_topics=tuple(sorted(s["repartition_sink_topics"])),
            repartition_source_topics=tuple(sorted(i["name"] for i in s["repartition_source_topics"])))
            for s in t["subtopologies"]), key=lambda s: s.subtopology_id)))


def _streams_group(state: _GroupState, common: dict) -> Group:
    members = []
    for member_id in sorted(state.members):
        m = state.members[member_id]
        meta, tasks = m["metadata"], m["tasks"]
        members.append(GroupMember(
            member_id=member_id, group_instance_id=meta.get("instance_id"), client_id=meta.get("client_id", ""),
            client_host=meta.get("client_host", ""), session_timeout_ms=None,
            rebalance_timeout_ms=meta.get("rebalance_timeout_ms"), subscribed_topics=(), assignment=(),
            member_epoch=m["member_epoch"], process_id=meta.get("process_id"),
            topology_epoch=meta.get("topology_epoch"),
            tasks=StreamsTasks() if tasks is None else StreamsTasks(
                active=_tasks(tasks["active_tasks"]), standby=_tasks(tasks["standby_tasks"]),
                warmup=_tasks(tasks["warmup_tasks"]))))
    topology = _streams_topology_of(state)
    # isSubscribedToTopic: the topics of StreamsTopology.sourceTopicMap (source and repartition
    # source topics), none while the group is empty
    subscribed = () if topology is None else tuple(sorted(
        {t for s in topology.subtopologies for t in (*s.source_topics, *s.repartition_source_topics)}))
    return Group(protocol=STREAMS, protocol_type=STREAMS, generation=state.epoch, assignor=None, leader=None,
                 state=_streams_state(state), current_state_timestamp=None, members=tuple(members),
                 subscribed_topics=subscribed, assignment_epoch=state.assignment_epoch, topology=topology, **common)


def _consumer_state(state: _GroupState) -> str:
    """``ConsumerGroup.maybeUpdateGroupState`` (a share group: ``Empty`` or ``Stable``)."""
    if not state.members:
        return "Empty"
    if state.kind == SHARE:
        return "Stable"
    if state.epoch > state.assignment_epoch:
        return "Assigning"
    if any(m["state"] != MEMBER_STABLE or m["member_epoch"] != state.assignment_epoch for m in state.members.values()):
        return "Reconciling"
    return "Stable"


def _modern_group(state: _GroupState, common: dict) -> Group:
    members = []
    assignors: Counter = Counter()
    subscribed: set[str] = set()
    names = state.topic_names
    for member_id in sorted(state.members):
        m = state.members[member_id]
        meta = m["metadata"]
        topics = tuple(meta.get("subscribed_topic_names", ()))
        subscribed.update(topics)
        if meta.get("server_assignor"):
            assignors[meta["server_assignor"]] += 1
        classic = meta.get("classic_member_metadata")
        members.append(GroupMember(
            member_id=member_id, group_instance_id=meta.get("instance_id"), client_id=meta.get("client_id", ""),
            client_host=meta.get("client_host", ""),
            session_timeout_ms=classic["session_timeout_ms"] if classic else None,
            rebalance_timeout_ms=meta.get("rebalance_timeout_ms"), subscribed_topics=topics,
            assignment=tuple((names.get(a["topic_id"], a["topic_id"]), tuple(a["partitions"]))
                             for a in m["assigned_partitions"]),
            member_epoch=m["member_epoch"]))
    for topics in state.regex_topics.values():
        subscribed.update(topics)
    assignor = assignors.most_common(1)[0][0] if assignors else None
    protocol = CONSUMER if state.kind == CONSUMER else SHARE
    return Group(protocol=protocol, protocol_type=CONSUMER_PROTOCOL_TYPE if protocol == CONSUMER else SHARE,
                 generation=state.epoch, assignor=assignor, leader=None, state=_consumer_state(state),
                 current_state_timestamp=None, members=tuple(members), subscribed_topics=tuple(sorted(subscribed)),
                 assignment_epoch=state.assignment_epoch, **common)


# -- the plain replay of a partition log ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupPartitionState:
    """One replica of ``__consumer_offsets-<coordinator_partition>`` replayed to a point.

    ``groups`` carry their offsets (expiry not yet applied, see
    :mod:`kreplica.model.coordinator.expiry`); ``findings`` are the log's own, then the replay's.
    ``replayed_to``, ``newest_timestamp`` and ``records`` say how far the replay went: a batch
    replayed whole counts its last offset, its max timestamp and its records (a control batch
    one), a batch cut by the point or by damage the records of it replayed (``None``: nothing
    replayed). ``first_*``/``last_*`` bound the evidence: the first offset and record time, the
    last offset (the log end offset - 1) and the newest batch time of the batches not wholly
    below the log start offset.
    """

    coordinator_partition: int
    label: str
    path: str
    broker_id: int | None
    coordinator: str
    groups: tuple[Group, ...]
    findings: tuple[Finding, ...]
    log_start_offset: int
    log_end_offset: int
    replayed_to: int | None
    newest_timestamp: int | None
    records: int
    first_offset: int | None
    last_offset: int | None
    first_time: int | None
    last_time: int | None


def _marker_problem(marker) -> str:
    """Why ``ControlRecordType.parse`` throws on a marker that decodes (``ControlMarker.error`` when not)."""
    if marker.error:
        return marker.error
    if marker.key_is_null:
        return "no key"
    return "its key is not a control record key: ControlRecordType.parse needs 4 bytes of a non-negative version"


def unreadable_marker(batch: RecordBatch, marker) -> Finding:
    """The finding for a control batch whose record the loader cannot read
    (``ControlRecordType.parse`` throws)."""
    return Finding("coordinator_replay_error", batch.path, batch.position,
                   f"offset {batch.base_offset}: a control record the loader cannot read ({_marker_problem(marker)}); "
                   "the coordinator fails to load the partition, kreplica skips it",
                   details={"offset": batch.base_offset})


def replay_batches(replay: GroupReplay, batches: Iterable[tuple[RecordBatch, tuple, FormatError | None]],
                   markers, point: ReplayPoint, log_start_offset: int) -> tuple[int | None, int | None, int, bool]:
    """Replay ``(batch, records, error)`` in order up to ``point``: ``(replayed to, newest
    timestamp, records replayed, stopped at the point)``. A batch replayed whole counts its last
    offset and max timestamp, a batch cut by the point or by damage its records' (the
    definitions :class:`GroupPartitionState` states). ``markers(batch)`` is a control batch's
    :class:`~kreplica.formats.log.control_marker.ControlMarker`."""
    last = newest = None
    count = 0
    for batch, records, error in batches:
        if batch.last_offset < log_start_offset:
            continue
        if batch.is_control:
            marker = markers(batch)
            if marker is None:
                continue
            if point.beyond(batch.base_offset, marker_time(batch)):
                return last, newest, count, True
            if marker.control_type is None:
                replay.findings.append(unreadable_marker(batch, marker))
            else:
                replay.end_transaction(batch.producer_id, marker.control_type)
            last, newest, count = batch.last_offset, _newer(newest, marker_time(batch)), count + 1
            continue
        cut = None
        for n, record in enumerate(records):
            if point.beyond(record.offset, record.timestamp):
                cut = n
                break
            place = RecordPlace(record.offset, record.timestamp, batch.path, batch.position)
            decoded = replay.decode(record.key, record.value, place)
            if decoded is not None:
                pid = batch.producer_id if replay.waits_for_marker(batch, decoded) else None
                replay.apply(decoded, place, pending_producer=pid)
        replayed = records[:cut] if cut is not None else records
        count += len(replayed)
        if cut is None and error is None:
            if records:
                last, newest = batch.last_offset, _newer(newest, batch.max_timestamp)
            continue
        if replayed:
            last = replayed[-1].offset
            newest = _newer(newest, max(r.timestamp for r in replayed))
        if cut is not None:
            return last, newest, count, True
        replay.batch_error(batch, error)
    return last, newest, count, False


def _newer(current: int | None, timestamp: int) -> int:
    return timestamp if current is None or timestamp > current else current


def replay_partition_log(log, coordinator: str, point: ReplayPoint = ReplayPoint()) -> GroupPartitionState:
    """The plain replay of a :class:`~kreplica.model.log.partition_log.PartitionLog` of
    ``__consumer_offsets-N``: every record of the batches Kafka's reader yields decoded and
    replayed in order (module docstring), the log's findings kept beside the replay's."""
    from kreplica.model.log.partition_log import iter_batch_records_with_errors

    partition = coordinator_partition_of(log.key)
    if partition is None:
        raise ValueError(f"{log.path} is not a __consumer_offsets partition")
    replay = GroupReplay(coordinator, partition, log.path)
    wanted = [b for b in log.batches if b.last_offset >= log.log_start_offset]
    data = (b for b in wanted if not b.is_control)

    def batches():
        contents = iter_batch_records_with_errors(log, data)
        for b in wanted:
            if b.is_control:
                yield b, (), None
            else:
                got, recs, err = next(contents)
                assert got is b
                yield b, recs, err

    last, newest, count, _stopped = replay_batches(replay, batches(), log.marker, point, log.log_start_offset)
    replay.finish()
    bounds = EvidenceBounds(log.log_start_offset)
    for b in log.batches:
        bounds.add(b)
    return partition_state(replay, log.label, log.path, log.broker_id, list(log.findings), log.log_end_offset, bounds,
                           last, newest, count)


class EvidenceBounds:
    """The first offset and record time, and the last record time, of the batches a replay may
    read (those not wholly below the log start offset), gathered batch by batch."""

    __slots__ = ("log_start_offset", "first_offset", "first_time", "last_time")

    def __init__(self, log_start_offset: int) -> None:
        self.log_start_offset = log_start_offset
        self.first_offset: int | None = None
        self.first_time: int | None = None
        self.last_time: int | None = None

    def add(self, batch: RecordBatch) -> None:
        if batch.last_offset < self.log_start_offset:
            return
        if self.first_offset is None:
            self.first_offset, self.first_time = batch.base_offset, batch_first_time(batch)
        if self.last_time is None or batch.max_timestamp > self.last_time:
            self.last_time = batch.max_timestamp


def partition_state(replay: GroupReplay, label: str, path: str, broker_id: int | None, findings: list[Finding],
                    log_end_offset: int, bounds: EvidenceBounds, replayed_to: int | None, newest: int | None,
                    records: int) -> GroupPartitionState:
    """The frozen state of a finished replay (``findings``: the log's own, before the replay's)."""
    return GroupPartitionState(
        coordinator_partition=replay.coordinator_partition, label=label, path=path, broker_id=broker_id,
        coordinator=replay.coordinator, groups=replay.result(), findings=tuple(findings + replay.findings),
        log_start_offset=bounds.log_start_offset, log_end_offset=log_end_offset, replayed_to=replayed_to,
        newest_timestamp=newest, records=records, first_offset=bounds.first_offset,
        last_offset=log_end_offset - 1 if bounds.first_offset is not None else None, first_time=bounds.first_time,
        last_time=bounds.last_time)
