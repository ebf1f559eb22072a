"""KRaft's ``PartitionChangeBuilder`` elections, eligible leader replicas included: the spec's test
vectors (kafka-algorithms §4.6, from ``PartitionChangeBuilderTest``) on ``build()``, then the
controller's events on hand-built KRaft states. Expected values are worked out in the comments."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.kraft import E_ONLINE, E_PREFERRED, E_UNCLEAN, build, java_hash_set_order
from kreplica.analysis.election.scenarios import Scenario, ScenarioError, plan_elections
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

ELR_ON = {"eligible.leader.replicas.version": 1}


def _build(p, election, acceptable=lambda r: True, **kw):
    kw.setdefault("elr_enabled", False)
    kw.setdefault("min_isr", 1)
    return build(p, acceptable=acceptable, election=election, leader_recovery=True,
                 isr_shrink_bumps_epoch=False, **kw)


def leader_of(p, res):
    return (res.after or p).leader, res.unclean


FOO = part(0, [2, 1, 3], 1, [2, 1, 3])
BAZ = part(0, [2, 1, 3], 3, [1, 3])


def not3(r):
    return r != 3


@pytest.mark.parametrize("p,election,target_isr,acceptable,expected", [
    pytest.param(FOO, E_PREFERRED, None, not3, (2, False), id="foo-preferred"),
    pytest.param(FOO, E_ONLINE, None, not3, (1, False), id="foo-online"),
    pytest.param(FOO, E_UNCLEAN, None, not3, (1, False), id="foo-unclean"),
    pytest.param(FOO, E_ONLINE, [1, 3], not3, (1, False), id="foo-online-isr-1-3"),
    pytest.param(FOO, E_UNCLEAN, [1, 3], not3, (1, False), id="foo-unclean-isr-1-3"),
    pytest.param(FOO, E_ONLINE, [3], not3, (-1, False), id="foo-online-isr-3"),
    pytest.param(FOO, E_UNCLEAN, [3], not3, (2, True), id="foo-unclean-isr-3"),
    pytest.param(BAZ, E_PREFERRED, None, lambda r: True, (3, False), id="baz-preferred-current-valid"),
    pytest.param(BAZ, E_ONLINE, None, lambda r: True, (3, False), id="baz-online"),
    pytest.param(BAZ, E_UNCLEAN, None, lambda r: True, (3, False), id="baz-unclean"),
])
def test_partition_change_builder_elect_leader_vectors(p, election, target_isr, acceptable, expected) -> None:
    assert leader_of(p, _build(p, election, acceptable, target_isr=target_isr)) == expected


def test_new_replica_in_the_target_isr_is_a_clean_leader() -> None:
    # FOO with replicas [2,1,3,4], target ISR [4]: 4 is in the ISR and acceptable -> (4, clean)
    p = part(0, [2, 1, 3, 4], 1, [2, 1, 3])
    assert leader_of(p, _build(p, E_UNCLEAN, not3, target_isr=[4])) == (4, False)


def test_unclean_result_sets_isr_to_the_leader_and_recovering() -> None:
    # FOO UNCLEAN with target ISR [3]: leader 2, ISR [2], RECOVERING; leader epoch 5+1,
    # partition epoch 7+1 (PartitionRegistration.merge)
    r = _build(FOO, E_UNCLEAN, not3, target_isr=[3])
    assert (r.after.isr, r.after.leader_recovery_state, r.after.leader_epoch, r.after.version) == ((2,), 1, 6, 8)


def test_elr_populated_when_isr_shrinks_below_min_isr() -> None:
    # testEligibleLeaderReplicas_IsrShrinkBelowMinISR: [1,2,3,4] all in the ISR, leader 1, min ISR
    # 3; the ISR shrinks to [1,2]: ISR [1,2], leader unchanged (no leader epoch bump on MV >= 3.6),
    # ELR [3,4], last known ELR empty; partition epoch + 1
    p = part(0, [1, 2, 3, 4], 1, [1, 2, 3, 4])
    r = _build(p, E_ONLINE, target_isr=[1, 2], elr_enabled=True, min_isr=3)
    assert (r.after.isr, r.after.elr, r.after.last_known_elr) == ((1, 2), (3, 4), ())
    assert (r.after.leader, r.after.leader_epoch, r.after.version) == (1, 5, 8)


def test_isr_shrink_bumps_the_leader_epoch_before_3_6() -> None:
    p = part(0, [1, 2], 1, [1, 2])
    r = build(p, acceptable=lambda r: True, election=E_ONLINE, elr_enabled=False, min_isr=1, leader_recovery=True,
              isr_shrink_bumps_epoch=True, target_isr=[1])
    assert (r.after.leader, r.after.leader_epoch) == (1, 6)


def test_java_hash_set_order_buckets_by_low_bits() -> None:
    # capacity 16: 17 lands in bucket 1 with 1 (after it, insertion order), 3 in bucket 3
    assert java_hash_set_order([3, 17, 1]) == [17, 1, 3]
    assert java_hash_set_order([4, 3]) == [3, 4]


@pytest.mark.parametrize("values,expected", [
    # 12 entries: java.util.HashMap resizes only when ++size exceeds the threshold 16 * 0.75 = 12,
    # so the table stays at 16 and 16 shares bucket 0 with 0 (inserted first)
    pytest.param([16, *range(11)], [16, *range(11)], id="12-entries-stay-at-16"),
    # counter: the 13th entry doubles the table to 32: 32 stays in bucket 0 with 0, 16 moves to
    # bucket 16, after 1 … 10
    pytest.param([32, *range(11), 16], [32, *range(11), 16], id="13th-entry-doubles-to-32"),
    pytest.param([16, *range(12)], [*range(12), 16], id="13-entries-16-moves-to-bucket-16"),
])
def test_java_hash_set_order_resizes_past_three_quarters(values, expected) -> None:
    """``HashMap.putVal``: ``if (++size > threshold) resize()``, threshold = capacity * 0.75,
    capacity doubling from 16; the bucket is ``(n - 1) & hash``."""
    assert java_hash_set_order(values) == expected


@pytest.mark.parametrize("values,expected", [
    # HashMap.hash spreads the high half down: 65536 ^ (65536 >>> 16) = 65537, bucket 1, after 0
    pytest.param([65536, 0], [0, 65536], id="65536-in-bucket-1"),
    # counter: in bucket 1 with 1, insertion order holds
    pytest.param([65536, 1], [65536, 1], id="65536-shares-bucket-1-with-1"),
])
def test_java_hash_set_order_spreads_the_high_bits(values, expected) -> None:
    """``HashMap.hash(key)``: ``(h = key.hashCode()) ^ (h >>> 16)``; ``Integer.hashCode`` is the value."""
    assert java_hash_set_order(values) == expected


# ---- the controller's events on a KRaft state -----------------------------------------------------

def plan(state, scenario=Scenario(), version=None):
    p = plan_elections(state, scenario, parse_kafka_version(version) if version else None)
    return p, {e.partition: e for e in p.elections}


def test_fence_without_elr_keeps_the_last_isr_member_and_goes_offline() -> None:
    # leader 1 is the only ISR member and is fenced: target ISR [] is not written without ELR
    # (the last member stays), no valid leader -> leader -1: leader epoch 6, partition epoch 8
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, kind="kraft", alive=(1, 2, 3))
    _, e = plan(s, Scenario(fail=(1,)))
    assert (e["t-0"].after.leader, e["t-0"].after.isr, e["t-0"].after.leader_epoch, e["t-0"].after.version) == \
        (-1, (1,), 6, 8)
    assert e["t-0"].offline and not e["t-0"].unclean


def test_fence_with_unclean_allowed_elects_the_first_acceptable_replica() -> None:
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, kind="kraft", alive=(1, 2, 3))
    _, e = plan(s, Scenario(fail=(1,), unclean="yes"))
    assert (e["t-0"].after.leader, e["t-0"].after.isr, e["t-0"].after.leader_recovery_state) == (2, (2,), 1)
    assert e["t-0"].unclean


def test_elr_member_leads_when_the_isr_empties() -> None:
    # ISR [1] already below min ISR 2, ELR [2]; leader 1 fenced: target ISR []; ELR := ({2} ∪ {1})
    # minus [] = [1,2] (hash order); valid: ISR empty and in the ELR and acceptable -> 2 (1 is
    # fenced); elected via the ELR: ISR [2], ELR [1], clean
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1], elr=[2])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features=ELR_ON)
    p, e = plan(s, Scenario(fail=(1,)))
    assert p.elr_enabled
    a = e["t-0"].after
    assert (a.leader, a.isr, a.elr, e["t-0"].unclean) == (2, (2,), (1,), False)
    # 3.9 keeps no ELR: without one, 2 is not in the ISR and the partition goes offline
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features=ELR_ON)
    p, e = plan(s, Scenario(fail=(1,)), "3.9")
    assert not p.elr_enabled and e["t-0"].offline


def test_last_isr_member_fenced_with_elr_records_the_last_known_leader_then_returns() -> None:
    # replicas [1,2,3], ISR [1], min ISR 2, ELR on; 1 fenced: ISR [] is written (ELR on), ELR [1],
    # leader -1, last known ELR [previous leader 1]
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features=ELR_ON)
    _, e = plan(s, Scenario(fail=(1,)))
    a = e["t-0"].after
    assert (a.leader, a.isr, a.elr, a.last_known_elr) == (-1, (), (1,), (1,))
    # broker 1 back (unfenced): the ONLINE election finds 1 in the ELR -> leader 1, ISR [1], ELR
    # [], last known ELR cleared; clean
    back = cluster({"t": [a]}, kind="kraft", alive=(1, 2, 3), configs={"t": {"min.insync.replicas": "2"}},
                   features=ELR_ON)
    _, e = plan(back)
    b = e["t-0"].after
    assert (b.leader, b.isr, b.elr, b.last_known_elr, e["t-0"].unclean) == (1, (1,), (), (), False)


def test_last_known_leader_is_elected_unclean_when_isr_and_elr_are_empty() -> None:
    # ISR [], ELR [], last known ELR [3]: canElectLastKnownLeader -> 3, flagged unclean, ISR [3]
    s = cluster({"t": [part(0, [1, 2, 3], -1, [], last_known_elr=[3])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "2"}}, features=ELR_ON)
    _, e = plan(s)
    assert (e["t-0"].after.leader, e["t-0"].after.isr, e["t-0"].unclean) == (3, (3,), True)


def test_kraft_controlled_shutdown_moves_led_partitions_and_shrinks_followed_isrs() -> None:
    # a-0 led by 1: ONLINE election without 1 -> first valid of [1,2,3] is 2; ISR [2,3]
    # b-0 followed by 1: ISR [2] with the leader unchanged: no leader epoch bump on 4.0 (MV >= 3.6),
    # one on 3.5
    s = cluster({"a": [part(0, [1, 2, 3], 1, [1, 2, 3])], "b": [part(0, [2, 1], 2, [2, 1])]}, kind="kraft",
                alive=(1, 2, 3))
    p, e = plan(s, Scenario(shutdown=(1,)))
    assert (e["a-0"].after.leader, e["a-0"].after.isr, e["a-0"].after.leader_epoch) == (2, (2, 3), 6)
    (u,) = p.isr_updates
    assert (u.after.isr, u.after.leader_epoch, u.after.version) == ((2,), 5, 8)
    p, _ = plan(s, Scenario(shutdown=(1,)), "3.5")
    assert p.isr_updates[0].after.leader_epoch == 6


def test_kraft_preferred_election() -> None:
    # a-0: preferred 1 valid -> 1; b-0: preferred 1 out of the ISR, leader 2 valid -> no record
    s = cluster({"a": [part(0, [1, 2], 2, [2, 1])], "b": [part(0, [1, 2], 2, [2])]}, kind="kraft", alive=(1, 2))
    _, e = plan(s, Scenario(preferred=()))
    assert (e["a-0"].after.leader, e["a-0"].after.leader_epoch) == (1, 6)
    assert not e["b-0"].elected and "PREFERRED_LEADER_NOT_AVAILABLE" in e["b-0"].reason


def test_kraft_reassignment_completion_re_elects_a_removed_leader() -> None:
    # replicas [1,2,3,4], adding [4], removing [1], leader 1, ISR [1,2,3]: 4 joins the ISR and the
    # same build completes: ISR [2,3,4], replicas [2,3,4]; 1 is no longer in the target ISR ->
    # first valid of [2,3,4] is 2; one record: leader epoch 6, partition epoch 8
    s = cluster({"t": [part(0, [1, 2, 3, 4], 1, [1, 2, 3], adding=[4], removing=[1])]}, kind="kraft")
    _, e = plan(s, Scenario(reassign_complete=True))
    a = e["t-0"].after
    assert (a.leader, a.isr, a.replicas, a.adding_replicas, a.removing_replicas, a.leader_epoch, a.version) == \
        (2, (2, 3, 4), (2, 3, 4), (), (), 6, 8)


def test_kraft_needs_a_kraft_version() -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, kind="kraft", alive=(1, 2))
    with pytest.raises(ScenarioError, match="3.0"):
        plan_elections(s, Scenario(), parse_kafka_version("2.8"))


def test_fencing_a_follower_elects_where_the_leader_is_not_acceptable() -> None:
    """handleBrokerFenced(2) -> generateLeaderAndIsrUpdates(brokerToRemove=2): t-0's target ISR is
    [1, 3]; its leader 1 is fenced already (isAcceptableLeader false), so electAnyLeader takes the
    first valid target replica, 3: a leader change, an election (leader epoch 6, partition epoch 8),
    though broker 2 did not lead it. u-0, led by 3, only loses 2 from its ISR."""
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2, 3])], "u": [part(0, [2, 3], 3, [2, 3])]}, kind="kraft",
                alive=(2, 3), dead=(1,))
    p, e = plan(s, Scenario(fail=(2,)))
    assert list(e) == ["t-0"]
    assert (e["t-0"].before.leader, e["t-0"].after.leader, e["t-0"].after.isr, e["t-0"].after.leader_epoch,
            e["t-0"].after.version, e["t-0"].elected) == (1, 3, (1, 3), 6, 8, True)
    assert [(u.key, u.after.isr, u.reason) for u in p.isr_updates] == [
        (("u", 0), (3,), "broker 2 leaves the ISR (handleBrokerFenced)")]
