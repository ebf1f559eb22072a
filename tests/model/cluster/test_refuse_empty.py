"""A cluster state of no broker and no topic is no evidence of a healthy cluster
(``kreplica/model/cluster/sources.py``, ``refuse_empty``): a one-line error saying what the
evidence holds instead (real directories: ``tests/interop/test_wild_*.py``)."""

from __future__ import annotations

import pytest

from kreplica.formats.errors import FormatError
from kreplica.model.cluster import Broker, ClusterState, Controller, Pending, compute_health
from kreplica.model.cluster.sources import refuse_empty


def _state(kind: str, position: dict, *, brokers=(), cluster_id=None, controller=None, features=None):
    return ClusterState(kind, "src", position, cluster_id, Controller(controller, 1 if controller else None),
                        tuple(brokers), (), {}, Pending(), compute_health(brokers, [], {}), (), features or {})


def test_a_broker_is_a_cluster() -> None:
    state = _state("kraft", {"offset": 9}, brokers=[Broker(1, True, None, (), 4)])
    assert refuse_empty(state) is state


@pytest.mark.parametrize(("state", "chroot", "says"), [
    pytest.param(_state("zookeeper", {"zxid": 0x1a}, cluster_id="abc", controller=1), "/kafka",
                 "Kafka's znodes under /kafka register no broker and no topic at zxid 0x1a (only cluster id abc; "
                 "controller 1): no cluster state to report", id="zookeeper"),
    pytest.param(_state("kraft", {"offset": 4}, features={"metadata.version": 7}), None,
                 "the metadata registers no broker and no topic at offset 4 (only metadata.version 7)",
                 id="kraft-records"),
    pytest.param(_state("kraft", {"offset": -1}), None, "no KRaft metadata records", id="kraft-no-record"),
])
def test_no_broker_and_no_topic_is_refused(state, chroot, says) -> None:
    with pytest.raises(FormatError, match="src") as caught:
        refuse_empty(state, chroot)
    assert says in str(caught.value)
