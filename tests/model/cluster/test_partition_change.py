"""``PartitionRegistration.merge``, field by field, each rule with the counter-case that must not
match. Expected values are read off Kafka's ``metadata/src/main/java/org/apache/kafka/metadata/
PartitionRegistration.java`` (``merge`` and the ``PartitionRecord`` constructor),
``LeaderConstants.java`` (``NO_LEADER`` -1, ``NO_LEADER_CHANGE`` -2) and
``LeaderRecoveryState.java`` (``changeTo``: -1 keeps, 0 RECOVERED, 1 RECOVERING), not from
kreplica's output:

* each list field: ``record.x() == null`` keeps the current array, any list (even empty) replaces it;
* ``record.leader() == NO_LEADER_CHANGE`` keeps leader and leader epoch, any other value
  (``NO_LEADER`` and the same leader included) sets the leader with ``leaderEpoch + 1``;
* ``leaderRecoveryState.changeTo(record.leaderRecoveryState())``;
* ``partitionEpoch + 1`` always;
* ``directories``: null keeps the current ones, a list replaces them, then ``defaultToMigrating``
  (none, or all ``MIGRATING``: one ``MIGRATING`` per replica of the new replica set).
"""

from __future__ import annotations

import pytest

from kreplica.model.cluster import (
    DIRECTORY_MIGRATING,
    DIRECTORY_UNASSIGNED,
    NO_LEADER,
    NO_LEADER_CHANGE,
    NO_RECOVERY_STATE_CHANGE,
    RECOVERED,
    RECOVERING,
    PartitionChange,
    PartitionState,
    merge_partition_change,
    partition_from_record,
)

#: leader 1 at epoch 5, partition epoch 7, replicas [1,2,3] with 4 joining and 3 leaving,
#: ISR [1,2], ELR [3], last known ELR [5], RECOVERING.
BASE = PartitionState(partition=0, replicas=(1, 2, 3, 4), adding_replicas=(4,), removing_replicas=(3,), leader=1,
                      leader_epoch=5, isr=(1, 2), controller_epoch=None, leader_recovery_state=RECOVERING,
                      version=7, elr=(3,), last_known_elr=(5,))

#: what every merge changes: the partition epoch moves by one
EPOCH = {"version": 8}


@pytest.mark.parametrize("change,expected", [
    pytest.param(PartitionChange(), {}, id="nothing-set-only-the-partition-epoch-moves"),
    # leader
    pytest.param(PartitionChange(leader=NO_LEADER_CHANGE), {}, id="leader-no-change-keeps-leader-and-epoch"),
    pytest.param(PartitionChange(leader=NO_LEADER), {"leader": NO_LEADER, "leader_epoch": 6},
                 id="leader-no-leader-sets-none-and-bumps-the-epoch"),
    pytest.param(PartitionChange(leader=1), {"leader_epoch": 6}, id="leader-same-leader-still-bumps-the-epoch"),
    pytest.param(PartitionChange(leader=2), {"leader": 2, "leader_epoch": 6}, id="leader-new-leader"),
    # isr
    pytest.param(PartitionChange(isr=None), {}, id="isr-absent-keeps"),
    pytest.param(PartitionChange(isr=()), {"isr": ()}, id="isr-empty-sets-empty"),
    pytest.param(PartitionChange(isr=(2, 1, 4)), {"isr": (2, 1, 4)}, id="isr-set-in-record-order"),
    pytest.param(PartitionChange(isr=(2,)), {"isr": (2,)}, id="isr-alone-keeps-the-leader-epoch"),
    # replicas
    pytest.param(PartitionChange(replicas=None), {}, id="replicas-absent-keeps"),
    pytest.param(PartitionChange(replicas=(4, 2, 1)), {"replicas": (4, 2, 1)}, id="replicas-set"),
    pytest.param(PartitionChange(replicas=()), {"replicas": ()}, id="replicas-empty-sets-empty"),
    # removing / adding replicas
    pytest.param(PartitionChange(removing_replicas=None), {}, id="removing-absent-keeps"),
    pytest.param(PartitionChange(removing_replicas=()), {"removing_replicas": ()}, id="removing-empty-clears"),
    pytest.param(PartitionChange(removing_replicas=(2,)), {"removing_replicas": (2,)}, id="removing-set"),
    pytest.param(PartitionChange(adding_replicas=None), {}, id="adding-absent-keeps"),
    pytest.param(PartitionChange(adding_replicas=()), {"adding_replicas": ()}, id="adding-empty-clears"),
    pytest.param(PartitionChange(adding_replicas=(4, 5)), {"adding_replicas": (4, 5)}, id="adding-set"),
    # eligible leader replicas and last known ELR (KIP-966)
    pytest.param(PartitionChange(elr=None), {}, id="elr-absent-keeps"),
    pytest.param(PartitionChange(elr=()), {"elr": ()}, id="elr-empty-clears"),
    pytest.param(PartitionChange(elr=(2, 3)), {"elr": (2, 3)}, id="elr-set"),
    pytest.param(PartitionChange(last_known_elr=None), {}, id="last-known-elr-absent-keeps"),
    pytest.param(PartitionChange(last_known_elr=()), {"last_known_elr": ()}, id="last-known-elr-empty-clears"),
    pytest.param(PartitionChange(last_known_elr=(1,)), {"last_known_elr": (1,)}, id="last-known-elr-set"),
    # leader recovery state (LeaderRecoveryState.changeTo)
    pytest.param(PartitionChange(leader_recovery_state=NO_RECOVERY_STATE_CHANGE), {},
                 id="recovery-no-change-keeps-recovering"),
    pytest.param(PartitionChange(leader_recovery_state=RECOVERED), {"leader_recovery_state": RECOVERED},
                 id="recovery-recovered-sets"),
    pytest.param(PartitionChange(leader_recovery_state=RECOVERING), {}, id="recovery-recovering-again-stays"),
    # an unclean election as the controller writes it: everything at once
    pytest.param(PartitionChange(leader=4, isr=(4,), leader_recovery_state=RECOVERING, elr=(), last_known_elr=()),
                 {"leader": 4, "leader_epoch": 6, "isr": (4,), "elr": (), "last_known_elr": ()},
                 id="unclean-election-record"),
])
def test_merge_field_rules(change: PartitionChange, expected: dict) -> None:
    after = merge_partition_change(BASE, change)
    fields = PartitionState.__dataclass_fields__
    want = {name: getattr(BASE, name) for name in fields} | EPOCH | expected
    assert {name: getattr(after, name) for name in fields} == want


