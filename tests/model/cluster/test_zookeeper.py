"""The cluster state read from Kafka's znodes: liveness from sessions, partition state,
configs with their fallbacks, pending admin work, and each health list on hand-worked trees."""

from __future__ import annotations

import json
from dataclasses import replace
from types import MappingProxyType

import pytest

from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import snapshot as zks
from kreplica.model.cluster import HEALTH_LISTS, cluster_state_from_zk, compute_health
from kreplica.model.zookeeper import ZkState, ZkTree
from kreplica.report.schemas.cluster_state import cluster_state_to_dict

S1, S2, S3, DEAD = 0x101, 0x102, 0x103, 0x1DEAD


class _Builder:
    def __init__(self, chroot=""):
        self.t = ZkTree()
        self.t.load_node(zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0), {})
        self.zxid = 0
        self.chroot = chroot

    def put(self, path, value=None, owner=0):
        path = self.chroot + path
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            p = "/" + "/".join(parts[:i])
            if p not in self.t.nodes:
                self.zxid += 1
                self.t.create(p, None, None, 0, -1, self.zxid, 0, False)
        data = value if isinstance(value, (bytes, type(None))) else json.dumps(value).encode()
        self.zxid += 1
        self.t.create(path, data, None, owner, -1, self.zxid, 0, False)
        return self

    def state(self, sessions=(S1, S2, S3)):
        self.t.sessions.update({s: 18000 for s in sessions})
        return ZkState("test", self.zxid, None, MappingProxyType(self.t.nodes),
                       MappingProxyType(self.t.sessions), "snap", 0, (), 0, self.t.digest)


def _cluster(chroot="", dead_session_open=False, topic_min_isr=None, default_min_isr="2"):
    b = _Builder(chroot)
    b.put("/cluster/id", {"version": "1", "id": "abcdefghijklmnopqrstuv"})
    b.put("/controller_epoch", b"7")
    b.put("/controller", {"version": 2, "brokerid": 2, "timestamp": "1", "kraftControllerEpoch": -1}, owner=S2)
    for bid, owner, rack in ((1, S1, "a"), (2, S2, "b"), (3, S3, None), (4, DEAD, "a")):
        reg = {"version": 5, "host": f"h{bid}", "port": 9092, "endpoints": [f"PLAINTEXT://h{bid}:9092"],
               "features": {}, "jmx_port": -1, "timestamp": "1"}
        if rack:
            reg["rack"] = rack
        b.put(f"/brokers/ids/{bid}", reg, owner=owner)
    b.put("/brokers/topics/t", {"version": 3, "topic_id": "TTTTTTTTTTTTTTTTTTTTTQ",
                                "partitions": {"0": [1, 2, 3], "1": [4, 1, 2], "2": [2, 4, 1],
                                               "3": [1, 2, 3, 4], "10": [3, 1, 2]},
                                "adding_replicas": {"3": [4]}, "removing_replicas": {"3": [3]}})
    states = {
        0: {"controller_epoch": 7, "leader": 1, "version": 1, "leader_epoch": 3, "isr": [1, 2, 3]},
        1: {"controller_epoch": 7, "leader": 4, "version": 1, "leader_epoch": 1, "isr": [4, 1]},
        2: {"controller_epoch": 6, "leader": -1, "version": 1, "leader_epoch": 9, "isr": [4],
            "leader_recovery_state": 1},
        3: {"controller_epoch": 7, "leader": 2, "version": 1, "leader_epoch": 0, "isr": [1, 2, 3]},
        10: {"controller_epoch": 7, "leader": 3, "version": 1, "leader_epoch": 2, "isr": [3, 1, 2]},
    }
    for p, s in states.items():
        b.put(f"/brokers/topics/t/partitions/{p}/state", s)
    b.t.set_data(b.chroot + "/brokers/topics/t/partitions/0/state",
                 json.dumps(states[0]).encode(), 4, b.zxid + 1, 0)
    cfg = {"cleanup.policy": "delete"}
    if topic_min_isr is not None:
        cfg["min.insync.replicas"] = topic_min_isr
    b.put("/config/topics/t", {"version": 1, "config": cfg})
    if default_min_isr is not None:
        b.put("/config/brokers/<default>", {"version": 1, "config": {"min.insync.replicas": default_min_isr}})
    b.put("/config/brokers/1", {"version": 1, "config": {"x": "y"}})
    b.put("/admin/reassign_partitions",
          {"version": 1, "partitions": [{"topic": "t", "partition": 3, "replicas": [1, 2, 4]}]})
    b.put("/admin/preferred_replica_election", {"version": 1, "partitions": [{"topic": "t", "partition": 1}]})
    b.put("/admin/delete_topics/gone")
    b.put("/isr_change_notification/isr_change_0000000004",
          {"version": 1, "partitions": [{"topic": "t", "partition": 0}]})
    b.put("/log_dir_event_notification/log_dir_event_0000000001", {"version": 1, "broker": 3, "event": 1})
    sessions = (S1, S2, S3, DEAD) if dead_session_open else (S1, S2, S3)
    _cluster.builder = b
    return cluster_state_from_zk(b.state(sessions), chroot=chroot)


