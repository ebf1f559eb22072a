"""What happened, in order: leader, leader-epoch and ISR changes, broker and controller changes,
each with the cause the evidence shows.

Sources: ``../shared/specs/kafka-algorithms.md`` §4 (who writes which change: the ZooKeeper
controller's elections and replica-offline ISR removals bump the leader epoch, a leader's own ISR
change through AlterIsr/AlterPartition or a direct ZooKeeper write does not; KRaft's
``PartitionChangeBuilder``), §5.5 (reassignment) and §6 (preferred elections). The events are
built from ZooKeeper's transactions by :mod:`~kreplica.analysis.timeline.zookeeper` and from the
KRaft metadata log by :mod:`~kreplica.analysis.timeline.kraft`; both call :func:`classify`, so
one set of rules names the cause whatever the control plane.

The rules only name a cause the evidence supports; anything else is ``unknown``, with the facts
in ``evidence``:

* ``created`` / ``deleted``: the partition state appeared / went (a state znode created or
  deleted; a ``PartitionRecord`` / ``RemoveTopicRecord``);
* ``snapshot``: the state a history starts from, as the snapshot (or the ``--from`` point) holds it;
* ``unclean_leader_election``: a new leader that was not in the ISR before it (or one put into
  the RECOVERING state, which Kafka only does for an unclean election), unless (KRaft) the same
  record put it in the ISR beside the members it kept: an AlterPartition that completes a
  reassignment elects its caught-up first replica cleanly. An empty ISR counts in
  ZooKeeper mode, where only a 0.8 – 1.0 controller empties one (``removeReplicaFromIsr`` with
  unclean election allowed) and any controller then elects from outside it uncleanly; not in
  KRaft, where a leader taken from the eligible leader replicas of an empty ISR is clean;
* ``reassignment``: the partition is being reassigned (adding/removing replicas, the legacy
  ``/admin/reassign_partitions`` znode, or a change record that moves replicas) and the change is
  one a reassignment makes: leadership moved off a replica being removed, a removed replica
  leaving the ISR, or an epoch bump with nothing else changed;
* ``controlled_shutdown``: the controller took a broker that was still registered (and, in KRaft,
  marked as shutting down) out of the ISR and, if it led, gave leadership to another ISR member.
  A broker that reported a failed log directory, or one that lost its registration since the
  last change, is not taken for one. Also a partition without a leader before and after whose
  epoch was bumped with the ISR unchanged while an ISR member is shutting down (the ISR keeps
  its last member; KRaft writes this when it fences a broker at the end of its shutdown);
* ``preferred_election``: leadership moved, with the ISR unchanged, from a live leader to the
  first assigned replica;
* ``leader_election``: the leader was gone (no leader, unregistered or fenced) and another ISR
  member took over, or no leader could be elected (the new leader is -1, also when it already
  was and the epoch was bumped because an ISR member is no longer live);
* ``isr_shrink`` / ``isr_expand`` with ``by``: ``leader`` when the leader changed its ISR (no epoch
  bump in ZooKeeper mode: AlterIsr/AlterPartition or the leader's own ZooKeeper write; in KRaft,
  members that left while still live), ``controller`` when the controller removed members (an
  epoch bump in ZooKeeper mode; fenced or unregistered brokers in KRaft).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from kreplica.model.cluster import NO_LEADER, RECOVERED, RECOVERING
from kreplica.model.cluster.state import is_offline as partition_offline

CREATED = "created"
DELETED = "deleted"
SNAPSHOT = "snapshot"
LEADER_ELECTION = "leader_election"
UNCLEAN_LEADER_ELECTION = "unclean_leader_election"
ISR_SHRINK = "isr_shrink"
ISR_EXPAND = "isr_expand"
CONTROLLED_SHUTDOWN = "controlled_shutdown"
REASSIGNMENT = "reassignment"
PREFERRED_ELECTION = "preferred_election"
UNKNOWN = "unknown"

#: Every cause, with what it means (the README and man page list the same).
CAUSES = {
    CREATED: "the partition was created",
    SNAPSHOT: "the state the history starts from, as the snapshot (or the --from point) holds it",
    LEADER_ELECTION: "the leader was gone and another in-sync replica took over (or none could: leader -1)",
    UNCLEAN_LEADER_ELECTION: "the new leader was not in the ISR: data the old leader had may be lost",
    ISR_SHRINK: "replicas left the ISR (by the leader, or by the controller)",
    ISR_EXPAND: "replicas joined the ISR (by the leader, or by the controller)",
    CONTROLLED_SHUTDOWN: "the controller moved the partition off a broker shutting down in a controlled way",
    REASSIGNMENT: "a step of a replica reassignment",
    PREFERRED_ELECTION: "leadership went back to the preferred (first assigned) replica",
    DELETED: "the partition was deleted",
    UNKNOWN: "the evidence does not say why",
}

BY_CONTROLLER = "controller"
BY_LEADER = "leader"


# NOTE: the values a walk builds per change (states, contexts, causes, events) are NamedTuples,
# not frozen dataclasses: a history of a million transactions builds several of each per
# transaction, and a frozen dataclass's __init__ (one object.__setattr__ per field) cost 14% of
# the walk (bench/bench_timeline.py). Attribute names are the same; they are still immutable.


class LeaderIsr(NamedTuple):
    """A partition's leader and ISR as the metadata records them. ``partition_epoch`` is the
    state znode's dataVersion (ZooKeeper) or the KRaft partition epoch."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: int = RECOVERED
    partition_epoch: int | None = None


