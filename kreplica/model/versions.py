"""Kafka versions as a forensic parameter, and the one table of what changed when.

Behaviour that changed across releases is chosen by an explicit version, never a hidden global
(ARCHITECTURE.md, analysis layer). Every boundary kreplica reproduces is a row of
:class:`Feature` (kafka-algorithms spec §7, "Version flags a forensic tool must carry"); code asks
``version.has(Feature.X)`` instead of comparing version numbers itself, so a reader finds every
version switch here. Truncation protocol generations are the :class:`Protocol` enum, chosen by
:func:`protocol_for`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

#: The version kreplica emulates when none is given: current Kafka.
CURRENT = (4, 0)


@dataclass(frozen=True, slots=True, order=True)
class KafkaVersion:
    """``major.minor[.patch]`` of a broker; a pre-1.0 version keeps its leading ``0.`` as major 0,
    so its own patch number (the 3 of ``0.11.0.3``) is ``fix``."""

    major: int
    minor: int
    patch: int = 0
    fix: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}" + (f".{self.fix}" if self.fix else "")

    @property
    def release_line(self) -> tuple[int, ...]:
        """The versions that differ only in bug-fix releases: ``1.1`` for 1.1.x, ``0.11.0`` for 0.11.0.x."""
        return (self.major, self.minor, self.patch) if self.major == 0 else (self.major, self.minor)

    def has(self, feature: Feature) -> bool:
        """Whether a broker of this version behaves as ``feature`` describes: from its first
        version on, or from a bug-fix release its change was backported to, within that line."""
        since, until = feature.value[0], feature.value[1]
        if until is not None and self >= until:
            return False
        return self >= since or any(self.release_line == b.release_line and self >= b for b in feature.backports)


def _v(text: str) -> KafkaVersion:
    major, minor, *rest = (int(x) for x in text.split("."))
    return KafkaVersion(major, minor, *rest)


class Feature(Enum):
    """A behaviour that changed: (first version with it, first version without it or ``None``,
    what it is and where it comes from[, the bug-fix releases of older lines it was backported to])."""

    OFFSET_FOR_LEADER_EPOCH = (_v("0.11"), None, "KIP-101: batches carry leader epochs; followers truncate "
                                                 "through OffsetForLeaderEpoch")
    UNDEFINED_EPOCH_ANSWERS_UNDEFINED = (_v("2.0"), None, "KAFKA-6857: endOffsetFor(-1) answers -1 (before: "
                                                          "an empty cache matched -1 as its latest epoch and "
                                                          "answered the log end offset)",
                                         (_v("0.11.0.3"), _v("1.0.2"), _v("1.1.1")))
    KIP_279_EPOCH_COMPARISON = (_v("2.0"), None, "KIP-279: the leader answers (epoch, offset) and the follower "
                                                 "compares epochs, iterating")
    KIP_320_FENCING = (_v("2.1"), None, "KIP-320: OffsetForLeaderEpoch fences with FENCED/UNKNOWN_LEADER_EPOCH")
    EPOCH_CACHE_LAST_WRITE_WINS = (_v("2.1"), None, "the epoch cache's assign: a later entry replaces conflicting "
                                                    "ones (before: append-only, non-monotone assigns rejected)")
    END_OFFSET_ECHOES_EPOCH_BELOW_FIRST = (_v("2.1"), None, "endOffsetFor below the first entry echoes the "
                                                            "requested epoch (before: -1)")
    LEADER_REGISTERS_EPOCH_AT_LOG_END = (_v("2.1"), None, "KAFKA-7415: a new leader registers (epoch, LEO) "
                                                          "when elected")
    NO_REQUEST_FOR_EMPTY_CACHE = (_v("2.1"), None, "KAFKA-6859: a follower with an empty cache sends no "
                                                   "OffsetForLeaderEpoch and truncates to its high watermark")
    OUT_OF_RANGE_NEVER_FATAL = (_v("2.1"), None, "KAFKA-7414: a follower out of range above the leader "
                                                 "truncates instead of exiting")
    NO_EPOCH_CACHE_FOR_LEGACY_FORMAT = (_v("2.1.1"), None, "KAFKA-7897: a log with record format < v2 has no "
                                                           "epoch cache")
    RECOVERY_CHECKS_OFFSET_RANGE = (_v("2.0"), None, "KAFKA-6264: LogSegment.recover checks each batch's last "
                                                     "offset against the segment's base (ensureOffsetInRange); one "
                                                     "below it cannot be split away and fails the load")
    RECOVERY_SKIPS_EPOCH_ZERO = (_v("2.1.1"), _v("2.7"), "KAFKA-10432: recovery never re-adds epoch-0 entries")
    CONSUMER_POSITION_VALIDATION = (_v("2.3"), None, "KIP-320: a consumer validates a position that carries a "
                                                     "leader epoch with OffsetsForLeaderEpoch after a leader "
                                                     "change, against brokers that serve it v3 "
                                                     "(SubscriptionState.maybeValidatePositionForCurrentLeader, "
                                                     "OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion)")
    KIP_455_REASSIGNMENT = (_v("2.4"), None, "KIP-455: topic znode v2 with adding/removing replicas")
    REASSIGN_TOOL_ADMIN_API = (_v("2.6"), None, "kafka-reassign-partitions on the admin API (KIP-455): throttle "
                                                "lists from the move map, in-flight reassignments included")
    CONSUMER_UNDEFINED_END_OFFSET_RESETS = (_v("2.6"), None, "KAFKA-9840, KAFKA-10113: an undefined "
                                                             "OffsetsForLeaderEpoch answer resets the position by "
                                                             "auto.offset.reset, or raises LogTruncationException "
                                                             "under none (before: the position was set to -1)")
    DIVERGING_EPOCH_FETCH = (_v("2.8"), None, "follower truncation on fetch (DivergingEpoch), fetch offset = LEO")
    TOPIC_IDS = (_v("2.8"), None, "KIP-516: topic ids in partition.metadata and topic znode v3")
    ELIGIBLE_LEADER_REPLICAS = (_v("4.0"), None, "KIP-966: eligible leader replicas and last-known-leader "
                                                 "elections (MV >= 4.0-IV1)")
    # controller elections (kafka-algorithms spec §4.3-4.6, §7)
    UNCLEAN_ELECTION_CONFIGURABLE = (_v("0.8.2"), None, "KAFKA-1028: unclean leader election only when "
                                                        "unclean.leader.election.enable (before: always)")
    OFFLINE_LEADER_IN_ASSIGNMENT_ORDER = (_v("0.8.2"), None, "KAFKA-1503: the offline election takes the first "
                                                             "live ISR member in assignment order (before: ISR order)")
    CONTROLLED_SHUTDOWN_IN_ASSIGNMENT_ORDER = (_v("0.10.0"), None, "KAFKA-3670 (commit a1afbab3, in 0.10.0.0): the "
                                                                   "controlled-shutdown leader is the first "
                                                                   "live-or-shutting-down ISR member in assignment "
                                                                   "order (before: the ISR head)")
    UNCLEAN_ELECTION_DEFAULT_FALSE = (_v("0.11"), None, "KIP-106: unclean.leader.election.enable defaults to "
                                                        "false (true in 0.8.2-0.10.2)")
    ZK_CONTROLLER_ELECTION = (_v("1.1"), None, "the rewritten ZooKeeper controller (Election.scala, "
                                               "PartitionLeaderElectionAlgorithms): replaces the "
                                               "PartitionLeaderSelector classes; removing a replica always keeps "
                                               "the last ISR member")
    CONTROLLER_STARTUP_OFFLINE_REPLICAS = (_v("2.3"), None, "KAFKA-3143 (commit 423610f3d08, in 2.3.0): a "
                                                            "controller taking over sends the replicas on brokers "
                                                            "that are not alive to OfflineReplica "
                                                            "(ReplicaStateMachine.startup; before: only the live "
                                                            "replicas to OnlineReplica)")
    ADMIN_UNCLEAN_ELECTION = (_v("2.4"), None, "KIP-460: an admin ElectLeaders UNCLEAN election")
    LEADER_RECOVERY_STATE = (_v("3.2"), None, "KIP-704: an unclean election marks the leader RECOVERING "
                                              "(IBP/MV >= 3.2-IV0)")
    ZOOKEEPER_CONTROLLER = (_v("0.8"), _v("4.0"), "the ZooKeeper-mode controller (replication from 0.8; "
                                                  "ZooKeeper mode removed in 4.0, KIP-833)")
    KRAFT_CONTROLLER = (_v("3.0"), None, "the KRaft controller's PartitionChangeBuilder elections")
    KRAFT_ISR_SHRINK_BUMPS_EPOCH = (_v("3.0"), _v("3.6"), "KAFKA-15021: a KRaft ISR shrink with the leader "
                                                          "unchanged bumps the leader epoch (MV < 3.6-IV0)")
    # the group coordinator (GroupMetadataManager, OffsetMetadataManager)
    OFFSETS_RETENTION_SEVEN_DAYS = (_v("2.0"), None, "KIP-186: offsets.retention.minutes defaults to 10080, 7 days "
                                                     "(before: 1440)")
    OFFSET_EXPIRY_AFTER_EMPTY = (_v("2.1"), None, "KIP-211: a group's offsets expire once the group is Empty (the "
                                                  "retention counted from then) or when it has no protocol; before: "
                                                  "each offset at commit + retention, or its v1 expire_timestamp")
    OFFSET_EXPIRY_UNSUBSCRIBED = (_v("2.4"), None, "KIP-496: a Stable consumer group's offsets of topics no member "
                                                   "subscribes to expire at commit + retention")
    NEW_GROUP_COORDINATOR = (_v("4.0"), None, "KIP-848: the group coordinator of the group-coordinator module "
                                              "loads __consumer_offsets (the default from 4.0; opt-in in 3.7-3.9)")

    @property
    def since(self) -> KafkaVersion:
        return self.value[0]

    @property
    def backports(self) -> tuple[KafkaVersion, ...]:
        """The first bug-fix release of each older line that has the change (``()``: none)."""
        return self.value[3] if len(self.value) > 3 else ()

    @property
    def meaning(self) -> str:
        return self.value[2]


class Protocol(str, Enum):
    """Follower truncation protocol generations (kafka-algorithms spec §3)."""

    HW = "hw"                             # <= 0.10.2: truncate to the high watermark
    KIP101 = "kip101"                     # 0.11 - 1.1: one OffsetForLeaderEpoch round
    KIP279 = "kip279"                     # 2.0 - 2.7: epochs compared, iterated
    DIVERGING_EPOCH = "diverging-epoch"   # 2.8+: DivergingEpoch in Fetch responses

    def __str__(self) -> str:
        return self.value


#: The version each protocol is emulated at when chosen without a version.
PROTOCOL_VERSIONS = {Protocol.HW: _v("0.10.2"), Protocol.KIP101: _v("1.1"), Protocol.KIP279: _v("2.7"),
                     Protocol.DIVERGING_EPOCH: _v("4.0")}


def protocol_for(version: KafkaVersion) -> Protocol:
    """The truncation protocol a follower of ``version`` uses (IBP at its default for the version)."""
    if version.has(Feature.DIVERGING_EPOCH_FETCH):
        return Protocol.DIVERGING_EPOCH
    if version.has(Feature.KIP_279_EPOCH_COMPARISON):
        return Protocol.KIP279
    if version.has(Feature.OFFSET_FOR_LEADER_EPOCH):
        return Protocol.KIP101
    return Protocol.HW


def parse_kafka_version(text: str) -> KafkaVersion:
    """``3.9``, ``2.1.1``, ``0.11.0.3`` (the leading ``0.`` of pre-1.0 versions is kept as major 0,
    so the 3 of ``0.11.0.3`` is its ``fix``; a fourth number after a 1.0+ version is ignored)."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*", text)
    if not m:
        raise ValueError(f"not a Kafka version: {text!r} (expected MAJOR.MINOR[.PATCH], e.g. 3.9)")
    major = int(m.group(1))
    fix = int(m.group(4) or 0) if major == 0 else 0
    return KafkaVersion(major, int(m.group(2)), int(m.group(3) or 0), fix)


DEFAULT_VERSION = KafkaVersion(*CURRENT)

#: Release lines read for this table that add no row to it: 4.1 (September 2025) and 4.2 (February
#: 2026) change none of the replication, election or reassignment rules kreplica reproduces (their
#: ELR default is the ``eligible.leader.replicas.version`` feature level, which the metadata log
#: records and :mod:`kreplica.analysis.election.scenarios` reads), and real metadata logs of both
#: are in the oracle's wild corpus.
RELEASES_WITHOUT_ROWS = (KafkaVersion(4, 1), KafkaVersion(4, 2))

#: The newest release line the table knows: current Kafka, a later boundary of a row, or a release
#: read and found to add no row. Kafka past it may behave in ways no row records, so it is refused
#: rather than emulated as if it were this one (patch releases of this line are accepted).
NEWEST_KNOWN = max(DEFAULT_VERSION, *RELEASES_WITHOUT_ROWS, *(f.since for f in Feature),
                   *(f.value[1] for f in Feature if f.value[1]))


def is_known_release(version: KafkaVersion) -> bool:
    """Whether ``version`` is no newer than the release line :data:`NEWEST_KNOWN`."""
    return (version.major, version.minor) <= (NEWEST_KNOWN.major, NEWEST_KNOWN.minor)
