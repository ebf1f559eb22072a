"""Where a loaded group and offset come from: the partition, its directory, its broker, the evidence's bounds.

A group coordinator owns the groups of one ``__consumer_offsets-N`` (``GroupMetadataManager``'s
``partitionFor(groupId)``: ``Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount``;
``GroupCoordinatorShard`` in 4.x, one shard per partition), so every group and committed
offset of a load is partition N's, read from that replica's directory on that broker. Loaded
by the plain replay and by the fold (compiled and pure), which must agree (tests/builders/groups.py).
"""

from __future__ import annotations

import pytest

from kreplica.formats.logdir.meta_properties import build_meta_properties
from kreplica.model.coordinator.fold import load_group_partition
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, replay_partition_log
from kreplica.model.log.partition_log import read_partition_log
from kreplica.model.logdir.log_dir import scan_log_dir
from tests.builders.groups import by_name, commit, group_record, load_dir, record, write
from tests.builders.replicas import generator

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])


@BOTH
def test_groups_and_offsets_name_their_partition_and_directory(tmp_path, coordinator) -> None:
    """partitionFor: the groups of __consumer_offsets-7 are partition 7's, their offsets too."""
    log_dir = write(tmp_path, [[group_record("g", [])], [commit("g", "t", 0, 4)], [commit("solo", "t", 1, 2)],
                               {"records": [commit("g", "t", 1, 9)], "producer_id": 7000}], partition=7)
    state = load_dir(log_dir, coordinator)
    source = str(log_dir / "__consumer_offsets-7")
    groups = by_name(state)
    assert sorted(groups) == ["g", "solo"]
    for g in groups.values():
        assert (g.coordinator_partition, g.source) == (7, source)
        for o in g.offsets + g.pending_offsets:
            assert (o.coordinator_partition, o.source) == (7, source)
    assert [o.offset for o in groups["g"].pending_offsets] == [9]


def test_a_consumer_group_names_its_partition_and_directory(tmp_path) -> None:
    """A KIP-848 group of __consumer_offsets-3 (GroupCoordinatorShard of partition 3)."""
    log_dir = write(tmp_path, [[record(3, {"group_id": "cg"}, 0, {"epoch": 1})]], partition=3)
    (g,) = load_dir(log_dir, NEW_COORDINATOR).groups
    assert (g.protocol, g.coordinator_partition, g.source) == ("consumer", 3, str(log_dir / "__consumer_offsets-3"))


@pytest.mark.parametrize(("props", "broker_id"), [
    pytest.param({"version": "0", "broker.id": "5", "cluster.id": "c"}, 5, id="zookeeper-broker-id"),
    pytest.param({"version": "1", "node.id": "9", "cluster.id": "c"}, 9, id="kraft-node-id"),
    pytest.param(None, None, id="no-meta-properties"),
])
def test_the_load_names_the_broker_of_the_log_directory(tmp_path, props, broker_id) -> None:
    """meta.properties' broker.id (ZooKeeper mode) or node.id (KRaft) names the broker whose
    replica was loaded; a directory without it names none."""
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)]])
    if props is not None:
        (log_dir / "meta.properties").write_bytes(build_meta_properties(props))
    state = load_dir(log_dir, NEW_COORDINATOR)
    assert state.broker_id == broker_id


@BOTH
def test_a_log_start_offset_past_every_batch_leaves_no_evidence(tmp_path, coordinator) -> None:
    """doLoadGroupsAndOffsets reads from log.logStartOffset (CoordinatorLoaderImpl.doLoad from
    logStartOffset too): after DeleteRecords moved it to the log end, the segments still on disk
    are not loaded and bound no evidence (no first or last offset); the counter-case, a log start
    inside the log, bounds it."""
    entries = [[commit("g", "t", 0, 1)], [commit("g", "t", 1, 2)]]
    gone = load_dir(write(tmp_path, entries, log_start=2), coordinator)
    assert (gone.groups, gone.first_offset, gone.last_offset, gone.replayed_to) == ((), None, None, None)
    kept = load_dir(write(tmp_path, entries, log_start=1), coordinator)
    assert (kept.first_offset, kept.last_offset, kept.replayed_to) == (1, 1, 1)


def test_a_partition_of_another_topic_is_refused_by_both_loads(tmp_path) -> None:
    """Only __consumer_offsets partitions hold group state (GroupMetadataManager loads
    Topic.GROUP_METADATA_TOPIC_NAME partitions only); both loads refuse another topic's
    partition, naming it."""
    log_dir = tmp_path / "broker"
    part = generator().Partition(log_dir, "orders-0")
    part.v2(part.records(2))
    part.write()
    scanned = scan_log_dir(log_dir)
    partition = scanned.partitions[0]
    with pytest.raises(ValueError, match=r"orders-0 is not a __consumer_offsets partition"):
        replay_partition_log(read_partition_log(partition, scanned), NEW_COORDINATOR)
    with pytest.raises(ValueError, match=r"orders-0 is not a __consumer_offsets partition"):
        load_group_partition(partition, scanned, NEW_COORDINATOR)