class ChangeContext(NamedTuple):
    """What the evidence says around one change.

    ``alive``: brokers registered (ZooKeeper) or registered and unfenced (KRaft) just before it;
    ``shutting_down``: brokers known to be in a controlled shutdown (KRaft); ``gone_since``:
    brokers that lost their registration (or were fenced) since the partition's last change;
    ``log_dir_failed``: brokers that reported a failed log directory since then; ``replicas``,
    ``adding``, ``removing``: the assignment; ``reassign_target``: a reassignment's target
    when one is requested; ``preferred_requested``: an admin asked for a preferred election;
    ``deleting``: the topic is queued for deletion; ``by_controller``: the write came from the
    controller (ZooKeeper: guarded by ``/controller_epoch``; ``None`` when it cannot be told);
    ``replicas_changed``: the same record moved replicas (KRaft); ``epoch_tells_writer``: only the
    controller's ISR changes bump the leader epoch (ZooKeeper; in KRaft it depends on the MV);
    ``shutdown_known``: the metadata records controlled shutdowns (KRaft), so none is inferred.
    """

    alive: frozenset[int] = frozenset()
    shutting_down: frozenset[int] = frozenset()
    gone_since: frozenset[int] = frozenset()
    log_dir_failed: frozenset[int] = frozenset()
    replicas: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    reassign_target: tuple[int, ...] | None = None
    preferred_requested: bool = False
    deleting: bool = False
    by_controller: bool | None = None
    replicas_changed: bool = False
    epoch_tells_writer: bool = True
    shutdown_known: bool = False

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing or self.reassign_target is not None or self.replicas_changed)

    @property
    def being_removed(self) -> frozenset[int]:
        """Replicas a reassignment in progress takes away."""
        out = set(self.removing)
        if self.reassign_target is not None:
            out.update(r for r in self.replicas if r not in self.reassign_target)
        return frozenset(out)


class Cause(NamedTuple):
    cause: str
    by: str | None
    evidence: str


class PartitionEvent(NamedTuple):
    """One change of a partition's leader, leader epoch or ISR (or its creation, deletion, or the
    state a history starts from). ``position`` is the zxid or the metadata-log offset."""

    topic: str
    partition: int
    position: int
    time: int | None
    controller_epoch: int | None
    before: LeaderIsr | None
    after: LeaderIsr | None
    cause: str
    by: str | None
    evidence: str
    replicas: tuple[int, ...] = ()
    offline: bool = False
    writer: int | None = None

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def unclean(self) -> bool:
        return self.cause == UNCLEAN_LEADER_ELECTION


class BrokerEvent(NamedTuple):
    """A broker registration changing. ``event``: ``snapshot`` (registered as the history starts),
    ``registered``, ``session_closed`` (the broker closed its ZooKeeper session), ``session_expired``
    (ZooKeeper expired it: the broker stopped heartbeating), ``deregistered`` (its znode deleted
    by someone else), KRaft's ``fenced``, ``unfenced``, ``controlled_shutdown``, ``unregistered``."""

    broker: int
    event: str
    position: int
    time: int | None
    broker_epoch: int | None = None
    session: int | None = None
    #: ``gone``: the last point the evidence shows it registered (the snapshot before)
    alive_at: int | None = None


