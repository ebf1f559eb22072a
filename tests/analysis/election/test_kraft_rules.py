"""KRaft's ``PartitionChangeBuilder`` rule by rule, each beside the counter-example that must not
match, through the public API (``build`` with its current keywords, ``plan_elections``).

Expected values are worked out from apache/kafka ``metadata/src/main/java/org/apache/kafka/
controller/PartitionChangeBuilder.java`` (trunk after 3.9): ``maybePopulateTargetElr`` (ELR only
while ``targetIsr.size() < minISR``; the candidates are a ``HashSet`` of the ELR and the current
ISR, minus the target ISR and the unclean-shutdown replicas), ``electPreferredLeader`` /
``electAnyLeader`` / ``canElectLastKnownLeader`` / ``isValidNewLeader`` (in the target ISR, or
in the ELR while the target ISR is empty, and acceptable), ``tryElection`` (an ELR leader makes
the ISR ``[leader]`` and is clean; an unclean one makes it ``[leader]`` and RECOVERING from MV
3.2), ``maybeUpdateRecordElr`` (an unclean election or ELR off clears the ELR),
``maybeUpdateLastKnownLeader``, the epoch-bump triggers, and ``PartitionRegistration.merge``
(a record naming a leader bumps the leader epoch; every record bumps the partition epoch);
``ReplicationControlManager.generateLeaderAndIsrUpdates`` (the removed broker is never
acceptable; UNCLEAN when the topic enables it) and ``handleBrokerInControlledShutdown``.
"""

from __future__ import annotations

import pytest

from kreplica.analysis.election.kraft import E_ONLINE, E_PREFERRED, E_UNCLEAN, build
from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

ELR_FEATURE = "eligible.leader.replicas.version"
RECOVERING = 1


def everyone(r: int) -> bool:
    return True


def nobody(r: int) -> bool:
    return False


def all_but(*excluded: int):
    return lambda r: r not in excluded


def only(*allowed: int):
    return lambda r: r in allowed


def run(p, election=E_ONLINE, *, acceptable=everyone, elr=False, min_isr=1, target_isr=None, recovery=True,
        shrink_bumps=False, unclean_shutdown=()):
    return build(p, acceptable=acceptable, election=election, elr_enabled=elr, min_isr=min_isr,
                 leader_recovery=recovery, isr_shrink_bumps_epoch=shrink_bumps, target_isr=target_isr,
                 unclean_shutdown=unclean_shutdown)


def state(p, res):
    """The partition after the build: the merged record, or ``p`` when nothing was written."""
    return res.after or p


# ---- the ELR (maybePopulateTargetElr, maybeUpdateRecordElr) --------------------------------------

FULL4 = part(0, [1, 2, 3, 4], 1, [1, 2, 3, 4])          # leader epoch 5, partition epoch 7

ELR_ROWS = [
    # |target ISR| == minISR: "larger or equal" clears, no ELR
    pytest.param(FULL4, dict(target_isr=[1, 2, 3], min_isr=3), ((1, 2, 3), (), 5, 8), id="isr-equal-to-min-isr-no-elr"),
    # one below: the members that left are eligible (HashSet order: 3, 4)
    pytest.param(FULL4, dict(target_isr=[1, 2], min_isr=3), ((1, 2), (3, 4), 5, 8), id="isr-one-below-min-isr-elr"),
    pytest.param(FULL4, dict(target_isr=[1, 2, 3], min_isr=2), ((1, 2, 3), (), 5, 8), id="isr-one-above-min-isr"),
    # counter: ELR disabled: maybePopulateTargetElr returns at once, the record carries none
    pytest.param(FULL4, dict(target_isr=[1, 2], min_isr=3, elr=False), ((1, 2), (), 5, 8), id="elr-disabled"),
    # back to min ISR: the ELR is cleared
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2], elr=[3, 4]), dict(target_isr=[1, 2, 3], min_isr=3),
                 ((1, 2, 3), (), 5, 8), id="back-to-min-isr-clears-elr"),
    # still below: candidates = ELR {3} ∪ current ISR {1,2} minus target {1} = [2,3]
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2], elr=[3]), dict(target_isr=[1], min_isr=3),
                 ((1,), (2, 3), 5, 8), id="below-min-isr-adds-leavers-to-elr"),
    # a replica that shut down uncleanly is not eligible
    pytest.param(FULL4, dict(target_isr=[1, 2], min_isr=3, unclean_shutdown=[3]), ((1, 2), (4,), 5, 8),
                 id="unclean-shutdown-replica-not-in-elr"),
    # nothing changes: no record (changeRecordIsNoOp), the epochs stay
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2], elr=[3, 4]), dict(min_isr=3), ((1, 2), (3, 4), 5, 7),
                 id="below-min-isr-unchanged-no-record"),
    # counter: the same partition with ELR off: maybeUpdateRecordElr clears the stored ELR
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2], elr=[3, 4]), dict(min_isr=3, elr=False), ((1, 2), (), 5, 8),
                 id="elr-off-clears-stored-elr"),
    # java.util.HashSet order, capacity 16: buckets 1 (1, 17), 2 (2, 18), 3 (3); minus the target
    pytest.param(part(0, [1, 2, 3, 17, 18], 1, [1, 2, 3, 17, 18]), dict(target_isr=[1, 2], min_isr=4),
                 ((1, 2), (17, 18, 3), 5, 8), id="elr-in-java-hash-set-order"),
]


