"""Consumer groups as the group coordinator holds them: the values every group question shares.

The coordinator of a group is the leader of ``__consumer_offsets-N`` (N = ``abs(hash(group)) %
offsets.topic.num.partitions``); it rebuilds its groups by replaying that partition. These
dataclasses are what the replay gives: one :class:`CommittedOffset` per group and
topic-partition, one :class:`Group` per group. ``groups``, ``consumer_impact`` and the fleet's
``group_offsets`` table all read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A group's committed position in one topic-partition (an ``OffsetCommitValue``).

    ``leader_epoch`` is the epoch of the last consumed record the client sent (value v3+, KIP-320);
    ``None`` when the record has none (older value versions, or -1: an older client). The
    consumer resumes at ``offset``. ``record_offset`` is where the commit sits in
    ``__consumer_offsets-<coordinator_partition>`` of ``source`` (a replica's directory).
    ``expire_timestamp`` is the v1 value's explicit expiry (``None`` otherwise); ``expired``
    whether the coordinator's next offset cleanup at the evidence time removes it.
    """

    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None
    record_offset: int
    coordinator_partition: int
    source: str
    value_version: int
    transactional: bool = False
    expired: bool = False


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A member as the group record holds it; ``assignment`` is ((topic, (partition, ...)), ...)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int | None
    rebalance_timeout_ms: int | None
    subscribed_topics: tuple[str, ...]
    assignment: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class Group:
    """One group at the evidence point.

    ``protocol`` is ``classic`` (``GroupMetadataValue``), ``consumer`` (KIP-848 records),
    ``share`` (KIP-932) or ``None`` for a group known only by its offsets (a standalone consumer
    using ``assign``). ``generation`` is the classic generation or the new protocol's group
    epoch. ``state`` is what the coordinator sets when it loads the group (``Empty`` without
    members, ``Stable`` with them; ``Dead`` after a tombstone).
    """

    group: str
    coordinator_partition: int
    protocol: str | None
    protocol_type: str | None
    generation: int | None
    assignor: str | None
    leader: str | None
    state: str
    current_state_timestamp: int | None
    members: tuple[GroupMember, ...]
    offsets: tuple[CommittedOffset, ...]
    source: str
