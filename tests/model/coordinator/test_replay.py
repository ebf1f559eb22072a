"""The group coordinator's load of ``__consumer_offsets``, rule by rule with its counter-case.

Expected values come from the Kafka methods named in each case: the old coordinator's
``GroupMetadataManager.doLoadGroupsAndOffsets`` (core, 0.11-3.x) and the new one's
``CoordinatorLoaderImpl.doLoad`` → ``GroupCoordinatorShard.replay`` →
``OffsetMetadataManager.replay``/``replayEndTransactionMarker`` and ``GroupMetadataManager.replay``
(group-coordinator, 4.0). Every case is loaded by the plain replay and by the fold (compiled and
pure), which must agree (tests/builders/groups.py).
"""

from __future__ import annotations

import struct

import pytest

from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT
from kreplica.formats.log.default_records import ATTRIBUTES_OFFSET, CRC_OFFSET
from kreplica.formats.checksums import crc32c
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, ReplayPoint, coordinator_for
from kreplica.model.versions import KafkaVersion
from tests.builders.groups import (TS, by_name, commit, group_record, kinds, load, load_dir, member, offsets,
                                       pending, record, write)

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
P = 7000      # a transactional producer
Q = 7001


def txn(*records, producer: int = P) -> dict:
    return {"records": list(records), "producer_id": producer}


def marker(kind: int, producer: int = P) -> dict:
    return {"marker": kind, "producer_id": producer}


# -- which coordinator ----------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "expected"), [
    pytest.param(KafkaVersion(3, 9), OLD_COORDINATOR, id="3.9-old"),
    pytest.param(KafkaVersion(4, 0), NEW_COORDINATOR, id="4.0-new"),
])
def test_the_coordinator_follows_the_version(version, expected) -> None:
    assert coordinator_for(version) == expected


# -- offset commits -------------------------------------------------------------------------------


@BOTH
def test_a_commit_sets_the_offset_and_its_fields(tmp_path, coordinator) -> None:
    state = load(tmp_path, [[commit("g", "t", 0, 42, leader_epoch=3, metadata="m", commit_timestamp=TS + 5)],
                            [commit("g", "t", 1, 7, version=1, expire_timestamp=TS + 99)]], coordinator)
    (o0, o1) = by_name(state)["g"].offsets
    assert (o0.offset, o0.leader_epoch, o0.metadata, o0.commit_timestamp, o0.expire_timestamp, o0.value_version) \
        == (42, 3, "m", TS + 5, None, 3)
    assert (o0.record_offset, o0.transactional, o0.producer_id) == (0, False, None)
    # readOffsetMessageValue: leader epoch -1 is none; a v1 value's expire timestamp is kept
    assert (o1.offset, o1.leader_epoch, o1.expire_timestamp, o1.value_version) == (7, None, TS + 99, 1)


@BOTH
@pytest.mark.parametrize(("entries", "expected"), [
    pytest.param([[commit("g", "t", 0, 1)], [commit("g", "t", 0, 2)]], {("g", "t", 0): 2}, id="later-replaces"),
    pytest.param([[commit("g", "t", 0, 1)], [commit("g", "t", 0)]], {}, id="tombstone-removes"),
    pytest.param([[commit("g", "t", 0, 1)], [commit("g", "t", 1)]], {("g", "t", 0): 1},
                 id="tombstone-of-another-partition-keeps"),
    pytest.param([[commit("g", "t", 0, 1, key_version=0)], [commit("g", "t", 0)]], {},
                 id="key-v0-and-v1-are-one-state"),
])
def test_commits_and_tombstones(tmp_path, coordinator, entries, expected) -> None:
    assert offsets(load(tmp_path, entries, coordinator)) == expected


# -- transactional commits ------------------------------------------------------------------------


@pytest.mark.parametrize(("coordinator", "entries", "committed", "held"), [
    pytest.param(c, [txn(commit("g", "t", 0, 5)), marker(CONTROL_COMMIT)], {("g", "t", 0): 5}, {},
                 id=f"{c}-commit-applies") for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    pytest.param(c, [txn(commit("g", "t", 0, 5)), marker(CONTROL_ABORT)], {}, {}, id=f"{c}-abort-drops")
    for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    pytest.param(c, [txn(commit("g", "t", 0, 5))], {}, {("g", "t", 0, P): 5}, id=f"{c}-no-marker-pending")
    for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    # replayEndTransactionMarker / olderThan: a plain commit newer than the transactional one wins
    pytest.param(c, [txn(commit("g", "t", 0, 5)), [commit("g", "t", 0, 9)], marker(CONTROL_COMMIT)],
                 {("g", "t", 0): 9}, {}, id=f"{c}-newer-plain-commit-wins")
    for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    pytest.param(c, [[commit("g", "t", 0, 9)], txn(commit("g", "t", 0, 5)), marker(CONTROL_COMMIT)],
                 {("g", "t", 0): 5}, {}, id=f"{c}-older-plain-commit-loses")
    for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    pytest.param(c, [txn(commit("g", "t", 0, 5)), marker(CONTROL_COMMIT, Q)], {}, {("g", "t", 0, P): 5},
                 id=f"{c}-another-producers-marker") for c in (OLD_COORDINATOR, NEW_COORDINATOR)
] + [
    # a plain tombstone while the transaction is open: the old loader keeps the pending commit
    # (loadedOffsets.remove only), the new one drops it (OffsetMetadataManager.replay, value null)
    pytest.param(OLD_COORDINATOR, [txn(commit("g", "t", 0, 5)), [commit("g", "t", 0)], marker(CONTROL_COMMIT)],
                 {("g", "t", 0): 5}, {}, id="old-plain-tombstone-keeps-pending"),
    pytest.param(NEW_COORDINATOR, [txn(commit("g", "t", 0, 5)), [commit("g", "t", 0)], marker(CONTROL_COMMIT)],
                 {}, {}, id="new-plain-tombstone-drops-pending"),
    # a tombstone in a transactional batch: old, that producer's pending commit only; new, the
    # committed offset too
    pytest.param(OLD_COORDINATOR, [[commit("g", "t", 0, 1)], txn(commit("g", "t", 0)), marker(CONTROL_COMMIT)],
                 {("g", "t", 0): 1}, {}, id="old-txn-tombstone-keeps-committed"),
    pytest.param(NEW_COORDINATOR, [[commit("g", "t", 0, 1)], txn(commit("g", "t", 0)), marker(CONTROL_COMMIT)],
                 {}, {}, id="new-txn-tombstone-removes-committed"),
    # a control record neither COMMIT nor ABORT: the old loader ends the transaction on any
    # (pendingOffsets.remove), the new one only on COMMIT or ABORT
    pytest.param(OLD_COORDINATOR, [txn(commit("g", "t", 0, 5)), marker(5)], {}, {}, id="old-other-control-ends"),
    pytest.param(NEW_COORDINATOR, [txn(commit("g", "t", 0, 5)), marker(5)], {}, {("g", "t", 0, P): 5},
                 id="new-other-control-ignored"),
])
def test_transactional_commits(tmp_path, coordinator, entries, committed, held) -> None:
    state = load(tmp_path, entries, coordinator)
    assert offsets(state) == committed
    assert pending(state) == held


