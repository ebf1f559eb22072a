"""Which committed offsets the group coordinator's offset cleanup removes at a given time.

Every ``offsets.retention.check.interval.ms`` (10 minutes) the coordinator removes expired offsets
and writes a tombstone for each. An offset the log still holds may therefore already be expired:
its group's next cleanup drops it, and a consumer restarting then starts from
``auto.offset.reset``. This module marks such offsets ``expired`` (nothing is dropped) as of an
*evaluation time*, by the rules of the broker's version:

* before 2.1 (``GroupMetadataManager.loadGroup`` and ``GroupMetadata.removeExpiredOffsets`` of
  2.0): every offset expires at its v1 ``expire_timestamp``, or at commit time + retention when
  it has none; expired once that time is *before* the evaluation time (``expireTimestamp <
  currentTimestamp``).
* from 2.1 (KIP-211; ``GroupMetadata.removeExpiredOffsets`` of 2.1 to 3.x,
  ``ClassicGroup.offsetExpirationCondition``, ``ConsumerGroup.offsetExpirationCondition`` and
  ``OffsetExpirationConditionImpl.isOffsetExpired`` in the new coordinator): an offset with a
  v1 ``expire_timestamp`` expires once the evaluation time reaches it; any other once the
  retention has passed since a base time (``now - base >= retention``), where the base is

  - a classic group with a protocol type, ``Empty``: the time it became empty
    (``current_state_timestamp``), or the commit time when the group record has none (v0/v1);
  - a group without protocol type (standalone, ``assign``): the commit time;
  - from 2.4 (KIP-496), a ``Stable`` classic ``consumer`` group whose subscriptions the
    coordinator could read: the commit time, for topics no member subscribes to only;
  - a KIP-848 consumer group: the commit time, for topics no member subscribes to;
  - a KIP-1071 streams group (``StreamsGroup.offsetExpirationCondition``,
    ``isSubscribedToTopic``): the commit time, for topics its topology does not read from
    (source and repartition source topics), every topic once the group is ``Empty``;
  - any other group (a ``Stable`` group of another protocol type, or whose subscriptions do not
    read): none of its offsets expire. A share group has no offsets here, and offsets the new
    coordinator holds without a group (``Dead``) are in no group's cleanup.

  The new coordinator also keeps an offset that has a pending transactional commit for the same
  partition (``hasPendingTransactionalOffsets``); the old one does not look at those.

``offsets.retention.minutes`` defaults to 10080 (7 days) from 2.0 (KIP-186), 1440 before.
"""

from __future__ import annotations

from dataclasses import replace

from kreplica.model.coordinator.replay import CLASSIC, CONSUMER, SHARE, STREAMS, GroupPartitionState, NEW_COORDINATOR
from kreplica.model.coordinator.groups import CommittedOffset, Group
from kreplica.model.versions import Feature, KafkaVersion

MINUTE_MS = 60_000
#: offsets.retention.minutes: 7 days from 2.0 (KIP-186), one day before
RETENTION_MINUTES = 10_080
RETENTION_MINUTES_BEFORE_2_0 = 1_440
CONSUMER_PROTOCOL_TYPE = "consumer"


def default_retention_minutes(version: KafkaVersion) -> int:
    """``offsets.retention.minutes`` when the broker's configuration does not set it."""
    return RETENTION_MINUTES if version.has(Feature.OFFSETS_RETENTION_SEVEN_DAYS) else RETENTION_MINUTES_BEFORE_2_0


def _base_times(group: Group, version: KafkaVersion):
    """``(base time of an offset, topics that never expire)`` for ``group``, or ``None`` when
    none of its offsets expire (module docstring)."""
    if group.protocol == SHARE or group.state == "Dead":
        return None     # a share group commits nothing here; offsets without a group are in no cleanup
    if group.protocol == CONSUMER:
        return (lambda o: o.commit_timestamp), frozenset(group.subscribed_topics or ())
    if group.protocol == STREAMS:
        # StreamsGroup.offsetExpirationCondition and isSubscribedToTopic: from the commit, and
        # never for a topic its topology reads while the group has members
        kept = () if group.state == "Empty" else group.subscribed_topics or ()
        return (lambda o: o.commit_timestamp), frozenset(kept)
    if group.protocol_type is None:
        return (lambda o: o.commit_timestamp), frozenset()
    if group.protocol == CLASSIC and group.state == "Empty":
        stamp = group.current_state_timestamp
        return (lambda o: stamp if stamp is not None else o.commit_timestamp), frozenset()
    if (version.has(Feature.OFFSET_EXPIRY_UNSUBSCRIBED) and group.protocol_type == CONSUMER_PROTOCOL_TYPE
            and group.subscribed_topics is not None and group.state == "Stable"):
        return (lambda o: o.commit_timestamp), frozenset(group.subscribed_topics)
    return None


def is_expired(offset: CommittedOffset, group: Group, now: int, retention_ms: int, version: KafkaVersion,
               coordinator: str, *, pending: frozenset | None = None) -> bool:
    """Whether the coordinator's cleanup at ``now`` removes ``offset`` of ``group`` (``pending``:
    the group's (topic, partition) with a pending transactional commit, when known)."""
    if not version.has(Feature.OFFSET_EXPIRY_AFTER_EMPTY):
        expire = offset.expire_timestamp if offset.expire_timestamp is not None \
            else offset.commit_timestamp + retention_ms
        return expire < now
    rule = _base_times(group, version)
    if rule is None:
        return False
    base, kept = rule
    if offset.topic in kept:
        return False
    if pending is None:
        pending = _pending_partitions(group)
    if coordinator == NEW_COORDINATOR and (offset.topic, offset.partition) in pending:
        return False
    if offset.expire_timestamp is not None:
        return now >= offset.expire_timestamp
    return now - base(offset) >= retention_ms


def _pending_partitions(group: Group) -> frozenset:
    return frozenset((p.topic, p.partition) for p in group.pending_offsets)


def apply_expiry(state: GroupPartitionState, now: int, retention_ms: int, version: KafkaVersion) -> GroupPartitionState:
    """``state`` with each committed offset's ``expired`` set as of ``now`` (a new value only for
    the offsets and groups it changes)."""
    groups = []
    for g in state.groups:
        pending = _pending_partitions(g)
        offsets = tuple(replace(o, expired=True)
                        if is_expired(o, g, now, retention_ms, version, state.coordinator, pending=pending) else o
                        for o in g.offsets)
        groups.append(g if all(a is b for a, b in zip(offsets, g.offsets)) else replace(g, offsets=offsets))
    return replace(state, groups=tuple(groups))
