"""The cluster state a controller believed in, whichever control plane it came from.

One model for ZooKeeper and KRaft (the frozen value of the one cluster image,
:mod:`~kreplica.model.cluster.image`, at a point): brokers, topics with their partitions' leader and
ISR state, the controller, broker configs and pending admin work, plus the health lists.

Health lists (partitions named ``topic-p``) follow the oracle's definitions: ``no_leader``
(leader -1), ``leader_not_alive`` (a leader that is not a live broker), ``offline`` (either),
``under_replicated`` (ISR shorter than the replication factor, which leaves out the replicas a
reassignment is adding: Kafka's ``Partition.isUnderReplicated`` and ``TopicCommand``'s
``--under-replicated-partitions``), ``live_isr_empty``, ``under_min_isr``
(live ISR members fewer than the topic's effective ``min.insync.replicas``,
:mod:`~kreplica.model.cluster.configs`), ``reassigning`` (adding or removing replicas, Kafka's
``isBeingReassigned``), ``preferred_leader_not_leader`` (the first replica does not lead).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

from kreplica.formats.findings import Finding
from kreplica.model.cluster.configs import DEFAULT_BROKER_ENTITY, MIN_INSYNC_REPLICAS, min_insync_replicas

#: ``LeaderConstants.NO_LEADER``: the partition has no leader.
NO_LEADER = -1
#: ``LeaderRecoveryState`` (KIP-704): the leader's log is whole (``RECOVERED``), or the leader was
#: elected uncleanly and has not yet told the controller it recovered (``RECOVERING``).
RECOVERED = 0
RECOVERING = 1
#: ``DirectoryId``'s reserved ids (Kafka's text form): a replica whose directory is not known yet
#: because it predates directory assignment, one not assigned yet, and one whose directory is lost.
DIRECTORY_MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
DIRECTORY_UNASSIGNED = "AAAAAAAAAAAAAAAAAAAAAQ"
DIRECTORY_LOST = "AAAAAAAAAAAAAAAAAAAAAg"


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker. ``broker_epoch`` is the czxid of its ZooKeeper registration or the
    KRaft BrokerEpoch; ``session`` (ZooKeeper) is the owning session; ``fenced`` (KRaft)."""

    id: int
    alive: bool
    rack: str | None
    endpoints: tuple[str, ...]
    broker_epoch: int
    session: int | None = None
    fenced: bool | None = None
    in_controlled_shutdown: bool = False
    #: KRaft: the broker's log directories (``RegisterBrokerRecord`` v3+ ``log_dirs``, KIP-858) and
    #: those cordoned (v4+, KIP-1066); empty in ZooKeeper mode and before those versions
    log_dirs: tuple[str, ...] = ()
    cordoned_log_dirs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition: assignment and the leader/ISR state. ``version`` is the state znode's
    dataVersion (ZooKeeper) or the partition epoch (KRaft); ``controller_epoch`` is ``None``
    in KRaft (not recorded) or when no state exists yet. ``elr`` and ``last_known_elr`` are
    KRaft's eligible leader replicas and last known ELR (KIP-966; empty in ZooKeeper and before
    PartitionRecord v2). ``directories`` (KRaft, KIP-858) is each replica's log directory id, in
    the order of ``replicas``; Kafka's reserved ids stand for no directory yet:
    :data:`DIRECTORY_MIGRATING` (every partition written before PartitionRecord v1),
    :data:`DIRECTORY_UNASSIGNED`, :data:`DIRECTORY_LOST`. Empty in ZooKeeper mode."""

    partition: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int | None
    leader_recovery_state: int
    version: int | None
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    directories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    topic_id: str | None
    config: Mapping[str, str]
    partitions: tuple[PartitionState, ...]


@dataclass(frozen=True, slots=True)
class Controller:
    broker_id: int | None
    epoch: int | None


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """A KRaft controller registered in the metadata (``RegisterControllerRecord``, Kafka's
    ``ControllerRegistration``): listeners sorted by name, as ``name://host:port``; ``features``
    by name, ``(min_supported_version, max_supported_version)``."""

    id: int
    incarnation_id: str
    zk_migration_ready: bool
    endpoints: tuple[str, ...]
    features: Mapping[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Acl:
    """An ACL binding (``AccessControlEntryRecord``, Kafka's ``StandardAcl``) by its id; the codes
    are Kafka's enums' (``ResourceType``, ``PatternType``, ``AclOperation``, ``AclPermissionType``),
    which the output names."""

    id: str
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class ClientQuota:
    """The quotas of one client-quota entity (``ClientQuotaRecord``, Kafka's ``ClientQuotaImage``):
    ``entity`` is ``(entity_type, entity_name)`` pairs sorted by type (``entity_name`` ``None``:
    the type's default entity), ``quotas`` key -> value."""

    entity: tuple[tuple[str, str | None], ...]
    quotas: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """One SCRAM mechanism of a user (``ScramMechanism`` code: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512)
    and its iterations. The salt and keys stay out: credentials never reach the output."""

    mechanism: int
    iterations: int


@dataclass(frozen=True, slots=True)
class ScramUser:
    name: str
    credentials: tuple[ScramCredential, ...]


@dataclass(frozen=True, slots=True)
class DelegationToken:
    """A delegation token (``DelegationTokenRecord``, Kafka's ``DelegationTokenData``) by id; the
    token's HMAC is not in the record. Timestamps are epoch ms."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    expiration_timestamp: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class ProducerIds:
    """The producer id blocks handed out (``ProducerIdsRecord``): the next producer id a new block
    starts at, all Kafka's ``ProducerIdsImage`` keeps. (The record's broker is not kept: a snapshot
    writes it as -1, so it would differ between a replay of the log and one from a snapshot.)"""

    next_producer_id: int


@dataclass(frozen=True, slots=True)
class Pending:
    """Admin work requested and not yet done (ZooKeeper's ``/admin`` and notification znodes)."""

    reassignments: tuple[Mapping, ...] = ()            # {"topic","partition","replicas"}
    preferred_elections: tuple[Mapping, ...] = ()      # {"topic","partition"}
    topic_deletions: tuple[str, ...] = ()
    isr_change_notifications: tuple[Mapping, ...] = ()     # {"name","partitions":[...]}
    log_dir_event_notifications: tuple[Mapping, ...] = ()  # {"name","broker","event"}


@dataclass(frozen=True, slots=True)
class Health:
    no_leader: tuple[str, ...] = ()
    leader_not_alive: tuple[str, ...] = ()
    offline: tuple[str, ...] = ()
    under_replicated: tuple[str, ...] = ()
    live_isr_empty: tuple[str, ...] = ()
    under_min_isr: tuple[str, ...] = ()
    reassigning: tuple[str, ...] = ()
    preferred_leader_not_leader: tuple[str, ...] = ()


HEALTH_LISTS = tuple(Health.__dataclass_fields__)


@dataclass(frozen=True)
class ClusterState:
    """What the control plane held at ``position`` (``{"zxid": n}`` or ``{"offset": n}``).
    ``features`` are KRaft's finalized feature levels (``metadata.version``,
    ``eligible.leader.replicas.version``, ...; empty for ZooKeeper). The rest of KRaft's metadata
    image, as ``kafka-metadata-shell`` shows it (empty or ``None`` for ZooKeeper): ``controllers``
    registered by id, ``acls`` by id, ``client_quotas`` by entity, ``scram_users`` by name,
    ``delegation_tokens`` by id, ``producer_ids``."""

    source_kind: str        # "zookeeper" | "kraft"
    source: str
    position: Mapping[str, int]
    cluster_id: str | None
    controller: Controller
    brokers: tuple[Broker, ...]
    topics: tuple[Topic, ...]
    broker_configs: Mapping[str, Mapping[str, str]]
    pending: Pending
    health: Health
    findings: tuple[Finding, ...] = field(default=())
    features: Mapping[str, int] = field(default_factory=dict)
    controllers: tuple[ControllerRegistration, ...] = ()
    acls: tuple[Acl, ...] = ()
    client_quotas: tuple[ClientQuota, ...] = ()
    scram_users: tuple[ScramUser, ...] = ()
    delegation_tokens: tuple[DelegationToken, ...] = ()
    producer_ids: ProducerIds | None = None

    def broker(self, broker_id: int) -> Broker | None:
        return next((b for b in self.brokers if b.id == broker_id), None)

    def topic(self, name: str) -> Topic | None:
        return next((t for t in self.topics if t.name == name), None)

    @property
    def has_problems(self) -> bool:
        """The exit-code rule of ``cluster-state``: any partition offline or under min ISR."""
        return bool(self.health.offline or self.health.under_min_isr)


def _pname(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def is_offline(leader: int, online: Container[int]) -> bool:
    """A partition is offline when it has no leader or its leader is not among ``online``
    (Kafka's ``OfflinePartition``: ``!hasLeader || !isReplicaOnline(leader)``; which brokers are
    online is the caller's: the registered live brokers of a cluster state, or those that stay up
    through a planned election)."""
    return leader == NO_LEADER or leader not in online


def replication_factor(partition: PartitionState) -> int:
    """The replicas the partition is meant to have: during a reassignment the full set less the
    ones being added, which are still catching up (``OngoingReassignmentState.replicationFactor``
    is ``replicas.diff(addingReplicas).size``)."""
    return len(partition.replicas) - len(set(partition.adding_replicas) & set(partition.replicas))


def compute_health(brokers: Iterable[Broker], topics: Iterable[Topic],
                   broker_configs: Mapping[str, Mapping[str, str]], controller: int | None = None) -> Health:
    """The health lists for these brokers and topics (see the module docstring); ``controller``
    is the active controller's id, whose node config a topic's ``min.insync.replicas`` falls back to."""
    alive = {b.id for b in brokers if b.alive}
    lists: dict[str, list[tuple[str, int]]] = {k: [] for k in HEALTH_LISTS}
    for t in topics:
        min_isr = min_insync_replicas(t.config, broker_configs, controller)
        for p in t.partitions:
            key = (t.name, p.partition)
            live_isr = [r for r in p.isr if r in alive]
            if p.leader == NO_LEADER:
                lists["no_leader"].append(key)
            elif p.leader not in alive:
                lists["leader_not_alive"].append(key)
            if is_offline(p.leader, alive):
                lists["offline"].append(key)
            if len(p.isr) < replication_factor(p):
                lists["under_replicated"].append(key)
            if not live_isr:
                lists["live_isr_empty"].append(key)
            if len(live_isr) < min_isr:
                lists["under_min_isr"].append(key)
            if p.adding_replicas or p.removing_replicas:
                lists["reassigning"].append(key)
            if p.replicas and p.leader != p.replicas[0]:
                lists["preferred_leader_not_leader"].append(key)
    return Health(**{k: tuple(_pname(*x) for x in sorted(v)) for k, v in lists.items()})
