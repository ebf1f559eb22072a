"""The controller's steps per partition: the spec's worked example ORS={1,2,3} -> TRS={4,5,6}
(kafka-algorithms §5.5), row for row, for the KIP-455 and the <= 2.3 ZooKeeper controllers, and
KRaft's rules."""

from __future__ import annotations

import pytest

from kreplica.analysis.reassignment.transitions import controller_for, transition_table
from kreplica.model.cluster.assignment import PartitionReplicas
from kreplica.model.versions import parse_kafka_version

START = PartitionReplicas("t", 0, (1, 2, 3), leader=1, leader_epoch=10, isr=(1, 2, 3), version=20)


def _rows(table):
    return [(r.step, list(r.replicas), list(r.adding), list(r.removing), r.leader, sorted(r.isr),
             r.leader_epoch_delta, r.version_delta) for r in table.rows]


def test_kip455_worked_example_row_for_row() -> None:
    # | Step | replicas / adding / removing | Leader | ISR | leader_epoch | state zkVersion |
    assert _rows(transition_table(START, (4, 5, 6), "zookeeper-kip455")) == [
        ("initial", [1, 2, 3], [], [], 1, [1, 2, 3], 0, 0),
        ("U1", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 0, 0),
        ("A1-A2", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 1, 1),
        ("catch-up", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3, 4, 5, 6], 1, 4),
        ("B3", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 4, [1, 2, 3, 4, 5, 6], 2, 5),
        ("B4", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 4, [4, 5, 6], 5, 8),
        ("B6", [4, 5, 6], [], [], 4, [4, 5, 6], 5, 8),
    ]


def test_legacy_worked_example_same_leader_isr_epochs() -> None:
    rows = _rows(transition_table(START, (4, 5, 6), "zookeeper-legacy"))
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in rows] == [
        ("initial", [1, 2, 3], 1, [1, 2, 3], 0),
        ("1", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3], 0),
        ("2", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3], 1),
        ("4", [1, 2, 3, 4, 5, 6], 1, [1, 2, 3, 4, 5, 6], 1),
        ("7", [1, 2, 3, 4, 5, 6], 4, [1, 2, 3, 4, 5, 6], 2),
        ("8", [1, 2, 3, 4, 5, 6], 4, [4, 5, 6], 5),
        ("10", [4, 5, 6], 4, [4, 5, 6], 5),
    ]


def test_kraft_start_then_one_record_per_isr_expansion_completing_in_the_last() -> None:
    rows = _rows(transition_table(START, (4, 5, 6), "kraft"))
    assert rows[1] == ("start", [4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3], 1, [1, 2, 3], 0, 1)
    assert rows[-1] == ("catch-up", [4, 5, 6], [], [], 4, [4, 5, 6], 1, 4)
    assert len(rows) == 5


def test_kraft_removal_covered_by_isr_completes_at_once() -> None:
    rows = _rows(transition_table(START, (1, 2), "kraft"))
    assert rows[1:] == [("start", [1, 2], [], [], 1, [1, 2], 1, 1)]


def test_kip455_leader_in_target_is_bumped_not_elected() -> None:
    rows = _rows(transition_table(START, (1, 2, 4), "zookeeper-kip455"))
    b3 = next(r for r in rows if r[0] == "B3")
    assert b3[4] == 1 and b3[6] == 2
    assert rows[-1] == ("B6", [1, 2, 4], [], [], 1, [1, 2, 4], 3, 4)


def test_absolute_epochs_from_the_source() -> None:
    table = transition_table(START, (4, 5, 6), "zookeeper-kip455")
    assert (table.leader_epoch, table.version) == (10, 20)


@pytest.mark.parametrize(("version", "kind", "expected"), [
    pytest.param("2.3", "zookeeper", "zookeeper-legacy", id="zk-2.3"),
    pytest.param("2.4", "zookeeper", "zookeeper-kip455", id="zk-2.4"),
    pytest.param("4.0", "zookeeper", "zookeeper-kip455", id="zk-source-stays-zk"),
    pytest.param("3.9", "kraft", "kraft", id="kraft-source"),
    pytest.param("4.0", "assignment", "kraft", id="file-4.0"),
    pytest.param("3.6", "assignment", "zookeeper-kip455", id="file-3.6"),
])
def test_controller_per_version(version, kind, expected) -> None:
    assert controller_for(parse_kafka_version(version), kind) == expected


def _full(table):
    return [(r.step, r.replicas, r.adding, r.removing, r.leader, r.isr, r.leader_epoch_delta, r.version_delta, r.note)
            for r in table.rows]


