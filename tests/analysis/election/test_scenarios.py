"""Scenario partition names (``analysis/election/scenarios.py``): ``topic-p`` as Kafka's
``TopicPartition.toString`` writes it (``topic + "-" + partition``; a topic name may itself hold
``-``, so the partition number is after the last one), or a bare topic for all its partitions."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.scenarios import ScenarioError, parse_partition_names
from tests.builders.cluster import cluster, part

STATE = cluster({"orders": [part(0, [1], 1, [1]), part(1, [1], 1, [1])], "my-topic": [part(0, [1], 1, [1])]})


@pytest.mark.parametrize("names,expected", [
    # a hyphenated topic's partition, then (a comma list with an empty item) the bare topic, both
    # its partitions in order; the repeated orders-1 is kept once, where it first came
    pytest.param(["my-topic-0, orders-1", "orders,,orders-1"], (("my-topic", 0), ("orders", 1), ("orders", 0)),
                 id="topic-p-then-topic"),
    # a bare topic first, then a name after it in the same list
    pytest.param(["orders,my-topic-0"], (("orders", 0), ("orders", 1), ("my-topic", 0)), id="topic-then-topic-p"),
    # an empty item (a leading comma) is skipped, not the end of the list
    pytest.param([",my-topic-0"], (("my-topic", 0),), id="empty-item-skipped"),
])
def test_names_topics_commas_and_duplicates(names, expected) -> None:
    assert parse_partition_names(STATE, names) == expected


@pytest.mark.parametrize("name", [
    pytest.param("orders-9", id="partition-not-in-the-state"),
    pytest.param("nosuch-0", id="topic-not-in-the-state"),
    pytest.param("my", id="neither-a-topic-nor-topic-p"),
])
def test_an_unknown_name_is_a_scenario_error(name) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_partition_names(STATE, [name])
    assert str(err.value) == (f"no partition {name!r} in the cluster state (names are topic-p, e.g. orders-0, "
                              "or a topic name)")
