"""Config changes in the timeline: a ``ConfigRecord`` (KRaft) or a write to ``/config/topics/*`` or
``/config/brokers/*`` (ZooKeeper) that changes a value is a ``config_event`` with the entity, the
key, the value before and after, and who wrote it. Each rule with its counter-case. Expected
values: ``ConfigurationDelta.replay`` (a key set to a value, or removed by a null one), Raft's
rule that a batch's epoch is its leader's (``LeaderChangeMessage`` starts the epoch),
``MetadataBatchLoader`` (an aborted transaction is never applied) and ZooKeeper's txn header (the
session of the ``setData``)."""

from __future__ import annotations

import json

import pytest

from kreplica.analysis.timeline.analysis import TimelineAnalysis
from kreplica.analysis.timeline.events import ConfigEvent, TimelineEnd
from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.kraft import records as kraft
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.cluster import find_kraft_files
from kreplica.model.zookeeper import find_zk_files
from kreplica.report.schemas.timeline import event_to_dict, summary_to_dict
from tests.builders.kraft_metadata import ORDERS
from tests.builders.zk_history import ADMIN, T0, ZkHistory

MIN_ISR, UNCLEAN = "min.insync.replicas", "unclean.leader.election.enable"


def _leader(leader, epoch):
    return ("ctl", kraft.LEADER_CHANGE, {"version": 0, "leader_id": leader, "voters": ({"voter_id": leader},),
                                         "granting_voters": ()})


def _cfg(name, value, resource=kraft.RESOURCE_TOPIC, entity="orders"):
    return ("ConfigRecord", 0, {"resource_type": resource, "resource_name": entity, "name": name, "value": value})


_TOPIC = [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS})]


def _kraft_events(tmp_path, batches) -> list[ConfigEvent]:
    """``batches``: (epoch, [records]) in log order, offsets from 0."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    out, offset = [], 0
    for epoch, records in batches:
        if records[0][0] == "ctl":
            out.append(kraft.build_control_batch([(r[1], r[2]) for r in records], base_offset=offset, epoch=epoch,
                                                 timestamp=T0 + offset))
        else:
            out.append(kraft.build_metadata_batch(records, base_offset=offset, epoch=epoch, timestamp=T0 + offset))
        offset += len(records)
    (d / "00000000000000000000.log").write_bytes(b"".join(out))
    items = list(iter_kraft_timeline(find_kraft_files([d])))
    assert isinstance(items[-1], TimelineEnd)
    return [e for e in items if isinstance(e, ConfigEvent)]


def _changes(events):
    return [(e.resource, e.entity, e.key, e.before, e.after) for e in events]


@pytest.mark.parametrize("records, expected", [
    pytest.param([_cfg(MIN_ISR, "2")], [("topic", "orders", MIN_ISR, None, "2")], id="set"),
    pytest.param([_cfg(MIN_ISR, "2"), _cfg(MIN_ISR, "1")],
                 [("topic", "orders", MIN_ISR, None, "2"), ("topic", "orders", MIN_ISR, "2", "1")], id="changed"),
    pytest.param([_cfg(MIN_ISR, "2"), _cfg(MIN_ISR, "2")], [("topic", "orders", MIN_ISR, None, "2")],
                 id="the-same-value-again-is-no-change"),
    pytest.param([_cfg(MIN_ISR, "2"), _cfg(MIN_ISR, None)],
                 [("topic", "orders", MIN_ISR, None, "2"), ("topic", "orders", MIN_ISR, "2", None)],
                 id="deletion-shows-before-to-null"),
    pytest.param([_cfg(MIN_ISR, None)], [], id="deleting-a-key-not-set-is-no-change"),
    pytest.param([_cfg(UNCLEAN, "true", kraft.RESOURCE_BROKER, "")],
                 [("broker", "<default>", UNCLEAN, None, "true")], id="cluster-default"),
    pytest.param([_cfg("log.retention.ms", "1", kraft.RESOURCE_BROKER, "2")],
                 [("broker", "2", "log.retention.ms", None, "1")], id="one-broker"),
])
def test_kraft_config_changes(tmp_path, records, expected):
    """``ConfigurationDelta.replay(ConfigRecord)``: ``changes.put(name, Optional.ofNullable(value))``;
    an event only where the image's value differs after it."""
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]), (1, _TOPIC + records)])
    assert _changes(events) == expected


def test_kraft_config_event_fields_and_writer(tmp_path):
    """Offset, time and batch epoch are the record's; the writer is the leader the epoch's
    LeaderChange named: 3000 in epoch 1, 3001 after the failover to epoch 2."""
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]), (1, _TOPIC + [_cfg(MIN_ISR, "2")]),
                                      (2, [_leader(3001, 2)]), (2, [_cfg(UNCLEAN, "true")])])
    first, second = events
    assert (first.position, first.time, first.epoch, first.writer, first.notable) == (2, T0 + 1, 1, 3000, True)
    assert (second.position, second.epoch, second.writer) == (4, 2, 3001)
    assert event_to_dict(second, "kraft") == {
        "type": "config_event", "resource": "topic", "entity": "orders", "key": UNCLEAN, "before": None,
        "after": "true", "notable": True, "position": 4, "time": T0 + 4, "epoch": 2, "writer": 3001, "session": None}