def test_kip455_worked_example_notes() -> None:
    """KIP-455 ``KafkaController.onPartitionReassignment``: U (RS = TRS ++ ORS-TRS with
    adding/removing), A1 ``updateLeaderEpochAndSendRequest`` to ORS+AR and A2 AR -> NewReplica,
    the leader's ISR expansions, B3 ``moveReassignedPartitionLeaderIfRequired`` (1 is not in
    TRS: ``ReassignPartitionLeaderElectionStrategy``), B4 OfflineReplica per RR member, B6 the
    topic znode (kafka-algorithms §5.5 worked table)."""
    assert [r.note for r in transition_table(START, (4, 5, 6), "zookeeper-kip455").rows] == [
        "before the reassignment",
        "topic znode: RS = target then the other originals, adding and removing written",
        "leader epoch bumped; LeaderAndIsr to 1,2,3,4,5,6; 4,5,6 start fetching",
        "the leader adds 4,5,6 to the ISR, one write per replica",
        "B3: the leader is not in the target: reassignment election picks the first target replica in the ISR",
        "removed replicas 1,2,3 go offline one by one: an ISR shrink and epoch bump each",
        "topic znode: RS = target, adding and removing cleared",
    ]


def test_legacy_worked_example_rows_with_versions_and_notes() -> None:
    """The <= 2.3 ``KafkaController.onPartitionReassignment`` 12 steps: each write of the partition
    state znode (step 2's epoch bump, one ISR expansion per RAR member, step 7's election, one
    ISR shrink per OAR-RAR member in step 8) moves its version by one, as in the KIP-455 table
    (kafka-algorithms §5.5: the same leader, ISR and epoch progression)."""
    all6 = (1, 2, 3, 4, 5, 6)
    assert _full(transition_table(START, (4, 5, 6), "zookeeper-legacy")) == [
        ("initial", (1, 2, 3), (), (), 1, (1, 2, 3), 0, 0, "before the reassignment"),
        ("1", all6, (), (), 1, (1, 2, 3), 0, 0,
         "topic znode: AR = OAR + RAR (Scala set order, unspecified; shown sorted)"),
        ("2", all6, (), (), 1, (1, 2, 3), 1, 1, "leader epoch bumped; step 3: 4,5,6 start fetching"),
        ("4", all6, (), (), 1, all6, 1, 4, "4,5,6 join the ISR; the controller waits for all of RAR"),
        ("7", all6, (), (), 4, all6, 2, 5,
         "the leader is not in RAR: reassignment election picks the first RAR member in the ISR"),
        ("8", all6, (), (), 4, (4, 5, 6), 5, 8,
         "replicas 1,2,3 of OAR - RAR go offline (StopReplica): an ISR shrink and epoch bump each"),
        ("10", (4, 5, 6), (), (), 4, (4, 5, 6), 5, 8,
         "topic znode: AR = RAR; the partition leaves /admin/reassign_partitions"),
    ]


def test_kraft_worked_example_row_for_row() -> None:
    """KRaft ``PartitionReassignmentReplicas``: replicas = T ++ sorted(C-T) in the first
    PartitionChangeRecord; each AlterPartition ISR expansion is a record (partition epoch + 1);
    the last completes the reassignment (``completeReassignmentIfNeeded``): 1 was removed, so
    ``electAnyLeader`` picks the first target replica in the ISR, one leader epoch bump."""
    moving = ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert _full(transition_table(START, (4, 5, 6), "kraft")) == [
        ("initial", (1, 2, 3), (), (), 1, (1, 2, 3), 0, 0, "before the reassignment"),
        ("start", *moving, 1, (1, 2, 3), 0, 1,
         "PartitionChangeRecord: replicas = target then sorted removed; adding and removing sorted"),
        ("catch-up", *moving, 1, (1, 2, 3, 4), 0, 2, "AlterPartition adds 4 to the ISR"),
        ("catch-up", *moving, 1, (1, 2, 3, 4, 5), 0, 3, "AlterPartition adds 5 to the ISR"),
        ("catch-up", (4, 5, 6), (), (), 4, (4, 5, 6), 1, 4,
         "AlterPartition adds 6 to the ISR; the ISR covers the target, so the same record completes the "
         "reassignment (the replica set shrank: leader epoch bumped)"),
    ]


@pytest.mark.parametrize("controller", ["zookeeper-kip455", "zookeeper-legacy", "kraft"])
def test_a_dead_leader_in_the_target_is_replaced(controller) -> None:
    """ZooKeeper ``moveReassignedPartitionLeaderIfRequired``: a leader in the new replicas "but
    dead" is re-elected with ``ReassignPartitionLeaderElectionStrategy`` (the first target replica
    alive and in the ISR); KRaft ``electAnyLeader`` keeps the leader only while it is acceptable.
    Counter-case: the same move with every broker alive keeps leader 1."""
    dead = transition_table(START, (1, 2, 4), controller, live={2, 3, 4}).rows
    alive = transition_table(START, (1, 2, 4), controller, live={1, 2, 3, 4}).rows
    assert (dead[-1].leader, alive[-1].leader) == (2, 1)
    if controller != "kraft":
        (election,) = [r for r in dead if r.step in ("B3", "7")]
        assert election.note.endswith("reassignment election picks the first "
                                      + ("target replica" if controller == "zookeeper-kip455" else "RAR member")
                                      + " in the ISR")


