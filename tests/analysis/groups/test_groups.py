"""Consumer groups against the rest of the evidence: replicas of one ``__consumer_offsets``
partition compared (the highest log end offset answers), committed offsets against the replicas
of their data partitions, and the answer ``kreplica groups`` gives per partition."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kreplica.analysis.groups.offset_fit import check_offsets
from kreplica.analysis.groups.replicas import choose_replica, compare_replicas
from kreplica.analysis.groups.state import partition_groups
from kreplica.formats.log.batch import CONTROL_COMMIT
from kreplica.model.coordinator.replay import NEW_COORDINATOR
from kreplica.model.coordinator.sources import DataReplica
from kreplica.model.versions import KafkaVersion
from tests.builders.groups import TS, commit, group_record, load

V4 = KafkaVersion(4, 0)


def replica(tmp_path, entries, label: str):
    return replace(load(tmp_path, entries, NEW_COORDINATOR), label=label)


BASE = [[group_record("g", [])], [commit("g", "t", 0, 5)], [commit("h", "t", 0, 1)]]


def test_the_highest_log_end_offset_answers_and_a_tie_goes_to_the_first(tmp_path) -> None:
    short = replica(tmp_path, BASE[:2], "broker-2")
    full = replica(tmp_path, BASE, "broker-1")
    assert choose_replica([short, full]).label == "broker-1"
    twin = replace(full, label="broker-3")
    assert choose_replica([full, twin]).label == "broker-1"
    assert choose_replica([twin, full]).label == "broker-3"


def test_replicas_that_agree_have_no_disagreement(tmp_path) -> None:
    a, b = replica(tmp_path, BASE, "broker-1"), replica(tmp_path, BASE, "broker-2")
    assert compare_replicas([a, b]) == (a, ())


def test_disagreements_name_each_replica(tmp_path) -> None:
    leader = replica(tmp_path, BASE + [[commit("g", "t", 0, 9)], [commit("g", "t", 1, 3)]], "broker-1")
    follower = replica(tmp_path, BASE, "broker-2")
    chosen, found = compare_replicas([follower, leader])
    assert chosen.label == "broker-1"
    assert [(d.group, d.topic, d.partition, d.field) for d in found] == [("g", "t", 0, "offset"),
                                                                        ("g", "t", 1, "offset")]
    changed, added = found
    assert [(label, value["offset"]) for label, value in changed.values] == [("broker-2", 5), ("broker-1", 9)]
    assert added.values[0] == ("broker-2", None) and added.chosen == "broker-1"


def test_a_group_one_replica_lacks(tmp_path) -> None:
    a = replica(tmp_path, BASE + [[group_record("k", [])]], "broker-1")
    b = replica(tmp_path, BASE, "broker-2")
    (d,) = compare_replicas([a, b])[1]
    assert (d.group, d.field, d.values[1]) == ("k", "group", ("broker-2", None))
    assert d.values[0][1] == {"protocol": "classic", "state": "Empty", "generation": 1, "members": []}


# -- offsets against the data ------------------------------------------------------------------------


@pytest.mark.parametrize(("committed", "replicas", "expected"), [
    pytest.param(13, [(0, 12), (0, 12)], "group_offset_beyond_log_end", id="beyond-every-replica"),
    pytest.param(13, [(0, 12, 12)], "group_offset_beyond_log_end", id="beyond-what-its-files-record"),
    pytest.param(12, [(0, 12)], None, id="at-the-log-end-fits"),
    pytest.param(13, [(0, 12), (0, 20)], None, id="one-replica-holds-it"),
    pytest.param(3, [(5, 12), (4, 12)], "group_offset_below_log_start", id="below-every-log-start"),
    pytest.param(4, [(5, 12), (4, 12)], None, id="at-one-log-start"),
    pytest.param(13, [], None, id="no-replica-read"),
])
def test_offsets_against_the_data(tmp_path, committed, replicas, expected) -> None:
    state = load(tmp_path, [[commit("g", "t", 0, committed)]], NEW_COORDINATOR)
    data = {("t", 0): [DataReplica(f"broker-{i}", f"/d{i}", *bounds) for i, bounds in enumerate(replicas)]}
    found = check_offsets(state.groups, data)
    assert [f.kind for f in found] == ([expected] if expected else [])
    if expected:
        (f,) = found
        assert (f.details["group"], f.details["offset"], len(f.details["replicas"])) == ("g", committed, len(replicas))
        assert f.path.endswith(".log") and f.severity == ("error" if "beyond" in expected else "info")


def test_an_offset_within_what_an_incomplete_copy_records_is_a_warning(tmp_path) -> None:
    """Its checkpoints or producer snapshots record a longer log than its segments hold: a segment
    left out of the copy, or unflushed records lost; the evidence cannot tell which."""
    state = load(tmp_path, [[commit("g", "t", 0, 15)]], NEW_COORDINATOR)
    (f,) = check_offsets(state.groups, {("t", 0): [DataReplica("broker-1", "/d", 0, 0, 17081)]})
    assert (f.kind, f.severity) == ("group_offset_beyond_log_end", "warning")
    assert "lacks segments" in f.message and "broker-1 17081" in f.message
    (f,) = check_offsets(state.groups, {("t", 0): [DataReplica("broker-1", "/d", 0, 0, 14)]})
    assert f.severity == "error"


# -- the answer ---------------------------------------------------------------------------------------

OLD_COMMIT = [[commit("g", "t", 0, 1, commit_timestamp=TS)], [commit("h", "t", 0, 2, commit_timestamp=TS)]]


@pytest.mark.parametrize(("kw", "when"), [
    pytest.param({}, TS + 1000, id="newest-record-replayed"),
    pytest.param({"at_time": TS + 5}, TS + 5, id="at-time"),
    pytest.param({"at_time": TS + 5, "expiry_time": TS + 9}, TS + 9, id="expiry-time-given"),
])
def test_the_evaluation_time(tmp_path, kw, when) -> None:
    answer = partition_groups([load(tmp_path, OLD_COMMIT, NEW_COORDINATOR)], V4, retention_minutes=1, **kw)
    assert answer.expiry_time == when


def test_expiry_is_applied_to_the_answer(tmp_path) -> None:
    state = load(tmp_path, OLD_COMMIT, NEW_COORDINATOR)
    kept = partition_groups([state], V4, retention_minutes=1, expiry_time=TS + 59_999)
    gone = partition_groups([state], V4, retention_minutes=1, expiry_time=TS + 60_000)
    assert [o.expired for g in kept.chosen.groups for o in g.offsets] == [False, False]
    assert [o.expired for g in gone.chosen.groups for o in g.offsets] == [True, True]


def test_groups_asked_for_narrow_groups_disagreements_and_offset_checks(tmp_path) -> None:
    a = replica(tmp_path, OLD_COMMIT + [[commit("g", "t", 0, 30)], [commit("h", "t", 0, 30)]], "broker-1")
    b = replica(tmp_path, OLD_COMMIT, "broker-2")
    data = {("t", 0): [DataReplica("broker-1", "/d", 0, 10)]}
    every = partition_groups([a, b], V4, retention_minutes=10080, data=lambda t, p: data.get((t, p), ()))
    only = partition_groups([a, b], V4, retention_minutes=10080, groups=["h"], data=lambda t, p: data.get((t, p), ()))
    assert [g.group for g in every.chosen.groups] == ["g", "h"] and len(every.disagreements) == 2
    assert [f.details["group"] for f in every.fit] == ["g", "h"] and every.has_errors
    assert [g.group for g in only.chosen.groups] == ["h"]
    assert [d.group for d in only.disagreements] == ["h"] and [f.details["group"] for f in only.fit] == ["h"]


# -- issue 27 §7: what a disagreement carries, and which offsets are the same one ------------------
P, Q = 7000, 7001   # transactional producers


def test_an_offset_disagreement_shows_each_replica_s_commit(tmp_path) -> None:
    leader = replica(tmp_path, BASE + [[commit("g", "t", 0, 9)]], "broker-1")
    follower = replica(tmp_path, BASE, "broker-2")
    (d,) = compare_replicas([follower, leader])[1]
    assert d.values == (("broker-2", {"offset": 5, "leader_epoch": None, "metadata": "", "record_offset": 1}),
                        ("broker-1", {"offset": 9, "leader_epoch": None, "metadata": "", "record_offset": 3}))


def test_pending_commits_are_told_apart_by_producer(tmp_path) -> None:
    """``OffsetMetadataManager``: pending transactional offsets are held per producer id, so a
    replica holding Q's commit besides P's disagrees on Q's only."""
    both = replica(tmp_path, BASE + [{"records": [commit("g", "t", 0, 7)], "producer_id": P},
                                     {"records": [commit("g", "t", 0, 8)], "producer_id": Q}], "broker-1")
    one = replica(tmp_path, BASE + [{"records": [commit("g", "t", 0, 7)], "producer_id": P}], "broker-2")
    (d,) = compare_replicas([both, one])[1]
    assert (d.field, d.values[0][1]["offset"], d.values[1]) == ("pending_offset", 8, ("broker-2", None))


