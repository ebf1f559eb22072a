"""The what-if sweep (``analysis/election/sweep.py``): which combinations it tries, what each does to
a partition, the ranking, racks, and the baseline.

Each partition's outcome is worked out by hand from the broker-failure handling the sweep
replays (kafka-algorithms §4.3 – §4.6): ZooKeeper ``onBrokerFailure`` → ``Election.leaderForOffline``
(the first live ISR member in assignment order; unclean, ISR ``[leader]``, only when
``unclean.leader.election.enable``) then OfflineReplica (the dead leave the ISR); KRaft
``handleBrokerFenced`` per broker in ascending id. An offline partition counts as under
``min.insync.replicas`` too (no live ISR member at all). Then the sweep as a whole is checked
against ``plan_elections`` with ``--fail`` of the same brokers, combination by combination: the
sweep's per-subset shortcut must give what the full event simulation gives.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.analysis.election.sweep import NO_RACK, sweep
from kreplica.model.cluster import Pending
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part

UNCLEAN_ON = {"unclean.leader.election.enable": "true"}
MIN_ISR_2 = {"min.insync.replicas": "2"}
ELR_ON = {"eligible.leader.replicas.version": 1}


def rows(result) -> list[tuple]:
    return [(r.units, r.offline, r.unclean, r.under_min_isr) for r in result.results]


@pytest.mark.parametrize("kind,alive,dead,n,expected", [
    # every combination of 1 … n live brokers: C(4,1) + C(4,2)
    pytest.param("zookeeper", (1, 2, 3, 4), (), 2, 10, id="zk-4-brokers-up-to-2"),
    pytest.param("zookeeper", (1, 2, 3, 4), (), 1, 4, id="zk-4-brokers-up-to-1"),
    pytest.param("zookeeper", (1, 2, 3, 4), (), 3, 14, id="zk-4-brokers-up-to-3"),
    # a fenced KRaft broker is registered but not live: it is no unit
    pytest.param("kraft", (1, 2, 3), (4,), 2, 6, id="kraft-fenced-broker-not-a-unit"),
])
def test_combinations_are_every_subset_of_live_brokers(kind, alive, dead, n, expected) -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, kind=kind, alive=alive, dead=dead)
    assert sweep(s, n).combinations == expected


def zk_mix():
    """a-0: [1,2]; b-0: replication factor 1 on 3; c-0: ISR [1] only, unclean allowed; d-0:
    [2,3,4] with min ISR 2."""
    return cluster({"a": [part(0, [1, 2], 1, [1, 2])], "b": [part(0, [3], 3, [3])],
                    "c": [part(0, [1, 2, 3], 1, [1])], "d": [part(0, [2, 3, 4], 2, [2, 3, 4])]},
                   alive=(1, 2, 3, 4), configs={"c": UNCLEAN_ON, "d": MIN_ISR_2})


def test_zookeeper_outcomes_and_ranking() -> None:
    # {1}: c-0 unclean (2 leads outside the ISR). {2}, {4}: harmless (a-0 and d-0 keep a live
    # ISR member, d-0 two). {3}: b-0 offline. {1,2}: a-0 offline; c-0 unclean (3). {1,3}: b-0
    # offline, c-0 unclean (2). {1,4}: c-0 unclean. {2,3}: b-0 offline; d-0 to 4, ISR [4] < 2.
    # {2,4}: d-0 to 3, ISR [3]. {3,4}: b-0 offline; d-0 keeps 2, ISR [2].
    # Ranked by (offline, unclean, under min ISR) descending, then fewer brokers, then names.
    assert rows(sweep(zk_mix(), 2, kafka_version=parse_kafka_version("3.9"))) == [
        ((1, 2), ("a-0",), ("c-0",), ("a-0",)),
        ((1, 3), ("b-0",), ("c-0",), ("b-0",)),
        ((2, 3), ("b-0",), (), ("b-0", "d-0")),
        ((3, 4), ("b-0",), (), ("b-0", "d-0")),
        ((3,), ("b-0",), (), ("b-0",)),
        ((1,), (), ("c-0",), ()),
        ((1, 4), (), ("c-0",), ()),
        ((2, 4), (), (), ("d-0",)),
    ]


@pytest.mark.parametrize("config,expected", [
    # the new leader's ISR [2] meets min ISR 1
    pytest.param(UNCLEAN_ON, ((), ("t-0",), ()), id="unclean-allowed-elects-outside-isr"),
    # counter: unclean off (the default since 0.11): the partition goes offline instead
    pytest.param({}, (("t-0",), (), ("t-0",)), id="unclean-off-offline"),
])
def test_lost_isr_is_unclean_or_offline(config, expected) -> None:
    # [1,2,3], ISR [1]: failing 1 leaves no ISR member
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, alive=(1, 2, 3), configs={"t": config})
    (first, *_) = sweep(s, 1).results
    assert (first.units, first.offline, first.unclean, first.under_min_isr) == ((1,), *expected)


def test_what_is_wrong_already_is_the_baseline_not_a_combination() -> None:
    # x-0's only replica 4 is gone: offline before any failure, never listed again. z-0 is under
    # min ISR already (ISR [2] of 2): failing 2 takes it offline (listed as offline, not again as
    # under min ISR); failing 3 changes nothing for it
    s = cluster({"x": [part(0, [4, 1], 4, [4])], "z": [part(0, [2, 3], 2, [2])]}, alive=(1, 2, 3),
                configs={"z": MIN_ISR_2})
    result = sweep(s, 2)
    assert (result.baseline_offline, result.baseline_under_min_isr) == (("x-0",), ("x-0", "z-0"))
    assert rows(result) == [((2,), ("z-0",), (), ()), ((1, 2), ("z-0",), (), ()), ((2, 3), ("z-0",), (), ())]


def test_by_rack() -> None:
    # racks a = {1,2}, b = {3}, and broker 4 without one ("-"). p-0 lives in rack a only; q-0 on
    # 3 and 4 survives losing either
    s = cluster({"p": [part(0, [1, 2], 1, [1, 2])], "q": [part(0, [3, 4], 3, [3, 4])]}, alive=(1, 2, 3, 4),
                racks={1: "a", 2: "a", 3: "b"})
    result = sweep(s, 2, by_rack=True)
    assert result.combinations == 6
    assert [(r.units, r.brokers, r.offline) for r in result.results] == [
        (("a",), (1, 2), ("p-0",)),
        ((NO_RACK, "a"), (1, 2, 4), ("p-0",)),
        ((NO_RACK, "b"), (3, 4), ("q-0",)),
        (("a", "b"), (1, 2, 3), ("p-0",)),
    ]


def test_kraft_fences_one_broker_at_a_time() -> None:
    # [1,2,3], leader 1, min ISR 2, ELR on. {1,2}: fencing 1 moves leadership to 2 (ISR [2,3]),
    # fencing 2 moves it to 3 (ISR [3]; 2 joins the ELR, but the ISR is not empty): online,
    # under min ISR. {1,2,3}: offline
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2, 3])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": MIN_ISR_2}, features=ELR_ON)
    assert rows(sweep(s, 3)) == [
        ((1, 2, 3), ("t-0",), (), ("t-0",)),
        ((1, 2), (), (), ("t-0",)),
        ((1, 3), (), (), ("t-0",)),
        ((2, 3), (), (), ("t-0",)),
    ]


# ---- the sweep against the full event simulation -------------------------------------------------

def mixed(kind: str, features=None):
    """Six brokers, partitions of every shape the failure handling tells apart: led and followed,
    short ISRs, replication factor 1, unclean allowed, min ISR 2, reassignment-free."""
    topics = {
        "a": [part(0, [1, 2, 3], 1, [1, 2, 3]), part(1, [2, 3, 4], 2, [2, 3]), part(2, [3, 1, 5], 3, [3])],
        "u": [part(0, [4, 5, 6], 4, [4]), part(1, [5, 6, 1], 5, [5, 6]), part(2, [6], 6, [6])],
        "m": [part(0, [1, 4, 6], 4, [4, 6, 1]), part(1, [2, 5, 6], 5, [5, 2]), part(2, [3, 4], 3, [3, 4])],
    }
    return cluster(topics, kind=kind, alive=(1, 2, 3, 4, 5, 6), configs={"u": UNCLEAN_ON, "m": MIN_ISR_2},
                   features=features)


@pytest.mark.parametrize("kind,version,features", [
    pytest.param("zookeeper", "3.9", None, id="zk-3.9"),
    pytest.param("zookeeper", "1.0", None, id="zk-1.0-selectors"),
    pytest.param("zookeeper", "0.8.1", None, id="zk-0.8.1"),
    pytest.param("kraft", "3.5", None, id="kraft-3.5"),
    pytest.param("kraft", "4.0", ELR_ON, id="kraft-4.0-elr"),
])
def test_sweep_agrees_with_plan_elections(kind, version, features) -> None:
    v = parse_kafka_version(version)
    s = mixed(kind, features)
    result = sweep(s, 2, kafka_version=v)
    found = {r.units: (set(r.offline), set(r.unclean), set(r.under_min_isr)) for r in result.results}
    assert not result.baseline_offline and not result.baseline_under_min_isr
    for size in (1, 2):
        for combo in combinations((1, 2, 3, 4, 5, 6), size):
            plan = plan_elections(s, Scenario(fail=combo), v)
            offline = set(plan.offline_after)
            unclean = {e.partition for e in plan.elections if e.unclean} - offline
            expected = (offline, unclean, set(plan.under_min_isr_after))
            assert found.get(combo, (set(), set(), set())) == expected, combo


# ---- the rule set, the unclean override, topics being deleted, new partitions, ELR -----------------

@pytest.mark.parametrize("kind,version,rules,emulated", [
    # no --kafka-version: ZooKeeper is emulated at 3.9, the last ZooKeeper controller (ZooKeeper
    # mode is gone in 4.0); KRaft at the current version
    pytest.param("zookeeper", None, "zookeeper", "3.9", id="zk-default-3.9"),
    # counter: before 1.1 the PartitionLeaderSelector classes decide
    pytest.param("zookeeper", "1.0", "zookeeper-legacy", "1.0", id="zk-1.0-legacy-selectors"),
    pytest.param("kraft", "3.7", "kraft", "3.7", id="kraft"),
])
def test_the_sweep_names_the_rules_and_version_it_replayed(kind, version, rules, emulated) -> None:
    s = cluster({"t": [part(0, [1, 2], 1, [1, 2])]}, kind=kind, alive=(1, 2))
    result = sweep(s, 2, kafka_version=parse_kafka_version(version) if version else None)
    assert (result.rules, result.kafka_version, result.max_failures) == (rules, parse_kafka_version(emulated), 2)


@pytest.mark.parametrize("override,config,expected", [
    # --unclean-allowed yes (unclean.leader.election.enable true) elects outside the ISR even though
    # the topic leaves unclean.leader.election.enable at its default (false since 0.11)
    pytest.param("yes", {}, ((), ("t-0",), ()), id="yes-overrides-default-off"),
    # --unclean-allowed no: the partition goes offline even though the topic allows unclean
    pytest.param("no", UNCLEAN_ON, (("t-0",), (), ("t-0",)), id="no-overrides-topic-on"),
])
def test_unclean_override_beats_the_topic_config(override, config, expected) -> None:
    # [1,2,3], ISR [1]: failing 1 leaves no ISR member (Election.leaderForOffline)
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1])]}, alive=(1, 2, 3), configs={"t": config})
    (first, *_) = sweep(s, 1, unclean=override).results
    assert (first.units, first.offline, first.unclean, first.under_min_isr) == ((1,), *expected)


def test_a_topic_being_deleted_gets_no_election() -> None:
    """``KafkaController.onReplicasBecomeOffline`` leaves out the partitions of topics queued for
    deletion (``topicDeletionManager.isTopicQueuedUpForDeletion``): losing gone-0's leader takes
    it offline. Counter: kept-0, the same shape, elects 2. Before any failure both have a live
    leader, so neither is in the baseline; losing the follower 2 (or 3) harms neither."""
    s = cluster({"gone": [part(0, [1, 2], 1, [1, 2])], "kept": [part(0, [1, 2], 1, [1, 2])]},
                alive=(1, 2, 3), pending=Pending(topic_deletions=("gone",)))
    result = sweep(s, 1)
    assert (result.baseline_offline, result.baseline_under_min_isr) == ((), ())
    assert rows(result) == [((1,), ("gone-0",), (), ("gone-0",))]


def test_a_partition_without_state_gets_the_new_partition_election() -> None:
    """No state znode (NewPartition): ``PartitionStateMachine.initializeLeaderAndIsrForPartitions``
    makes the first live replica leader and the live replicas the ISR: never unclean. With min
    ISR 2, losing one replica leaves two live (harmless), losing two leaves one (under min ISR),
    losing all three leaves none (offline)."""
    s = cluster({"t": [part(0, [1, 2, 3], -1, [], version=None)]}, alive=(1, 2, 3), configs={"t": MIN_ISR_2})
    result = sweep(s, 3)
    assert (result.baseline_offline, result.baseline_under_min_isr) == ((), ())
    assert rows(result) == [
        ((1, 2, 3), ("t-0",), (), ("t-0",)),
        ((1, 2), (), (), ("t-0",)),
        ((1, 3), (), (), ("t-0",)),
        ((2, 3), (), (), ("t-0",)),
    ]


@pytest.mark.parametrize("features,expected", [
    # ELR on: fencing 1 leaves ISR [2] < 3, so 1 joins the ELR beside 3; fencing 2 empties the
    # ISR and the live ELR member 3 is a valid leader (isValidNewLeader): online, already under
    # min ISR, so nothing new
    pytest.param(ELR_ON, [((1, 2, 3), ("t-0",), (), ())], id="elr-on-elects-from-elr"),
    # counter: ELR not finalized: the first fencing clears the ELR (maybeUpdateRecordElr), and
    # with the ISR empty and unclean off nobody is valid: offline
    pytest.param(None, [((1, 2), ("t-0",), (), ()), ((1, 2, 3), ("t-0",), (), ())], id="elr-off-offline"),
])
def test_kraft_live_elr_member_takes_over_when_the_isr_empties(features, expected) -> None:
    """KIP-966 (``PartitionChangeBuilder.maybePopulateTargetElr``, ``isValidNewLeader``): [1,2,3],
    ISR [1,2], min ISR 3, ELR [3] (3 was fenced when the ISR shrank below min ISR, and is back
    but not caught up). Fence 1 then 2 (``handleBrokerFenced`` in id order)."""
    s = cluster({"t": [part(0, [1, 2, 3], 1, [1, 2], elr=[3])]}, kind="kraft", alive=(1, 2, 3),
                configs={"t": {"min.insync.replicas": "3"}}, features=features)
    result = sweep(s, 3, kafka_version=parse_kafka_version("4.0"))
    assert result.baseline_under_min_isr == ("t-0",)
    assert rows(result) == expected


def test_combinations_of_equal_impact_are_ordered_by_their_units() -> None:
    """Ranking (man kreplica-plan-elect, --sweep: ranked by the partitions that go offline, unclean or
    under min ISR); equal impact and size are ordered by broker id, 2 before 10, not as text
    (ZooKeeper onBrokerFailure: a sole replica's failure takes it offline)."""
    s = cluster({"p": [part(0, [2], 2, [2])], "q": [part(0, [10], 10, [10])]}, alive=(2, 10))
    assert rows(sweep(s, 1)) == [((2,), ("p-0",), (), ("p-0",)), ((10,), ("q-0",), (), ("q-0",))]


def test_racks_of_equal_impact_are_ordered_by_name() -> None:
    from kreplica.analysis.election.sweep import _unit_order

    assert sorted(["rack-b", 10, "rack-a", 2], key=_unit_order) == [2, 10, "rack-a", "rack-b"]