@pytest.mark.parametrize("chroot", [pytest.param("", id="root"), pytest.param("/kafka", id="chroot")])
def test_reads_kafka_znodes(chroot):
    cs = _cluster(chroot)
    assert cs.cluster_id == "abcdefghijklmnopqrstuv"
    assert (cs.controller.broker_id, cs.controller.epoch) == (2, 7)
    assert [(b.id, b.alive, b.rack) for b in cs.brokers] == [
        (1, True, "a"), (2, True, "b"), (3, True, None), (4, False, "a")]
    b1 = cs.broker(1)
    assert b1.endpoints == ("PLAINTEXT://h1:9092",) and b1.session == S1
    assert b1.broker_epoch == _cluster.builder.t.nodes[chroot + "/brokers/ids/1"].czxid
    t = cs.topic("t")
    assert t.topic_id == "TTTTTTTTTTTTTTTTTTTTTQ" and t.config == {"cleanup.policy": "delete"}
    assert [p.partition for p in t.partitions] == [0, 1, 2, 3, 10]
    p0, _, p2, p3, _ = t.partitions
    assert (p0.leader, p0.leader_epoch, p0.isr, p0.controller_epoch, p0.version) == (1, 3, (1, 2, 3), 7, 4)
    assert (p2.leader, p2.leader_recovery_state) == (-1, 1)
    assert (p3.adding_replicas, p3.removing_replicas) == ((4,), (3,))
    assert cs.broker_configs == {"<default>": {"min.insync.replicas": "2"}, "1": {"x": "y"}}
    assert cs.pending.reassignments == ({"topic": "t", "partition": 3, "replicas": [1, 2, 4]},)
    assert cs.pending.preferred_elections == ({"topic": "t", "partition": 1},)
    assert cs.pending.topic_deletions == ("gone",)
    assert cs.pending.isr_change_notifications == (
        {"name": "isr_change_0000000004", "partitions": [{"topic": "t", "partition": 0}]},)
    assert cs.pending.log_dir_event_notifications == (
        {"name": "log_dir_event_0000000001", "version": 1, "broker": 3, "event": 1},)
    assert cs.position == {"zxid": cs.position["zxid"]} and cs.position["zxid"] > 0


def test_health_lists_hand_worked():
    h = _cluster().health
    # broker 4's session is gone: t-1 (leader 4) has a dead leader; t-2 has none
    assert h.no_leader == ("t-2",)
    assert h.leader_not_alive == ("t-1",)
    assert h.offline == ("t-1", "t-2")
    # t-3 (replicas [1, 2, 3, 4], ISR [1, 2, 3]) is being reassigned and 4 is the replica being
    # added: Kafka's replication factor leaves it out (OngoingReassignmentState), so t-3 is whole
    assert h.under_replicated == ("t-1", "t-2")
    assert h.live_isr_empty == ("t-2",)
    # default min.insync.replicas 2: t-1 has live ISR [1], t-2 none
    assert h.under_min_isr == ("t-1", "t-2")
    assert h.reassigning == ("t-3",)
    assert h.preferred_leader_not_leader == ("t-2", "t-3")   # t-1 is led by its preferred (dead) broker


def test_broker_alive_only_while_its_session_is_open():
    assert _cluster(dead_session_open=True).broker(4).alive is True
    h = _cluster(dead_session_open=True).health
    assert h.leader_not_alive == () and h.no_leader == ("t-2",)


@pytest.mark.parametrize("topic_min, default_min, under", [
    pytest.param("4", "1", ("t-0", "t-1", "t-10", "t-2", "t-3"), id="topic-config-wins"),
    pytest.param("1", "3", ("t-2",), id="topic-config-wins-lower"),
    pytest.param(None, "2", ("t-1", "t-2"), id="broker-default"),
    pytest.param(None, None, ("t-2",), id="kafka-default-1"),
])
def test_min_isr_precedence(topic_min, default_min, under):
    h = _cluster(topic_min_isr=topic_min, default_min_isr=default_min).health
    assert tuple(sorted(h.under_min_isr)) == tuple(sorted(under))