@pytest.mark.parametrize("p,kw,expected", ELR_ROWS)
def test_eligible_leader_replicas(p, kw, expected) -> None:
    kw = dict(kw)
    kw.setdefault("elr", True)
    a = state(p, run(p, **kw))
    assert (a.isr, a.elr, a.leader_epoch, a.version) == expected


# ---- the election (electPreferredLeader, electAnyLeader, tryElection) -----------------------------

ELECTIONS = [
    # PREFERRED
    pytest.param(part(0, [1, 2, 3], 2, [1, 2, 3]), E_PREFERRED, dict(), (1, (1, 2, 3), False),
                 id="preferred-in-isr-elected"),
    # counter: the preferred replica is out of the ISR and the current leader is valid: no change
    pytest.param(part(0, [1, 2, 3], 2, [2, 3]), E_PREFERRED, dict(), (2, (2, 3), False),
                 id="preferred-out-of-isr-current-stays"),
    # the current leader is kept before any other valid replica (PartitionChangeBuilderTest's BAZ)
    pytest.param(part(0, [1, 2, 3], 3, [2, 3]), E_PREFERRED, dict(), (3, (2, 3), False),
                 id="preferred-out-of-isr-current-stays-before-next-valid"),
    # counter: in the ISR but not acceptable (fenced, or shutting down)
    pytest.param(part(0, [1, 2, 3], 2, [1, 2, 3]), E_PREFERRED, dict(acceptable=all_but(1)), (2, (1, 2, 3), False),
                 id="preferred-not-acceptable-current-stays"),
    # neither the preferred nor the current leader is valid: the first valid of replicas[1:]
    pytest.param(part(0, [1, 2, 3], 2, [1, 2, 3]), E_PREFERRED, dict(acceptable=only(3)), (3, (1, 2, 3), False),
                 id="preferred-falls-back-to-next-valid"),
    pytest.param(part(0, [1, 2, 3], 2, [2]), E_PREFERRED, dict(acceptable=nobody), (-1, (2,), False),
                 id="preferred-no-valid-replica"),
    # the fallback skips only the preferred replica (targetReplicas.stream().skip(1)): replicas[1]
    # is the first candidate
    pytest.param(part(0, [1, 2, 3], 3, [1, 2, 3]), E_PREFERRED, dict(acceptable=only(2)), (2, (1, 2, 3), False),
                 id="preferred-falls-back-to-the-second-replica"),
    # electPreferredLeader also ends with canElectLastKnownLeader: ELR on, ISR and ELR empty, one
    # last known leader, elected unclean (ISR [leader]) whatever its acceptability
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3]), E_PREFERRED, dict(elr=True, min_isr=2,
                                                                                  acceptable=nobody),
                 (3, (3,), True), id="preferred-last-known-leader-elected-unclean"),
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3]), E_PREFERRED, dict(elr=False, acceptable=nobody),
                 (-1, (), False), id="counter-preferred-last-known-leader-needs-elr"),
    # ONLINE: a valid current leader stays, even if it is not the preferred one
    pytest.param(part(0, [2, 1, 3], 1, [2, 1, 3]), E_ONLINE, dict(), (1, (2, 1, 3), False),
                 id="online-valid-current-leader-stays"),
    # otherwise the first valid in replica order, not ISR order
    pytest.param(part(0, [3, 1, 2], 3, [2, 1, 3]), E_ONLINE, dict(acceptable=all_but(3), target_isr=[2, 1]),
                 (1, (2, 1), False), id="online-first-valid-in-replica-order"),
    # no valid replica: leader -1; without ELR an empty target ISR is not written (the last
    # member stays)
    pytest.param(part(0, [1, 2, 3], 1, [1]), E_ONLINE, dict(acceptable=all_but(1), target_isr=[]),
                 (-1, (1,), False), id="online-no-valid-replica-leader-minus-one"),
    # UNCLEAN: the first acceptable replica, ISR [leader]
    pytest.param(part(0, [1, 2, 3], 1, [1]), E_UNCLEAN, dict(acceptable=all_but(1), target_isr=[]),
                 (2, (2,), True), id="unclean-first-acceptable-replica"),
    # counter: an acceptable ISR member wins over the unclean path
    pytest.param(part(0, [1, 2, 3], 1, [1, 3]), E_UNCLEAN, dict(acceptable=all_but(1), target_isr=[3]),
                 (3, (3,), False), id="unclean-prefers-an-isr-member"),
    pytest.param(part(0, [1, 2, 3], 1, [1]), E_UNCLEAN, dict(acceptable=nobody, target_isr=[]), (-1, (1,), False),
                 id="unclean-no-acceptable-replica"),
    # ELR: with the ISR empty, an acceptable ELR member is valid; ISR [leader], clean
    pytest.param(part(0, [1, 2, 3], 1, [1], elr=[2]), E_ONLINE,
                 dict(acceptable=all_but(1), target_isr=[], elr=True, min_isr=2), (2, (2,), False),
                 id="elr-member-elected-when-isr-empty"),
    # counter: the ELR member 2 comes first in replica order but the ISR is not empty
    pytest.param(part(0, [1, 2, 3], 1, [1, 3], elr=[2]), E_ONLINE,
                 dict(acceptable=all_but(1), target_isr=[3], elr=True, min_isr=3), (3, (3,), False),
                 id="counter-elr-member-invalid-while-isr-non-empty"),
    # isValidNewLeader reads the target ELR, which ELR off does not clear before the election:
    # a stored ELR still elects (then maybeUpdateRecordElr clears it)
    pytest.param(part(0, [1, 2, 3], 1, [1], elr=[2]), E_ONLINE, dict(acceptable=all_but(1), target_isr=[]),
                 (2, (2,), False), id="stored-elr-elects-even-with-elr-off"),
    # last known leader (canElectLastKnownLeader): ELR on, ISR and ELR empty, exactly one member
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3]), E_ONLINE, dict(elr=True, min_isr=2),
                 (3, (3,), True), id="last-known-leader-elected-unclean"),
    # its acceptability is only logged
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3]), E_ONLINE, dict(elr=True, min_isr=2,
                                                                               acceptable=nobody),
                 (3, (3,), True), id="last-known-leader-even-if-not-acceptable"),
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3]), E_ONLINE, dict(elr=False), (-1, (), False),
                 id="counter-last-known-leader-needs-elr"),
    pytest.param(part(0, [1, 2, 3], -1, [], last_known_elr=[3, 2]), E_ONLINE, dict(elr=True, min_isr=2,
                                                                                  acceptable=nobody),
                 (-1, (), False), id="counter-last-known-leader-needs-exactly-one"),
    pytest.param(part(0, [1, 2, 3], -1, [], elr=[2], last_known_elr=[3]), E_ONLINE,
                 dict(elr=True, min_isr=2, acceptable=all_but(2)), (-1, (), False),
                 id="counter-last-known-leader-not-while-elr-non-empty"),
]