@BOTH
def test_a_committed_transactional_commit_names_its_producer(tmp_path, coordinator) -> None:
    state = load(tmp_path, [txn(commit("g", "t", 0, 5)), marker(CONTROL_COMMIT)], coordinator)
    (o,) = by_name(state)["g"].offsets
    assert (o.transactional, o.producer_id, o.record_offset) == (True, P, 0)


# -- groups ---------------------------------------------------------------------------------------


@BOTH
def test_classic_group_metadata(tmp_path, coordinator) -> None:
    m = member("m-1", ["t", "u"], {"t": [0, 1]}, session_timeout=10_000, rebalance_timeout=60_000)
    state = load(tmp_path, [[group_record("stable", [m], generation=7, protocol="range", current_state_timestamp=TS)],
                            [group_record("empty", [], generation=3)],
                            [group_record("connect", [], protocol_type="", protocol=None)]], coordinator)
    groups = by_name(state)
    g = groups["stable"]
    # readGroupMessageValue / replay(GroupMetadataKey): Stable with members, Empty without
    assert (g.protocol, g.protocol_type, g.state, g.generation, g.assignor, g.leader, g.current_state_timestamp) \
        == ("classic", "consumer", "Stable", 7, "range", "m-1", TS)
    (gm,) = g.members
    assert (gm.member_id, gm.session_timeout_ms, gm.rebalance_timeout_ms, gm.subscribed_topics, gm.assignment) \
        == ("m-1", 10_000, 60_000, ("t", "u"), (("t", (0, 1)),))
    assert g.subscribed_topics == ("t", "u")
    assert (groups["empty"].state, groups["empty"].subscribed_topics) == ("Empty", ())
    # an empty protocol type is none (GroupMetadata.loadGroup)
    assert groups["connect"].protocol_type is None and groups["connect"].subscribed_topics is None


@BOTH
def test_a_v0_member_rebalance_timeout_is_its_session_timeout(tmp_path, coordinator) -> None:
    m = member("m-1", ["t"], {"t": [0]}, session_timeout=10_000, rebalance_timeout=60_000)
    (g,) = load(tmp_path, [[group_record("g", [m], version=0)]], coordinator).groups
    assert g.members[0].rebalance_timeout_ms == 10_000


@BOTH
def test_a_subscription_that_does_not_read_leaves_the_topics_unknown(tmp_path, coordinator) -> None:
    m = member("m-1", ["t"], {"t": [0]}) | {"subscription": b"\x00"}
    (g,) = load(tmp_path, [[group_record("g", [m])]], coordinator).groups
    assert g.subscribed_topics is None        # computeSubscribedTopics: SchemaException -> None


@pytest.mark.parametrize(("coordinator", "state", "protocol", "generation"), [
    # emptyGroupOffsets: the old loader makes an Empty group without protocol for the offsets
    pytest.param(OLD_COORDINATOR, "Empty", None, 0, id="old-standalone"),
    # new: removeGroup leaves the offsets, which no group holds
    pytest.param(NEW_COORDINATOR, "Dead", None, None, id="new-no-group"),
])
def test_a_group_tombstone_leaves_its_offsets(tmp_path, coordinator, state, protocol, generation) -> None:
    loaded = load(tmp_path, [[group_record("g", [])], [commit("g", "t", 0, 4)], [group_record("g", None)]],
                  coordinator)
    (g,) = loaded.groups
    assert (g.state, g.protocol, g.generation, [o.offset for o in g.offsets]) == (state, protocol, generation, [4])


@BOTH
def test_a_group_tombstone_without_offsets_removes_the_group(tmp_path, coordinator) -> None:
    assert load(tmp_path, [[group_record("g", [])], [group_record("g", None)]], coordinator).groups == ()


@pytest.mark.parametrize(("coordinator", "groups"), [
    # the old loader makes groups for the offsets it holds at the end only
    pytest.param(OLD_COORDINATOR, [], id="old-none"),
    # OffsetMetadataManager.replay made the simple group when the commit was replayed; it stays
    pytest.param(NEW_COORDINATOR, [("g", "Empty", 0)], id="new-simple-group-stays"),
])
def test_a_commit_then_its_tombstone(tmp_path, coordinator, groups) -> None:
    loaded = load(tmp_path, [[commit("g", "t", 0, 4)], [commit("g", "t", 0)]], coordinator)
    assert [(g.group, g.state, g.generation) for g in loaded.groups] == groups
    assert all(not g.offsets for g in loaded.groups)