def test_health_orders_partitions_numerically():
    h = _cluster(topic_min_isr="4").health
    assert h.under_min_isr == ("t-0", "t-1", "t-2", "t-3", "t-10")


def test_bad_json_is_a_finding_not_an_exception():
    b = _Builder()
    b.put("/brokers/topics/broken", b"{not json")
    b.put("/brokers/ids/1", b"\xff", owner=S1)
    cs = cluster_state_from_zk(b.state())
    assert [f.kind for f in cs.findings] == ["kafka_invalid_znode", "kafka_invalid_znode"]
    assert cs.topic("broken").partitions == () and cs.broker(1).endpoints == ()


def _topic_with(states: dict, assignment: dict):
    b = _Builder()
    b.put("/brokers/ids/1", {"version": 5, "host": "h1", "port": 9092, "endpoints": []}, owner=S1)
    b.put("/brokers/topics/t", {"version": 2, "partitions": assignment})
    for p, s in states.items():
        b.put(f"/brokers/topics/t/partitions/{p}/state", s)
    return cluster_state_from_zk(b.state())


_STATE = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 2, "isr": [1]}


@pytest.mark.parametrize("states, assignment, expected", [
    pytest.param({0: _STATE}, {"0": [1]}, [(0, 1, 2)], id="assigned-with-state"),
    pytest.param({0: _STATE, 7: _STATE}, {"0": [1]}, [(0, 1, 2)], id="state-of-an-unassigned-partition-not-read"),
    pytest.param({}, {"0": [1]}, [(0, -1, -1)], id="assigned-without-state-has-no-leader"),
    pytest.param({0: b"{not json"}, {"0": [1]}, [(0, -1, -1)], id="unreadable-state-has-no-leader"),
])
def test_partitions_are_the_assignment(states, assignment, expected):
    """``KafkaController.initializeControllerContext``: a topic's partitions come from its
    assignment (``getFullReplicaAssignmentForTopics``) and their states are then read for those
    (``updateLeaderAndIsrCache``); a partition without a readable state has no leader
    (``TopicPartitionStateZNode.decode`` gives ``None``: ``NewPartition``)."""
    cs = _topic_with(states, assignment)
    assert [(p.partition, p.leader, p.leader_epoch) for p in cs.topic("t").partitions] == expected


def test_unreadable_state_is_a_finding():
    """A state znode that is not Kafka's JSON is named in a finding (counter-case: a readable
    one is not)."""
    assert [f.kind for f in _topic_with({0: b"[1]"}, {"0": [1]}).findings] == ["kafka_invalid_znode"]
    assert _topic_with({0: _STATE}, {"0": [1]}).findings == ()


def test_empty_tree():
    cs = cluster_state_from_zk(_Builder().state())
    assert cs.cluster_id is None and cs.brokers == () and cs.topics == ()
    assert cs.controller.broker_id is None and not cs.has_problems


def test_machine_output_schema():
    doc = cluster_state_to_dict(_cluster())
    assert json.loads(json.dumps(doc)) == doc
    assert doc["type"] == "cluster_state" and doc["source_kind"] == "zookeeper"
    assert list(doc)[:9] == ["type", "source", "source_kind", "position", "cluster_id", "controller",
                             "brokers", "topics", "broker_configs"]
    assert set(doc["brokers"][0]) == {"id", "alive", "rack", "endpoints", "broker_epoch", "log_dirs",
                                      "cordoned_log_dirs"}
    assert set(doc["topics"][0]) == {"name", "topic_id", "config", "partitions"}
    assert set(doc["topics"][0]["partitions"][0]) == {
        "partition", "replicas", "adding_replicas", "removing_replicas", "leader", "leader_epoch", "isr",
        "elr", "last_known_elr", "controller_epoch", "leader_recovery_state", "version", "directories"}
    assert (doc["topics"][0]["partitions"][0]["elr"], doc["topics"][0]["partitions"][0]["last_known_elr"]) == ([], [])
    # KRaft's own images and directories: empty in ZooKeeper mode
    assert doc["topics"][0]["partitions"][0]["directories"] == [] and doc["brokers"][0]["log_dirs"] == []
    assert [doc[k] for k in ("features", "controllers", "acls", "client_quotas", "scram_users", "delegation_tokens",
                             "producer_ids")] == [{}, [], [], [], [], [], None]
    assert list(doc["health"]) == list(HEALTH_LISTS)
    assert doc["health"]["offline"] == ["t-1", "t-2"]


