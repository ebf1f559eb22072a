"""KIP-1071 streams groups as the new group coordinator loads them, rule by rule with its
counter-case: ``GroupMetadataManager.replay`` of the six ``StreamsGroup*`` record types (17,
19-23), ``getOrMaybeCreatePersistedStreamsGroup``, ``StreamsGroup.maybeUpdateGroupState`` and
``StreamsGroupMember.isReconciledTo``, as the 4.4.0 jars hold them (the record layouts of
``group-coordinator``'s ``StreamsGroup*.json``). A real streams group, running and after it left,
is judged against ``describeStreamsGroups`` in tests/interop/test_real_kafka.py.
"""

from __future__ import annotations

import pytest

from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from kreplica.model.coordinator.groups import StreamsTasks
from tests.builders.groups import commit, group_record, kinds, load, record

G = "app"
_SKIPS = "; the coordinator's replay fails here, kreplica skips the record"


def sg(kind: int, value: dict | None = None, member: str | None = None, group: str = G) -> list:
    key = {"group_id": group} if member is None else {"group_id": group, "member_id": member}
    return [record(kind, key, 0, value)]


def metadata(epoch: int = 3, validated: int = 0) -> list:
    return sg(17, {"epoch": epoch, "metadata_hash": 77, "validated_topology_epoch": validated,
                   "last_assignment_configs": [{"key": "num.standby.replicas", "value": "0"}]})


def topology(epoch: int = 0) -> list:
    changelog = {"name": f"{G}-counts-changelog", "partitions": 0, "replication_factor": -1,
                 "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]}
    repartition = {"name": f"{G}-by-region-repartition", "partitions": 0, "replication_factor": -1,
                   "topic_configs": []}
    return sg(23, {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": [f"{G}-by-region-repartition"],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [changelog], "repartition_sink_topics": [],
         "repartition_source_topics": [repartition], "copartition_groups": []}]})


def member_metadata(member: str = "m1") -> list:
    return sg(19, {"instance_id": None, "rack_id": None, "client_id": "app-1-StreamThread-1-consumer",
                   "client_host": "/127.0.0.1", "rebalance_timeout_ms": 300_000, "topology_epoch": 0,
                   "process_id": "p-1", "user_endpoint": {"host": "app-1", "port": 8080},
                   "client_tags": [{"key": "zone", "value": "a"}]}, member)


def tasks(*subtopologies: tuple[str, list[int]], epochs: bool = False) -> list:
    return [{"subtopology_id": s, "partitions": ps} | ({"assignment_epochs": [3] * len(ps)} if epochs else {})
            for s, ps in subtopologies]


def target_metadata(epoch: int = 3) -> list:
    return sg(20, {"assignment_epoch": epoch, "assignment_timestamp": 1_700_000_000_000})


def target_member(member: str = "m1") -> list:
    return sg(21, {"active_tasks": tasks(("0", [0]), ("1", [0])), "standby_tasks": [], "warmup_tasks": []}, member)


def current(member: str = "m1", epoch: int = 3, state: int = 1) -> list:
    return sg(22, {"member_epoch": epoch, "previous_member_epoch": epoch - 1, "state": state,
                   "active_tasks": tasks(("1", [0]), ("0", [1, 0]), epochs=True),
                   "standby_tasks": tasks(("1", [1])), "warmup_tasks": [],
                   "active_tasks_pending_revocation": [], "standby_tasks_pending_revocation": [],
                   "warmup_tasks_pending_revocation": []}, member)


#: a running group as the coordinator writes it: metadata, topology, member, target, assignment
RUNNING = [metadata(), topology(), member_metadata(), target_metadata(), target_member(), current()]
#: a member leaving (KafkaStreams.close with leaveGroup): assignment, target, then its own record
LEAVES = [sg(22, None, "m1"), sg(21, None, "m1"), sg(19, None, "m1")]


