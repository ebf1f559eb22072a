"""Kafka's znode payloads decoded as ``ZkData.scala``'s ``decode`` methods read them: each table's
expected values come from the Kafka method named in its docstring (Kafka 3.x, ``core/src/main/
scala/kafka/zk/ZkData.scala``), each rule with the input that must not trigger it."""

from __future__ import annotations

import json

import pytest

from kreplica.formats.errors import FormatError, Malformed
from kreplica.formats.zookeeper import znodes


def _j(doc) -> bytes:
    return json.dumps(doc).encode()


@pytest.mark.parametrize("data, expected", [
    pytest.param(_j({"controller_epoch": 7, "leader": 1, "version": 1, "leader_epoch": 3, "isr": [1, 2]}),
                 znodes.PartitionStateZnode(1, 3, (1, 2), 7, 0), id="kafka-2.x-state"),
    pytest.param(_j({"controller_epoch": 7, "leader": 2, "version": 1, "leader_epoch": 4, "isr": [2],
                     "leader_recovery_state": 1}),
                 znodes.PartitionStateZnode(2, 4, (2,), 7, 1), id="recovering-kip-704"),
    pytest.param(_j({"version": 1, "isr": [1, "x", True]}),
                 znodes.PartitionStateZnode(-1, -1, (1,), None, 0), id="odd-fields-take-defaults"),
    pytest.param(None, None, id="no-bytes-no-state"),
    pytest.param(b"", None, id="empty-no-state"),
])
def test_partition_state(data, expected):
    """``TopicPartitionStateZNode.decode``: leader, leader_epoch, isr, controller_epoch; no bytes
    (``Json.parseBytes`` gives ``None``) is no state."""
    assert znodes.decode_partition_state(data) == expected


@pytest.mark.parametrize("data", [
    pytest.param(b"{not json", id="not-json"),
    pytest.param(b"[1,2]", id="json-array"),
    pytest.param(b"7", id="json-number"),
])
def test_partition_state_not_what_kafka_writes(data):
    """``Json.parseBytes`` of bytes that are not JSON is ``None``, and ``asJsonObject`` of JSON
    that is not an object throws: either way Kafka reads no state from the znode."""
    with pytest.raises(Malformed) as info:
        znodes.decode_partition_state(data)
    assert info.value.field == "partition_state" and isinstance(info.value, FormatError)


def test_topic_assignment_with_adding_and_removing():
    """``TopicZNode.decode``: the partitions of the ``partitions`` map, each with its
    ``adding_replicas``/``removing_replicas`` entry (``getReplicas``: empty when absent)."""
    t = znodes.decode_topic(_j({"version": 3, "topic_id": "TTTTTTTTTTTTTTTTTTTTTQ",
                                "partitions": {"0": [1, 2, 3], "10": [3, 1, 2]},
                                "adding_replicas": {"0": [4], "5": [9]}, "removing_replicas": {"0": [3]}}))
    assert t.topic_id == "TTTTTTTTTTTTTTTTTTTTTQ"
    assert t.partitions == {0: znodes.ReplicaAssignment((1, 2, 3), (4,), (3,)),
                            10: znodes.ReplicaAssignment((3, 1, 2))}
    # counter-case: an adding entry of a partition the map does not list makes no partition
    assert 5 not in t.partitions


@pytest.mark.parametrize("data, expected", [
    pytest.param(None, znodes.TopicZnode(None, {}), id="no-bytes"),
    pytest.param(_j({"version": 1, "partitions": {"x": [1], "2": [1]}}),
                 znodes.TopicZnode(None, {2: znodes.ReplicaAssignment((1,))}), id="non-numeric-key-left-out"),
    pytest.param(_j({"version": 1, "partitions": []}), znodes.TopicZnode(None, {}), id="partitions-not-a-map"),
])
def test_topic_assignment_edges(data, expected):
    """``TopicZNode.decode``'s ``getOrElse``: no bytes is no topic id and no partitions."""
    assert znodes.decode_topic(data) == expected