def test_merge_counts_a_missing_partition_epoch_from_zero() -> None:
    """A ZooKeeper-sourced state has no partition epoch (``version`` ``None``); the KRaft rules
    emulated on it start from 0, so the first record makes it 1."""
    p = PartitionState(partition=0, replicas=(1,), adding_replicas=(), removing_replicas=(), leader=1,
                       leader_epoch=0, isr=(1,), controller_epoch=3, leader_recovery_state=RECOVERED, version=None)
    assert merge_partition_change(p, PartitionChange()).version == 1


def test_merge_recovered_to_recovering() -> None:
    """The counter-case of ``recovery-no-change-keeps-recovering``: from RECOVERED, -1 keeps
    RECOVERED and 1 sets RECOVERING."""
    p = merge_partition_change(BASE, PartitionChange(leader_recovery_state=RECOVERED))
    assert merge_partition_change(p, PartitionChange()).leader_recovery_state == RECOVERED
    assert merge_partition_change(p, PartitionChange(leader_recovery_state=RECOVERING)).leader_recovery_state \
        == RECOVERING


def _change_record(**fields) -> dict:
    """A decoded ``PartitionChangeRecord`` v0 as :mod:`kreplica.formats.kraft.records` gives it:
    every field at its schema default unless set; v0 has no ELR fields at all."""
    return {"partition_id": 0, "topic_id": "t", "isr": None, "leader": NO_LEADER_CHANGE, "replicas": None,
            "removing_replicas": None, "adding_replicas": None, "leader_recovery_state": NO_RECOVERY_STATE_CHANGE,
            **fields}


@pytest.mark.parametrize("record,expected", [
    pytest.param(_change_record(), PartitionChange(), id="defaults-change-nothing"),
    pytest.param(_change_record(isr=[2, 1]), PartitionChange(isr=(2, 1)), id="isr-list"),
    pytest.param(_change_record(isr=[]), PartitionChange(isr=()), id="isr-empty-list-is-not-absent"),
    pytest.param(_change_record(leader=NO_LEADER), PartitionChange(leader=NO_LEADER), id="leader-no-leader"),
    pytest.param(_change_record(eligible_leader_replicas=None, last_known_elr=None), PartitionChange(),
                 id="v2-null-elr-fields-change-nothing"),
    pytest.param(_change_record(eligible_leader_replicas=[], last_known_elr=[3]),
                 PartitionChange(elr=(), last_known_elr=(3,)), id="v2-elr-fields"),
    pytest.param(_change_record(replicas=[1, 2], adding_replicas=[], removing_replicas=[3], leader_recovery_state=0),
                 PartitionChange(replicas=(1, 2), adding_replicas=(), removing_replicas=(3,),
                                 leader_recovery_state=RECOVERED), id="assignment-and-recovery"),
])
def test_change_from_record(record: dict, expected: PartitionChange) -> None:
    assert PartitionChange.from_record(record) == expected


@pytest.mark.parametrize("change,noop,moves", [
    pytest.param(PartitionChange(), True, False, id="empty"),
    pytest.param(PartitionChange(isr=()), False, False, id="empty-isr-is-a-change"),
    pytest.param(PartitionChange(leader=NO_LEADER), False, False, id="no-leader-is-a-change"),
    pytest.param(PartitionChange(elr=()), False, False, id="empty-elr-is-a-change"),
    pytest.param(PartitionChange(replicas=(1,)), False, True, id="replicas"),
    pytest.param(PartitionChange(adding_replicas=()), False, True, id="adding-cleared"),
    pytest.param(PartitionChange(removing_replicas=(2,)), False, True, id="removing"),
])
def test_noop_and_moves_replicas(change: PartitionChange, noop: bool, moves: bool) -> None:
    """``changeRecordIsNoOp``: any field set is a change; ``moves_replicas``: the assignment fields only."""
    assert (change.is_noop, change.moves_replicas) == (noop, moves)