@pytest.mark.parametrize("p,election,kw,expected", ELECTIONS)
def test_election(p, election, kw, expected) -> None:
    res = run(p, election, **kw)
    a = state(p, res)
    assert (a.leader, a.isr, res.unclean) == expected
    # a new leader, even -1, bumps the leader epoch once; no new leader, no bump here
    assert a.leader_epoch == p.leader_epoch + (a.leader != p.leader)


@pytest.mark.parametrize("recovery,stored,expected", [
    pytest.param(True, 0, RECOVERING, id="mv-3-2-marks-recovering"),
    pytest.param(False, 0, 0, id="before-mv-3-2-no-recovery-state"),
])
def test_unclean_election_recovery_state(recovery, stored, expected) -> None:
    p = part(0, [1, 2, 3], 1, [1], recovery=stored)
    a = run(p, E_UNCLEAN, acceptable=all_but(1), target_isr=[], recovery=recovery).after
    assert (a.leader, a.leader_recovery_state) == (2, expected)


def test_elr_election_is_clean_and_leaves_the_rest_eligible() -> None:
    # ISR [1] below min ISR 2, ELR [2]; 1 goes: candidates {2} ∪ {1} = [1,2]; 2 is valid (ISR
    # empty, in the ELR, acceptable): ISR [2], ELR [1]; no RECOVERING, last known ELR untouched
    p = part(0, [1, 2, 3], 1, [1], elr=[2])
    res = run(p, acceptable=all_but(1), target_isr=[], elr=True, min_isr=2)
    a = res.after
    assert (a.leader, a.isr, a.elr, a.last_known_elr, a.leader_recovery_state) == (2, (2,), (1,), (), 0)
    assert res.via_elr and not res.unclean


@pytest.mark.parametrize("election,expected", [
    # UNCLEAN: 2 elected outside the ISR and ELR; maybeUpdateRecordElr clears the ELR
    pytest.param(E_UNCLEAN, (2, (2,), (), ()), id="unclean-clears-elr"),
    # counter, ONLINE: nobody valid; the ISR empties (allowed with ELR), ELR [1], and the last
    # known leader is recorded (maybeUpdateLastKnownLeader)
    pytest.param(E_ONLINE, (-1, (), (1,), (1,)), id="online-leaderless-keeps-elr-and-last-known-leader"),
])
def test_unclean_election_and_the_elr(election, expected) -> None:
    p = part(0, [1, 2, 3], 1, [1])
    a = run(p, election, acceptable=all_but(1), target_isr=[], elr=True, min_isr=2).after
    assert (a.leader, a.isr, a.elr, a.last_known_elr) == expected


