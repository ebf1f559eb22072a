"""Transactional commits of one partition held for several producers at once.

Both loaders hold a transaction's commits per producer id until its marker (old:
``GroupMetadataManager.doLoadGroupsAndOffsets``' ``pendingOffsets: Map[producerId, ...]``, then
``pendingOffsetsByGroup`` per group and producer; new: ``OffsetMetadataManager.replay`` into
``pendingTransactionalOffsets`` keyed by producer id). Two producers' open commits of the same
group, topic and partition are two pending offsets; kreplica lists a group's pending offsets by
topic, partition and producer id. A producer id is any id >= 0 (``RecordBatch.NO_PRODUCER_ID`` is
-1): the first block a ``ProducerIdManager`` hands out starts at 0. Loaded by the plain replay
and by the fold (compiled and pure), which must agree (tests/builders/groups.py).
"""

from __future__ import annotations

import pytest

from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from tests.builders.groups import by_name, commit, load

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])


def txn(producer: int, offset: int, partition: int = 0) -> dict:
    return {"records": [commit("g", "t", partition, offset)], "producer_id": producer}


@BOTH
@pytest.mark.parametrize("producers", [
    pytest.param((7001, 7000), id="higher-id-first-in-the-log"),
    pytest.param((1, 0), id="producer-id-0"),
    pytest.param((0, 1), id="lower-id-first-in-the-log"),
])
def test_open_commits_of_one_key_by_two_producers_are_both_pending(tmp_path, coordinator, producers) -> None:
    first, second = producers
    g = by_name(load(tmp_path, [txn(first, 10), txn(second, 20), txn(first, 30, partition=1)], coordinator))["g"]
    held = [(o.topic, o.partition, o.producer_id, o.offset) for o in g.pending_offsets]
    by_producer = {first: 10, second: 20}
    low, high = sorted(producers)
    assert held == [("t", 0, low, by_producer[low]), ("t", 0, high, by_producer[high]), ("t", 1, first, 30)]
    assert g.offsets == ()
