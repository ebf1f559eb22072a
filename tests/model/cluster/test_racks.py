"""The brokers planners may place replicas on and their racks (``model/cluster/racks.py``): a
broker is live when registered and alive (ZooKeeper: its session open) and not fenced (KRaft:
``BrokerRegistration.fenced``, what ``ClusterControlManager.isUnfenced`` reads); every registered
broker has a rack entry, ``None`` when it registered none."""

from __future__ import annotations

from dataclasses import replace

from kreplica.model.cluster.racks import broker_racks, live_broker_ids
from kreplica.model.cluster.state import Broker
from tests.builders.cluster import cluster


def with_brokers(*brokers: Broker):
    return replace(cluster({}), brokers=brokers)


def test_only_alive_unfenced_brokers_are_live() -> None:
    state = with_brokers(Broker(4, True, "a", (), 1, fenced=False), Broker(3, False, None, (), 1, fenced=False),
                         Broker(2, True, "b", (), 1, fenced=True), Broker(1, True, None, (), 1),
                         Broker(5, False, "a", (), 1, fenced=True))
    # 1: ZooKeeper (fenced unknown), 4: KRaft unfenced; 2 fenced, 3 and 5 not alive
    assert live_broker_ids(state) == (1, 4)


def test_every_registered_broker_has_a_rack_entry_in_id_order() -> None:
    state = with_brokers(Broker(9, False, "c", (), 1), Broker(2, True, None, (), 1), Broker(5, True, "a", (), 1))
    assert list(broker_racks(state).items()) == [(2, None), (5, "a"), (9, "c")]