def test_a_running_streams_group_as_the_coordinator_holds_it(tmp_path) -> None:
    (g,) = load(tmp_path, RUNNING, NEW_COORDINATOR).groups
    assert (g.protocol, g.protocol_type, g.state, g.generation, g.assignment_epoch) == ("streams", "streams",
                                                                                      "Stable", 3, 3)
    assert (g.topology.epoch, g.topology.validated, [s.subtopology_id for s in g.topology.subtopologies]) == \
        (0, True, ["0", "1"])
    (s0, s1) = g.topology.subtopologies
    assert (s0.source_topics, s0.repartition_sink_topics, s1.state_changelog_topics, s1.repartition_source_topics) \
        == (("orders",), ("app-by-region-repartition",), ("app-counts-changelog",), ("app-by-region-repartition",))
    # isSubscribedToTopic: StreamsTopology.sourceTopicMap (source and repartition source topics,
    # not the changelogs)
    assert g.subscribed_topics == ("app-by-region-repartition", "orders")
    (m,) = g.members
    assert (m.member_id, m.member_epoch, m.process_id, m.topology_epoch, m.client_host, m.rebalance_timeout_ms) == \
        ("m1", 3, "p-1", 0, "/127.0.0.1", 300_000)
    assert m.tasks == StreamsTasks(active=(("0", (0, 1)), ("1", (0,))), standby=(("1", (1,)),), warmup=())
    assert m.assignment == () and kinds(load(tmp_path, RUNNING, NEW_COORDINATOR)) == []


@pytest.mark.parametrize(("entries", "state"), [
    pytest.param(RUNNING, "Stable", id="stable"),
    # no member: Empty, whatever else the group holds
    pytest.param(RUNNING[:2], "Empty", id="empty"),
    # members, but no topology, or one of an epoch the coordinator has not validated: NotReady
    pytest.param([metadata(), member_metadata(), target_metadata(), current()], "NotReady", id="no-topology"),
    pytest.param([metadata(validated=-1), *RUNNING[1:]], "NotReady", id="topology-not-validated"),
    pytest.param([metadata(validated=0), topology(epoch=1), *RUNNING[2:]], "NotReady", id="topology-epoch-moved-on"),
    # the group epoch ahead of the target assignment's: Assigning
    pytest.param([metadata(epoch=4), *RUNNING[1:]], "Assigning", id="assigning"),
    # a member behind the target's epoch, or not STABLE (streams.MemberState 1, not 0): Reconciling
    pytest.param([*RUNNING[:5], current(epoch=2)], "Reconciling", id="member-behind"),
    pytest.param([*RUNNING[:5], current(state=2)], "Reconciling", id="member-unrevoked-tasks"),
    pytest.param([*RUNNING[:5], current(state=0)], "Reconciling", id="member-state-0-is-not-stable"),
    # a member known only by its metadata: getOrCreateUninitializedMember has no state yet
    pytest.param(RUNNING[:5], "Reconciling", id="member-without-assignment"),
])
def test_the_state_the_coordinator_gives_it(tmp_path, entries, state) -> None:
    (g,) = load(tmp_path, entries, NEW_COORDINATOR).groups
    assert g.state == state


def test_a_member_that_left_leaves_an_empty_group_with_its_offsets(tmp_path) -> None:
    state = load(tmp_path, [*RUNNING, [commit(G, "orders", 0, 300)], *LEAVES, metadata(epoch=4), target_metadata(4)],
                 NEW_COORDINATOR)
    (g,) = state.groups
    assert (g.state, g.generation, g.assignment_epoch, g.members, [o.offset for o in g.offsets]) == \
        ("Empty", 4, 4, (), [300])
    assert kinds(state) == []


