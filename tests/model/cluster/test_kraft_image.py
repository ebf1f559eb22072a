"""A KRaft record applied to the one cluster image, where the two replays kreplica had disagreed.
Expected values come from the Kafka methods named in each test: ``ClusterDelta.replay`` (the
broker's metadata image, ``metadata/.../image/ClusterDelta.java``), ``ClusterControlManager.replay``
(the controller's) and ``MetadataBatchLoader`` (transactions), each with its counter-case."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline import kraft as timeline
from kreplica.analysis.timeline.events import BrokerEvent, PartitionEvent, TimelineEnd
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import cluster_state_from_kraft, find_kraft_files
from tests.builders.kraft_metadata import ORDERS, PAYMENTS, broker_registration

T0 = 1_700_000_000_000


def _write(tmp_path, records):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(
        b"".join(kraft.build_metadata_batch([r], base_offset=i, epoch=1, timestamp=T0 + i)
                 for i, r in enumerate(records)))
    return find_kraft_files([d])


def _timeline(files, **kw) -> list:
    items = list(timeline.iter_kraft_timeline(files, **kw))
    assert isinstance(items[-1], TimelineEnd)
    return items


_REGISTERED = [broker_registration(1, "a", 10), ("UnfenceBrokerRecord", 0, {"id": 1, "epoch": 10})]


@pytest.mark.parametrize("epoch, flagged", [
    pytest.param(10, False, id="registered-epoch"),
    pytest.param(9, True, id="stale-epoch-still-applied"),
])
def test_unregister_is_applied_whatever_the_epoch(tmp_path, epoch, flagged):
    """``ClusterDelta.replay(UnregisterBrokerRecord)`` removes the broker without looking at the
    epoch (the broker's metadata image); ``ClusterControlManager.replay`` would have refused
    another epoch, so that record is also a warning. ``cluster-state`` and the timeline agree."""
    files = _write(tmp_path, [*_REGISTERED, ("UnregisterBrokerRecord", 0, {"broker_id": 1, "broker_epoch": epoch})])
    cs = cluster_state_from_kraft(files)
    assert cs.broker(1) is None
    assert [(f.kind, f.severity) for f in cs.findings] == ([("kraft_invalid_record", "warning")] if flagged else [])
    items = _timeline(files)
    assert [(e.broker, e.event) for e in items if isinstance(e, BrokerEvent)][-1] == (1, "unregistered")
    assert [f.kind for f in items if isinstance(f, Finding)] == [f.kind for f in cs.findings]


@pytest.mark.parametrize("epoch, shutting_down", [
    pytest.param(10, True, id="registered-epoch"),
    pytest.param(9, False, id="stale-epoch-refused"),
])
def test_registration_change_needs_the_registered_epoch(tmp_path, epoch, shutting_down):
    """``ClusterDelta.replay(BrokerRegistrationChangeRecord)`` goes through ``getBrokerOrThrow``
    for the whole record: with another epoch neither the controlled shutdown nor the fencing
    applies (a ``kraft_invalid_record`` error), in ``cluster-state`` and in the timeline."""
    files = _write(tmp_path, [*_REGISTERED, ("BrokerRegistrationChangeRecord", 1, {
        "broker_id": 1, "broker_epoch": epoch, "fenced": 1, "in_controlled_shutdown": 1})])
    cs = cluster_state_from_kraft(files)
    b = cs.broker(1)
    assert (b.in_controlled_shutdown, b.fenced) == ((True, True) if shutting_down else (False, False))
    assert bool(cs.findings) is not shutting_down
    events = [e.event for e in _timeline(files) if isinstance(e, BrokerEvent)]
    assert events == (["registered", "unfenced", "controlled_shutdown", "fenced"] if shutting_down
                      else ["registered", "unfenced"])


_TXN = [*_REGISTERED,
        ("BeginTransactionRecord", 0, {"name": "create orders"}),                                # 2
        ("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),                             # 3
        ("PartitionRecord", 0, {"partition_id": 0, "topic_id": ORDERS, "replicas": (1,), "isr": (1,),
                                "leader": 1, "leader_epoch": 0, "partition_epoch": 0}),          # 4
        ("EndTransactionRecord", 0, {})]                                                         # 5


@pytest.mark.parametrize("to_offset, created", [
    pytest.param(4, False, id="inside-the-transaction"),
    pytest.param(5, True, id="at-its-end"),
])
def test_a_transaction_counts_at_its_end(tmp_path, to_offset, created):
    """``MetadataBatchLoader`` applies a metadata transaction's records when the End is read: up
    to an offset inside it the image does not hold them, in ``cluster-state --at`` and in the
    timeline up to that offset alike."""
    files = _write(tmp_path, _TXN)
    assert (cluster_state_from_kraft(files, at_offset=to_offset).topic("orders") is not None) is created
    made = [e for e in _timeline(files, to_offset=to_offset) if isinstance(e, PartitionEvent)]
    assert [(e.topic, e.cause, e.position) for e in made] == ([("orders", "created", 4)] if created else [])


@pytest.mark.parametrize("base, refused", [
    pytest.param(2, ["kraft_invalid_record"], id="contiguous-refusal-reported"),
    pytest.param(7, [], id="after-a-gap-left-to-the-gap"),
])
def test_timeline_refusals_after_a_gap_are_the_gap(tmp_path, base, refused):
    """A fence of a broker the history never registered is refused (``ClusterDelta.getBrokerOrThrow``):
    a finding when the log is whole, but past offsets missing from the copy the registration may
    be what the gap held, and the ``kraft_offset_gap`` finding already says so."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"".join(
        kraft.build_metadata_batch([r], base_offset=i, epoch=1, timestamp=T0 + i) for i, r in enumerate(_REGISTERED)))
    (d / f"{base:020d}.log").write_bytes(kraft.build_metadata_batch(
        [("FenceBrokerRecord", 0, {"id": 2, "epoch": 5})], base_offset=base, epoch=1, timestamp=T0 + base))
    kinds = [f.kind for f in _timeline(find_kraft_files([d])) if isinstance(f, Finding)]
    assert [k for k in kinds if k != "kraft_offset_gap"] == refused
    assert ("kraft_offset_gap" in kinds) is (base > 2)


