"""What every rule set of leader election shares: the controller's view of the cluster while it
elects, and the result of one election.

The rule sets themselves are one module each (kafka-algorithms spec §4):
:mod:`~kreplica.analysis.election.zk` (the ZooKeeper controller of 1.1 – 3.9, ``Election.scala``),
:mod:`~kreplica.analysis.election.legacy` (the 0.8 – 1.0 ``PartitionLeaderSelector`` classes) and
:mod:`~kreplica.analysis.election.kraft` (KRaft's ``PartitionChangeBuilder``). Each reads and
writes partitions through a :class:`ControllerView`, which holds what Kafka's controller holds in
memory: the partitions' leader/ISR records, the live brokers (``ControllerContext.liveBrokerIds``
or KRaft's unfenced registrations) and the brokers in controlled shutdown
(``shuttingDownBrokerIds``, KRaft's ``inControlledShutdown``).

Configuration follows Kafka's lookup order: the topic's config, then the controller broker's own
dynamic config, then the cluster-wide ``<default>`` broker config, then the default of the
emulated version (``unclean.leader.election.enable``: true in 0.8.2 – 0.10.2, false from 0.11,
KIP-106; ``min.insync.replicas``: 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kreplica.model.cluster import ClusterState, PartitionState
from kreplica.model.cluster.configs import UNCLEAN_ENABLE, effective_topic_config, min_insync_replicas
from kreplica.model.cluster.state import is_offline
from kreplica.model.versions import Feature, KafkaVersion

#: election kinds (the ``kind`` of an ``election`` object)
OFFLINE = "offline"
PREFERRED = "preferred"
CONTROLLED_SHUTDOWN = "controlled_shutdown"
REASSIGN = "reassign"
UNCLEAN_ELECTION = "unclean_election"
KINDS = (OFFLINE, PREFERRED, CONTROLLED_SHUTDOWN, REASSIGN, UNCLEAN_ELECTION)

#: ``--unclean-allowed``: the topic config (default), or forced either way
UNCLEAN_CONFIG, UNCLEAN_YES, UNCLEAN_NO = "config", "yes", "no"

Key = tuple[str, int]


def pname(key: Key) -> str:
    """``topic-p``, the name every output uses."""
    return f"{key[0]}-{key[1]}"


@dataclass(frozen=True, slots=True)
class Election:
    """One election a controller would run, and the partition's record before and after it.

    ``after`` is the record once the controller's handling of the event is complete (for a broker
    failure that includes the ISR removals that follow the election, §4.3 "Broker-failure
    order"). ``elected`` is false when the election found no leader (or, for a controlled
    shutdown or preferred election, when it failed and nothing was written). ``unclean`` means
    the new leader was not in the ISR (KRaft: the election result was flagged unclean).
    ``rule`` names the Kafka code that decided.
    """

    key: Key
    kind: str
    before: PartitionState
    after: PartitionState
    elected: bool
    unclean: bool
    reason: str
    rule: str
    offline: bool = False
    under_min_isr: bool = False

    @property
    def partition(self) -> str:
        return pname(self.key)


@dataclass(frozen=True, slots=True)
class IsrUpdate:
    """A write that changed a partition's ISR (and perhaps its epoch) without an election: a
    replica going offline (``ReplicaStateMachine`` OfflineReplica) or a KRaft ISR shrink."""

    key: Key
    before: PartitionState
    after: PartitionState
    reason: str


def lookup_config(state: ClusterState, topic_config, name: str) -> str | None:
    """``name`` as the controller of ``state`` resolves it for a topic (:mod:`~kreplica.model.cluster.configs`)."""
    return effective_topic_config(name, topic_config, state.broker_configs, state.controller.broker_id)


class ControllerView:
    """The controller's in-memory picture while it elects: mutable, one per plan.

    ``alive``: registered brokers that are not fenced; ``shutting_down``: brokers in controlled
    shutdown. :meth:`online` is Kafka's ``isReplicaOnline`` (live and not shutting down; a
    replica on an offline log directory cannot be seen offline, so it counts as online).
    """

    def __init__(self, state: ClusterState, kafka_version: KafkaVersion, unclean: str = UNCLEAN_CONFIG,
                 elr_enabled: bool = False) -> None:
        self.state = state
        self.version = kafka_version
        self.unclean_mode = unclean
        #: an admin ElectLeaders UNCLEAN request (KIP-460) is being handled, not an offline partition
        self.admin_unclean = False
        self.elr_enabled = elr_enabled
        self.topics = {t.name: t for t in state.topics}
        self.partitions: dict[Key, PartitionState] = {
            (t.name, p.partition): p for t in state.topics for p in sorted(t.partitions, key=lambda p: p.partition)}
        self.alive: set[int] = {b.id for b in state.brokers if b.alive}
        self.shutting_down: set[int] = {b.id for b in state.brokers if b.alive and b.in_controlled_shutdown}
        self.registered: set[int] = {b.id for b in state.brokers}
        self.isr_updates: list[IsrUpdate] = []
        self._unclean_cache: dict[str, bool] = {}
        self._min_isr_cache: dict[str, int] = {}

    # -- brokers ---------------------------------------------------------------------------
    def online(self, broker: int) -> bool:
        return broker in self.alive and broker not in self.shutting_down

    @property
    def online_brokers(self) -> frozenset[int]:
        """The brokers :meth:`online` accepts, as a set."""
        return frozenset(self.alive - self.shutting_down)

    def live_or_shutting_down(self, broker: int) -> bool:
        return broker in self.alive

    def known_brokers(self) -> set[int]:
        """Registered brokers and every broker a partition is assigned to."""
        known = set(self.registered)
        for p in self.partitions.values():
            known.update(p.replicas)
            known.update(p.isr)
        return known

    # -- configuration -----------------------------------------------------------------------
    def unclean_enabled(self, topic: str) -> bool:
        """``unclean.leader.election.enable`` for ``topic`` (or the ``--unclean-allowed`` override)."""
        if self.unclean_mode == UNCLEAN_YES:
            return True
        if self.unclean_mode == UNCLEAN_NO:
            return False
        cached = self._unclean_cache.get(topic)
        if cached is None:
            t = self.topics.get(topic)
            raw = lookup_config(self.state, t.config if t is not None else {}, UNCLEAN_ENABLE)
            if raw is None:
                cached = not self.version.has(Feature.UNCLEAN_ELECTION_DEFAULT_FALSE)
            else:
                cached = raw.strip().lower() == "true"   # Kafka's ConfigDef BOOLEAN parse
            self._unclean_cache[topic] = cached
        return cached

    def min_isr(self, topic: str) -> int:
        """``min.insync.replicas`` for ``topic`` (1 when unset or unparsable)."""
        cached = self._min_isr_cache.get(topic)
        if cached is None:
            t = self.topics.get(topic)
            cached = min_insync_replicas(t.config if t is not None else {}, self.state.broker_configs,
                                         self.state.controller.broker_id)
            self._min_isr_cache[topic] = cached
        return cached

    # -- partitions --------------------------------------------------------------------------
    def health(self, key: Key) -> tuple[bool, bool]:
        """(offline, under min ISR) of the partition now: no leader or a leader that is not
        online; fewer online ISR members than ``min.insync.replicas``."""
        p = self.partitions[key]
        offline = is_offline(p.leader, self.online_brokers)
        live_isr = sum(1 for r in p.isr if self.online(r))
        return offline, live_isr < self.min_isr(key[0])

    def offline_keys(self) -> list[Key]:
        """Partitions whose leader is -1 or not online, in topic and partition order."""
        online = self.online_brokers
        return [k for k, p in self.partitions.items() if is_offline(p.leader, online)]

    def write(self, key: Key, **changes) -> PartitionState:
        """Replace the partition's record (``dataclasses.replace``) and return the new one."""
        new = replace(self.partitions[key], **changes)
        self.partitions[key] = new
        return new

    def reassignment_target(self, key: Key) -> tuple[int, ...] | None:
        """The target replicas of a reassignment in progress: the topic znode's replicas minus
        ``removing_replicas`` (KIP-455, 2.4+; KRaft), else the legacy ``/admin/reassign_partitions``
        entry; ``None`` when the partition is not being reassigned."""
        p = self.partitions[key]
        if p.adding_replicas or p.removing_replicas:
            return tuple(r for r in p.replicas if r not in p.removing_replicas)
        for entry in self.state.pending.reassignments:
            if entry.get("topic") == key[0] and entry.get("partition") == key[1]:
                return tuple(entry.get("replicas") or ())
        return None


def bump(p: PartitionState, **changes) -> dict:
    """The fields of a ZooKeeper controller write: leader epoch + 1 and znode version + 1
    (``LeaderAndIsr.newLeaderAndIsr`` and the conditional ``setData``), plus ``changes``."""
    out = {"leader_epoch": p.leader_epoch + 1, "version": None if p.version is None else p.version + 1}
    out.update(changes)
    return out


def finish(view: ControllerView, key: Key, kind: str, before: PartitionState, *, elected: bool, unclean: bool,
           reason: str, rule: str) -> Election:
    """The :class:`Election` for ``key`` as the view now holds it, with its health."""
    offline, under = view.health(key)
    return Election(key, kind, before, view.partitions[key], elected, unclean, reason, rule, offline, under)