def test_a_committed_offset_is_the_same_whichever_producer_wrote_it(tmp_path) -> None:
    """A committed offset is keyed by its partition (``offsets`` of the group): the same commit
    applied by a COMMIT marker on one replica and written plain on the other is no disagreement."""
    txn = replica(tmp_path, BASE + [{"records": [commit("g", "t", 0, 9)], "producer_id": P},
                                    {"marker": CONTROL_COMMIT, "producer_id": P}], "broker-1")
    plain = replica(tmp_path, BASE + [[commit("g", "t", 0, 9)]], "broker-2")
    assert compare_replicas([txn, plain])[1] == ()


def test_disagreements_come_in_topic_then_partition_order_with_the_coordinator_partition(tmp_path) -> None:
    """compare_replicas' documented order: group by group, then offset by offset in name order
    (topic, then partition); each disagreement names the ``__consumer_offsets`` partition."""
    extra = [[commit("g", "a", 1, 4)]] + [[commit("g", "b", p, 10 + p)] for p in range(7)]
    leader = replica(tmp_path, BASE + extra, "broker-1")
    follower = replica(tmp_path, BASE, "broker-2")
    _chosen, found = compare_replicas([follower, leader])
    assert [(d.topic, d.partition) for d in found] == [("a", 1)] + [("b", p) for p in range(7)]
    assert {d.coordinator_partition for d in found} == {leader.coordinator_partition}
    assert leader.coordinator_partition is not None