# -- UnregisterBrokerRecord's warning, RemoveTopicRecord (issue 27 §7) ---------------------------

def _batch_position(records, index: int) -> int:
    """Where the batch of ``records[index]`` starts in the segment :func:`_write` writes."""
    return sum(len(kraft.build_metadata_batch([r], base_offset=i, epoch=1, timestamp=T0 + i))
               for i, r in enumerate(records[:index]))


@pytest.mark.parametrize("broker, epoch, why", [
    pytest.param(1, 9, "has broker epoch 10, not 9", id="stale-epoch"),
    pytest.param(5, 3, "was not registered", id="never-registered"),
])
def test_unregister_warning_text(tmp_path, broker, epoch, why):
    """``ClusterControlManager.replay(UnregisterBrokerRecord)`` throws "no broker registration
    found for that id" / "... with that epoch found"; ``ClusterDelta.replay`` removes the broker
    anyway. The warning says which, where, and the event keeps the record's broker epoch."""
    records = [*_REGISTERED, ("UnregisterBrokerRecord", 0, {"broker_id": broker, "broker_epoch": epoch})]
    files = _write(tmp_path, records)
    cs = cluster_state_from_kraft(files)
    (f,) = cs.findings
    assert (f.kind, f.severity, f.path, f.position) == (
        "kraft_invalid_record", "warning", files.segments[0][1], _batch_position(records, 2))
    assert f.message == (f"UnregisterBrokerRecord at offset 2 unregisters broker {broker}, which {why}: "
                         "a broker's metadata image applies it, a controller's replay would have refused it")
    assert f.details == {"offset": 2, "broker_id": broker}
    (event,) = [e for e in _timeline(files) if isinstance(e, BrokerEvent) and e.event == "unregistered"]
    assert (event.broker, event.position, event.broker_epoch) == (broker, 2, epoch)


