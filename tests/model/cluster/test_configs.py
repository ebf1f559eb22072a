"""One lookup of a topic's effective config, as Kafka's controller resolves it
(``ConfigurationControlManager.getTopicConfig``: the topic's override, the controller node's
dynamic config, the cluster default ``<default>``, then the static config: Kafka's default here),
read alike by ``cluster-state``'s health lists and by the election rules."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.common import ControllerView
from kreplica.model.cluster.configs import effective_topic_config, min_insync_replicas
from kreplica.model.versions import DEFAULT_VERSION
from tests.builders.cluster import cluster, part

DEFAULTS = {"<default>": {"min.insync.replicas": "2"}}


def test_the_topic_override_comes_first() -> None:
    configs = {**DEFAULTS, "1": {"min.insync.replicas": "3"}}
    assert min_insync_replicas({"min.insync.replicas": "1"}, configs, controller=1) == 1


def test_the_controller_node_s_dynamic_config_before_the_cluster_default() -> None:
    configs = {**DEFAULTS, "1": {"min.insync.replicas": "3"}}
    assert min_insync_replicas({}, configs, controller=1) == 3


def test_another_node_s_dynamic_config_is_not_the_controller_s() -> None:
    # the counter-case: broker 2's own override is not what controller 1 reads
    configs = {**DEFAULTS, "2": {"min.insync.replicas": "3"}}
    assert min_insync_replicas({}, configs, controller=1) == 2
    assert min_insync_replicas({}, configs, controller=None) == 2


def test_unset_or_unreadable_is_kafka_s_default() -> None:
    assert min_insync_replicas({}, {}, controller=1) == 1
    assert min_insync_replicas({"min.insync.replicas": "two"}, {}, controller=1) == 1
    assert effective_topic_config("unclean.leader.election.enable", {}, {}, controller=1) is None


@pytest.mark.parametrize("broker_configs, under", [
    ({"1": {"min.insync.replicas": "3"}}, True),      # the controller's own override: 2 live ISR < 3
    ({"2": {"min.insync.replicas": "3"}}, False),     # another broker's: the default 1 holds
    ({"<default>": {"min.insync.replicas": "3"}, "1": {"min.insync.replicas": "2"}}, False),
])
def test_cluster_state_and_the_election_rules_read_the_same_value(broker_configs, under) -> None:
    state = cluster({"orders": [part(0, [1, 2, 3], 1, [1, 2])]}, alive=(1, 2, 3), broker_configs=broker_configs)
    assert ("orders-0" in state.health.under_min_isr) is under
    assert ControllerView(state, DEFAULT_VERSION).health(("orders", 0)) == (False, under)