def test_kraft_writer_unknown_without_the_epochs_leader_change(tmp_path):
    """A batch whose epoch no LeaderChange in the history began: the writer is not told."""
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]), (4, _TOPIC + [_cfg(MIN_ISR, "2")])])
    assert [(e.epoch, e.writer) for e in events] == [(4, None)]


def test_kraft_other_keys_are_not_notable(tmp_path):
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]), (1, _TOPIC + [_cfg("retention.ms", "1000")])])
    assert [e.notable for e in events] == [False]


@pytest.mark.parametrize("end, expected", [
    pytest.param(("EndTransactionRecord", 0, {}), [("topic", "orders", MIN_ISR, None, "3")], id="committed"),
    pytest.param(("AbortTransactionRecord", 0, {"reason": "test"}), [], id="aborted-is-never-applied"),
])
def test_kraft_config_in_a_metadata_transaction(tmp_path, end, expected):
    """``MetadataBatchLoader``: a transaction's records apply at its End and never after an Abort."""
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]), (1, _TOPIC),
                                      (1, [("BeginTransactionRecord", 0, {}), _cfg(MIN_ISR, "3"), end])])
    assert _changes(events) == expected


def test_summary_lists_the_notable_changes(tmp_path):
    events = _kraft_events(tmp_path, [(1, [_leader(3000, 1)]),
                                      (1, _TOPIC + [_cfg(MIN_ISR, "2"), _cfg("retention.ms", "5")])])
    run = TimelineAnalysis(iter(events + [TimelineEnd("kraft", "x", 0, 3, "log")]))
    list(run.items())
    doc = summary_to_dict(run.end, run.summary, [])
    assert doc["events"]["config"] == 2
    assert [(c["key"], c["after"], c["writer"]) for c in doc["notable_config_changes"]] == [(MIN_ISR, "2", 3000)]


@pytest.mark.parametrize("partitions, brokers, kept", [
    pytest.param(frozenset({"orders-0"}), None, ["orders", "<default>", "2"], id="its-topic"),
    pytest.param(frozenset({"other-0"}), None, ["<default>", "2"], id="another-topic"),
    pytest.param(None, frozenset({1}), ["orders", "<default>"], id="another-broker"),
    pytest.param(None, frozenset({2}), ["orders", "<default>", "2"], id="its-broker"),
])
def test_selection(partitions, brokers, kept):
    """``--partition`` keeps a topic's config events when one of its partitions is named;
    ``--broker`` a broker's when that broker is; the cluster default's always stay."""
    from kreplica.analysis.timeline.events import matches

    evs = [ConfigEvent("topic", "orders", MIN_ISR, None, "2", 1, T0), ConfigEvent("broker", "<default>", UNCLEAN,
                                                                                   None, "true", 2, T0),
           ConfigEvent("broker", "2", MIN_ISR, None, "1", 3, T0)]
    assert [e.entity for e in evs if matches(e, partitions, brokers)] == kept


# -- ZooKeeper ---------------------------------------------------------------------------------------------

def _config_json(cfg: dict) -> bytes:
    return json.dumps({"version": 1, "config": cfg}).encode()


def _zk_events(h: ZkHistory, tmp_path) -> list[ConfigEvent]:
    d = h.write(tmp_path / "zk")
    items = list(iter_zookeeper_timeline(find_zk_files([d])))
    return [e for e in items if isinstance(e, ConfigEvent)]


def _set(h: ZkHistory, session: int, path: str, data: bytes) -> int:
    return h.txn(session, zkl.OP_SET_DATA, h._set(path, data).body)


def test_zookeeper_config_changes_with_the_session(tmp_path):
    """``AdminZkClient.changeTopicConfig`` writes the whole config: each key whose value differs is
    an event (``min.insync.replicas`` 2→1, ``retention.ms`` deleted), a key written with its own
    value again is none (``cleanup.policy``); the session is the txn header's ``client_id``, and a
    broker's session (an AlterConfigs the broker wrote) names the broker."""
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    created = h.admin_create("/config/topics/orders", _config_json({MIN_ISR: "2", "retention.ms": "5",
                                                                   "cleanup.policy": "delete"}))
    changed = _set(h, h.session_of(2), "/config/topics/orders", _config_json({MIN_ISR: "1",
                                                                             "cleanup.policy": "delete"}))
    events = _zk_events(h, tmp_path)
    assert [(e.position, *c) for e, c in zip(events, _changes(events))] == [
        (created, "topic", "orders", "cleanup.policy", None, "delete"),
        (created, "topic", "orders", MIN_ISR, None, "2"),
        (created, "topic", "orders", "retention.ms", None, "5"),
        (changed, "topic", "orders", MIN_ISR, "2", "1"),
        (changed, "topic", "orders", "retention.ms", "5", None)]
    assert {(e.session, e.writer) for e in events if e.position == created} == {(ADMIN, None)}
    assert {(e.session, e.writer) for e in events if e.position == changed} == {(h.session_of(2), 2)}
    assert event_to_dict(events[-2], "zookeeper")["session"] == f"{h.session_of(2):#x}"


def test_zookeeper_same_config_again_is_no_event(tmp_path):
    h = ZkHistory()
    h.admin_create("/config/brokers", None)
    h.admin_create("/config/brokers/<default>", _config_json({UNCLEAN: "false"}))
    _set(h, ADMIN, "/config/brokers/<default>", _config_json({UNCLEAN: "false"}))
    assert _changes(_zk_events(h, tmp_path)) == [("broker", "<default>", UNCLEAN, None, "false")]