class ControllerEvent(NamedTuple):
    """The active controller changing: ``snapshot``, ``elected``, ``resigned`` (it deleted its own
    znode), ``session_closed`` / ``session_expired`` (its ZooKeeper session ended), ``none`` (a
    KRaft epoch with no leader). ``controller_epoch`` is ``/controller_epoch`` or the Raft epoch."""

    event: str
    position: int
    time: int | None
    controller: int | None
    controller_epoch: int | None


#: The config keys an on-call cares about: a change of either decides whether a partition is
#: under min ISR (``min.insync.replicas``) or may elect a leader that loses data
#: (``unclean.leader.election.enable``). Their config events are ``notable``.
NOTABLE_CONFIGS = frozenset({"min.insync.replicas", "unclean.leader.election.enable"})


class ConfigEvent(NamedTuple):
    """A config changing: ``resource`` ``topic`` or ``broker`` (``entity`` the topic, the broker id,
    or ``<default>``, the cluster-wide broker default), ``key``, the value ``before`` and ``after``
    (``None``: not set, so ``after`` ``None`` is a deletion). Who wrote it: KRaft records carry no
    principal, so ``writer`` is the active controller that wrote the record (the Raft leader of
    the record's batch ``epoch``; ``None`` when the history does not say who led that epoch);
    ZooKeeper's ``session`` is the session of the ``setData`` (``writer``: the broker whose
    session it is, if any). ``notable``: the key is one of :data:`NOTABLE_CONFIGS`."""

    resource: str
    entity: str
    key: str
    before: str | None
    after: str | None
    position: int
    time: int | None
    epoch: int | None = None
    writer: int | None = None
    session: int | None = None

    @property
    def notable(self) -> bool:
        return self.key in NOTABLE_CONFIGS


#: the resolution of a history: every ZooKeeper transaction, every KRaft record, or (a ZooKeeper
#: data directory without transaction logs) only what changed from one snapshot to the next
BY_TRANSACTION = "transaction"
BY_RECORD = "record"
BY_SNAPSHOT = "snapshot"


@dataclass
class TimelineEnd:
    """What a walk saw as a whole: where it started and ended, at which ``resolution``, and the
    findings on the way."""

    source_kind: str
    source: str
    start: int | None
    end: int | None
    start_from: str
    findings: list = field(default_factory=list)
    resolution: str = BY_TRANSACTION