@pytest.mark.parametrize("controller, step, note", [
    pytest.param("zookeeper-kip455", "B3", "B3: the leader stays; its epoch is bumped", id="kip455"),
    pytest.param("zookeeper-legacy", "7", "the leader stays; its epoch is bumped", id="legacy"),
])
def test_a_live_leader_in_the_target_stays_even_when_not_first(controller, step, note) -> None:
    """``moveReassignedPartitionLeaderIfRequired``: a leader already in the new replicas and alive
    only gets ``updateLeaderEpochAndSendRequest``; no election moves it to the target's first
    replica (counter-case: ``test_a_dead_leader_in_the_target_is_replaced``)."""
    rows = transition_table(START, (2, 1, 4), controller, live={1, 2, 3, 4}).rows
    (bump,) = [r for r in rows if r.step == step]
    assert (bump.leader, bump.leader_epoch_delta, bump.note) == (1, 2, note)
    assert (rows[-1].replicas, rows[-1].leader, rows[-1].isr, rows[-1].leader_epoch_delta) == ((2, 1, 4), 1, (1, 2, 4), 3)


def test_kraft_keeps_an_acceptable_leader_and_bumps_only_for_the_shrink() -> None:
    """``PartitionChangeBuilder.electAnyLeader``: the current leader, valid (in the ISR, alive), is
    kept although 2 comes first; ``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`` bumps the
    leader epoch because 3 left the replica set."""
    rows = _full(transition_table(START, (2, 1, 4), "kraft", live={1, 2, 3, 4}))
    assert rows[1:] == [
        ("start", (2, 1, 4, 3), (4,), (3,), 1, (1, 2, 3), 0, 1,
         "PartitionChangeRecord: replicas = target then sorted removed; adding and removing sorted"),
        ("catch-up", (2, 1, 4), (), (), 1, (1, 2, 4), 1, 2,
         "AlterPartition adds 4 to the ISR; the ISR covers the target, so the same record completes the "
         "reassignment (the replica set shrank: leader epoch bumped)"),
    ]


def test_kraft_expansion_completes_without_a_leader_epoch_bump() -> None:
    """``triggerLeaderEpochBumpForReplicaReassignmentIfNeeded``: the target contains every old
    replica (a replication-factor increase), and the leader stays, so the leader epoch does not
    move; only the partition epoch does (counter-case: the shrink above)."""
    rows = _full(transition_table(START, (1, 2, 3, 4), "kraft"))
    assert rows[1:] == [
        ("start", (1, 2, 3, 4), (4,), (), 1, (1, 2, 3), 0, 1,
         "PartitionChangeRecord: replicas = target then sorted removed; adding and removing sorted"),
        ("catch-up", (1, 2, 3, 4), (), (), 1, (1, 2, 3, 4), 0, 2,
         "AlterPartition adds 4 to the ISR; the ISR covers the target, so the same record completes the reassignment"),
    ]


def test_kraft_no_acceptable_target_replica_leaves_no_leader() -> None:
    """``electAnyLeader`` without an acceptable ISR member (and no unclean election) returns
    NO_LEADER (-1): the removed leader 1 is not replaced by a dead broker; the leader change bumps
    the leader epoch."""
    (_, start) = _full(transition_table(START, (2, 3), "kraft", live={1}))
    assert start == ("start", (2, 3), (), (), -1, (2, 3), 1, 1,
                     "one PartitionChangeRecord: the ISR already covers the target, so the reassignment completes at once")


