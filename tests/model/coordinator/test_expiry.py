"""Offset expiry as the group coordinator's cleanup applies it, by version: each rule beside its
counter-case at the boundary.

Sources: 2.0 ``GroupMetadataManager.loadGroup`` (commit + retention when no expire timestamp) and
``GroupMetadata.removeExpiredOffsets`` (``expireTimestamp < startMs``); 2.1 and 2.4
``GroupMetadata.removeExpiredOffsets`` (KIP-211, KIP-496); 4.0 ``ClassicGroup``/``ConsumerGroup``
(and 4.4 ``StreamsGroup``) ``.offsetExpirationCondition``, ``OffsetExpirationConditionImpl.isOffsetExpired`` and
``OffsetMetadataManager.cleanupExpiredOffsets`` (``hasPendingTransactionalOffsets``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kreplica.model.coordinator.expiry import default_retention_minutes, is_expired
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from kreplica.model.coordinator.groups import CommittedOffset, Group, GroupMember
from kreplica.model.versions import KafkaVersion

T = 1_700_000_000_000         # the commit time
R = 7 * 24 * 3600 * 1000      # the retention
S = T - 5 * 3600 * 1000       # when the group became empty
V20, V21, V23, V24, V40 = (KafkaVersion(2, 0), KafkaVersion(2, 1), KafkaVersion(2, 3), KafkaVersion(2, 4),
                           KafkaVersion(4, 0))


def offset(topic: str = "t", expire: int | None = None) -> CommittedOffset:
    return CommittedOffset("g", topic, 0, 10, None, "", T, expire, 0, 0, "src", 1 if expire else 3)


def group(protocol: str | None = "classic", protocol_type: str | None = "consumer", state: str = "Empty",
          stamp: int | None = S, subscribed: tuple | None = ("t",), pending: tuple = ()) -> Group:
    members = (GroupMember("m", None, "c", "h", 1, 1, ("t",), ()),) if state != "Empty" else ()
    return Group("g", 0, protocol, protocol_type, 1, None, None, state, stamp, members, (), "src",
                 pending_offsets=pending, subscribed_topics=subscribed)


STABLE = dict(state="Stable", stamp=None)


@pytest.mark.parametrize(("version", "g", "o", "now", "coordinator", "expected"), [
    # before 2.1: every offset at commit + retention, strictly before now
    pytest.param(V20, group(**STABLE), offset(), T + R, OLD_COORDINATOR, False, id="2.0-at-commit+retention"),
    pytest.param(V20, group(**STABLE), offset(), T + R + 1, OLD_COORDINATOR, True, id="2.0-after"),
    pytest.param(V20, group(**STABLE), offset(expire=T + 10), T + 10, OLD_COORDINATOR, False, id="2.0-v1-at-expiry"),
    pytest.param(V20, group(**STABLE), offset(expire=T + 10), T + 11, OLD_COORDINATOR, True, id="2.0-v1-after"),
    # 2.1: an Empty group's offsets from when it became empty
    pytest.param(V21, group(), offset(), S + R - 1, OLD_COORDINATOR, False, id="2.1-empty-before"),
    pytest.param(V21, group(), offset(), S + R, OLD_COORDINATOR, True, id="2.1-empty-since-state-time"),
    pytest.param(V21, group(stamp=None), offset(), S + R, OLD_COORDINATOR, False, id="2.1-empty-no-stamp-commit-time"),
    pytest.param(V21, group(stamp=None), offset(), T + R, OLD_COORDINATOR, True, id="2.1-empty-no-stamp-expired"),
    pytest.param(V21, group(protocol=None, protocol_type=None, stamp=None), offset(), T + R, OLD_COORDINATOR, True,
                 id="2.1-standalone"),
    pytest.param(V21, group(protocol=None, protocol_type=None, stamp=None), offset(), T + R - 1, OLD_COORDINATOR,
                 False, id="2.1-standalone-before"),
    # a v1 expire timestamp: reached counts (>=), unlike before 2.1
    pytest.param(V21, group(), offset(expire=T + 10), T + 10, OLD_COORDINATOR, True, id="2.1-v1-at-expiry"),
    pytest.param(V21, group(), offset(expire=T + 10), T + 9, OLD_COORDINATOR, False, id="2.1-v1-before"),
    # Stable groups: never before 2.4; from 2.4 (KIP-496) a consumer group's unsubscribed topics
    pytest.param(V23, group(**STABLE, subscribed=("u",)), offset(), T + R, OLD_COORDINATOR, False,
                 id="2.3-stable-never"),
    pytest.param(V24, group(**STABLE, subscribed=("u",)), offset(), T + R, OLD_COORDINATOR, True,
                 id="2.4-stable-unsubscribed"),
    pytest.param(V24, group(**STABLE, subscribed=("t",)), offset(), T + R, OLD_COORDINATOR, False,
                 id="2.4-stable-subscribed"),
    pytest.param(V24, group(**STABLE, subscribed=None), offset(), T + R, OLD_COORDINATOR, False,
                 id="2.4-stable-subscriptions-unread"),
    pytest.param(V24, group(**STABLE, protocol_type="connect", subscribed=None), offset(), T + R, OLD_COORDINATOR,
                 False, id="2.4-stable-other-protocol"),
    pytest.param(V24, group(**STABLE, subscribed=("u",)), offset(expire=T + 10), T + 10, OLD_COORDINATOR, True,
                 id="2.4-stable-unsubscribed-v1"),
    # KIP-848 consumer groups: commit time, subscribed topics kept
    pytest.param(V40, group(protocol="consumer", **STABLE, subscribed=("u",)), offset(), T + R, NEW_COORDINATOR, True,
                 id="consumer-unsubscribed"),
    pytest.param(V40, group(protocol="consumer", **STABLE, subscribed=("t",)), offset(), T + R, NEW_COORDINATOR,
                 False, id="consumer-subscribed"),
    pytest.param(V40, group(protocol="share", **STABLE), offset(), T + R, NEW_COORDINATOR, False, id="share-never"),
    # KIP-1071 streams groups (StreamsGroup.offsetExpirationCondition, isSubscribedToTopic): commit
    # time; a topic its topology reads is kept while the group has members, not once it is Empty
    pytest.param(V40, group(protocol="streams", protocol_type="streams", **STABLE, subscribed=("t",)), offset(),
                 T + R, NEW_COORDINATOR, False, id="streams-source-topic-kept"),
    pytest.param(V40, group(protocol="streams", protocol_type="streams", **STABLE, subscribed=("u",)), offset(),
                 T + R, NEW_COORDINATOR, True, id="streams-other-topic"),
    pytest.param(V40, group(protocol="streams", protocol_type="streams", **STABLE, subscribed=("u",)), offset(),
                 T + R - 1, NEW_COORDINATOR, False, id="streams-other-topic-before"),
    pytest.param(V40, group(protocol="streams", protocol_type="streams", stamp=None, subscribed=("t",)), offset(),
                 T + R, NEW_COORDINATOR, True, id="streams-empty-source-topic-expires"),
    pytest.param(V40, group(protocol=None, protocol_type=None, state="Dead", stamp=None), offset(), T + R,
                 NEW_COORDINATOR, False, id="no-group-never"),
    # a pending transactional commit of the partition keeps it in the new coordinator only
    pytest.param(V40, group(pending=(replace(offset(), producer_id=7),)), offset(), S + R, NEW_COORDINATOR, False,
                 id="new-pending-kept"),
    pytest.param(V40, group(pending=(replace(offset(topic="u"), producer_id=7),)), offset(), S + R, NEW_COORDINATOR,
                 True, id="new-pending-other-partition"),
    pytest.param(V24, group(pending=(replace(offset(), producer_id=7),)), offset(), S + R, OLD_COORDINATOR, True,
                 id="old-pending-ignored"),
])
def test_expiry(version, g, o, now, coordinator, expected) -> None:
    assert is_expired(o, g, now, R, version, coordinator) is expected


@pytest.mark.parametrize(("version", "minutes"), [
    pytest.param(KafkaVersion(1, 1), 1440, id="1.1-one-day"),
    pytest.param(KafkaVersion(2, 0), 10080, id="2.0-seven-days"),
])
def test_default_retention(version, minutes) -> None:
    assert default_retention_minutes(version) == minutes


@pytest.mark.parametrize(("coordinator", "expired"), [
    # OffsetMetadataManager.cleanupExpiredOffsets: hasPendingTransactionalOffsets keeps t-0
    pytest.param(NEW_COORDINATOR, {("t", 0): False, ("t", 1): True}, id="new-pending-keeps"),
    # GroupMetadata.removeExpiredOffsets (2.4): pending transactional commits do not count
    pytest.param(OLD_COORDINATOR, {("t", 0): True, ("t", 1): True}, id="old-pending-ignored"),
])
def test_apply_expiry_on_a_loaded_partition(tmp_path, coordinator, expired) -> None:
    from kreplica.model.coordinator.expiry import apply_expiry
    from tests.builders.groups import TS, commit, load

    entries = [[commit("g", "t", 0, 1), commit("g", "t", 1, 1)], {"records": [commit("g", "t", 0, 2)],
                                                                   "producer_id": 7000}]
    state = load(tmp_path, entries, coordinator)
    version = V40 if coordinator == NEW_COORDINATOR else V24
    (g,) = apply_expiry(state, TS + R + 1, R, version).groups
    assert {(o.topic, o.partition): o.expired for o in g.offsets} == expired
    assert [(o.topic, o.partition, o.expired) for o in g.pending_offsets] == [("t", 0, False)]