@BOTH
def test_offsets_without_a_group_record_make_a_standalone_group(tmp_path, coordinator) -> None:
    (g,) = load(tmp_path, [[commit("g", "t", 0, 4)]], coordinator).groups
    assert (g.protocol, g.protocol_type, g.state, g.generation, g.members) == (None, None, "Empty", 0, ())


# -- KIP-848 and KIP-932 --------------------------------------------------------------------------

TOPIC_ID = "8um0e5Bd9LwnM_Jm3NHOHA"


def consumer_group(epoch: int = 3, assignment_epoch: int = 3, member_epoch: int = 3, state: int = 0) -> list:
    return [
        [record(3, {"group_id": "cg"}, 0, {"epoch": epoch})],
        [record(4, {"group_id": "cg"}, 0, {"topics": [{"topic_id": TOPIC_ID, "topic_name": "orders",
                                                         "num_partitions": 2, "partition_metadata": []}]})],
        [record(5, {"group_id": "cg", "member_id": "m1"}, 0, {
            "instance_id": None, "rack_id": None, "client_id": "c1", "client_host": "/h", "subscribed_topic_names":
                ["orders"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 5000, "server_assignor": "uniform"})],
        [record(6, {"group_id": "cg"}, 0, {"assignment_epoch": assignment_epoch})],
        [record(7, {"group_id": "cg", "member_id": "m1"}, 0,
                {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 1]}]})],
        [record(8, {"group_id": "cg", "member_id": "m1"}, 0, {
            "member_epoch": member_epoch, "previous_member_epoch": member_epoch - 1, "state": state,
            "assigned_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 1]}], "partitions_pending_revocation": []})],
    ]


@pytest.mark.parametrize(("kw", "expected"), [
    pytest.param({}, "Stable", id="stable"),
    # ConsumerGroup.maybeUpdateGroupState: group epoch above the target assignment's
    pytest.param({"epoch": 4}, "Assigning", id="assigning"),
    # a member not at the target epoch, or not STABLE, is still reconciling
    pytest.param({"member_epoch": 2}, "Reconciling", id="reconciling-epoch"),
    pytest.param({"state": 1}, "Reconciling", id="reconciling-unrevoked"),
])
def test_consumer_group_state(tmp_path, kw, expected) -> None:
    (g,) = load(tmp_path, consumer_group(**kw), NEW_COORDINATOR).groups
    assert (g.protocol, g.state) == ("consumer", expected)


def test_consumer_group_members_and_assignment(tmp_path) -> None:
    (g,) = load(tmp_path, consumer_group(), NEW_COORDINATOR).groups
    (m,) = g.members
    assert (g.generation, g.assignor, g.subscribed_topics) == (3, "uniform", ("orders",))
    assert (m.member_id, m.client_id, m.member_epoch, m.rebalance_timeout_ms, m.assignment) \
        == ("m1", "c1", 3, 5000, (("orders", (0, 1)),))


def _leave(*order: str) -> list:
    records = {
        "assignment": [record(8, {"group_id": "cg", "member_id": "m1"})],
        "target": [record(7, {"group_id": "cg", "member_id": "m1"})],
        "member": [record(5, {"group_id": "cg", "member_id": "m1"})],
    }
    return consumer_group() + [records[name] for name in order]


def test_a_member_leaves_with_its_tombstones_in_order(tmp_path) -> None:
    state = load(tmp_path, _leave("assignment", "target", "member"), NEW_COORDINATOR)
    assert (state.groups[0].state, state.groups[0].members, kinds(state)) == ("Empty", (), [])


@pytest.mark.parametrize("order", [
    # replay(ConsumerGroupMemberMetadataKey): the member's epoch must be LEAVE_GROUP_MEMBER_EPOCH first
    pytest.param(("target", "member"), id="before-its-assignment-tombstone"),
    # ... and no target assignment may name it
    pytest.param(("assignment", "member"), id="while-targeted"),
])
def test_a_member_tombstone_out_of_order_is_refused(tmp_path, order) -> None:
    state = load(tmp_path, _leave(*order), NEW_COORDINATOR)
    assert kinds(state) == ["coordinator_replay_error"]
    assert [m.member_id for m in state.groups[0].members] == ["m1"]


def test_a_consumer_group_tombstone_with_members_is_refused(tmp_path) -> None:
    state = load(tmp_path, consumer_group() + [[record(3, {"group_id": "cg"})]], NEW_COORDINATOR)
    assert kinds(state) == ["coordinator_replay_error"] and state.groups[0].protocol == "consumer"


def test_a_consumer_group_record_replaces_a_simple_group_not_a_classic_one(tmp_path) -> None:
    simple = load(tmp_path, [[commit("cg", "t", 0, 1)], [record(3, {"group_id": "cg"}, 0, {"epoch": 1})]],
                  NEW_COORDINATOR)
    assert (simple.groups[0].protocol, kinds(simple)) == ("consumer", [])
    classic = load(tmp_path, [[group_record("cg", [])], [record(3, {"group_id": "cg"}, 0, {"epoch": 1})]],
                   NEW_COORDINATOR)
    assert (classic.groups[0].protocol, kinds(classic)) == ("classic", ["coordinator_replay_error"])
    # ClassicGroup.isSimpleGroup: a group record without protocol type or member is simple too
    bare = load(tmp_path, [[group_record("cg", [], protocol_type="", protocol=None)],
                           [record(3, {"group_id": "cg"}, 0, {"epoch": 1})]], NEW_COORDINATOR)
    assert (bare.groups[0].protocol, kinds(bare)) == ("consumer", [])


def test_the_old_coordinator_ignores_kip848_records(tmp_path) -> None:
    state = load(tmp_path, consumer_group() + [[commit("cg", "t", 0, 1)]], OLD_COORDINATOR)
    (finding,) = state.findings
    assert (finding.kind, finding.details["records"]) == ("coordinator_unknown_record", 6)
    (g,) = state.groups
    assert (g.protocol, [o.offset for o in g.offsets]) == (None, [1])


def test_share_group(tmp_path) -> None:
    entries = [
        [record(11, {"group_id": "sg"}, 0, {"epoch": 2})],
        [record(10, {"group_id": "sg", "member_id": "s1"}, 0, {
            "rack_id": None, "client_id": "sc", "client_host": "/h", "subscribed_topic_names": ["orders"]})],
    ]
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    assert (g.protocol, g.state, g.generation, [m.member_id for m in g.members]) == ("share", "Stable", 2, ["s1"])
    # ShareGroupCurrentMemberAssignment of a member the group does not have: the replay fails
    bad = load(tmp_path, entries + [[record(14, {"group_id": "sg", "member_id": "nobody"}, 0, {
        "member_epoch": 1, "previous_member_epoch": 0, "state": 0, "assigned_partitions": []})]], NEW_COORDINATOR)
    assert kinds(bad) == ["coordinator_replay_error"]


# -- records that do not decode ---------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "kind", "says"), [
    pytest.param((commit("g", "t", 0, 1)[0], b"\x00\x03\x00"), "coordinator_invalid_record", "Could not read",
                 id="undecodable-value"),
    pytest.param((commit("g", "t", 0, 1)[0], struct.pack(">h", 9) + bytes(30)), "coordinator_unknown_record",
                 "fails to load", id="unknown-value-version"),
    pytest.param((struct.pack(">h", 99) + bytes(4), None), "coordinator_unknown_record", "skips",
                 id="unknown-record-type"),
    pytest.param((None, b"\x00\x01"), "coordinator_invalid_record", "needs a key", id="null-key"),
])
def test_a_record_that_does_not_decode_is_a_finding_and_the_replay_goes_on(tmp_path, bad, kind, says) -> None:
    state = load(tmp_path, [[commit("g", "t", 0, 1)], [bad], [commit("g", "t", 1, 2)]], NEW_COORDINATOR)
    (finding,) = state.findings
    assert finding.kind == kind and says in finding.message
    assert finding.details["offset"] == 1 and finding.path.endswith(".log")
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 1): 2}


