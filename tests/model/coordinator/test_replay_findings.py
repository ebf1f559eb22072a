"""The findings of a ``__consumer_offsets`` load, whole: kind, segment, batch position, message and details.

Each finding says what Kafka's loader does with the record (its words are kreplica's output, a
contract); which loader skips and which fails comes from the Kafka method named in each test:
the old coordinator's ``GroupMetadataManager.doLoadGroupsAndOffsets`` / ``readMessageKey``
(core, 0.11-3.x) and the new one's ``CoordinatorLoaderImpl.doLoad`` (an
``UnknownRecordTypeException`` is skipped with a warning, any other deserialization error fails
the load) feeding ``GroupMetadataManager.replay``. Every case is loaded by the plain replay and
by the fold (compiled and pure), which must agree (tests/builders/groups.py).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, GroupReplay, RecordPlace
from kreplica.model.log.partition_log import read_partition_log
from kreplica.model.logdir.log_dir import scan_log_dir
from tests.builders.groups import commit, load_dir, offsets, record, write


def batch_positions(log_dir: Path) -> dict[int, tuple[str, int]]:
    """base offset -> (segment path, byte position) of each batch of the partition, as kreplica's reader finds them."""
    scanned = scan_log_dir(log_dir)
    log = read_partition_log(scanned.partitions[0], scanned)
    return {b.base_offset: (b.path, b.position) for b in log.batches}


def one_finding(log_dir: Path, coordinator: str):
    state = load_dir(log_dir, coordinator)
    (finding,) = state.findings
    return state, finding


# -- records that do not decode (CoordinatorLoaderImpl.doLoad; readOffsetMessageValue) --------------------


@pytest.mark.parametrize(("bad", "kind", "message", "details"), [
    # GroupCoordinatorRecordSerde: a value version the schema does not have throws; doLoad fails
    pytest.param((commit("g", "t", 0, 1)[0], struct.pack(">h", 9) + bytes(30)), "coordinator_unknown_record",
                 "offset 1: Unknown OffsetCommitValue version 9 (kreplica knows 0 to 4); a coordinator that does "
                 "not know it fails to load the partition, kreplica leaves it out",
                 {"offset": 1, "field": "value version"}, id="unknown-value-version-fails-the-load"),
    # UnknownRecordTypeException: doLoad warns "Unknown record type" and goes on
    pytest.param((struct.pack(">h", 99) + bytes(4), None), "coordinator_unknown_record",
                 "offset 1: Unknown record type 99 in __consumer_offsets; a coordinator that does not know it "
                 "skips the record, kreplica leaves it out",
                 {"offset": 1, "field": "record type"}, id="unknown-record-type-is-skipped"),
    # a value whose fields do not read: the deserializer throws, doLoad fails
    pytest.param((commit("g", "t", 0, 1)[0], b"\x00\x03\x00"), "coordinator_invalid_record",
                 "offset 1: Could not read OffsetCommitValue version 3 from the value: needs 8 bytes but only 1 "
                 "remain", {"offset": 1, "field": "offset"}, id="undecodable-value-names-its-field"),
])
def test_a_record_that_does_not_decode_is_one_whole_finding(tmp_path, bad, kind, message, details) -> None:
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)], [bad], [commit("g", "t", 1, 2)]])
    state, finding = one_finding(log_dir, NEW_COORDINATOR)
    assert (finding.kind, finding.message, finding.details) == (kind, message, details)
    assert (finding.path, finding.position) == batch_positions(log_dir)[1]
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 1): 2}


# -- a replay Kafka refuses (GroupMetadataManager.replay: IllegalStateException) -------------------------


def test_a_refused_replay_is_placed_at_its_batch(tmp_path) -> None:
    """getOrMaybeCreatePersistedShareGroup: "Group cg is not a share group." for a share group
    record of a consumer group; the finding names the record's segment and batch and its offset."""
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)], [record(3, {"group_id": "cg"}, 0, {"epoch": 1})],
                               [record(11, {"group_id": "cg"}, 0, {"epoch": 1})]])
    _state, finding = one_finding(log_dir, NEW_COORDINATOR)
    assert finding.kind == "coordinator_replay_error"
    assert (finding.path, finding.position) == batch_positions(log_dir)[2]
    assert finding.details == {"offset": 2}


# -- the old coordinator's UnknownKey records (readMessageKey) ----------------------------------------------

IGNORED = ("4 record(s) of KIP-848/KIP-932/KIP-1071 types (5, 9), the first at offset 1: the old group coordinator "
           "(Kafka before 4.0, or 3.7-3.9 without the new one) ignores them (GroupMetadataManager.readMessageKey: "
           "UnknownKey); they were written by the new coordinator: give --kafka-version 4.0 to load them as it does")


def _kip848_records() -> list:
    member = {"group_id": "cg", "member_id": "m"}
    return [[commit("g", "t", 0, 1)],
            [record(5, member, 0, None)],
            # a key of its type alone: readMessageKey reads the short and nothing else (UnknownKey)
            [(struct.pack(">h", 5), None), record(9, {"group_id": "sg"}, 0, None)],
            [record(5, member, 0, None)],
            [commit("g", "t", 1, 2)]]


def test_the_old_coordinator_counts_every_record_it_ignores_in_one_finding(tmp_path) -> None:
    """doLoadGroupsAndOffsets: ``case unknownKey: UnknownKey`` warns and ignores each record whose
    key type is neither an offset (0, 1) nor group metadata (2), its value never read, however short
    the key past its type; kreplica gathers them in one finding at the first."""
    log_dir = write(tmp_path, _kip848_records())
    state, finding = one_finding(log_dir, OLD_COORDINATOR)
    assert (finding.kind, finding.message, finding.details) == ("coordinator_unknown_record", IGNORED,
                                                                {"offset": 1, "records": 4})
    assert (finding.path, finding.position) == batch_positions(log_dir)[1]
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 1): 2}


def test_the_new_coordinator_reads_the_records_the_old_one_ignores(tmp_path) -> None:
    """The counter-case: GroupMetadataManager.replay reads types 5 and 9 (here tombstones of a group
    that does not exist, ignored; the bare 2-byte key does not read), no UnknownKey finding."""
    state = load_dir(write(tmp_path, _kip848_records()), NEW_COORDINATOR)
    assert "coordinator_unknown_record" not in [f.kind for f in state.findings]


def test_the_ignored_records_finding_is_made_once(tmp_path) -> None:
    """GroupReplay.finish gives the UnknownKey finding once, however often it is asked."""
    replay = GroupReplay(OLD_COORDINATOR, 0, "p")
    key = record(5, {"group_id": "cg", "member_id": "m"}, 0, None)[0]
    assert replay.decode(key, None, RecordPlace(3, 0, "p/0.log", 61)) is None
    replay.finish()
    replay.finish()
    (finding,) = replay.findings
    assert (finding.kind, finding.position, finding.details) == ("coordinator_unknown_record", 61,
                                                                 {"offset": 3, "records": 1})