def test_reorder_within_the_isr_skips_the_catch_up() -> None:
    """The target's set equals the ISR: KIP-455 ``isReassignmentComplete`` (TRS subset of ISR) goes
    straight to phase B, the <= 2.3 controller straight to step 5-10 without writing OAR+RAR, and
    KRaft completes in the first record without a leader epoch bump (no replica left)."""
    assert _full(transition_table(START, (3, 1, 2), "zookeeper-kip455")) == [
        ("initial", (1, 2, 3), (), (), 1, (1, 2, 3), 0, 0, "before the reassignment"),
        ("U1", (3, 1, 2), (), (), 1, (1, 2, 3), 0, 0,
         "topic znode: RS = target then the other originals, adding and removing written"),
        ("B3", (3, 1, 2), (), (), 1, (1, 2, 3), 1, 1, "B3: the leader stays; its epoch is bumped"),
        ("B6", (3, 1, 2), (), (), 1, (1, 2, 3), 1, 1, "topic znode: RS = target, adding and removing cleared"),
    ]
    assert _full(transition_table(START, (3, 1, 2), "zookeeper-legacy")) == [
        ("initial", (1, 2, 3), (), (), 1, (1, 2, 3), 0, 0, "before the reassignment"),
        ("7", (1, 2, 3), (), (), 1, (1, 2, 3), 1, 1, "the leader stays; its epoch is bumped"),
        ("10", (3, 1, 2), (), (), 1, (1, 2, 3), 1, 1,
         "topic znode: AR = RAR; the partition leaves /admin/reassign_partitions"),
    ]
    assert _full(transition_table(START, (3, 1, 2), "kraft")) == [
        ("initial", (1, 2, 3), (), (), 1, (1, 2, 3), 0, 0, "before the reassignment"),
        ("start", (3, 1, 2), (), (), 1, (1, 2, 3), 0, 1,
         "one PartitionChangeRecord: the ISR already covers the target, so the reassignment completes at once"),
    ]


LAGGING = PartitionReplicas("t", 0, (1, 2, 3), leader=1, isr=(1, 2))


def test_zookeeper_waits_for_a_lagging_old_replica_with_no_new_one() -> None:
    """``isReassignmentComplete`` asks for every target replica in the ISR, not only the new ones:
    a reorder with 3 out of the ISR runs phase A (an epoch bump, no replica starts: "none"), then
    waits for the leader to add 3."""
    kip455 = _full(transition_table(LAGGING, (3, 1, 2), "zookeeper-kip455"))
    assert kip455[2:4] == [
        ("A1-A2", (3, 1, 2), (), (), 1, (1, 2), 1, 1, "leader epoch bumped; LeaderAndIsr to 1,2,3; none start fetching"),
        ("catch-up", (3, 1, 2), (), (), 1, (1, 2, 3), 1, 2, "the leader adds 3 to the ISR, one write per replica"),
    ]
    legacy = _full(transition_table(LAGGING, (3, 1, 2), "zookeeper-legacy"))
    assert legacy[1:4] == [
        ("1", (1, 2, 3), (), (), 1, (1, 2), 0, 0, "topic znode: AR = OAR + RAR (Scala set order, unspecified; shown sorted)"),
        ("2", (1, 2, 3), (), (), 1, (1, 2), 1, 1, "leader epoch bumped; step 3: none start fetching"),
        ("4", (1, 2, 3), (), (), 1, (1, 2, 3), 1, 2, "3 join the ISR; the controller waits for all of RAR"),
    ]


def test_zookeeper_shrinks_the_isr_once_per_removed_replica_in_it() -> None:
    """``ReplicaStateMachine`` OfflineReplica: ``removeReplicasFromIsr`` writes only for a removed
    replica that is in the ISR (3 here, not 1 and 2 that stay), so one shrink and epoch bump; a
    removed replica already out of the ISR costs no write."""
    for controller, step in (("zookeeper-kip455", "B4"), ("zookeeper-legacy", "8")):
        (shrink,) = [r for r in transition_table(START, (1, 2, 4), controller).rows if r.step == step]
        assert (shrink.isr, shrink.leader_epoch_delta, shrink.version_delta) == ((1, 2, 4), 3, 4)
    out_of_isr = PartitionReplicas("t", 0, (1, 2, 3), leader=1, isr=(1, 2))
    rows = transition_table(out_of_isr, (1, 2, 4), "zookeeper-kip455").rows
    assert [r.step for r in rows] == ["initial", "U1", "A1-A2", "catch-up", "B3", "B6"]
    assert (rows[-1].isr, rows[-1].leader_epoch_delta, rows[-1].version_delta) == ((1, 2, 4), 2, 3)


@pytest.mark.parametrize("p, leader, isr", [
    pytest.param(PartitionReplicas("t", 0, (3, 1, 2)), 3, (3, 1, 2), id="no-state-first-replica-leads"),
    pytest.param(PartitionReplicas("t", 0, (1, 0, 2), leader=0, isr=(1, 0, 2)), 0, (1, 0, 2), id="broker-0-leads"),
    pytest.param(PartitionReplicas("t", 0, (1, 2, 3), leader=2, isr=(2, 3)), 2, (2, 3), id="source-leader-and-isr"),
])
def test_starting_leader_and_isr(p, leader, isr) -> None:
    """The source's leader and ISR when it has them (broker id 0 is a broker: Kafka's NoLeader is
    -1); an assignment file has neither, so the preferred (first) replica leads and every replica
    is in sync."""
    (initial, *_) = transition_table(p, p.replicas, "zookeeper-kip455").rows
    assert (initial.leader, initial.isr) == (leader, isr)
