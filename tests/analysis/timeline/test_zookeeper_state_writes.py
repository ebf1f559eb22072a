"""Two writes to a partition state znode the ZooKeeper timeline names (``_partition_change``):
its deletion (``TopicDeletionManager`` deletes it through the controller's guarded multi; the
event says whether the topic was queued in ``/admin/delete_topics`` and who wrote it), and data
that is not Kafka's partition state JSON (``TopicPartitionStateZNode.decode`` fails: a finding at
the transaction, the write ignored)."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import PartitionEvent
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from tests.analysis.timeline.test_zookeeper_steps import _items as items
from tests.builders.zk_history import ADMIN, ZkHistory

STATE = "/brokers/topics/orders/partitions/0/state"


def history() -> ZkHistory:
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2]})
    h.set_state("orders", 0, 1, 0, [1, 2])
    return h


@pytest.mark.parametrize("queued, evidence", [
    pytest.param(True, "the partition state znode was deleted (topic queued for deletion)", id="queued"),
    pytest.param(False, "the partition state znode was deleted", id="not-queued"),
])
def test_a_deleted_state_by_the_controller(tmp_path, queued: bool, evidence: str) -> None:
    h = history()
    if queued:
        h.admin_create("/admin/delete_topics/orders", None)
    at = h.admin_delete(STATE)
    (ev,) = [e for e in items(h, tmp_path) if isinstance(e, PartitionEvent) and e.cause == "deleted"]
    assert (ev.position, ev.by, ev.evidence, ev.after, ev.offline) == (at, "controller", evidence, None, False)
    assert (ev.before.leader, ev.before.isr) == (1, (1, 2))
    assert ev.writer == 1      # the broker whose session wrote it: controller 1


def test_a_deleted_state_outside_the_controller_says_no_writer_kind(tmp_path) -> None:
    h = history()
    at = h.txn(ADMIN, zkl.OP_DELETE, h._delete(STATE).body)
    (ev,) = [e for e in items(h, tmp_path) if isinstance(e, PartitionEvent) and e.cause == "deleted"]
    assert (ev.position, ev.by, ev.writer) == (at, None, None)


def test_a_state_write_that_is_not_a_partition_state_is_a_finding_and_changes_nothing(tmp_path) -> None:
    h = history()
    at = h.txn(ADMIN, zkl.OP_SET_DATA, h._set(STATE, b"{not json").body)
    h.set_state("orders", 0, 2, 1, [2])
    got = items(h, tmp_path)
    (f,) = [i for i in got if isinstance(i, Finding) and i.kind == "kafka_invalid_znode"]
    assert f.message == f"zxid {at:#x} wrote {STATE} with data that is not a partition state; ignored"
    assert f.details == {"zxid": at, "znode": STATE}
    assert f.path.rsplit("/", 1)[-1].startswith("log.") and f.position > 0     # the transaction in its log
    # the next good write is compared with the last good state, leader 1
    (change,) = [e for e in got if isinstance(e, PartitionEvent) and e.cause not in ("created", "snapshot")]
    assert (change.before.leader, change.after.leader) == (1, 2)


@pytest.mark.parametrize("replicas, offline", [pytest.param([1, 2], False, id="live-leader"),
                                               pytest.param([5, 1], True, id="leader-never-registered")])
def test_a_created_state_carries_its_controller_epoch_and_whether_it_is_offline(tmp_path, replicas, offline) -> None:
    # the state JSON's controller_epoch (TopicPartitionStateZNode), 1 here; offline: its leader (the
    # first replica) is no live broker
    h = ZkHistory()
    h.create_topic("orders", {0: replicas})
    (ev,) = [e for e in items(h, tmp_path) if isinstance(e, PartitionEvent) and e.cause == "created"]
    assert (ev.position, ev.controller_epoch, ev.before, ev.after.leader, ev.offline) == (
        h.zxid, 1, None, replicas[0], offline)


def test_a_leader_change_without_an_epoch_bump_is_judged_with_the_brokers_alive(tmp_path) -> None:
    # Kafka's controller always bumps the epoch with the leader, but a copied znode may not: the
    # change is still classified with the whole context (broker 1 is alive, so not "lost its
    # registration")
    h = history()
    h.set_state("orders", 0, 2, 0, [1, 2])
    (ev,) = [e for e in items(h, tmp_path) if isinstance(e, PartitionEvent) and e.cause not in ("created", "snapshot")]
    assert (ev.before.leader, ev.after.leader) == (1, 2)
    assert "lost its registration" not in ev.evidence
    assert ev.evidence == "leadership moved from live leader 1 to 2"