_ORDERS_WITH_CONFIG = [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),
                       ("ConfigRecord", 0, {"resource_type": kraft.RESOURCE_TOPIC, "resource_name": "orders",
                                            "name": "retention.ms", "value": "1000"})]


@pytest.mark.parametrize("removed, config", [
    pytest.param(True, {}, id="removed-then-recreated-has-no-config"),
    pytest.param(False, {"retention.ms": "1000"}, id="kept-keeps-its-config"),
])
def test_remove_topic_drops_its_configs(tmp_path, removed, config):
    """``MetadataDelta.replay(RemoveTopicRecord)`` also replays it into ``ConfigurationsDelta``,
    which deletes the topic's config resource: a topic created again under the name starts
    without the old one's configs."""
    records = [*_ORDERS_WITH_CONFIG]
    if removed:
        records += [("RemoveTopicRecord", 0, {"topic_id": ORDERS}),
                    ("TopicRecord", 0, {"name": "orders", "topic_id": PAYMENTS})]
    cs = cluster_state_from_kraft(_write(tmp_path, records))
    assert (cs.topic("orders").topic_id, cs.topic("orders").config) == ((PAYMENTS, {}) if removed else (ORDERS, config))
    assert cs.findings == ()


@pytest.mark.parametrize("topic_id, refused", [
    pytest.param(ORDERS, False, id="known-topic-removed"),
    pytest.param(PAYMENTS, True, id="unknown-topic-refused"),
])
def test_remove_of_an_unknown_topic_is_refused(tmp_path, topic_id, refused):
    """``TopicsDelta.replay(RemoveTopicRecord)`` throws "Unable to delete topic with id ...: no
    such topic found." (``MetadataBatchLoader`` reports the fault and goes on): nothing changes
    and the record is a ``kraft_invalid_record`` error, as for a partition of a missing topic."""
    records = [*_ORDERS_WITH_CONFIG, ("RemoveTopicRecord", 0, {"topic_id": topic_id})]
    files = _write(tmp_path, records)
    cs = cluster_state_from_kraft(files)
    assert [t.name for t in cs.topics] == (["orders"] if refused else [])
    assert [(f.kind, f.severity, f.path, f.position, f.message, f.details) for f in cs.findings] == ([(
        "kraft_invalid_record", "error", files.segments[0][1], _batch_position(records, 2),
        "RemoveTopicRecord at offset 2 names a topic or partition that does not exist at that point",
        {"offset": 2})] if refused else [])
    assert [f.message for f in _timeline(files) if isinstance(f, Finding)] == [f.message for f in cs.findings]


@pytest.mark.parametrize("topic, partition, leader", [
    pytest.param("orders", 0, 1, id="existing"),
    pytest.param("orders", 1, None, id="no-such-partition"),
    pytest.param("nosuch", 0, None, id="no-such-topic"),
])
def test_image_partition_lookup(tmp_path, topic, partition, leader):
    """``ClusterImage.partition`` (the KRaft image): the partition, or ``None`` when the topic or
    the partition does not exist (``TopicsImage.getPartition`` gives null)."""
    from kreplica.model.cluster import KraftImage
    files = _write(tmp_path, _TXN)
    image = KraftImage()
    for item in kraft.read_metadata_file(files.segments[0][1]):
        if isinstance(item, kraft.MetadataRecord):
            image.apply(item)
    p = image.partition(topic, partition)
    assert (p.leader if p is not None else None) == leader