@pytest.mark.parametrize("elr_fields,elr,last_known_elr", [
    pytest.param({}, (), (), id="v0-no-elr-fields"),
    pytest.param({"eligible_leader_replicas": None, "last_known_elr": None}, (), (), id="v2-null"),
    pytest.param({"eligible_leader_replicas": [3], "last_known_elr": [4, 5]}, (3,), (4, 5), id="v2-set"),
])
def test_partition_from_record(elr_fields: dict, elr: tuple, last_known_elr: tuple) -> None:
    """``new PartitionRegistration(PartitionRecord)``: null ELR arrays become empty ones; no
    directories (v0) is one ``DirectoryId.MIGRATING`` per replica (``defaultToMigrating``)."""
    record = {"partition_id": 2, "topic_id": "t", "replicas": [1, 2, 3], "isr": [1, 2], "removing_replicas": [],
              "adding_replicas": [], "leader": 1, "leader_recovery_state": RECOVERED, "leader_epoch": 4,
              "partition_epoch": 9, **elr_fields}
    assert partition_from_record(record) == PartitionState(
        partition=2, replicas=(1, 2, 3), adding_replicas=(), removing_replicas=(), leader=1, leader_epoch=4,
        isr=(1, 2), controller_epoch=None, leader_recovery_state=RECOVERED, version=9, elr=elr,
        last_known_elr=last_known_elr, directories=(DIRECTORY_MIGRATING,) * 3)


D1, D2, D3 = "xzPcSbvUTKu5qiIvEhlgrQ", "Q0b2tHSmRfuYXJLtZWbk3g", "7FJxkMWXSB2ZYjr9Tt6YZQ"
_WITH_DIRS = PartitionState(partition=0, replicas=(1, 2, 3), adding_replicas=(), removing_replicas=(), leader=1,
                            leader_epoch=0, isr=(1, 2, 3), controller_epoch=None, leader_recovery_state=RECOVERED,
                            version=0, directories=(D1, D2, D3))
_MIGRATING = PartitionState(partition=0, replicas=(1, 2, 3), adding_replicas=(), removing_replicas=(), leader=1,
                            leader_epoch=0, isr=(1, 2, 3), controller_epoch=None, leader_recovery_state=RECOVERED,
                            version=0, directories=(DIRECTORY_MIGRATING,) * 3)


@pytest.mark.parametrize("before,change,directories", [
    pytest.param(_WITH_DIRS, PartitionChange(isr=(1, 2)), (D1, D2, D3), id="null-keeps"),
    pytest.param(_WITH_DIRS, PartitionChange(directories=(D3, D2, D1)), (D3, D2, D1), id="list-replaces"),
    pytest.param(_WITH_DIRS, PartitionChange(replicas=(1, 2), directories=(D1, DIRECTORY_UNASSIGNED)),
                 (D1, DIRECTORY_UNASSIGNED), id="reassigned-with-an-unassigned-one"),
    pytest.param(_WITH_DIRS, PartitionChange(directories=()), (DIRECTORY_MIGRATING,) * 3,
                 id="empty-list-is-migrating"),
    pytest.param(_MIGRATING, PartitionChange(replicas=(1, 2, 3, 4)), (DIRECTORY_MIGRATING,) * 4,
                 id="migrating-follows-the-new-replicas"),
    pytest.param(BASE, PartitionChange(isr=(1,)), (), id="no-directories-not-from-a-record-keeps-none"),
])
def test_merge_directories(before: PartitionState, change: PartitionChange, directories: tuple) -> None:
    """``PartitionRegistration.merge``: ``newDirectories = defaultToMigrating(record.directories()
    == null ? directories : record.directories(), newReplicas.length)``."""
    assert merge_partition_change(before, change).directories == directories


@pytest.mark.parametrize("directories,expected", [
    pytest.param([D1, D2, D3], (D1, D2, D3), id="v1-assigned"),
    pytest.param([DIRECTORY_MIGRATING] * 3, (DIRECTORY_MIGRATING,) * 3, id="v1-migrating"),
    pytest.param([], (DIRECTORY_MIGRATING,) * 3, id="v1-empty-is-migrating"),
])
def test_partition_record_directories(directories: list, expected: tuple) -> None:
    """``new PartitionRegistration(PartitionRecord)``: ``defaultToMigrating(record.directories(),
    record.replicas().size())``."""
    record = {"partition_id": 0, "topic_id": "t", "replicas": [1, 2, 3], "isr": [1], "removing_replicas": [],
              "adding_replicas": [], "leader": 1, "leader_recovery_state": RECOVERED, "leader_epoch": 0,
              "partition_epoch": 0, "directories": directories}
    assert partition_from_record(record).directories == expected