@pytest.mark.parametrize("stored,expected", [
    pytest.param((), (1,), id="first-time-leaderless"),
    pytest.param((2,), (1,), id="stale-last-known-leader-replaced"),
])
def test_last_known_leader_recorded_when_the_isr_empties(stored, expected) -> None:
    p = part(0, [1, 2, 3], 1, [1], last_known_elr=stored)
    a = run(p, acceptable=all_but(1), target_isr=[], elr=True, min_isr=2).after
    assert (a.leader, a.isr, a.last_known_elr) == (-1, (), expected)


def test_last_known_leader_cleared_once_a_leader_is_back() -> None:
    # ISR [], ELR [1], last known [1]; 1 is acceptable again: elected from the ELR (clean),
    # ISR [1], ELR [], last known ELR cleared (record.leader() >= 0)
    p = part(0, [1, 2, 3], -1, [], elr=[1], last_known_elr=[1])
    res = run(p, elr=True, min_isr=2)
    a = res.after
    assert (a.leader, a.isr, a.elr, a.last_known_elr, res.unclean) == (1, (1,), (), (), False)


# ---- epochs (the bump triggers and PartitionRegistration.merge) ------------------------------------

EPOCHS = [
    pytest.param(part(0, [1, 2, 3], 1, [1, 2]), dict(target_isr=[1, 2, 3]), (1, (1, 2, 3), 5, 8),
                 id="isr-expand-partition-epoch-only"),
    pytest.param(part(0, [1, 2, 3], 1, [1, 2, 3]), dict(target_isr=[1, 2]), (1, (1, 2), 5, 8),
                 id="isr-shrink-no-leader-bump-from-mv-3-6"),
    # triggerLeaderEpochBumpForIsrShrinkIfNeeded (MV < 3.6, KAFKA-15021)
    pytest.param(part(0, [1, 2, 3], 1, [1, 2, 3]), dict(target_isr=[1, 2], shrink_bumps=True), (1, (1, 2), 6, 8),
                 id="isr-shrink-bumps-before-mv-3-6"),
    # counter: only shrinks bump, never expansions
    pytest.param(part(0, [1, 2, 3], 1, [1, 2]), dict(target_isr=[1, 2, 3], shrink_bumps=True), (1, (1, 2, 3), 5, 8),
                 id="counter-isr-expand-never-bumps"),
    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: completing drops replica 4
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2, 3, 4], removing=[4]), dict(), (1, (1, 2, 3), 6, 8),
                 id="reassignment-drops-a-replica-bumps"),
    # counter: completing with nothing removed keeps the leader epoch
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2, 3], adding=[4]), dict(target_isr=[1, 2, 3, 4]),
                 (1, (1, 2, 3, 4), 5, 8), id="counter-reassignment-adding-only-no-bump"),
    # maybeCompleteReassignment: ISR minus removing [2,3] does not cover replicas minus removing
    # [2,3,4]: nothing to write
    pytest.param(part(0, [1, 2, 3, 4], 1, [1, 2, 3], adding=[4], removing=[1]), dict(), (1, (1, 2, 3), 5, 7),
                 id="reassignment-incomplete-no-record"),
]


@pytest.mark.parametrize("p,kw,expected", EPOCHS)
def test_epochs(p, kw, expected) -> None:
    a = state(p, run(p, **kw))
    assert (a.leader, a.isr, a.leader_epoch, a.version) == expected


def test_reassignment_completion_clears_adding_and_removing() -> None:
    p = part(0, [1, 2, 3, 4], 1, [1, 2, 3, 4], adding=[4], removing=[1])
    a = run(p).after
    # ISR′ [2,3,4] ⊇ R′ [2,3,4]: complete; 1 no longer in the target ISR: first valid of [2,3,4]
    assert (a.replicas, a.adding_replicas, a.removing_replicas, a.leader, a.isr) == ((2, 3, 4), (), (), 2, (2, 3, 4))


# ---- the controller's events (ReplicationControlManager) --------------------------------------------

def plan(state_, scenario, version=None):
    p = plan_elections(state_, scenario, parse_kafka_version(version) if version else None)
    return p, {e.partition: e for e in p.elections}


@pytest.mark.parametrize("version,features,expected", [
    pytest.param("4.0", {ELR_FEATURE: 1}, True, id="4-0-feature-on"),
    pytest.param("4.0", {ELR_FEATURE: 0}, False, id="4-0-feature-zero"),
    pytest.param("4.0", {}, False, id="4-0-feature-absent"),
    pytest.param("3.9", {ELR_FEATURE: 1}, False, id="3-9-no-elr"),
])
def test_elr_needs_the_version_and_the_finalized_feature(version, features, expected) -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, kind="kraft", alive=(1, 2), features=features)
    assert plan(s, Scenario(fail=(2,)), version)[0].elr_enabled is expected


def test_fencing_one_at_a_time_puts_only_the_later_leaver_in_the_elr() -> None:
    # min ISR 2; 2 and 3 fenced, in ascending order (handleBrokerFenced each): without 2 the ISR
    # [1,3] is still at min ISR (no ELR); without 3 it is [1], below: ELR = {ELR} ∪ {1,3} − {1} = [3]
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2, 3])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features={ELR_FEATURE: 1})
    p, e = plan(s, Scenario(fail=(2, 3)))
    assert e == {}      # the leader stays: ISR updates, not elections
    assert [(u.after.isr, u.after.elr) for u in p.isr_updates] == [((1, 3), ()), ((1,), (3,))]


