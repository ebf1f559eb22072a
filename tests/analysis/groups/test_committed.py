"""``committed_offsets``: the groups' committed offsets as the group coordinator of the Kafka
version given loads ``__consumer_offsets``."""

from __future__ import annotations

import pytest

from kreplica.analysis.groups.committed import committed_offsets
from kreplica.formats.log.batch import CONTROL_COMMIT
from kreplica.model.versions import KafkaVersion
from tests.builders.groups import commit, write

P = 7000   # a transactional producer


@pytest.mark.parametrize("version, expected", [
    # GroupMetadataManager.loadGroupsAndOffsets: a plain tombstone removes from loadedOffsets only,
    # the pending transactional commit stays and the COMMIT marker applies it
    pytest.param(KafkaVersion(3, 9), [("g", "t", 0, 5)], id="3.9: the old coordinator keeps the pending commit"),
    # OffsetMetadataManager.replay (the new coordinator, the default from 4.0): a null value drops
    # the pending transactional offsets of that partition too
    pytest.param(KafkaVersion(4, 0), [], id="4.0: the new coordinator drops it"),
])
def test_the_coordinator_of_the_version_loads_the_offsets(tmp_path, version, expected) -> None:
    log_dir = write(tmp_path, [{"records": [commit("g", "t", 0, 5)], "producer_id": P}, [commit("g", "t", 0)],
                               {"marker": CONTROL_COMMIT, "producer_id": P}])
    assert [(c.group, c.topic, c.partition, c.offset) for c in committed_offsets([str(log_dir)], version)] == expected