def test_the_old_coordinator_reads_only_the_type_of_an_unknown_record(tmp_path) -> None:
    """readMessageKey: a key type above 2 is an UnknownKey, its value never read."""
    state = load(tmp_path, [[(struct.pack(">h", 5) + b"\xff", b"\xff")], [commit("g", "t", 0, 1)]], OLD_COORDINATOR)
    assert kinds(state) == ["coordinator_unknown_record"] and offsets(state) == {("g", "t", 0): 1}


def test_a_batch_whose_records_break_keeps_the_ones_before(tmp_path) -> None:
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1), commit("g", "t", 1, 2)]])
    segment = next((log_dir / "__consumer_offsets-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    first = data.index(commit("g", "t", 0, 1)[1]) + len(commit("g", "t", 0, 1)[1])
    data[first + 1] = 0x7F                       # the second record's length: far too long
    struct.pack_into(">I", data, CRC_OFFSET, crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    segment.write_bytes(bytes(data))
    state = load_dir(log_dir, NEW_COORDINATOR)
    assert kinds(state) == ["invalid_record"]
    assert offsets(state) == {("g", "t", 0): 1} and state.records == 1


# -- where the replay stops -----------------------------------------------------------------------

COMMITS = [[commit("g", "t", 0, n)] for n in range(1, 5)]        # offsets 0..3, stamped TS + o * 1000


@BOTH
@pytest.mark.parametrize(("point", "expected", "replayed_to"), [
    pytest.param(ReplayPoint(), 4, 3, id="end"),
    pytest.param(ReplayPoint(at_offset=1), 2, 1, id="at-offset-inclusive"),
    pytest.param(ReplayPoint(at_offset=0), 1, 0, id="at-offset-first"),
    pytest.param(ReplayPoint(at_time=TS + 2000), 3, 2, id="at-time-inclusive"),
    pytest.param(ReplayPoint(at_time=TS + 2999), 3, 2, id="at-time-between"),
    pytest.param(ReplayPoint(at_time=TS - 1), None, None, id="at-time-before-all"),
])
def test_the_point(tmp_path, coordinator, point, expected, replayed_to) -> None:
    state = load(tmp_path, COMMITS, coordinator, point)
    assert offsets(state).get(("g", "t", 0)) == expected
    assert state.replayed_to == replayed_to
    assert (state.first_offset, state.last_offset, state.first_time, state.last_time) == (0, 3, TS, TS + 3000)


def test_a_point_cuts_a_batch_and_stops_before_a_marker(tmp_path) -> None:
    entries = [txn(commit("g", "t", 0, 5)), [commit("g", "t", 1, 1), commit("g", "t", 1, 2)], marker(CONTROL_COMMIT)]
    state = load(tmp_path, entries, NEW_COORDINATOR, ReplayPoint(at_offset=1))
    assert offsets(state) == {("g", "t", 1): 1} and pending(state) == {("g", "t", 0, P): 5}
    assert (state.replayed_to, state.records, state.newest_timestamp) == (1, 2, TS + 1000)


@BOTH
def test_batches_below_the_log_start_offset_are_not_loaded(tmp_path, coordinator) -> None:
    state = load(tmp_path, [[commit("g", "t", 0, 1)], [commit("g", "t", 1, 2)]], coordinator, log_start=1)
    assert offsets(state) == {("g", "t", 1): 2}
    assert (state.log_start_offset, state.first_offset) == (1, 1)


# -- KIP-848 and KIP-932 replays, rule by rule (issue 27 §7) ---------------------------------------
#
# GroupMetadataManager.replay(<Key>, <Value>) for each record type (group-coordinator); the words
# of a refusal are Kafka's IllegalStateException / GroupIdNotFoundException messages, shown in the
# coordinator_replay_error finding's message (output: a contract).


def cg(kind: int, value: dict | None = None, member: str | None = None, group: str = "cg") -> list:
    key = {"group_id": group} if member is None else {"group_id": group, "member_id": member}
    return [record(kind, key, 0, value)]


def cmeta(member: str = "m1", group: str = "cg", **kw) -> list:
    value = {"instance_id": None, "rack_id": None, "client_id": "c1", "client_host": "/h",
             "subscribed_topic_names": ["orders"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 5000,
             "server_assignor": "uniform"} | kw
    return cg(5, value, member, group)


def current(kind: int = 8, member: str = "m1", epoch: int = 3, group: str = "cg", state: int = 0) -> list:
    value = {"member_epoch": epoch, "previous_member_epoch": epoch - 1, "state": state,
             "assigned_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 1]}]}
    if kind == 8:
        value["partitions_pending_revocation"] = []
    return cg(kind, value, member, group)


def target(kind: int = 7, member: str = "m1", group: str = "cg") -> list:
    return cg(kind, {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0]}]}, member, group)


def smeta(member: str = "s1", group: str = "sg") -> list:
    return cg(10, {"rack_id": None, "client_id": "sc", "client_host": "/h", "subscribed_topic_names": ["orders"]},
              member, group)


SHARE = [cg(11, {"epoch": 2}, group="sg")[0]], smeta()
_SKIPS = "; the coordinator's replay fails here, kreplica skips the record"


@pytest.mark.parametrize(("entries", "message"), [
    # replay(ConsumerGroupMetadataKey) tombstone: members, then target members, then the target
    # assignment epoch must be gone first
    pytest.param(consumer_group() + [cg(3)], "offset 6: consumer_group_metadata of group 'cg': Received a tombstone "
                 "record to delete group cg but the group still has 1 members.", id="group-tombstone-members"),
    pytest.param([cg(3, {"epoch": 1}), target(), cg(3)], "offset 2: consumer_group_metadata of group 'cg': Received "
                 "a tombstone record to delete group cg but the target assignment still has 1 members.",
                 id="group-tombstone-targets"),
    pytest.param([cg(3, {"epoch": 1}), cg(6, {"assignment_epoch": 1}), cg(3)], "offset 2: consumer_group_metadata of "
                 "group 'cg': Received a tombstone record to delete group cg but did not receive "
                 "ConsumerGroupTargetAssignmentMetadataValue tombstone.", id="group-tombstone-assignment-epoch"),
    # a group only ever given its epoch: ConsumerGroup's target assignment epoch starts at 0, not -1
    pytest.param([cg(3, {"epoch": 1}), cg(3)], "offset 1: consumer_group_metadata of group 'cg': Received a "
                 "tombstone record to delete group cg but did not receive ConsumerGroupTargetAssignmentMetadataValue "
                 "tombstone.", id="group-tombstone-initial-assignment-epoch"),
    # replay(ShareGroupMetadataKey) tombstone: Kafka's words for a share group differ (its typo kept)
    pytest.param([cg(11, {"epoch": 2}, group="sg"), cg(11, None, group="sg")], "offset 1: share_group_metadata of "
                 "group 'sg': Received a tombstone record to delete group sg but target assignment epoch in invalid.",
                 id="share-group-tombstone-assignment-epoch"),
    pytest.param([cg(11, {"epoch": 2}, group="sg"), smeta(), cg(11, None, group="sg")],
                 "offset 2: share_group_metadata of group 'sg': Received a tombstone record to delete group sg but the "
                 "group still has 1 members.", id="share-group-tombstone-members"),
    # replay(ConsumerGroupTargetAssignmentMetadataKey) tombstone while members are targeted
    pytest.param([cg(3, {"epoch": 1}), target(), cg(6)], "offset 2: consumer_group_target_assignment_metadata of "
                 "group 'cg': Received a tombstone record to delete target assignment of cg but the assignment still "
                 "has 1 members.", id="target-epoch-tombstone-targets"),
    # replay(ConsumerGroupMemberMetadataKey) tombstone
    pytest.param(_leave("target", "member"), "offset 7: consumer_group_member_metadata of group 'cg': Received a "
                 "tombstone record to delete member m1 but did not receive ConsumerGroupCurrentMemberAssignmentValue "
                 "tombstone.", id="member-tombstone-not-left"),
    pytest.param(_leave("assignment", "member"), "offset 7: consumer_group_member_metadata of group 'cg': Received a "
                 "tombstone record to delete member m1 but did not receive ConsumerGroupTargetAssignmentMetadataValue "
                 "tombstone.", id="member-tombstone-targeted"),
    # getOrMaybeCreatePersistedConsumerGroup: a classic group with members or protocol is not replaced
    pytest.param([[group_record("cg", [])], cg(3, {"epoch": 1})], "offset 1: consumer_group_metadata of group 'cg': "
                 "Group cg is not a consumer group", id="classic-not-consumer"),
    # getOrMaybeCreatePersistedShareGroup: only the member and group records create a share group
    pytest.param([cg(12, {"assignment_epoch": 1}, group="sg")], "offset 0: share_group_target_assignment_metadata of "
                 "group 'sg': Share group sg not found.", id="share-target-epoch-no-group"),
    pytest.param(consumer_group()[:1] + [cg(11, {"epoch": 1})], "offset 1: share_group_metadata of group 'cg': "
                 "Group cg is not a share group.", id="consumer-not-share"),
    # replay(ShareGroupMemberMetadataKey) tombstone: getOrMaybeCreateMember(memberId, false) throws
    pytest.param([*SHARE, cg(10, None, "s2", "sg")], "offset 2: share_group_member_metadata of group 'sg': Member s2 "
                 "is not a member of group sg.", id="share-member-tombstone-unknown"),
    pytest.param([*SHARE, cg(10, None, "s1", "sg")], "offset 2: share_group_member_metadata of group 'sg': Received "
                 "a tombstone record to delete member s1 with invalid leave group epoch.",
                 id="share-member-tombstone-not-left"),
    pytest.param([*SHARE, cg(14, None, "s1", "sg"), target(13, "s1", "sg"), cg(10, None, "s1", "sg")],
                 "offset 4: share_group_member_metadata of group 'sg': Received a tombstone record to delete member s1 "
                 "but member exists in target assignment.", id="share-member-tombstone-targeted"),
    # replay(ShareGroupCurrentMemberAssignmentKey) of a member the group does not have
    pytest.param([*SHARE, current(14, "nobody", group="sg")], "offset 2: share_group_current_member_assignment of "
                 "group 'sg': Member nobody is not a member of group sg.", id="share-assignment-unknown-member"),
])
def test_a_refused_replay_says_kafkas_words(tmp_path, entries, message) -> None:
    state = load(tmp_path, entries, NEW_COORDINATOR)
    (finding,) = state.findings
    assert (finding.kind, finding.message) == ("coordinator_replay_error", message + _SKIPS)


@pytest.mark.parametrize(("entries", "groups"), [
    # the tombstones in the order the coordinator writes them: the group is removed (removeGroup)
    pytest.param([cg(3, {"epoch": 1}), cg(6, {"assignment_epoch": 1}), cg(6), cg(3)], [], id="consumer-removed"),
    pytest.param(_leave("assignment", "target", "member") + [cg(6), cg(3)], [], id="consumer-with-member-removed"),
    # a tombstone of a group that does not exist is ignored (GroupIdNotFoundException caught)
    pytest.param([cg(5, None, "m1")], [], id="member-tombstone-no-group"),
    pytest.param([cg(3)], [], id="group-tombstone-no-group"),
    # ... and one of a member the group does not have (UnknownMemberIdException caught)
    pytest.param([cg(3, {"epoch": 1}), cg(5, None, "m9")], [("cg", "consumer", "Empty")],
                 id="member-tombstone-no-member"),
    # a target member's tombstone without its record: removeTargetAssignment, nothing to remove
    pytest.param([cg(3, {"epoch": 1}), cg(7, None, "m9")], [("cg", "consumer", "Empty")], id="target-tombstone-none"),
    # a resolved regex's tombstone without its record: removeResolvedRegularExpression, nothing to remove
    pytest.param([cg(3, {"epoch": 1}), [record(16, {"group_id": "cg", "regular_expression": "x.*"})]],
                 [("cg", "consumer", "Empty")], id="regex-tombstone-none"),
    # a partition metadata tombstone keeps the group (setSubscriptionMetadata(emptyMap()))
    pytest.param([cg(3, {"epoch": 1}), cg(4)], [("cg", "consumer", "Empty")], id="partition-tombstone-keeps"),
    # share groups: replay(ShareGroupMetadataKey) tombstone after the target epoch's tombstone
    pytest.param([cg(11, {"epoch": 2}, group="sg"), cg(12, None, group="sg"), cg(11, None, group="sg")], [],
                 id="share-removed"),
    pytest.param([cg(11, {"epoch": 2}, group="sg"), cg(12, None, group="sg")], [("sg", "share", "Empty")],
                 id="share-target-tombstone-keeps"),
    # the member record creates the share group (getOrMaybeCreatePersistedShareGroup(groupId, true))
    pytest.param([smeta()], [("sg", "share", "Stable")], id="share-member-creates"),
    # a share member leaves: assignment tombstone (epoch LEAVE_GROUP_MEMBER_EPOCH), then its own
    pytest.param([*SHARE, cg(14, None, "s1", "sg"), cg(10, None, "s1", "sg")], [("sg", "share", "Empty")],
                 id="share-member-leaves"),
])
def test_modern_group_records_replayed(tmp_path, entries, groups) -> None:
    state = load(tmp_path, entries, NEW_COORDINATOR)
    assert kinds(state) == []
    assert [(g.group, g.protocol, g.state) for g in state.groups] == groups


def test_a_commit_after_a_consumer_group_is_removed_makes_a_simple_group(tmp_path) -> None:
    """OffsetMetadataManager.replay: a commit of a group that no longer exists makes a simple one."""
    state = load(tmp_path, [cg(3, {"epoch": 1}), cg(6, {"assignment_epoch": 1}), cg(6), cg(3),
                            [commit("cg", "t", 0, 4)]], NEW_COORDINATOR)
    (g,) = state.groups
    assert (g.group, g.protocol, g.state, g.generation, [o.offset for o in g.offsets]) == ("cg", None, "Empty", 0, [4])


def test_a_member_known_only_by_its_assignment_has_the_builders_defaults(tmp_path) -> None:
    """ConsumerGroupMember.Builder: clientId and clientHost "", no subscription; the member is
    created by replay(ConsumerGroupCurrentMemberAssignmentKey) with a value."""
    (g,) = load(tmp_path, [cg(3, {"epoch": 3}), cg(6, {"assignment_epoch": 3}), current()], NEW_COORDINATOR).groups
    (m,) = g.members
    assert (m.member_id, m.client_id, m.client_host, m.subscribed_topics, m.group_instance_id, m.session_timeout_ms,
            m.rebalance_timeout_ms, m.member_epoch) == ("m1", "", "", (), None, None, None, 3)
    assert m.assignment == ((TOPIC_ID, (0, 1)),)     # no partition metadata: the topic id shown
    assert (g.state, g.assignor, g.subscribed_topics) == ("Stable", None, ())


@pytest.mark.parametrize(("entries", "expected"), [
    # ConsumerGroupMember.Builder: memberEpoch 0, state STABLE; the group's epochs start at 0
    pytest.param([cmeta()], "Stable", id="new-member-at-epoch-0"),
    pytest.param([cg(3, {"epoch": 3}), cg(6, {"assignment_epoch": 3}), cmeta()], "Reconciling",
                 id="new-member-behind-target"),
    pytest.param([cg(3, {"epoch": 3}), cg(6, {"assignment_epoch": 3}), current(state=2)], "Reconciling",
                 id="member-not-stable"),
])
def test_a_new_members_defaults_decide_the_state(tmp_path, entries, expected) -> None:
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    assert g.state == expected


def test_a_members_metadata_is_shown(tmp_path) -> None:
    """ConsumerGroupMemberMetadataValue: instance id, host, and the classic member's session timeout
    (ClassicMemberMetadata, tagged field 0)."""
    classic = {"session_timeout_ms": 45_000, "supported_protocols": [{"name": "range", "metadata": b""}]}
    entries = [cmeta("m1", instance_id="i-1", client_host="/10.0.0.9", classic_member_metadata=classic),
               cmeta("m2")]
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    m1, m2 = g.members
    assert (m1.group_instance_id, m1.client_host, m1.session_timeout_ms, m1.rebalance_timeout_ms,
            m1.subscribed_topics) == ("i-1", "/10.0.0.9", 45_000, 5000, ("orders",))
    assert (m2.group_instance_id, m2.session_timeout_ms) == (None, None)
    assert (g.protocol, g.protocol_type) == ("consumer", "consumer")


@pytest.mark.parametrize(("assignors", "expected"), [
    # ConsumerGroup.computePreferredServerAssignor: the assignor most members name
    pytest.param(("range", "uniform", "uniform"), "uniform", id="most-named-wins-over-first"),
    pytest.param(("range", "range", "uniform"), "range", id="most-named-first"),
    pytest.param((None, None, "uniform"), "uniform", id="members-without-assignor"),
])
def test_the_preferred_assignor(tmp_path, assignors, expected) -> None:
    entries = [cmeta(f"m{n}", server_assignor=a) for n, a in enumerate(assignors)]
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    assert g.assignor == expected


def test_regular_expression_topics_are_subscribed(tmp_path) -> None:
    """replay(ConsumerGroupRegularExpressionKey): the topics a resolved regex matches; its
    tombstone removes them."""
    regex = {"topics": ["orders-eu", "orders-us"], "version": 1, "timestamp": TS}
    entries = [cmeta(), [record(16, {"group_id": "cg", "regular_expression": "orders-.*"}, 0, regex)]]
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    assert g.subscribed_topics == ("orders", "orders-eu", "orders-us")
    gone = load(tmp_path, entries + [[record(16, {"group_id": "cg", "regular_expression": "orders-.*"})]],
                NEW_COORDINATOR)
    assert gone.groups[0].subscribed_topics == ("orders",)


def test_a_partition_metadata_tombstone_forgets_the_topic_names(tmp_path) -> None:
    (g,) = load(tmp_path, consumer_group() + [cg(4)], NEW_COORDINATOR).groups
    assert g.members[0].assignment == ((TOPIC_ID, (0, 1)),)


def test_a_share_group_is_shown_with_its_name_and_protocol_type(tmp_path) -> None:
    """ShareGroup: protocol type "share"."""
    (g,) = load(tmp_path, list(SHARE), NEW_COORDINATOR).groups
    assert (g.group, g.protocol, g.protocol_type, g.generation) == ("sg", "share", "share", 2)


def test_an_assignment_tombstone_leaves_the_member_without_partitions(tmp_path) -> None:
    """replay(ConsumerGroupCurrentMemberAssignmentKey) tombstone: the member stays, at
    LEAVE_GROUP_MEMBER_EPOCH with no assigned partitions, until its own tombstone."""
    (g,) = load(tmp_path, consumer_group() + [cg(8, None, "m1")], NEW_COORDINATOR).groups
    (m,) = g.members
    assert (m.member_id, m.member_epoch, m.assignment) == ("m1", -1, ())
    assert g.state == "Reconciling"


def test_a_share_members_metadata_and_assignment_are_shown(tmp_path) -> None:
    """ShareGroupMember.Builder.updateWith: the member metadata value (client id, host,
    subscription) and the current assignment value (member epoch, assigned partitions)."""
    names = {"topics": [{"topic_id": TOPIC_ID, "topic_name": "orders", "num_partitions": 2, "partition_metadata": []}]}
    entries = [*SHARE, cg(9, names, group="sg"), current(14, "s1", epoch=2, group="sg")]
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    (m,) = g.members
    assert (m.member_id, m.client_id, m.client_host, m.subscribed_topics) == ("s1", "sc", "/h", ("orders",))
    assert (m.member_epoch, m.assignment) == (2, (("orders", (0, 1)),))
    assert g.subscribed_topics == ("orders",)


# -- batches edited after writing: stamps and control keys ------------------------------------------


def _edit_batch(log_dir, index: int, edit) -> None:
    """Edit batch ``index`` of the partition's segment in place (``edit(bytearray)`` of that
    batch's bytes), then reseal its CRC-32C, as a broker's own write would leave it."""
    segment = next((log_dir / "__consumer_offsets-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    pos = 0
    for _ in range(index):
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    end = pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]
    batch = bytearray(data[pos:end])
    edit(batch)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c(bytes(batch[ATTRIBUTES_OFFSET:])))
    data[pos:end] = batch
    segment.write_bytes(bytes(data))


def _stamped(base: int):
    """A batch edit: its records stamped from ``base`` on (baseTimestamp; maxTimestamp moved alike)."""
    def edit(batch: bytearray) -> None:
        old_base, old_max = struct.unpack_from(">qq", batch, 27)
        struct.pack_into(">qq", batch, 27, base, base + old_max - old_base)
    return edit


@BOTH
def test_a_marker_the_loader_cannot_read_is_a_finding_and_ends_nothing(tmp_path, coordinator) -> None:
    """ControlRecordType.parse throws on a control key of a negative version ("Invalid version
    found for control record"): the loader fails there; kreplica says so and skips the marker,
    so the transaction stays open."""
    log_dir = write(tmp_path, [txn(commit("g", "t", 0, 5)), marker(CONTROL_COMMIT)])
    _edit_batch(log_dir, 1, lambda b: struct.pack_into(">h", b, 66, -1))   # the control key's version
    state = load_dir(log_dir, coordinator)
    (finding,) = state.findings
    position = finding.position
    assert (finding.kind, finding.details, position > 0) == ("coordinator_replay_error", {"offset": 1}, True)
    assert finding.message == ("offset 1: a control record the loader cannot read (its key is not a control record "
                               "key: ControlRecordType.parse needs 4 bytes of a non-negative version); the coordinator "
                               "fails to load the partition, kreplica skips it")
    assert pending(state) == {("g", "t", 0, P): 5} and offsets(state) == {}
    assert (state.replayed_to, state.records) == (1, 2)


def test_a_marker_past_the_point_ends_the_replay(tmp_path) -> None:
    """--at-time replays a prefix of the log (module docstring): after a marker stamped past the
    point, a later record stamped before it is not replayed."""
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)], marker(CONTROL_COMMIT, Q), [commit("g", "t", 1, 2)]])
    _edit_batch(log_dir, 2, _stamped(TS))
    state = load_dir(log_dir, NEW_COORDINATOR, ReplayPoint(at_time=TS + 500))
    assert offsets(state) == {("g", "t", 0): 1}
    assert (state.replayed_to, state.records, state.newest_timestamp) == (0, 1, TS)