@pytest.mark.parametrize("replicas,isr,shutting,expected", [
    # handleBrokerInControlledShutdown: the broker leaves the ISR and is never acceptable; ONLINE:
    # the first valid replica in replica order (3), not ISR order (2)
    pytest.param([1, 3, 2], [2, 1, 3], (), (3, (2, 3)), id="first-valid-in-replica-order"),
    # counter: a broker already in controlled shutdown is not acceptable (LeaderAcceptor); it
    # stays in the ISR (it is removed only when its own shutdown is handled)
    pytest.param([1, 2, 3], [1, 2, 3], (2,), (3, (2, 3)), id="already-shutting-down-not-elected"),
    pytest.param([1, 2, 3], [1, 2, 3], (), (2, (2, 3)), id="counter-no-other-shutdown"),
])
def test_controlled_shutdown_of_the_leader(replicas, isr, shutting, expected) -> None:
    s = cluster({"t": [part(0, replicas, 1, isr)]}, kind="kraft", alive=(1, 2, 3), shutting=shutting)
    _, e = plan(s, Scenario(shutdown=(1,)))
    a = e["t-0"].after
    assert ((a.leader, a.isr), a.leader_epoch, e["t-0"].kind) == (expected, 6, "controlled_shutdown")


@pytest.mark.parametrize("config,expected", [
    # the sole ISR member shuts down: KRaft, unlike ZooKeeper, writes leader -1 (no valid
    # leader; the last ISR member stays without ELR)
    pytest.param({}, (-1, (1,), False, 0), id="unclean-off-leader-minus-one"),
    # counter: the topic allows unclean election: generateLeaderAndIsrUpdates runs UNCLEAN
    pytest.param({"unclean.leader.election.enable": "true"}, (2, (2,), True, RECOVERING), id="unclean-on-elects-2"),
])
def test_controlled_shutdown_of_the_last_isr_member(config, expected) -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1])]}, kind="kraft", alive=(1, 2), configs={"t": config})
    _, e = plan(s, Scenario(shutdown=(1,)))
    a = e["t-0"].after
    assert (a.leader, a.isr, e["t-0"].unclean, a.leader_recovery_state) == expected
    assert a.leader_epoch == 6


def test_preferred_election_keeps_an_offline_partition_online() -> None:
    # ElectLeaders PREFERRED on replicas [1,2,3], leader 2 fenced, ISR [2,3]: the preferred 1 is
    # not in the ISR, the current leader is not acceptable: electPreferredLeader takes the first
    # valid of replicas[1:], 3
    s = cluster({"t": [part(0, [1, 2, 3], 2, [2, 3])]}, kind="kraft", alive=(1, 3), dead=(2,))
    _, e = plan(s, Scenario(preferred=()))
    assert (e["t-0"].after.leader, e["t-0"].elected) == (3, True)


# ---- the events' records: which partitions elect, the ISR updates, the answers --------------------

def elections(p) -> list[tuple]:
    return [(e.partition, e.kind, e.before.leader, e.after.leader, e.elected, e.unclean, e.rule) for e in p.elections]


@pytest.mark.parametrize("config,expected_u,reason_u", [
    # the leaderless u-0 (its only ISR member 3 is fenced) gets the election the controller runs
    # for leaderless partitions: UNCLEAN, as the topic allows it, so the first acceptable replica
    pytest.param({"unclean.leader.election.enable": "true"},
                 ("u-0", "offline", -1, 2, True, True, "PartitionChangeBuilder UNCLEAN"),
                 "no ISR member is acceptable; UNCLEAN: the first acceptable replica in replica order", id="unclean-on"),
    # counter: ONLINE finds no valid leader: none elected
    pytest.param({}, ("u-0", "offline", -1, -1, False, False, "PartitionChangeBuilder ONLINE"),
                 "no acceptable replica is in the ISR [3]; unclean leader election is not allowed", id="unclean-off"),
])
def test_broker_failure_then_every_leaderless_partition_elects(config, expected_u, reason_u) -> None:
    """``handleBrokerFenced`` (``generateLeaderAndIsrUpdates`` over the partitions with broker 1
    in their ISR): a-0, which 1 led alone, goes leaderless; f-0, which 1 follows, loses it from
    the ISR (an ISR update, leader 2 stays); b-0, without 1, is untouched. Then the leaderless
    partitions get an election (``ReplicationControlManager``'s unclean elections of leaderless
    partitions, ONLINE when the topic forbids them): u-0, led by nobody already, and not a-0 a
    second time."""
    s = cluster({"a": [part(0, [1], 1, [1])], "b": [part(0, [2, 3], 2, [2])], "f": [part(0, [2, 1], 2, [2, 1])],
                 "u": [part(0, [3, 2], -1, [3])]}, kind="kraft", alive=(1, 2), dead=(3,), configs={"u": config})
    p, _ = plan(s, Scenario(fail=(1,)))
    assert elections(p) == [("a-0", "offline", 1, -1, False, False, "PartitionChangeBuilder ONLINE"), expected_u]
    # a-0 is decided while 1 is being fenced (it leaves the live set after its partitions)
    assert [e.reason for e in p.elections] == [
        "no acceptable replica is in the ISR [1]; unclean leader election is not allowed", reason_u]
    assert [(u.key, u.before.isr, u.after.isr, u.reason) for u in p.isr_updates] == [
        (("f", 0), (2, 1), (2,), "broker 1 leaves the ISR (handleBrokerFenced)")]