@pytest.mark.parametrize(("entries", "message"), [
    # replay(StreamsGroupMetadataKey) tombstone: no member left, then no target assignment epoch
    pytest.param([*RUNNING, sg(17)], "offset 6: streams_group_metadata of group 'app': Received a tombstone record "
                 "to delete group app but the group still has 1 members.", id="group-tombstone-members"),
    pytest.param([metadata(), target_metadata(), sg(17)], "offset 2: streams_group_metadata of group 'app': Received "
                 "a tombstone record to delete group app but did not receive StreamsGroupTargetAssignmentMetadataValue "
                 "tombstone.", id="group-tombstone-assignment-epoch"),
    # replay(StreamsGroupMemberMetadataKey) tombstone: the assignment's tombstone first, and no target
    pytest.param([*RUNNING, sg(19, None, "m1")], "offset 6: streams_group_member_metadata of group 'app': Received a "
                 "tombstone record to delete member m1 but did not receive StreamsGroupCurrentMemberAssignmentValue "
                 "tombstone.", id="member-tombstone-not-left"),
    pytest.param([*RUNNING, sg(22, None, "m1"), sg(19, None, "m1")], "offset 7: streams_group_member_metadata of "
                 "group 'app': Received a tombstone record to delete member m1 but did not receive "
                 "StreamsGroupTargetAssignmentMetadataValue tombstone.", id="member-tombstone-targeted"),
    # replay(StreamsGroupTargetAssignmentMetadataKey) tombstone while members are targeted
    pytest.param([metadata(), target_member(), sg(20)], "offset 2: streams_group_target_assignment_metadata of group "
                 "'app': Received a tombstone record to delete target assignment of app but the assignment still has "
                 "1 members.", id="target-epoch-tombstone-targets"),
    # getOrMaybeCreatePersistedStreamsGroup: a group of another kind is not replaced
    pytest.param([sg(3, {"epoch": 1}), metadata()], "offset 1: streams_group_metadata of group 'app': Group app is "
                 "not a streams group.", id="consumer-not-streams"),
    pytest.param([[group_record(G, [])], metadata()], "offset 1: streams_group_metadata of group 'app': Group app is "
                 "not a streams group.", id="classic-not-streams"),
])
def test_a_refused_replay_says_kafkas_words(tmp_path, entries, message) -> None:
    state = load(tmp_path, entries, NEW_COORDINATOR)
    (finding,) = state.findings
    assert (finding.kind, finding.message) == ("coordinator_replay_error", message + _SKIPS)


@pytest.mark.parametrize(("entries", "groups"), [
    # the tombstones in the order the coordinator deletes a group: removeGroup
    pytest.param([*RUNNING, *LEAVES, sg(20), sg(23), sg(17)], [], id="removed"),
    # a tombstone of a group that does not exist is ignored (GroupIdNotFoundException caught),
    # of every streams type; a share group's refuses it (the counter-case in test_replay.py)
    *[pytest.param([sg(kind, None, "m1" if kind in (19, 21, 22) else None)], [], id=f"type-{kind}-tombstone-no-group")
      for kind in (17, 19, 20, 21, 22, 23)],
    # ... and a member's tombstone of a member the group does not have (UnknownMemberIdException caught)
    pytest.param([metadata(), sg(19, None, "m9"), sg(22, None, "m9")], [(G, "streams", "Empty")],
                 id="member-tombstones-no-member"),
    # a topology tombstone keeps the group (setTopology(null)): NotReady while it has members
    pytest.param([*RUNNING, sg(23)], [(G, "streams", "NotReady")], id="topology-tombstone-keeps"),
    # every record with a value creates the group: the target member's too
    pytest.param([target_member()], [(G, "streams", "Empty")], id="target-member-creates"),
    # a simple group (offsets only) is replaced by the streams group, its offsets kept
    pytest.param([[commit(G, "orders", 0, 5)], metadata()], [(G, "streams", "Empty")], id="replaces-simple"),
])
def test_streams_group_records_replayed(tmp_path, entries, groups) -> None:
    state = load(tmp_path, entries, NEW_COORDINATOR)
    assert kinds(state) == []
    assert [(g.group, g.protocol, g.state) for g in state.groups] == groups


def test_the_old_coordinator_ignores_streams_group_records(tmp_path) -> None:
    """GroupMetadataManager.readMessageKey (3.x): UnknownKey for every type it does not know."""
    state = load(tmp_path, [*RUNNING, [commit(G, "orders", 0, 300)]], OLD_COORDINATOR)
    (finding,) = state.findings
    assert (finding.kind, finding.details["records"]) == ("coordinator_unknown_record", 6)
    assert "(17, 19, 20, 21, 22, 23)" in finding.message
    (g,) = state.groups
    assert (g.protocol, [o.offset for o in g.offsets]) == (None, [300])