def test_a_cut_batch_keeps_the_newest_stamp_of_the_batches_before(tmp_path) -> None:
    """newest_timestamp is the newest stamp replayed (GroupPartitionState): a batch cut by the
    point whose records are stamped before an earlier batch's leaves that earlier stamp."""
    log_dir = write(tmp_path, [[commit("g", "t", 0, 1)], [commit("g", "t", 1, 2), commit("g", "t", 1, 3)]])
    _edit_batch(log_dir, 1, _stamped(TS - 5000))
    state = load_dir(log_dir, NEW_COORDINATOR, ReplayPoint(at_offset=1))
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 1): 2}
    assert (state.replayed_to, state.records, state.newest_timestamp) == (1, 2, TS)


def test_a_transactional_batch_cut_by_the_point_ends_the_replay(tmp_path) -> None:
    """As a marker past the point: a transactional batch (replayed record by record) cut at
    --at-time ends the replay; a later record stamped before the point is not replayed."""
    log_dir = write(tmp_path, [txn(commit("g", "t", 0, 5), commit("g", "t", 1, 6)), [commit("g", "t", 2, 7)]])
    _edit_batch(log_dir, 1, _stamped(TS))
    state = load_dir(log_dir, NEW_COORDINATOR, ReplayPoint(at_time=TS + 500))
    assert (offsets(state), pending(state)) == ({}, {("g", "t", 0, P): 5})
    assert (state.replayed_to, state.records) == (0, 1)


