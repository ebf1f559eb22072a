"""One "offline" rule: no leader, or a leader that is not online (Kafka's ``OfflinePartition``,
``ControllerContext.isReplicaOnline``), with the caller saying which brokers are online."""

from __future__ import annotations

from kreplica.analysis.election.common import ControllerView
from kreplica.analysis.timeline.events import LeaderIsr, is_offline as timeline_offline
from kreplica.model.cluster.state import NO_LEADER, is_offline
from kreplica.model.versions import DEFAULT_VERSION
from tests.builders.cluster import cluster, part


def test_no_leader_is_offline_whoever_is_alive() -> None:
    assert is_offline(NO_LEADER, {1, 2, 3})


def test_a_leader_is_offline_only_when_not_online() -> None:
    assert is_offline(4, {1, 2, 3}) and not is_offline(2, {1, 2, 3})


def test_cluster_state_the_election_view_and_the_timeline_agree() -> None:
    state = cluster({"orders": [part(0, [1, 2], 1, [1, 2]), part(1, [2, 5], 5, [5]), part(2, [3, 1], -1, [])]},
                    alive=(1, 2, 3))
    assert state.health.offline == ("orders-1", "orders-2")
    assert ControllerView(state, DEFAULT_VERSION).offline_keys() == [("orders", 1), ("orders", 2)]
    alive = frozenset({1, 2, 3})
    assert [timeline_offline(LeaderIsr(p.leader, p.leader_epoch, p.isr), alive)
            for p in state.topics[0].partitions] == [False, True, True]


def test_a_leader_in_controlled_shutdown_still_leads_but_does_not_stay_online_for_an_election() -> None:
    # isReplicaOnline(includeShuttingDownBrokers = false): the controller moves leadership off a
    # broker shutting down; until then the broker is registered and serving (not offline in the state)
    state = cluster({"orders": [part(0, [1, 2], 1, [1])]}, alive=(1, 2), shutting=(1,))
    assert state.health.offline == ()
    assert ControllerView(state, DEFAULT_VERSION).offline_keys() == [("orders", 0)]
