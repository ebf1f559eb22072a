"""``ZkImage.apply``, znode by znode: which paths under Kafka's chroot are Kafka's metadata, what
each change leaves in the image (brokers, assignments and states, controller, configs, pending
admin work), and which unreadable payloads are named in ``kafka_invalid_znode`` findings.

Rules, from Kafka's ``core/src/main/scala/kafka/zk/ZkData.scala`` (the znode paths and payloads)
and ``KafkaController.initializeControllerContext`` (what the controller reads of them):

- ``BrokerIdZNode`` is ``/brokers/ids/<int>`` (``BrokerIdsZNode`` children are ``toInt``);
  ``TopicZNode`` is ``/brokers/topics/<t>``; ``TopicPartitionStateZNode`` is
  ``/brokers/topics/<t>/partitions/<int>/state``; ``DeleteTopicsTopicZNode`` is
  ``/admin/delete_topics/<t>``; ``ReassignPartitionsZNode`` and ``PreferredReplicaElectionZNode``
  are ``/admin/reassign_partitions`` and ``/admin/preferred_replica_election``;
  ``IsrChangeNotificationSequenceZNode`` and ``LogDirEventNotificationSequenceZNode`` are the
  children of ``/isr_change_notification`` and ``/log_dir_event_notification``;
  ``ConfigEntityZNode`` is ``/config/topics|brokers/<name>``. Anything else (a deeper path, a
  sibling, a non-numeric broker id) is not Kafka's metadata and changes nothing.
- A payload that does not decode is named once, by its path, with why; once a later write decodes,
  or the znode is deleted, it is named no more. A deleted znode the image never held changes
  nothing (the controller's watches fire for deletions of znodes it never read).
- A state znode that does not decode leaves its partition leaderless (``TopicPartitionStateZNode.
  decode`` gives ``None``: ``NewPartition``), and the image holds no state for it.
- The chroot is where a broker creates ``/brokers/ids`` and ``/brokers/topics`` (``KafkaZkClient.
  makeSurePersistentPathExists`` at start-up under ``zookeeper.connect``'s chroot); a chroot given
  with a trailing ``/`` is the same chroot.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kreplica.model.cluster import ZkImage
from kreplica.model.cluster.state import Broker, Controller, PartitionState, Pending, Topic
from tests.model.cluster.test_zookeeper import S1, S2, _Builder

_REG = {"version": 5, "host": "h1", "port": 9092, "endpoints": ["PLAINTEXT://h1:9092"], "rack": "a"}
_TOPIC = {"version": 3, "topic_id": "TTTTTTTTTTTTTTTTTTTTTQ", "partitions": {"0": [1, 2]},
          "adding_replicas": {}, "removing_replicas": {}}
_STATE = {"controller_epoch": 7, "leader": 1, "version": 1, "leader_epoch": 3, "isr": [1, 2]}
_STATE_PATH = "/brokers/topics/t/partitions/0/state"


def _js(doc) -> bytes:
    return json.dumps(doc).encode()


def _node(data: bytes | None, version: int = 0, czxid: int = 0x21, owner: int = S1):
    return SimpleNamespace(data=data, version=version, czxid=czxid, ephemeral_owner=owner, children=())


def _image() -> ZkImage:
    return ZkImage("", {S1})


def _state(image: ZkImage):
    return image.state("s", {"zxid": 9}, where="snap")


def _findings(cs) -> list[tuple]:
    return [(f.kind, f.path, f.position, f.message, f.details) for f in cs.findings]


def _named(path: str, why: str) -> tuple:
    msg = "valid JSON" if why == "not JSON" else f"what Kafka writes there ({why})"
    return ("kafka_invalid_znode", "snap", 0, f"znode {path} does not hold {msg}", {"znode": path})


def _with_topic() -> ZkImage:
    image = _image()
    image.apply("/brokers/topics/t", _node(_js(_TOPIC)))
    return image


def _partition(leader=1, epoch=3, isr=(1, 2), ce=7, version=1) -> PartitionState:
    return PartitionState(partition=0, replicas=(1, 2), adding_replicas=(), removing_replicas=(), leader=leader,
                          leader_epoch=epoch, isr=isr, controller_epoch=ce, leader_recovery_state=0,
                          version=version)


_LEADERLESS = dict(leader=-1, epoch=-1, isr=(), ce=None)


# -- every Kafka znode applied ---------------------------------------------------------------------

def test_each_kafka_znode_applied_is_what_its_payload_says():
    """Each znode's change says what it is (its kind and key) and leaves its payload in the state."""
    image = _image()
    changes = [
        ("/cluster/id", _js({"version": "1", "id": "abcdefghijklmnopqrstuv"}), ("cluster_id", None)),
        ("/controller", _js({"version": 2, "brokerid": 1, "timestamp": "1"}), ("controller", None)),
        ("/controller_epoch", b"7", ("controller_epoch", None)),
        ("/brokers/ids/1", _js(_REG), ("broker", 1)),
        ("/brokers/ids/2", _js({**_REG, "rack": None}), ("broker", 2)),
        ("/brokers/topics/t", _js(_TOPIC), ("topic", "t")),
        (_STATE_PATH, _js(_STATE), ("state", ("t", 0))),
        ("/config/topics/t", _js({"version": 1, "config": {"min.insync.replicas": "2"}}), ("config", ("topics", "t"))),
        ("/config/brokers/1", _js({"version": 1, "config": {"x": "y"}}), ("config", ("brokers", "1"))),
        ("/admin/reassign_partitions", _js({"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                                          "replicas": [2, 1]}]}), ("reassign", None)),
        ("/admin/preferred_replica_election", _js({"version": 1, "partitions": [{"topic": "t", "partition": 0}]}),
         ("preferred", None)),
        ("/admin/delete_topics/gone", None, ("delete_topic", "gone")),
        ("/isr_change_notification/isr_change_0000000001", _js({"version": 1, "partitions": [
            {"topic": "t", "partition": 0}]}), ("isr_change", "isr_change_0000000001")),
        ("/log_dir_event_notification/log_dir_event_0000000002", _js({"version": 1, "broker": 2, "event": 1}),
         ("log_dir_event", "log_dir_event_0000000002")),
    ]
    for path, data, kind in changes:
        owner = S2 if path == "/brokers/ids/2" else S1
        assert image.apply(path, _node(data, version=4, owner=owner)) == kind, path
    cs = _state(image)
    assert (cs.source_kind, cs.source, cs.position, cs.cluster_id) == ("zookeeper", "s", {"zxid": 9},
                                                                      "abcdefghijklmnopqrstuv")
    assert cs.controller == Controller(1, 7)
    assert cs.brokers == (Broker(1, True, "a", ("PLAINTEXT://h1:9092",), 0x21, S1),
                          Broker(2, False, None, ("PLAINTEXT://h1:9092",), 0x21, S2))   # S2's session is closed
    assert cs.topics == (Topic("t", "TTTTTTTTTTTTTTTTTTTTTQ", {"min.insync.replicas": "2"},
                               (_partition(version=4),)),)
    assert cs.broker_configs == {"1": {"x": "y"}}
    assert cs.pending == Pending(
        reassignments=({"topic": "t", "partition": 0, "replicas": [2, 1]},),
        preferred_elections=({"topic": "t", "partition": 0},), topic_deletions=("gone",),
        isr_change_notifications=({"name": "isr_change_0000000001", "partitions": [{"topic": "t", "partition": 0}]},),
        log_dir_event_notifications=({"name": "log_dir_event_0000000002", "version": 1, "broker": 2, "event": 1},))
    assert cs.findings == ()


@pytest.mark.parametrize("path, kind", [
    pytest.param("/brokers/ids/12", ("broker", 12), id="broker-id"),
    pytest.param("/admin/delete_topics/t", ("delete_topic", "t"), id="topic-deletion"),
    pytest.param("/brokers/topics/TAX", ("topic", "TAX"), id="topic-named-with-X"),
    pytest.param("/config/brokers/<default>", ("config", ("brokers", "<default>")), id="default-broker-config"),
])
def test_kafka_znode_paths(path, kind):
    """The paths of ZkData's znodes, each named with its key (counter-case of the next test)."""
    assert _image().apply(path, _node(b"")) == kind


@pytest.mark.parametrize("path", [
    pytest.param("/brokers/ids/abc", id="broker-id-not-a-number"),
    pytest.param("/brokers/ids/1/extra", id="under-a-broker-registration"),
    pytest.param("/brokers/other/3", id="numbered-child-of-another-brokers-znode"),
    pytest.param("/brokers/seqid", id="broker-sequence-id"),
    pytest.param("/admin/delete_topics/t/extra", id="under-a-topic-deletion"),
    pytest.param("/admin/other/t", id="child-of-another-admin-znode"),
    pytest.param("/admin/a/b/c", id="deep-under-admin"),
    pytest.param("/admin", id="admin-itself"),
    pytest.param("/", id="the-root"),
])
def test_znodes_kafka_does_not_read_change_nothing(path):
    """A path that is none of ZkData's znodes is not Kafka's metadata: ``None``, nothing held."""
    image = _image()
    assert image.apply(path, _node(_js(_REG))) is None
    assert _state(image) == _state(_image())
    assert image.invalid == {} and image.registrations == {} and image.deleting == set()


# -- unreadable payloads: named, then forgotten ---------------------------------------------------

@pytest.mark.parametrize("path, data, why", [
    pytest.param("/brokers/topics/t", b"{not json", "not JSON", id="topic"),
    pytest.param("/brokers/ids/1", b"[1]", "not a JSON object", id="broker"),
    pytest.param("/controller", b"{not json", "not JSON", id="controller"),
    pytest.param("/controller_epoch", b"seven", "not a decimal integer", id="controller-epoch"),
    pytest.param("/admin/reassign_partitions", b"{not json", "not JSON", id="reassignment"),
    pytest.param("/admin/preferred_replica_election", b"[]", "not a JSON object", id="preferred-election"),
    pytest.param("/log_dir_event_notification/log_dir_event_0000000001", b"{not json", "not JSON",
                 id="log-dir-event"),
    pytest.param("/config/brokers/1", b"{not json", "not JSON", id="broker-config"),
    pytest.param("/cluster/id", b"{not json", "not JSON", id="cluster-id"),
])
def test_an_unreadable_znode_is_named_by_its_path(path, data, why):
    """The finding names the znode written and why it is not Kafka's; what it would hold is left
    at its default (no reassignment, no election, no controller, no config, no cluster id; a broker
    registered without endpoints; a topic without partitions); a later readable write of the
    same znode is named no more (counter-case)."""
    image = _image()
    image.apply(path, _node(data))
    cs = _state(image)
    assert _findings(cs) == [_named(path, why)]
    assert (cs.cluster_id, cs.controller, cs.broker_configs, cs.pending) == (
        None, Controller(None, None), {},
        Pending(log_dir_event_notifications=({"name": "log_dir_event_0000000001"},) if "log_dir" in path else ()))
    assert cs.brokers == ((Broker(1, True, None, (), 0x21, S1),) if path == "/brokers/ids/1" else ())
    assert cs.topics == ((Topic("t", None, {}, ()),) if path == "/brokers/topics/t" else ())
    image.apply(path, _node(b"7" if path == "/controller_epoch" else b"{}"))
    assert _state(image).findings == ()


@pytest.mark.parametrize("path", [
    pytest.param("/brokers/topics/t", id="topic"),
    pytest.param("/brokers/ids/1", id="broker"),
    pytest.param("/log_dir_event_notification/log_dir_event_0000000001", id="log-dir-event"),
    pytest.param("/config/topics/t", id="topic-config"),
])
def test_an_unreadable_znode_deleted_is_forgotten(path):
    """Deleted, an unreadable znode is neither held nor named (topic ``t`` assigned, so its
    config is one the controller reads)."""
    image = _with_topic()
    image.apply(path, _node(b"{not json"))
    assert [f.details["znode"] for f in _state(image).findings] == [path]
    image.apply(path, None)
    after = _image() if path == "/brokers/topics/t" else _with_topic()
    assert _state(image) == _state(after) and image.invalid == {}


def test_an_unreadable_state_znode_deleted_is_forgotten():
    """A state znode of an assigned partition that does not decode is named; deleted (the
    controller's ``deletePartitionState`` once the topic is gone, or by hand), it is not, and the
    partition is leaderless without a state (``NewPartition``)."""
    image = _with_topic()
    image.apply(_STATE_PATH, _node(b"{not json", version=2))
    assert _findings(_state(image)) == [_named(_STATE_PATH, "not JSON")]
    assert image.apply(_STATE_PATH, None) == ("state", ("t", 0))
    cs = _state(image)
    assert cs.findings == () and image.invalid == {} and image.states == {}
    assert cs.topics == (Topic("t", "TTTTTTTTTTTTTTTTTTTTTQ", {}, (_partition(**_LEADERLESS, version=None),)),)


def test_a_state_znode_written_over_is_read_at_each_write():
    """A state znode written again and again (a leader's ISR changes, each a new dataVersion): each
    write as it decodes; one that does not is named, its partition leaderless with no state held
    (the timeline reads ``states`` as ``None`` for it), until a readable write (counter-case)."""
    image = _with_topic()
    image.apply(_STATE_PATH, _node(_js(_STATE), version=1))
    image.apply(_STATE_PATH, _node(_js({**_STATE, "isr": [1]}), version=2))
    cs = _state(image)
    assert cs.topics[0].partitions == (_partition(isr=(1,), version=2),) and cs.findings == ()
    image.apply(_STATE_PATH, _node(b"{not json", version=3))
    assert image.states == {("t", 0): (None, 3)}
    cs = _state(image)
    assert cs.topics[0].partitions == (_partition(**_LEADERLESS, version=3),)
    assert _findings(cs) == [_named(_STATE_PATH, "not JSON")]
    image.apply(_STATE_PATH, _node(b"[1]", version=4))
    assert _findings(_state(image)) == [_named(_STATE_PATH, "not a JSON object")]
    image.apply(_STATE_PATH, _node(_js(_STATE), version=5))
    cs = _state(image)
    assert cs.topics[0].partitions == (_partition(version=5),) and cs.findings == ()


# -- deletions --------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, kind", [
    pytest.param("/brokers/topics/t", ("topic", "t"), id="topic"),
    pytest.param("/brokers/ids/1", ("broker", 1), id="broker"),
    pytest.param(_STATE_PATH, ("state", ("t", 0)), id="partition-state"),
    pytest.param("/config/topics/t", ("config", ("topics", "t")), id="topic-config"),
    pytest.param("/config/brokers/1", ("config", ("brokers", "1")), id="broker-config"),
    pytest.param("/admin/delete_topics/t", ("delete_topic", "t"), id="topic-deletion"),
    pytest.param("/isr_change_notification/isr_change_0000000001", ("isr_change", "isr_change_0000000001"),
                 id="isr-change"),
])
def test_deleting_a_znode_never_held_changes_nothing(path, kind):
    image = _image()
    assert image.apply(path, None) == kind
    assert _state(image) == _state(_image())


@pytest.mark.parametrize("path, entity", [
    pytest.param("/config/topics/t", "t", id="topic-config"),
    pytest.param("/config/brokers/1", "1", id="broker-config"),
])
def test_a_deleted_config_is_forgotten(path, entity):
    """``ConfigEntityZNode``: deleted, the entity falls back to the defaults (counter-case: held)."""
    image = _with_topic()
    image.apply(path, _node(_js({"version": 1, "config": {"min.insync.replicas": "2"}})))
    configs = image.topic_configs if "topics" in path else image.broker_configs
    assert configs == {entity: {"min.insync.replicas": "2"}}
    image.apply(path, None)
    assert image.topic_configs == {} and image.broker_configs == {}
    cs = _state(image)
    assert cs.topics[0].config == {} and cs.broker_configs == {}


def test_a_deleted_topic_and_broker_are_gone():
    image = _with_topic()
    image.apply("/brokers/ids/1", _node(_js(_REG)))
    image.apply("/brokers/topics/t", None)
    image.apply("/brokers/ids/1", None)
    assert _state(image) == _state(_image())


# -- the chroot ---------------------------------------------------------------------------------------

def test_the_chroot_is_decided_by_the_first_kafka_marker():
    """Undecided, the chroot is where ``/brokers/ids`` or ``/brokers/topics`` is first seen: that
    path is under it, a path elsewhere is not, a topic there is Kafka's."""
    image = ZkImage(None, {S1})
    assert image.rel_parts("/other/brokers") is None and image.root is None
    assert image.rel_parts("/kafka/brokers/ids") == ["brokers", "ids"]
    assert image.root == "/kafka"
    assert image.rel_parts("/kafka/brokers/topics/TAX") == ["brokers", "topics", "TAX"]
    assert image.rel_parts("/brokers/topics/t") is None
    assert image.apply("/kafka/brokers/topics/XtX", _node(_js(_TOPIC))) == ("topic", "XtX")
    assert ZkImage(None).rel_parts("/brokers/topics") == ["brokers", "topics"]


@pytest.mark.parametrize("chroot", ["/kafka", "/kafka-X"])
@pytest.mark.parametrize("slash", ["", "/"])
def test_from_tree_under_a_chroot_given_with_or_without_a_trailing_slash(chroot, slash):
    b = _Builder(chroot)
    b.put("/brokers/ids/1", _REG, owner=S1)
    b.put("/brokers/topics/t", _TOPIC)
    b.put(_STATE_PATH, _STATE)
    image = ZkImage.from_tree(b.t.nodes, {S1: 1}, chroot + slash)
    assert image.root == chroot
    cs = _state(image)
    czxid = b.t.nodes[chroot + "/brokers/ids/1"].czxid
    assert cs.brokers == (Broker(1, True, "a", ("PLAINTEXT://h1:9092",), czxid, S1),)
    assert cs.topics == (Topic("t", "TTTTTTTTTTTTTTTTTTTTTQ", {}, (_partition(version=0),)),)