# GroupMetadataManager.replay(ConsumerGroupRegularExpressionKey, value): a value resolves the
# regex (ConsumerGroup.updateResolvedRegularExpression adds its topics to the group's subscribed
# topic names, beside the members' own), a tombstone removes it and its topics
REGEX = "pay.*"


def regex(topics: list[str] | None) -> list:
    key = {"group_id": "cg", "regular_expression": REGEX}
    value = None if topics is None else {"topics": topics, "version": 7, "timestamp": TS}
    return [record(16, key, 0, value)]


@pytest.mark.parametrize(("entries", "subscribed"), [
    pytest.param([regex(["payouts", "payments"])], ("orders", "payments", "payouts"), id="resolved"),
    pytest.param([regex(["payments"]), regex(["payouts"])], ("orders", "payouts"), id="re-resolved"),
    pytest.param([regex(["payments"]), regex(None)], ("orders",), id="tombstone"),
    pytest.param([regex(None)], ("orders",), id="tombstone-of-an-unknown-regex"),
])
def test_a_resolved_regular_expression_subscribes_the_group_to_its_topics(tmp_path, entries, subscribed) -> None:
    state = load(tmp_path, consumer_group() + entries, NEW_COORDINATOR)
    (g,) = state.groups
    assert (g.protocol, g.subscribed_topics, kinds(state)) == ("consumer", subscribed, [])
