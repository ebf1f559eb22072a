"""A control batch whose record has no key in ``__consumer_offsets``: ``ControlRecordType.parse``
reads the key's version from a null buffer and throws, so the coordinator fails to load the
partition there. kreplica names it (its batch's file and byte, the offset, "no key") and skips
the marker, so the transaction it would end stays open."""

from __future__ import annotations

import pytest

from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from tests.builders.groups import TS, commit, load_dir, offsets, pending, write

P = 7000


@pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
def test_a_marker_without_a_key_is_named_where_it_is_and_ends_nothing(tmp_path, coordinator) -> None:
    log_dir = write(tmp_path, [{"records": [commit("g", "t", 0, 5)], "producer_id": P}])
    (segment,) = (log_dir / "__consumer_offsets-0").glob("*.log")
    position = segment.stat().st_size
    with open(segment, "ab") as out:
        out.write(build_batch([NewRecord(1, TS, None, b"\x00\x00\x00\x00\x00\x00")], base_offset=1, producer_id=P,
                              producer_epoch=0, is_transactional=True, is_control=True))
    state = load_dir(log_dir, coordinator)
    (finding,) = state.findings
    assert (finding.kind, finding.path, finding.position, finding.details) == (
        "coordinator_replay_error", str(segment), position, {"offset": 1})
    assert finding.message == ("offset 1: a control record the loader cannot read (no key); the coordinator fails "
                               "to load the partition, kreplica skips it")
    assert pending(state) == {("g", "t", 0, P): 5} and offsets(state) == {}