def test_compute_health_without_brokers_marks_all_offline():
    cs = _cluster()
    h = compute_health([], cs.topics, {})
    assert h.offline == ("t-0", "t-1", "t-2", "t-3", "t-10")


def test_image_applies_a_znode_change_as_the_tree_reads():
    """One ``apply`` for a znode change: the image a change leaves equals the image of the tree
    that holds it (``ZkImage.from_tree``), and a change outside Kafka's znodes changes nothing."""
    from kreplica.model.cluster import ZkImage

    b = _Builder()
    b.put("/brokers/ids/1", {"version": 5, "host": "h1", "port": 9092, "endpoints": []}, owner=S1)
    b.put("/brokers/topics/t", {"version": 2, "partitions": {"0": [1]}})
    image = ZkImage.from_tree(b.t.nodes, {S1: 1}, "")
    assert image.alive() == {1} and image.partition("t", 0).leader == -1   # assigned, no state yet
    assert image.partition("t", 1) is None
    b.put("/brokers/topics/t/partitions/0/state", _STATE)
    assert image.apply("/brokers/topics/t/partitions/0/state",
                       b.t.nodes["/brokers/topics/t/partitions/0/state"]) == ("state", ("t", 0))
    assert image.apply("/unrelated", b.t.nodes["/brokers/topics/t"]) is None
    whole = ZkImage.from_tree(b.t.nodes, {S1: 1}, "")
    assert image.state("s", {"zxid": 1}) == whole.state("s", {"zxid": 1})


# -- ZkImage.partition and which unreadable znodes are named (issue 27 §7) ---------------------
# ``KafkaController.initializeControllerContext`` reads a topic's assignment
# (``getFullReplicaAssignmentForTopics``) and then the state znodes of the partitions it lists
# (``updateLeaderAndIsrCache``): the state of a partition the assignment does not list, or of a
# topic without an assignment znode, is never read, so it is never found unreadable either.

def _image_with_state():
    from kreplica.model.cluster import ZkImage

    b = _Builder()
    b.put("/brokers/ids/1", {"version": 5, "host": "h1", "port": 9092, "endpoints": []}, owner=S1)
    b.put("/brokers/topics/t", {"version": 2, "partitions": {"0": [1], "1": [1]}})
    b.put("/brokers/topics/t/partitions/0/state", _STATE)
    return ZkImage.from_tree(b.t.nodes, {S1: 1}, "")


@pytest.mark.parametrize("topic, partition, expected", [
    pytest.param("t", 0, (0, (1,), 1, 2, (1,)), id="assigned-with-its-state"),
    pytest.param("t", 1, (1, (1,), -1, -1, ()), id="assigned-without-state-no-leader"),
    pytest.param("t", 7, None, id="not-assigned"),
    pytest.param("nosuch", 0, None, id="no-such-topic"),
])
def test_image_partition_joins_assignment_and_state(topic, partition, expected):
    p = _image_with_state().partition(topic, partition)
    assert (p if p is None else (p.partition, p.replicas, p.leader, p.leader_epoch, p.isr)) == expected


@pytest.mark.parametrize("state_path, named", [
    pytest.param("/brokers/topics/t/partitions/0/state", True, id="assigned-partition-read"),
    pytest.param("/brokers/topics/t/partitions/7/state", False, id="unassigned-partition-not-read"),
    pytest.param("/brokers/topics/u/partitions/0/state", False, id="topic-without-assignment-not-read"),
])
def test_unreadable_state_named_only_when_the_controller_reads_it(state_path, named):
    b = _Builder()
    b.put("/brokers/ids/1", {"version": 5, "host": "h1", "port": 9092, "endpoints": []}, owner=S1)
    b.put("/brokers/topics/t", {"version": 2, "partitions": {"0": [1]}})
    b.put(state_path, b"{not json")
    cs = cluster_state_from_zk(b.state())
    assert [f.details["znode"] for f in cs.findings] == ([state_path] if named else [])


@pytest.mark.parametrize("topic_applied, named", [
    pytest.param(True, True, id="assigned-partition-read"),
    pytest.param(False, False, id="no-assignment-yet-not-read"),
])
def test_image_applied_state_of_a_topic_it_has_no_assignment_for(topic_applied, named):
    """A state znode change applied (the timeline's ``ZkImage.apply``) for a topic whose
    assignment the image does not hold is not read: no finding for it, no failure."""
    from kreplica.model.cluster import ZkImage

    path = "/brokers/topics/u/partitions/0/state"
    b = _Builder()
    b.put("/brokers/topics/u", {"version": 2, "partitions": {"0": [1]}})
    b.put(path, b"{not json")
    image = ZkImage("", {S1: 1})
    if topic_applied:
        image.apply("/brokers/topics/u", b.t.nodes["/brokers/topics/u"])
    assert image.apply(path, b.t.nodes[path]) == ("state", ("u", 0))
    assert [f.details["znode"] for f in image.state("s", {"zxid": 1}).findings] == ([path] if named else [])