def test_controlled_shutdown_records_and_leaves_the_broker_not_online() -> None:
    """``handleBrokerInControlledShutdown``: the broker leaves every ISR (f-0, which it follows:
    an ISR update) and stays registered and unfenced but in controlled shutdown, so it is not
    online afterwards (``LeaderAcceptor`` rejects it). Counter: 1 and 3 stay online."""
    s = cluster({"f": [part(0, [1, 2], 1, [1, 2])]}, kind="kraft", alive=(1, 2, 3))
    p, _ = plan(s, Scenario(shutdown=(2,)))
    assert [(u.key, u.after.isr, u.reason) for u in p.isr_updates] == [
        (("f", 0), (1,), "broker 2 leaves the ISR (handleBrokerInControlledShutdown)")]
    assert p.online_after == frozenset({1, 3})


def test_preferred_elections_answer_as_elect_leaders_does() -> None:
    """``ReplicationControlManager.electLeader`` PREFERRED: a-0 is led by its preferred replica
    (ELECTION_NOT_NEEDED, nothing written); b-0's preferred replica 3 is out of the ISR and the
    leader valid, so the builder writes nothing (PREFERRED_LEADER_NOT_AVAILABLE); c-0's preferred
    replica 2 is in the ISR and acceptable: elected."""
    s = cluster({"a": [part(0, [1, 2], 1, [1, 2])], "b": [part(0, [3, 1], 1, [1])], "c": [part(0, [2, 1], 1, [1, 2])]},
                kind="kraft", alive=(1, 2, 3))
    p, e = plan(s, Scenario(preferred=(("a", 0), ("b", 0), ("c", 0))))
    assert elections(p) == [("a-0", "preferred", 1, 1, False, False, "PartitionChangeBuilder PREFERRED"),
                            ("b-0", "preferred", 1, 1, False, False, "PartitionChangeBuilder PREFERRED"),
                            ("c-0", "preferred", 1, 2, True, False, "PartitionChangeBuilder PREFERRED")]
    assert [e[k].reason for k in ("a-0", "b-0", "c-0")] == [
        "ELECTION_NOT_NEEDED: the preferred replica 1 already leads",
        "PREFERRED_LEADER_NOT_AVAILABLE: the preferred replica 3 is not in the ISR or not acceptable",
        "the preferred replica 2 is in the ISR and acceptable"]
    assert all(e[k].before is s.topics[i].partitions[0] for i, k in enumerate(("a-0", "b-0", "c-0")))


def test_reassignment_completion_records_each_outcome() -> None:
    """``PartitionReassignmentReplicas.maybeCompleteReassignment`` through ``build()``: the
    adding replicas join the ISR; once ISR minus removing covers the target replicas the
    reassignment completes. a-0: leader 1 is removed, the first target replica in the ISR and
    acceptable (2) leads. b-0: leader 1 stays, the replica set loses 3, so
    ``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`` bumps the leader epoch. c-0: target
    replica 4 is fenced and cannot join the ISR. d-0: no leader for the new replica to catch up
    from. e-0: only adding, leader 1 stays, no epoch bump (counter to b-0)."""
    s = cluster({"a": [part(0, [1, 2, 3], 1, [1, 2], adding=[3], removing=[1])],
                 "b": [part(0, [1, 2, 3], 1, [1, 2, 3], removing=[3])],
                 "c": [part(0, [1, 4], 1, [1], adding=[4])],
                 "d": [part(0, [2, 3], -1, [2], adding=[3])],
                 "e": [part(0, [1, 2, 3], 1, [1, 2], adding=[3])]}, kind="kraft", alive=(1, 2, 3), dead=(4,))
    p, e = plan(s, Scenario(reassign_complete=True))
    rule = "PartitionChangeBuilder (PartitionReassignmentReplicas)"
    assert elections(p) == [("a-0", "reassign", 1, 2, True, False, rule), ("b-0", "reassign", 1, 1, True, False, rule),
                            ("c-0", "reassign", 1, 1, False, False, rule), ("d-0", "reassign", -1, -1, False, False, rule),
                            ("e-0", "reassign", 1, 1, True, False, rule)]
    assert [e[k].reason for k in ("a-0", "b-0", "c-0", "d-0", "e-0")] == [
        "leader 1 is removed: the first target replica of [2, 3] in the ISR and acceptable",
        "leader 1 stays; the replica set shrinks, so the leader epoch is bumped",
        "the reassignment to [1, 4] cannot complete: target replicas [4] are not alive and cannot join the ISR",
        "the reassignment to [2, 3] cannot complete: the partition has no live leader for the new replicas to "
        "catch up from",
        "leader 1 stays"]
    assert [(e[k].after.replicas, e[k].after.isr, e[k].after.leader_epoch, e[k].after.adding_replicas,
             e[k].after.removing_replicas) for k in ("a-0", "b-0", "e-0")] == [
        ((2, 3), (2, 3), 6, (), ()), ((1, 2), (1, 2), 6, (), ()), ((1, 2, 3), (1, 2, 3), 5, (), ())]
    assert all(e[k].before is s.topics[i].partitions[0] for i, k in enumerate(("a-0", "b-0", "c-0", "d-0", "e-0")))


