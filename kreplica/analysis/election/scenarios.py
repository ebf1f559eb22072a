"""``plan-elect``: a what-if scenario applied to a cluster state under the rules of a Kafka version.

The rule set is chosen by the control plane and :class:`~kreplica.model.versions.Feature`
(:func:`rules_for`): KRaft metadata → :class:`~kreplica.analysis.election.kraft.KraftRules`;
ZooKeeper → :class:`~kreplica.analysis.election.zk.ZkRules` from 1.1 (the last ZooKeeper
controller, 3.9, when no version is given: ZooKeeper mode is gone in 4.0), the 0.8 – 1.0
selectors (:class:`~kreplica.analysis.election.legacy.LegacyRules`) before.

Scenario parts are applied in a fixed order, each on the state the previous one left, as the
controller would process the events one after another: ``--fail`` (one broker-failure event for
all the named brokers), ``--controlled-shutdown`` (one request per broker, in the order
given), ``--reassign-complete``, ``--preferred``. With no scenario the controller's own pass
runs: an election for every partition that is offline in the source state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kreplica.analysis.election.common import (
    UNCLEAN_CONFIG,
    ControllerView,
    Election,
    IsrUpdate,
    Key,
    pname,
)
from kreplica.analysis.election.kraft import ELR_FEATURE, KraftRules
from kreplica.analysis.election.legacy import LegacyRules
from kreplica.analysis.election.zk import ZkRules
from kreplica.model.cluster import ClusterState
from kreplica.model.versions import DEFAULT_VERSION, Feature, KafkaVersion, parse_kafka_version

#: the version a ZooKeeper source is emulated at when none is given (the last ZooKeeper controller)
LAST_ZOOKEEPER_VERSION = parse_kafka_version("3.9")


class ScenarioError(ValueError):
    """The scenario does not fit the cluster state: a broker no partition or registration
    knows, a partition that does not exist, a controlled shutdown of a broker that is not alive,
    or a Kafka version that never ran this control plane. Check the ids against
    ``kreplica cluster-state SOURCE``."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """What to simulate. ``preferred`` and ``unclean_election`` (an admin ElectLeaders of that
    type): ``None`` (not asked), ``()`` (every partition), or the partitions named; ``unclean``:
    ``config``, ``yes`` or ``no``."""

    fail: tuple[int, ...] = ()
    shutdown: tuple[int, ...] = ()
    preferred: tuple[Key, ...] | None = None
    reassign_complete: bool = False
    unclean: str = UNCLEAN_CONFIG
    unclean_election: tuple[Key, ...] | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.fail or self.shutdown or self.preferred is not None or self.reassign_complete
                    or self.unclean_election is not None)


@dataclass(frozen=True)
class ElectionPlan:
    """The elections a scenario causes, in the order the controller runs them, the ISR writes
    that are not elections, and the partitions offline or under min ISR afterwards."""

    rules: str
    kafka_version: KafkaVersion
    scenario: Scenario
    elr_enabled: bool
    elections: tuple[Election, ...]
    isr_updates: tuple[IsrUpdate, ...]
    offline_after: tuple[str, ...]
    under_min_isr_after: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    #: the brokers a replica must be on to lead afterwards (online), for the data-loss ranking
    online_after: frozenset[int] = frozenset()

    @property
    def has_problems(self) -> bool:
        """Exit status 1: an election leaves its partition offline or elects uncleanly."""
        return any(e.offline or e.unclean for e in self.elections)


def rules_for(state: ClusterState, kafka_version: KafkaVersion | None) -> tuple[type, KafkaVersion]:
    """(the rule-set class, the version emulated) for this control plane and ``--kafka-version``."""
    if state.source_kind == "kraft":
        version = kafka_version or DEFAULT_VERSION
        if not version.has(Feature.KRAFT_CONTROLLER):
            raise ScenarioError(f"KRaft metadata cannot come from Kafka {version}: the KRaft controller "
                                "starts in 3.0 (give --kafka-version 3.0 or later)")
        return KraftRules, version
    version = kafka_version or LAST_ZOOKEEPER_VERSION
    if not version.has(Feature.ZOOKEEPER_CONTROLLER):
        raise ScenarioError(f"Kafka {version} has no ZooKeeper controller (replication starts in 0.8; ZooKeeper "
                            "mode was removed in 4.0): give --kafka-version 0.8 to 3.9 for a ZooKeeper SOURCE")
    return (ZkRules if version.has(Feature.ZK_CONTROLLER_ELECTION) else LegacyRules), version


def parse_partition_names(state: ClusterState, names: Sequence[str]) -> tuple[Key, ...]:
    """``topic-p`` names (or a bare topic: all its partitions) to keys; an unknown one is a
    :class:`ScenarioError`."""
    parts = {(t.name, p.partition) for t in state.topics for p in t.partitions}
    topics = {t.name: sorted(p.partition for p in t.partitions) for t in state.topics}
    out: list[Key] = []
    for raw in names:
        for name in (x.strip() for x in raw.split(",")):
            if not name:
                continue
            if name in topics:
                out += [(name, p) for p in topics[name]]
                continue
            topic, sep, num = name.rpartition("-")
            if sep and num.isdigit() and (topic, int(num)) in parts:
                out.append((topic, int(num)))
                continue
            raise ScenarioError(f"no partition {name!r} in the cluster state (names are topic-p, e.g. orders-0, "
                                "or a topic name)")
    return tuple(dict.fromkeys(out))


def elr_enabled(state: ClusterState, version: KafkaVersion) -> bool:
    """KIP-966 is active when the emulated version has it and the metadata finalized
    ``eligible.leader.replicas.version`` at 1 or more (``FeatureControlManager.isElrFeatureEnabled``)."""
    return (state.source_kind == "kraft" and version.has(Feature.ELIGIBLE_LEADER_REPLICAS)
            and state.features.get(ELR_FEATURE, 0) >= 1)


def plan_elections(state: ClusterState, scenario: Scenario, kafka_version: KafkaVersion | None = None) -> ElectionPlan:
    """Apply ``scenario`` to ``state`` (module docstring) and return the plan.

    Raises :class:`ScenarioError` for a broker id that neither a registration nor an
    assignment knows, and for ``--controlled-shutdown`` of a broker that is not alive (Kafka answers
    BROKER_NOT_AVAILABLE).
    """
    cls, version = rules_for(state, kafka_version)
    view = ControllerView(state, version, scenario.unclean, elr_enabled(state, version))
    known = view.known_brokers()
    for b in (*scenario.fail, *scenario.shutdown):
        if b not in known:
            raise ScenarioError(f"broker {b} is not registered and holds no replica "
                                f"(brokers known: {sorted(known)})")
    rules = cls(view)
    elections: list[Election] = []
    notes = []
    if scenario.is_empty:
        elections += rules.on_current_state()
    if scenario.fail:
        already = [b for b in scenario.fail if b not in view.alive]
        if already:
            notes.append(f"brokers {sorted(already)} were not alive already; their failure is handled again "
                         "(their replicas go offline)")
        elections += rules.on_broker_failure(scenario.fail)
    for b in dict.fromkeys(scenario.shutdown):
        if b not in view.alive:
            raise ScenarioError(f"broker {b} is not alive: a controlled shutdown needs a live broker "
                                "(use --fail for a broker that is gone)")
        elections += rules.on_controlled_shutdown(b)
    if scenario.reassign_complete:
        reassigning = [k for k in view.partitions if view.reassignment_target(k) is not None]
        if not reassigning:
            notes.append("no partition is being reassigned")
        elections += rules.on_reassignment_complete(reassigning)
    if scenario.preferred is not None:
        keys = scenario.preferred or tuple(k for k, p in view.partitions.items()
                                           if p.replicas and p.leader != p.replicas[0])
        elections += rules.on_preferred(keys)
    if scenario.unclean_election is not None:
        if not version.has(Feature.ADMIN_UNCLEAN_ELECTION):
            raise ScenarioError(f"an admin UNCLEAN election (ElectLeaders, KIP-460) needs Kafka 2.4 or later; "
                                f"{version} has none (set unclean.leader.election.enable instead)")
        elections += rules.on_unclean_election(scenario.unclean_election or tuple(view.offline_keys()))
    offline, under = [], []
    for key in view.partitions:
        off, low = view.health(key)
        if off:
            offline.append(pname(key))
        if low:
            under.append(pname(key))
    online = frozenset(b for b in view.alive if view.online(b))
    return ElectionPlan(rules.name, version, scenario, view.elr_enabled, tuple(elections), tuple(view.isr_updates),
                        tuple(offline), tuple(under), tuple(notes), online)