_ISR = "/isr_change_notification/isr_change_0000000004"


@pytest.mark.parametrize("steps, pending, named", [
    pytest.param([b"{not json"], [{"name": "isr_change_0000000004", "partitions": []}], [_ISR],
                 id="unreadable-listed-with-no-partitions-and-named"),
    pytest.param([b"{not json", None], [], [], id="unreadable-then-deleted-forgotten"),
    pytest.param([None], [], [], id="deleted-never-held"),
    pytest.param([json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0}]}).encode()],
                 [{"name": "isr_change_0000000004", "partitions": [{"topic": "t", "partition": 0}]}], [],
                 id="readable"),
])
def test_image_isr_change_notification(steps, pending, named):
    """``/isr_change_notification/isr_change_<seq>`` (ZkData ``IsrChangeNotificationSequenceZNode``):
    pending while the znode exists, its partitions when it decodes (none, and the znode named
    in a ``kafka_invalid_znode`` finding, when it does not); once deleted (the controller
    deletes what it processed) it is neither pending nor named."""
    from types import SimpleNamespace

    from kreplica.model.cluster import ZkImage

    image = ZkImage("", {S1: 1})
    for data in steps:
        node = None if data is None else SimpleNamespace(data=data)
        assert image.apply(_ISR, node) == ("isr_change", "isr_change_0000000004")
    cs = image.state("s", {"zxid": 1})
    assert [dict(n) for n in cs.pending.isr_change_notifications] == pending
    assert [f.details["znode"] for f in cs.findings] == named


def test_unreadable_states_named_in_partition_order():
    """State znodes are read in partition order, numerically (2 before 10, as the health lists
    order them), so their findings come in that order; a child of ``partitions`` that is not a
    number is no partition (``TopicPartitionZNode``'s path is ``.../partitions/<int>``)."""
    b = _Builder()
    b.put("/brokers/ids/1", {"version": 5, "host": "h1", "port": 9092, "endpoints": []}, owner=S1)
    b.put("/brokers/topics/t", {"version": 2, "partitions": {"2": [1], "10": [1]}})
    b.put("/brokers/topics/t/partitions/x", None)
    for p in ("10", "2"):
        b.put(f"/brokers/topics/t/partitions/{p}/state", b"{not json")
    cs = cluster_state_from_zk(b.state())
    assert [f.details["znode"] for f in cs.findings] == [
        "/brokers/topics/t/partitions/2/state", "/brokers/topics/t/partitions/10/state"]
    assert [p.partition for p in cs.topic("t").partitions] == [2, 10]


def test_a_finding_names_the_snapshot_read_and_follows_the_trees_own():
    """The cluster state keeps the replay's findings first, then one per unreadable znode, each at
    the snapshot the tree came from, and holds the tree's source and zxid."""
    b = _Builder()
    b.put("/brokers/topics/broken", b"{not json")
    replayed = Finding("zk_zxid_gap", "log.5", 12, "a gap")
    state = replace(b.state(), findings=(replayed,))
    cs = cluster_state_from_zk(state)
    assert (cs.source_kind, cs.source, cs.position) == ("zookeeper", "test", {"zxid": b.zxid})
    assert [(f.kind, f.path, f.position) for f in cs.findings] == [
        ("zk_zxid_gap", "log.5", 12), ("kafka_invalid_znode", "snap", 0)]
    assert cs.findings[1].message == "znode /brokers/topics/broken does not hold valid JSON"
    assert cs.findings[1].details == {"znode": "/brokers/topics/broken"}


def test_a_znode_of_valid_json_in_another_shape_says_what_is_wrong_with_it():
    """JSON that parses but is not Kafka's partition state (``TopicPartitionStateZNode.decode``
    reads an object): the finding says why, not "valid JSON" (counter-case above: bad JSON)."""
    (f,) = _topic_with({0: b"[1]"}, {"0": [1]}).findings
    assert (f.path, f.position, f.details) == ("snap", 0, {"znode": "/brokers/topics/t/partitions/0/state"})
    assert f.message == ("znode /brokers/topics/t/partitions/0/state does not hold what Kafka writes there "
                         "(not a JSON object)")