def test_preferred_election_that_only_clears_the_elr_keeps_a_valid_leader() -> None:
    """``electPreferredLeader``: the preferred replica 1 is out of the ISR and the current leader
    2 is valid, so it stays; the ISR [2,3] is at min ISR 2, so ``maybePopulateTargetElr`` clears
    the stored ELR [1] and the builder writes that record (partition epoch + 1, no new leader).
    Counter: the leader epoch does not move."""
    s = cluster({"t": [part(0, [1, 2, 3], 2, [2, 3], elr=[1])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features={ELR_FEATURE: 1})
    _, e = plan(s, Scenario(preferred=(("t", 0),)), "4.0")
    a = e["t-0"].after
    assert (a.leader, a.elr, a.leader_epoch, a.version, e["t-0"].elected) == (2, (), 5, 8, False)
    assert e["t-0"].reason == "leader 2 is still valid (in the ISR and acceptable)"


@pytest.mark.parametrize("config,features,expected", [
    # UNCLEAN (the topic allows it) finds no acceptable replica either: nothing about it refused
    pytest.param({"unclean.leader.election.enable": "true"}, None, "no acceptable replica is in the ISR [1]",
                 id="unclean-on-elr-off"),
    # counter: ONLINE with ELR on: the fenced 1 leaves the ISR for the ELR (maybePopulateTargetElr),
    # and the reason names both
    pytest.param({}, {ELR_FEATURE: 1},
                 "no acceptable replica is in the ISR [] or the ELR [1]; unclean leader election is not allowed",
                 id="unclean-off-elr-on"),
])
def test_reason_of_a_fenced_sole_replica(config, features, expected) -> None:
    s = cluster({"t": [part(0, [1], 1, [1])]}, kind="kraft", alive=(1, 2), configs={"t": config}, features=features)
    _, e = plan(s, Scenario(fail=(1,)), "4.0")
    assert (e["t-0"].after.leader, e["t-0"].reason) == (-1, expected)


def test_min_isr_one_keeps_the_elr_empty() -> None:
    """``maybePopulateTargetElr``: a target ISR of at least min ISR (the default 1) clears the ELR:
    fencing follower 2 leaves ISR [1] and no ELR. Counter: min ISR 2 puts 2 in the ELR."""
    for config, elr in (({}, ()), ({"min.insync.replicas": "2"}, (2,))):
        s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, kind="kraft", alive=(1, 2), configs={"t": config},
                    features={ELR_FEATURE: 1})
        p, _ = plan(s, Scenario(fail=(2,)), "4.0")
        assert [(u.after.isr, u.after.elr) for u in p.isr_updates] == [((1,), elr)]


@pytest.mark.parametrize("stored,config,expected", [
    # canElectLastKnownLeader: ISR and ELR empty, one last known leader: elected, counted unclean
    pytest.param(dict(last_known_elr=[3]), {}, (3, True, "the last known leader is elected (KIP-966 balanced "
                                                         "recovery; counted unclean)"), id="last-known-leader"),
    # counter: the ELR holds the fenced 3, so no last known leader; UNCLEAN takes the first
    # acceptable replica
    pytest.param(dict(elr=[3]), {"unclean.leader.election.enable": "true"},
                 (1, True, "no ISR member is acceptable; UNCLEAN: the first acceptable replica in replica order"),
                 id="unclean-with-empty-isr"),
])
def test_reason_of_an_election_with_an_empty_isr(stored, config, expected) -> None:
    s = cluster({"t": [part(0, [1, 2, 3], -1, [], **stored)]}, kind="kraft", alive=(1, 2), dead=(3,),
                configs={"t": config}, features={ELR_FEATURE: 1})
    _, e = plan(s, Scenario(), "4.0")
    assert (e["t-0"].after.leader, e["t-0"].unclean, e["t-0"].reason) == expected


@pytest.mark.parametrize("isr,expected", [
    # broker 0 is a valid id: electing it (record leader 0 >= 0) clears the last known ELR
    pytest.param([0], (0, ()), id="leader-0-clears"),
    # counter: nobody valid, leader stays -1: the last known ELR stays
    pytest.param([], (-1, (1,)), id="no-leader-keeps"),
])
def test_last_known_leader_cleared_by_a_leader_with_id_0(isr, expected) -> None:
    """``maybeUpdateLastKnownLeader``: cleared once the record names a leader (``leader >= 0``)."""
    p = part(0, [0, 1], -1, isr, last_known_elr=[1], elr=[] if isr else [1])
    res = run(p, E_ONLINE, acceptable=only(0), elr=True, min_isr=1)
    assert (state(p, res).leader, state(p, res).last_known_elr) == expected


@pytest.mark.parametrize("p,target_isr,expected", [
    # the partition keeps its leader 2 and the record only shrinks the ISR: the stale last known
    # ELR is cleared (the partition has a leader and the record does not remove it)
    pytest.param(part(0, [1, 2, 3], 2, [2, 3], last_known_elr=[1]), [2], (2, ()), id="kept-leader-clears"),
    # counter: still leaderless and nothing to write: the last known leader stays for recovery
    pytest.param(part(0, [1, 2, 3], -1, [], elr=[2], last_known_elr=[1]), None, (-1, (1,)), id="leaderless-keeps"),
])
def test_last_known_leader_cleared_only_while_there_is_a_leader(p, target_isr, expected) -> None:
    """``maybeUpdateLastKnownLeader``: ``record.leader() >= 0 || (partition.leader != NO_LEADER
    && record.leader() != NO_LEADER)`` clears the last known ELR."""
    res = run(p, E_ONLINE, acceptable=only(2, 3) if target_isr else nobody, elr=True, min_isr=1,
              target_isr=target_isr)
    assert (state(p, res).leader, state(p, res).last_known_elr) == expected


def test_unclean_elections_answer_as_elect_leaders_does() -> None:
    """``ReplicationControlManager.electLeader`` UNCLEAN: a-0 has a leader (ELECTION_NOT_NEEDED,
    nothing written, ``partition.hasLeader()``); b-0 is leaderless, its only ISR member 3 fenced:
    the builder's UNCLEAN election takes the first acceptable replica, 1, whatever the topic says;
    c-0's replicas are all fenced: the builder writes nothing (ELIGIBLE_LEADERS_NOT_AVAILABLE)."""
    s = cluster({"a": [part(0, [1, 2], 1, [1, 2])], "b": [part(0, [3, 1, 2], -1, [3])],
                 "c": [part(0, [3, 4], -1, [3])]},
                kind="kraft", alive=(1, 2), dead=(3, 4), configs={"b": {"unclean.leader.election.enable": "false"}})
    p, e = plan(s, Scenario(unclean_election=(("a", 0), ("b", 0), ("c", 0))))
    assert elections(p) == [("a-0", "unclean_election", 1, 1, False, False, "PartitionChangeBuilder UNCLEAN"),
                            ("b-0", "unclean_election", -1, 1, True, True, "PartitionChangeBuilder UNCLEAN"),
                            ("c-0", "unclean_election", -1, -1, False, False, "PartitionChangeBuilder UNCLEAN")]
    assert e["a-0"].reason == "ELECTION_NOT_NEEDED: broker 1 leads"
    assert e["b-0"].after.isr == (1,) and e["b-0"].after.leader_epoch == 6
    assert e["c-0"].reason.startswith("ELIGIBLE_LEADERS_NOT_AVAILABLE")
    # the counter-case: without the admin election the topic's config keeps b-0 offline
    _p, e = plan(s, Scenario())
    assert e["b-0"].after.leader == -1 and not e["b-0"].elected


@pytest.mark.parametrize("config,expected", [
    # maybeTriggerUncleanLeaderElectionForLeaderlessPartitions: the topic allows it, so
    # electLeader(UNCLEAN): the first acceptable replica in replica order, 2
    pytest.param({"unclean.leader.election.enable": "true"},
                 ("u-0", "offline", -1, 2, True, True, "PartitionChangeBuilder UNCLEAN"), id="unclean-on"),
    # counter: the topic forbids it, so only the ONLINE election a registration or unfencing
    # triggers (generateLeaderAndIsrUpdates without setElection(UNCLEAN)): no ISR member is acceptable
    pytest.param({}, ("u-0", "offline", -1, -1, False, False, "PartitionChangeBuilder ONLINE"), id="unclean-off"),
])
def test_the_controllers_own_pass_elects_each_leaderless_partition_as_its_topic_allows(config, expected) -> None:
    """No scenario: ``ReplicationControlManager.maybeTriggerUncleanLeaderElectionForLeaderlessPartitions``
    (``brokersToIsrs.partitionsWithNoLeader``): an offline election for u-0, whose only ISR member
    3 is fenced, UNCLEAN when ``uncleanLeaderElectionEnabledForTopic``; b-0, which has a leader,
    gets none."""
    s = cluster({"b": [part(0, [1, 2], 1, [1, 2])], "u": [part(0, [3, 2], -1, [3])]}, kind="kraft",
                alive=(1, 2), dead=(3,), configs={"u": config})
    p, _ = plan(s, Scenario())
    assert elections(p) == [expected]