@pytest.mark.parametrize("record, broker, epoch, text", [
    pytest.param("FenceBrokerRecord", 1, 9, "tries to fence broker 1, which has broker epoch 10, not 9",
                 id="fence-stale-epoch"),
    pytest.param("UnfenceBrokerRecord", 5, 3, "tries to unfence broker 5, which was not registered",
                 id="unfence-unregistered"),
    pytest.param("FenceBrokerRecord", 1, 10, None, id="fence-registered-epoch-applies"),
])
def test_fence_record_refusal_text(tmp_path, record, broker, epoch, text):
    """``ClusterDelta.replay(FenceBrokerRecord / UnfenceBrokerRecord)`` goes through
    ``getBrokerOrThrow(id, epoch, "fence" / "unfence")``: the refusal names the action; the
    record with the registered epoch applies, its event carrying the record's epoch."""
    records = [*_REGISTERED, (record, 0, {"id": broker, "epoch": epoch})]
    files = _write(tmp_path, records)
    cs = cluster_state_from_kraft(files)
    assert [(f.message, f.details) for f in cs.findings] == ([] if text is None else [(
        f"{record} at offset 2 {text}; Kafka's metadata loader refuses it", {"offset": 2, "broker_id": broker})])
    events = [(e.event, e.position, e.broker_epoch) for e in _timeline(files) if isinstance(e, BrokerEvent)]
    assert events[-1] == (("fenced", 2, 10) if text is None else ("unfenced", 1, 10))
    assert cs.broker(1).fenced is (text is None)


def _with_elr(topic_id: str, pid: int, elr) -> tuple:
    """A PartitionRecord v2 (KIP-966) of ``topic_id``-``pid`` with its ELR and last known ELR."""
    return ("PartitionRecord", 2, {"partition_id": pid, "topic_id": topic_id, "replicas": [1, 2, 3], "isr": [1],
                                   "leader": 1, "leader_epoch": 4, "partition_epoch": 7,
                                   "eligible_leader_replicas": list(elr), "last_known_elr": list(elr)})


_TWO_TOPICS_WITH_ELR = [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),
                        ("TopicRecord", 0, {"name": "payments", "topic_id": PAYMENTS}),
                        _with_elr(ORDERS, 0, [2, 3]), _with_elr(ORDERS, 1, []), _with_elr(PAYMENTS, 0, [2])]


@pytest.mark.parametrize("topic_name, cleared", [
    pytest.param("orders", {("orders", 0)}, id="one-topic"),
    pytest.param("", {("orders", 0), ("payments", 0)}, id="empty-name-every-topic"),
])
def test_clear_elr_empties_the_elr_of_the_partitions_that_have_one(tmp_path, topic_name, cleared):
    """``TopicsDelta.replay(ClearElrRecord)`` (4.0+, written when min.insync.replicas changes):
    the named topic, or every topic for an empty name; ``ReplicationControlManager.removeTopicElrs``
    merges an empty ELR and last known ELR into each partition that has either, a partition epoch
    later (``PartitionRegistration.merge``), and leaves the others as they are (orders-1)."""
    records = [*_TWO_TOPICS_WITH_ELR, ("ClearElrRecord", 0, {"topic_name": topic_name})]
    cs = cluster_state_from_kraft(_write(tmp_path, records))
    assert cs.findings == ()
    for t in cs.topics:
        for p in t.partitions:
            before = {(ORDERS, 0): [2, 3], (ORDERS, 1): [], (PAYMENTS, 0): [2]}[(t.topic_id, p.partition)]
            if (t.name, p.partition) in cleared:
                assert (p.elr, p.last_known_elr, p.version) == ((), (), 8), (t.name, p.partition)
            else:
                assert (p.elr, p.last_known_elr, p.version) == (tuple(before), tuple(before), 7), (t.name, p.partition)
            assert (p.leader, p.leader_epoch, p.isr) == (1, 4, (1,))


def test_clear_elr_of_a_topic_that_does_not_exist_is_refused(tmp_path):
    """``TopicsDelta.replay(ClearElrRecord)`` throws "Unable to clear elr for topic with name ...: no
    such topic found.": nothing changes and the record is a ``kraft_invalid_record`` error."""
    records = [*_TWO_TOPICS_WITH_ELR, ("ClearElrRecord", 0, {"topic_name": "nosuch"})]
    cs = cluster_state_from_kraft(_write(tmp_path, records))
    assert [(f.kind, f.severity) for f in cs.findings] == [("kraft_invalid_record", "error")]
    assert cs.topic("orders").partitions[0].elr == (2, 3)