def test_pending_commits_of_several_producers_come_in_producer_order(tmp_path) -> None:
    """OffsetMetadataManager keeps pending transactional offsets per producer id; kreplica lists a
    partition's pending disagreements by producer id (0 is a valid id: the first block
    ProducerIdManager hands out starts at 0)."""
    pids = [5, 0, 3, 1, 4, 2]
    both = replica(tmp_path, BASE + [{"records": [commit("g", "t", 0, 20 + p)], "producer_id": p} for p in pids],
                   "broker-1")
    none = replica(tmp_path, BASE, "broker-2")
    found = compare_replicas([both, none])[1]
    assert [(d.field, d.values[0][1]["offset"]) for d in found] == [("pending_offset", 20 + p) for p in range(6)]


def _fit_state(tmp_path, committed: int):
    # h's commit on u-0 comes first: no replica of u-0 is read, so it is skipped (not judged)
    state = load(tmp_path, [[commit("h", "u", 0, 1)], [commit("g", "t", 0, committed)]], NEW_COORDINATOR)
    (o,) = [o for g in state.groups for o in g.offsets if o.group == "g"]
    assert o.position > 0 and o.path and o.path != o.source and o.record_offset == 1
    return state, o


@pytest.mark.parametrize(("committed", "bounds", "severity", "message"), [
    pytest.param(13, [(0, 12), (0, 12)], "error",
                 "group 'g' committed t-0 at 13 (record offset 1), beyond the log end of every replica read "
                 "(broker-0 12, broker-1 12): the records it had read up to there are gone", id="beyond"),
    # end_recorded == committed: within what the files record (the consumer had read all of it)
    pytest.param(15, [(0, 0, 15), (0, 3, 15)], "warning",
                 "group 'g' committed t-0 at 15 (record offset 1), beyond the log end of every replica read "
                 "(broker-0 0, broker-1 3), but within the log their checkpoints or producer snapshots record "
                 "(broker-0 15, broker-1 15): the copy lacks segments, or the broker lost unflushed records",
                 id="at-the-recorded-end"),
    pytest.param(15, [(0, 0, 14), (0, 3, 16)], "warning",
                 "group 'g' committed t-0 at 15 (record offset 1), beyond the log end of every replica read "
                 "(broker-0 0, broker-1 3), but within the log their checkpoints or producer snapshots record "
                 "(broker-1 16): the copy lacks segments, or the broker lost unflushed records",
                 id="one-replica-records-it"),
    pytest.param(3, [(5, 12), (4, 12)], "info",
                 "group 'g' committed t-0 at 3, below the log start of every replica read (broker-0 5, broker-1 4): "
                 "its next fetch is out of range", id="below-start"),
])
def test_an_offset_finding_exactly(tmp_path, committed, bounds, severity, message) -> None:
    """The finding as `kreplica groups` prints it: the consumer's next fetch at an offset outside
    [log start, log end] of the leader is OFFSET_OUT_OF_RANGE (Kafka: Partition.fetchRecords /
    UnifiedLog.read), module docstring of offset_fit for the three kinds."""
    state, o = _fit_state(tmp_path, committed)
    replicas = [DataReplica(f"broker-{i}", f"/d{i}", *b) for i, b in enumerate(bounds)]
    (f,) = check_offsets(state.groups, {("t", 0): replicas, ("u", 1): replicas})
    kind = "group_offset_below_log_start" if committed < 5 else "group_offset_beyond_log_end"
    assert (f.kind, f.severity, f.message, f.path, f.position) == (kind, severity, message, o.path, o.position)
    assert f.details == {"group": "g", "topic": "t", "partition": 0, "offset": committed, "replicas": [
        {"label": f"broker-{i}", "path": f"/d{i}", "log_start_offset": b[0], "log_end_offset": b[1]}
        for i, b in enumerate(bounds)]}


