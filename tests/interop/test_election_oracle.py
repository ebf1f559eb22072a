"""Elections planned on the ZooKeeper oracle's state at its snapshot (written by a real ZooKeeper
3.8.0 while clients acted as Kafka brokers; brokers 5 and 6 are dead there: 5 shut down, 6's
session expired). The expected leader, ISR, leader epoch and znode version of every partition
are worked out by hand below from the state in ``expected.json`` and the rule that decides
(kafka-algorithms spec §4.3), partition by partition."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.model.cluster import load_cluster_state
from tests.conftest import oracle_dir

# The snapshot state (expected.json at_snapshot):
#   audit.log-0 replicas [5,6,1] leader -1 isr [6]     e2 v3  unclean.leader.election.enable=true
#   audit.log-1 [3,4,2] leader 3 isr [3,4,2] e0 v0
#   orders-0 [1,3,4,5] (+4, -5) leader 1 isr [1,3] e2 v2      orders-1 [2,4,6] leader 2 isr [2,4] e1 v1
#   orders-2 [3,5,1] leader 3 isr [3,1] e1 v1                 orders-3 [4,6,2] leader 4 isr [4,6] e0 v1
#   orders-4 [5,1,3] leader 5 isr [5,1,3] e0 v0               orders-5 [6,2,4] leader 6 isr [6,2,4] e0 v0
#   payments-0 [2,3,5] leader 2 isr [2,3] e1 v1               payments-1 [6,1,4] leader -1 isr [6] e1 v2 (unclean false)
#   payments-2 [4,5,6] leader 4 isr [4,6] e1 v1               payments-3 [2,3,4,1] (+4, -1) leader 1 isr [1,2,3] e1 v1
# live brokers 1-4; <default> unclean.leader.election.enable=false; orders has no unclean config.


@pytest.fixture(scope="module")
def state():
    return load_cluster_state([oracle_dir("zookeeper", "plain-snapshot")])


def results(plan):
    return {e.partition: (e.after.leader, list(e.after.isr), e.after.leader_epoch, e.after.version, e.unclean)
            for e in plan.elections}


def test_the_controller_taking_over_now(state) -> None:
    # onControllerFailover: OfflineReplica for the dead brokers' replicas first (5, then 6), then
    # the offline elections.
    plan = plan_elections(state, Scenario())
    assert results(plan) == {
        # 6 is in the ISR: leader -1, ISR kept [6] (last member), e3 v4; then unclean (topic config
        # true): first live of [5,6,1] is 1, ISR [1], e4 v5
        "audit.log-0": (1, [1], 4, 5, True),
        # 5 removed: leader -1, ISR [1,3], e1 v1; election: first of [5,1,3] alive in ISR = 1, e2 v2
        "orders-4": (1, [1, 3], 2, 2, False),
        # 6 removed: ISR [2,4] e1 v1; election: 2, e2 v2
        "orders-5": (2, [2, 4], 2, 2, False),
        # 6 kept as the last member (e2 v3); unclean disabled (topic false): stays offline
        "payments-1": (-1, [6], 2, 3, False),
    }
    assert plan.offline_after == ("payments-1",)
    # the ISR writes without an election: orders-3 and payments-2 lose 6 (leader 4 stays)
    updates = {f"{u.key[0]}-{u.key[1]}": (u.after.leader, list(u.after.isr), u.after.leader_epoch)
               for u in plan.isr_updates if u.after.leader != -1 or u.key[0] != "payments"}
    assert updates["orders-3"] == (4, [4], 1) and updates["payments-2"] == (4, [4], 2)
    assert plan.has_problems


def test_brokers_5_and_6_fail(state) -> None:
    # onBrokerFailure([5,6]): offline elections first, then OfflineReplica 5 and 6
    plan = plan_elections(state, Scenario(fail=(5, 6)))
    assert results(plan) == {
        "audit.log-0": (1, [1], 3, 4, True),      # unclean: 1, e3 v4; 5, 6 no longer in the ISR
        "orders-4": (1, [1, 3], 1, 1, False),     # clean: first of [5,1,3] alive in ISR
        "orders-5": (2, [2, 4], 1, 1, False),
        "payments-1": (-1, [6], 2, 3, False),     # fails; OfflineReplica 6 keeps [6], e2 v3
    }


def test_broker_1_fails_too(state) -> None:
    plan = plan_elections(state, Scenario(fail=(1,)))
    r = results(plan)
    # orders-0 led by 1: first of [1,3,4,5] alive in ISR [1,3] is 3; ISR [3]; e3 v3
    assert r["orders-0"] == (3, [3], 3, 3, False)
    # payments-3 led by 1: first of [2,3,4,1] alive in ISR [1,2,3] is 2; ISR [2,3]; e2 v2
    assert r["payments-3"] == (2, [2, 3], 2, 2, False)
    # audit.log-0 has no live replica left ([5,6,1]): no leader
    assert r["audit.log-0"][0] == -1


def test_controlled_shutdown_of_broker_2(state) -> None:
    plan = plan_elections(state, Scenario(shutdown=(2,)))
    assert results(plan) == {
        "orders-1": (4, [4], 2, 2, False),        # [2,4,6]: first in ISR [2,4] not shutting down = 4
        "payments-0": (3, [3], 2, 2, False),      # [2,3,5]: 3
    }


def test_reassignments_complete(state) -> None:
    plan = plan_elections(state, Scenario(reassign_complete=True))
    assert results(plan) == {
        # 4 catches up (ISR [1,3,4], v3); leader 1 is a target: newEpoch e3 v4; 5 not in the ISR
        "orders-0": (1, [1, 3, 4], 3, 4, False),
        # 4 catches up ([1,2,3,4], v2); 1 is removed: first of [2,3,4] in ISR = 2 (e2 v3);
        # OfflineReplica 1: ISR [2,3,4], e3 v4
        "payments-3": (2, [2, 3, 4], 3, 4, False),
    }


def test_preferred_elections(state) -> None:
    plan = plan_elections(state, Scenario(preferred=()))
    r = results(plan)
    assert r["payments-3"] == (2, [1, 2, 3], 2, 2, False)     # preferred 2 alive, in the ISR
    # audit.log-0 (preferred 5) and payments-1 (preferred 6) are dead: nothing written
    assert r["audit.log-0"] == (-1, [6], 2, 3, False) and r["payments-1"] == (-1, [6], 1, 2, False)
    assert set(r) == {"audit.log-0", "payments-1", "payments-3"}


def test_sweep_agrees_with_planning_each_combination(state) -> None:
    # The sweep evaluates each partition once per subset of its replicas; planning every
    # combination in full (--fail) must name the same partitions newly offline or unclean.
    from itertools import combinations

    from kreplica.analysis.election.sweep import sweep

    result = sweep(state, 2)
    found = {r.units: (set(r.offline), set(r.unclean)) for r in result.results}
    baseline = set(plan_elections(state, Scenario()).offline_after)
    for size in (1, 2):
        for combo in combinations((1, 2, 3, 4), size):
            plan = plan_elections(state, Scenario(fail=combo))
            touched = {f"{t.name}-{p.partition}" for t in state.topics for p in t.partitions
                       if set(combo) & set(p.replicas)}
            offline = (set(plan.offline_after) - baseline) & touched
            unclean = {e.partition for e in plan.elections if e.unclean and not e.offline} & touched - baseline
            assert found.get(combo, (set(), set())) == (offline, unclean), combo