@pytest.mark.parametrize("decoder, data, expected", [
    pytest.param(znodes.decode_controller, _j({"version": 2, "brokerid": 2, "timestamp": "1"}), 2,
                 id="controller"),
    pytest.param(znodes.decode_controller, _j({"version": 1, "brokerid": "2"}), None, id="controller-id-not-int"),
    pytest.param(znodes.decode_controller, None, None, id="no-controller"),
    pytest.param(znodes.decode_controller_epoch, b"7", 7, id="epoch"),
    pytest.param(znodes.decode_controller_epoch, b"-1", -1, id="epoch-signed"),
    pytest.param(znodes.decode_controller_epoch, None, None, id="no-epoch"),
    pytest.param(znodes.decode_cluster_id, _j({"version": "1", "id": "abc"}), "abc", id="cluster-id"),
    pytest.param(znodes.decode_config, _j({"version": 1, "config": {"min.insync.replicas": "2"}}),
                 {"min.insync.replicas": "2"}, id="config"),
    pytest.param(znodes.decode_config, _j({"version": 1}), None, id="config-without-config"),
])
def test_small_znodes(decoder, data, expected):
    """``ControllerZNode.decode`` (``brokerid``), ``ControllerEpochZNode.decode`` (``toInt``),
    ``ClusterIdZNode.fromJson`` (``id``), ``ConfigEntityZNode.decode`` (``config``)."""
    assert decoder(data) == expected


@pytest.mark.parametrize("data", [pytest.param(b" 7", id="space"), pytest.param(b"7_0", id="underscore"),
                                  pytest.param(b"seven", id="word")])
def test_controller_epoch_is_parse_int(data):
    """``new String(bytes, UTF_8).toInt`` is ``Integer.parseInt``: no spaces, no underscores
    (which Python's ``int`` would take)."""
    with pytest.raises(Malformed):
        znodes.decode_controller_epoch(data)


def test_broker_registration():
    """``BrokerIdZNode.decode``: endpoints as written (``NAME://host:port``), rack when present."""
    reg = znodes.decode_broker(_j({"version": 5, "host": "h1", "port": 9092, "jmx_port": -1,
                                   "endpoints": ["PLAINTEXT://h1:9092"], "rack": "a", "timestamp": "1"}))
    assert reg == znodes.BrokerZnode(5, "h1", 9092, ("PLAINTEXT://h1:9092",), "a")
    # counter-case: a version 1 registration has no endpoints and no rack
    assert znodes.decode_broker(_j({"version": 1, "host": "h1", "port": 9092})) == \
        znodes.BrokerZnode(1, "h1", 9092, (), None)


def test_admin_and_notification_entries():
    """``ReassignPartitionsZNode.decode`` (topic, partition, replicas),
    ``PreferredReplicaElectionZNode.decode`` and ``IsrChangeNotificationSequenceZNode.decode``
    (topic, partition); an item without a string topic and an int partition is not a partition."""
    reassign = znodes.decode_reassignment(_j({"version": 1, "partitions": [
        {"topic": "t", "partition": 3, "replicas": [1, 2, 4]}, {"topic": 5, "partition": 1}]}))
    assert reassign == (znodes.PartitionEntry("t", 3, (1, 2, 4)),)
    assert reassign[0].as_dict() == {"topic": "t", "partition": 3, "replicas": [1, 2, 4]}
    preferred = znodes.decode_preferred_election(_j({"version": 1, "partitions": [{"topic": "t", "partition": 1}]}))
    assert [e.as_dict() for e in preferred] == [{"topic": "t", "partition": 1}]
    assert znodes.decode_isr_change(None) == ()
    event = znodes.decode_log_dir_event(_j({"version": 1, "broker": 3, "event": 1}))
    assert (event.broker, event.event) == (3, 1)