def _ids(values: Iterable[int]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


def classify(before: LeaderIsr, after: LeaderIsr, ctx: ChangeContext) -> Cause | None:
    """The cause of a change from ``before`` to ``after`` (``None``: no change of leader, leader
    epoch or ISR, so no event). See the module docstring for the rules."""
    old, new = before.leader, after.leader
    bumped = after.leader_epoch != before.leader_epoch
    if new == old and not bumped and before.isr == after.isr:
        return None
    removed = [r for r in before.isr if r not in after.isr]
    added = [r for r in after.isr if r not in before.isr]
    if new != old:
        if new == NO_LEADER:
            return Cause(LEADER_ELECTION, BY_CONTROLLER,
                         f"no leader could be elected: leader {old} gone, ISR {_ids(after.isr)}")
        # ZooKeeper (the epoch tells the writer there, never in KRaft): OfflinePartitionLeaderSelector
        # (<= 1.0) and leaderForOffline (1.1+) both elect uncleanly from an empty ISR
        from_empty_isr = not before.isr and ctx.epoch_tells_writer
        if (before.isr and new not in before.isr and not _joined_with_leadership(new, after, ctx)) or from_empty_isr or (
                after.leader_recovery_state == RECOVERING and before.leader_recovery_state != RECOVERING):
            return Cause(UNCLEAN_LEADER_ELECTION, BY_CONTROLLER,
                         f"new leader {new} was not in the ISR {_ids(before.isr)}"
                         + (", which only a controller of Kafka 1.0 or earlier empties (unclean election "
                            "allowed)" if from_empty_isr else "")
                         + ("; the leader is RECOVERING" if after.leader_recovery_state == RECOVERING else ""))
        old_live = old != NO_LEADER and old in ctx.alive and old not in ctx.gone_since
        if ctx.reassigning and old_live and (old in ctx.being_removed or ctx.replicas_changed
                                                or (ctx.replicas and old not in ctx.replicas)):
            return Cause(REASSIGNMENT, BY_CONTROLLER,
                         f"leader {old} is being moved off by a reassignment; {new} takes over"
                         if not ctx.replicas_changed else f"the record that moves the replicas makes {new} leader")
        if not old_live:
            why = "there was no leader" if old == NO_LEADER else (
                f"leader {old} " + ("lost its registration" if old not in ctx.alive or old in ctx.gone_since
                                    else "was gone"))
            return Cause(LEADER_ELECTION, BY_CONTROLLER, f"{why}; {new} was in the ISR {_ids(before.isr)}")
        if old in ctx.log_dir_failed:
            return Cause(UNKNOWN, BY_CONTROLLER,
                         f"leader {old} reported a failed log directory; leadership moved to {new}")
        if old in ctx.shutting_down or (not ctx.shutdown_known and old not in after.isr and not ctx.deleting):
            return Cause(CONTROLLED_SHUTDOWN, BY_CONTROLLER,
                         f"leader {old} was still registered" + (" and shutting down" if old in ctx.shutting_down
                                                                 else "") +
                         f" when the controller moved leadership to {new} and took {old} out of the ISR")
        if ctx.replicas and new == ctx.replicas[0] and set(after.isr) == set(before.isr):
            return Cause(PREFERRED_ELECTION, BY_CONTROLLER,
                         f"leadership moved from live leader {old} back to preferred replica {new}"
                         + (" as an admin requested" if ctx.preferred_requested else ""))
        return Cause(UNKNOWN, BY_CONTROLLER, f"leadership moved from live leader {old} to {new}")
    if removed or added:
        if removed and added:
            return Cause(UNKNOWN, BY_CONTROLLER if bumped else None,
                         f"ISR {_ids(before.isr)} became {_ids(after.isr)}")
        kind = ISR_SHRINK if removed else ISR_EXPAND
        moved = removed or added
        if ctx.epoch_tells_writer:
            # ZooKeeper mode: only the controller's own ISR changes bump the leader epoch
            by_leader = not bumped
        else:
            # KRaft: an epoch bump on a shrink depends on the metadata version, not on the
            # writer; the controller removes replicas that are fenced, gone or shutting down
            by_leader = not [r for r in removed if r not in ctx.alive or r in ctx.gone_since
                             or r in ctx.shutting_down]
        if by_leader:
            return Cause(kind, BY_LEADER, f"leader {new} {'removed' if removed else 'added'} {_ids(moved)}"
                         + (" (AlterPartition)" if ctx.by_controller else ""))
        if kind == ISR_EXPAND:
            return Cause(ISR_EXPAND, BY_CONTROLLER, f"the controller added {_ids(added)} to the ISR")
        return _controller_shrink(removed, after, ctx)
    # the same leader and ISR, a new epoch
    if ctx.reassigning:
        return Cause(REASSIGNMENT, BY_CONTROLLER, "epoch bumped with the leader and ISR unchanged while "
                                                  "the partition is being reassigned")
    if new == NO_LEADER:
        return _leaderless_bump(after, ctx) or Cause(
            UNKNOWN, BY_CONTROLLER, f"epoch bumped to {after.leader_epoch} with the leader and ISR unchanged")
    return Cause(UNKNOWN, BY_CONTROLLER, f"epoch bumped to {after.leader_epoch} with the leader and ISR unchanged")


def _joined_with_leadership(new: int, after: LeaderIsr, ctx: ChangeContext) -> bool:
    """KRaft: the record that made ``new`` leader also put it in the ISR beside members it kept,
    which only an AlterPartition adding it does (``PartitionChangeBuilder`` applies the target
    ISR, completes a reassignment it covers and elects from that ISR: a clean election, as when a
    reassignment's new first replica catches up). An unclean election leaves the ISR the new
    leader alone. ZooKeeper's controller writes the ISR change and the election apart."""
    return not ctx.epoch_tells_writer and new in after.isr and len(after.isr) > 1


def _leaderless_bump(after: LeaderIsr, ctx: ChangeContext) -> Cause | None:
    """A partition without a leader before and after, same ISR, a new epoch: the controller took
    an ISR member that is shutting down, fenced or gone out of the ISR, which keeps its last
    member (``PartitionChangeBuilder`` never empties it), and bumped the epoch on that ISR
    change (``triggerLeaderEpochBumpIfNeeded`` writes the leader, still -1). KRaft writes one
    for every leaderless partition when it fences a broker at the end of its controlled
    shutdown. ``None`` when no ISR member is shutting down or gone."""
    isr = _ids(after.isr)
    shutting = [r for r in after.isr if r in ctx.shutting_down]
    if shutting:
        return Cause(CONTROLLED_SHUTDOWN, BY_CONTROLLER,
                     f"no leader before or after: the controller took {_ids(shutting)}, shutting down, out of the "
                     f"ISR {isr}, which keeps its last member; epoch bumped to {after.leader_epoch}")
    gone = [r for r in after.isr if r not in ctx.alive or r in ctx.gone_since]
    if gone:
        return Cause(LEADER_ELECTION, BY_CONTROLLER,
                     f"no leader could be elected: {_ids(gone)} of the ISR {isr} no longer live; epoch bumped to "
                     f"{after.leader_epoch} with the leader still -1")
    return None


def _controller_shrink(removed: list[int], after: LeaderIsr, ctx: ChangeContext) -> Cause:
    leaving = ctx.being_removed
    if ctx.reassigning and all(r in leaving for r in removed):
        return Cause(REASSIGNMENT, BY_CONTROLLER, f"{_ids(removed)} left the ISR: the reassignment removes them")
    live = [r for r in removed if r in ctx.alive and r not in ctx.gone_since]
    if live and all(r in ctx.log_dir_failed for r in live):
        return Cause(ISR_SHRINK, BY_CONTROLLER, f"the controller removed {_ids(removed)}; "
                                                f"{_ids(live)} reported a failed log directory")
    if ctx.deleting:
        return Cause(ISR_SHRINK, BY_CONTROLLER, f"the controller removed {_ids(removed)}: the topic is "
                                                "queued for deletion")
    if live and len(live) == len(removed) and (set(live) <= ctx.shutting_down or not ctx.shutdown_known):
        return Cause(CONTROLLED_SHUTDOWN, BY_CONTROLLER,
                     f"the controller removed {_ids(live)}, still registered"
                     + (" and shutting down" if ctx.shutting_down else "") + ", from the ISR")
    gone = [r for r in removed if r not in live]
    return Cause(ISR_SHRINK, BY_CONTROLLER, f"the controller removed {_ids(removed)}"
                 + (f" ({_ids(gone)} no longer live)" if gone else ""))


def is_offline(state: LeaderIsr | None, alive: frozenset[int]) -> bool:
    """No leader, or a leader that is not a live broker (the one rule, :func:`~kreplica.model.cluster.state.is_offline`)."""
    return state is not None and partition_offline(state.leader, alive)


@dataclass(frozen=True, slots=True)
class OfflinePeriod:
    """A partition without a live leader from ``start`` (position, time) to ``end`` (``None``:
    still offline where the history ends). ``since_after``: the history starts with the partition
    offline, so its leader stopped at some point after ``start`` (the last write naming it
    leader, when it was alive) that the evidence does not hold."""

    topic: str
    partition: int
    start: int
    start_time: int | None
    end: int | None = None
    end_time: int | None = None
    since_after: bool = False


#: broker events after which the broker is not a live leader (its session or registration gone,
#: or KRaft fenced it), and those that make it one again
BROKER_LEAVES = frozenset({"session_closed", "session_expired", "deregistered", "fenced", "unregistered", "gone"})
BROKER_JOINS = frozenset({"registered", "unfenced"})


class TimelineSummary:
    """Feed every event in order: counts, unclean elections and offline periods (one open period
    per partition at most, so memory follows the partitions, not the history).

    A partition goes offline when its leader stops, not when the controller next writes its
    state: a broker's session closing or expiring (ZooKeeper), its fencing or unregistration
    (KRaft) opens a period for every partition it leads then, and its registering again closes
    the ones still naming it leader. A partition the history starts offline is offline since
    after the last write of its state (:attr:`OfflinePeriod.since_after`), or, when that write
    left it without a leader, from its last ISR member's departure when the history holds it."""

    def __init__(self) -> None:
        self.counts = {"partition": 0, "broker": 0, "controller": 0, "config": 0}
        self.unclean: list[PartitionEvent] = []
        self.notable_configs: list[ConfigEvent] = []
        self.offline: list[OfflinePeriod] = []
        self._open: dict[tuple[str, int], OfflinePeriod] = {}
        self._leaders: dict[tuple[str, int], int] = {}   # each partition's leader as last written
        self._departed: dict[int, tuple[int, int | None]] = {}   # broker -> (position, time) it left

    def feed(self, ev) -> None:
        if not isinstance(ev, PartitionEvent):
            if isinstance(ev, BrokerEvent):
                self.counts["broker"] += 1
                self._broker(ev)
            elif isinstance(ev, ConfigEvent):
                self.counts["config"] += 1
                if ev.notable:
                    self.notable_configs.append(ev)
            else:
                self.counts["controller"] += 1
            return
        self.counts["partition"] += 1
        if ev.cause == UNCLEAN_LEADER_ELECTION:
            self.unclean.append(ev)
        key = (ev.topic, ev.partition)
        if ev.after is None:
            self._leaders.pop(key, None)
        else:
            self._leaders[key] = ev.after.leader
        if not ev.offline and not self._open:   # NOTE: the common case: nothing offline (bench_timeline.py)
            return
        period = self._open.get(key)
        if period is not None and (not ev.offline or ev.after is None):
            self._close(key, ev.position, ev.time)
        elif period is None and ev.offline and ev.after is not None:
            self._open[key] = self._offline_from(ev)

    def _offline_from(self, ev: PartitionEvent) -> OfflinePeriod:
        """The period an offline event opens. A state the history starts with names either a
        leader that was alive when it was written (offline since after then) or none, with its
        last ISR member, the leader it had (Kafka keeps the last member): offline from that
        broker's departure when the history holds it, else from the write."""
        if ev.cause != SNAPSHOT:
            return OfflinePeriod(ev.topic, ev.partition, ev.position, ev.time)
        state = ev.after
        if state.leader >= 0:
            return OfflinePeriod(ev.topic, ev.partition, ev.position, ev.time, since_after=True)
        gone = self._departed.get(state.isr[0]) if len(state.isr) == 1 else None
        if gone is not None and gone[0] <= ev.position:
            return OfflinePeriod(ev.topic, ev.partition, gone[0], gone[1])
        return OfflinePeriod(ev.topic, ev.partition, ev.position, ev.time)

    def _broker(self, ev: BrokerEvent) -> None:
        if ev.event in BROKER_LEAVES:
            self._departed[ev.broker] = (ev.position, ev.time)
            # a departure only snapshots show (gone): the broker was there at the snapshot before,
            # so what it led is offline since after that point
            since = ev.alive_at if ev.event == "gone" and ev.alive_at is not None else None
            for key, leader in self._leaders.items():
                if leader == ev.broker and key not in self._open:
                    self._open[key] = (OfflinePeriod(key[0], key[1], ev.position, ev.time) if since is None
                                       else OfflinePeriod(key[0], key[1], since, None, since_after=True))
        elif ev.event in BROKER_JOINS:
            self._departed.pop(ev.broker, None)
            for key in [k for k in self._open if self._leaders.get(k) == ev.broker]:
                self._close(key, ev.position, ev.time)

    def _close(self, key: tuple[str, int], position: int, time: int | None) -> None:
        period = self._open.pop(key)
        self.offline.append(OfflinePeriod(period.topic, period.partition, period.start, period.start_time,
                                          position, time, period.since_after))

    def periods(self) -> list[OfflinePeriod]:
        """Closed periods in order, then the ones still open."""
        return sorted(self.offline + list(self._open.values()), key=lambda p: (p.start, p.topic, p.partition))

    @property
    def has_problems(self) -> bool:
        return bool(self.unclean or self.offline or self._open)


def involved_brokers(ev) -> set[int]:
    """The brokers an event involves (what ``--broker`` selects on): a partition event's leader
    and ISR before and after and its replicas, a broker event's broker, a controller event's
    controller, a broker config event's broker (none for a topic's or the cluster default's)."""
    if isinstance(ev, PartitionEvent):
        involved = set(ev.replicas)
        for s in (ev.before, ev.after):
            if s is not None:
                involved.add(s.leader)
                involved.update(s.isr)
        return involved
    if isinstance(ev, BrokerEvent):
        return {ev.broker}
    if isinstance(ev, ConfigEvent):
        return {int(ev.entity)} if ev.resource == "broker" and ev.entity.isdigit() else set()
    return {ev.controller}


def matches(ev, partitions: frozenset[str] | None, brokers: frozenset[int] | None) -> bool:
    """``--partition``/``--broker`` selection: partition events of the named partitions (broker
    and controller events stay, they explain the causes); with brokers, only events involving
    one of them (:func:`involved_brokers`). Config events: a topic's stay when one of its
    partitions is named (or none is), a broker's when that broker is (or none is); the cluster
    default's always stay, as they apply to every broker."""
    if isinstance(ev, ConfigEvent):
        if ev.resource == "topic":
            return partitions is None or any(p.rpartition("-")[0] == ev.entity for p in partitions)
        return brokers is None or not involved_brokers(ev) or not brokers.isdisjoint(involved_brokers(ev))
    if partitions is not None and isinstance(ev, PartitionEvent) and ev.name not in partitions:
        return False
    return brokers is None or not brokers.isdisjoint(involved_brokers(ev))