def test_every_offset_of_every_group_is_judged(tmp_path) -> None:
    """An offset without a replica read is skipped, not the end of the walk; a finding for one offset
    does not stop the next one."""
    # g's a-0 comes first whether offsets are kept in commit or in name order
    state = load(tmp_path, [[commit("g", "a", 0, 1)], [commit("g", "t", 0, 30)], [commit("g", "t", 1, 31)],
                            [commit("k", "t", 0, 32)]], NEW_COORDINATOR)
    data = {("t", 0): [DataReplica("broker-1", "/d0", 0, 12)], ("t", 1): [DataReplica("broker-1", "/d1", 0, 12)]}
    found = check_offsets(state.groups, data)
    assert sorted((f.details["group"], f.details["partition"], f.kind) for f in found) == [
        ("g", 0, "group_offset_beyond_log_end"), ("g", 1, "group_offset_beyond_log_end"),
        ("k", 0, "group_offset_beyond_log_end")]


def test_pending_commits_of_producer_0_come_before_producer_1_on_every_partition(tmp_path) -> None:
    """As above, with producer ids 0 and 1 (the first two ids of the first block) pending on twelve
    partitions: on each partition producer 0's disagreement comes first."""
    batches = [{"records": [commit("g", "t", p, 100 * pid + p) for p in range(12)], "producer_id": pid}
               for pid in (1, 0)]
    both = replica(tmp_path, BASE + batches, "broker-1")
    none = replica(tmp_path, BASE, "broker-2")
    found = compare_replicas([both, none])[1]
    assert [(d.partition, d.values[0][1]["offset"]) for d in found] == [
        (p, 100 * pid + p) for p in range(12) for pid in (0, 1)]
