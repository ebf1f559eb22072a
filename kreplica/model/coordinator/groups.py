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
    ``transactional`` marks a commit made in a transaction (``TxnOffsetCommit``) by
    ``producer_id``: among a group's ``offsets``, one whose COMMIT marker was replayed; among its
    ``pending_offsets``, one whose transaction has no marker yet. ``path`` and ``position`` are
    the segment file and byte position of the record's batch.
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
    producer_id: int | None = None
    path: str = ""
    position: int = 0


#: tasks of a streams group member: ((subtopology id, (partition, ...)), ...)
Tasks = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class StreamsTasks:
    """A KIP-1071 streams member's tasks by kind: a task is a subtopology and a partition of its
    source topics; standby tasks keep a state store's copy, warm-up tasks catch one up."""

    active: Tasks = ()
    standby: Tasks = ()
    warmup: Tasks = ()


@dataclass(frozen=True, slots=True)
class StreamsSubtopology:
    """One subtopology of a streams group's topology (``StreamsGroupTopologyValue.Subtopology``),
    with its internal topics by name."""

    subtopology_id: str
    source_topics: tuple[str, ...]
    source_topic_regex: tuple[str, ...]
    state_changelog_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    repartition_source_topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StreamsTopology:
    """The topology a streams group's members run (``StreamsGroupTopologyValue``); ``validated``:
    whether the coordinator validated this epoch of it (``StreamsGroupMetadataValue``'s
    ``ValidatedTopologyEpoch``), without which the group is ``NotReady``."""

    epoch: int
    subtopologies: tuple[StreamsSubtopology, ...]
    validated: bool


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A member as the group record holds it; ``assignment`` is ((topic, (partition, ...)), ...).

    ``member_epoch`` is a KIP-848 or KIP-1071 member's epoch (``None`` for a classic member); a
    consumer group's assignment names a topic by its id when no record of the group names it. A
    streams member has ``tasks`` instead of an assignment, its ``process_id`` (the application
    instance) and the ``topology_epoch`` it runs.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int | None
    rebalance_timeout_ms: int | None
    subscribed_topics: tuple[str, ...]
    assignment: tuple[tuple[str, tuple[int, ...]], ...]
    member_epoch: int | None = None
    tasks: StreamsTasks | None = None
    process_id: str | None = None
    topology_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class Group:
    """One group at the evidence point.

    ``protocol`` is ``classic`` (``GroupMetadataValue``), ``consumer`` (KIP-848 records),
    ``share`` (KIP-932), ``streams`` (KIP-1071) or ``None`` for a group known only by its offsets
    (a standalone consumer using ``assign``). ``generation`` is the classic generation or the new
    protocols' group epoch, ``assignment_epoch`` their target assignment's epoch. ``state`` is
    what the coordinator sets when it loads the group (``Empty`` without members, ``Stable`` with
    them; a consumer or streams group's ``Assigning`` or ``Reconciling`` while its epochs differ,
    a streams group's ``NotReady`` without a validated topology; ``Dead`` for offsets the new
    coordinator holds after their group's tombstone). ``topology``: a streams group's.
    ``pending_offsets`` are transactional commits whose transaction has no marker yet;
    ``subscribed_topics`` what the coordinator knows the members subscribe to (``None``: it
    does not know, as for a classic group whose subscriptions do not parse).
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
    pending_offsets: tuple[CommittedOffset, ...] = ()
    subscribed_topics: tuple[str, ...] | None = None
    assignment_epoch: int | None = None
    topology: StreamsTopology | None = None
