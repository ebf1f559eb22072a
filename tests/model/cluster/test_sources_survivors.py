"""``load_cluster_state`` and ``refuse_empty`` (``kreplica/model/cluster/sources.py``) on written
ZooKeeper and KRaft evidence, each option beside its counter-case: the point a time selects (the
last ZooKeeper transaction stamped at or before it, as ``FileTxnSnapLog.restore`` replays to it; the
last KRaft batch appended at or before it, ``MetadataLoader``'s image there), where Kafka's znodes
are (the ``zookeeper.connect`` chroot: ``KafkaZkClient`` reads every path under it), and the
one-line refusal of evidence that registers no broker and no topic, word for word."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.errors import FormatError
from kreplica.formats.usage import UsageError
from kreplica.model.cluster import ClusterState, Controller, Pending, compute_health
from kreplica.model.cluster.sources import load_cluster_state, refuse_empty
from tests.builders.kraft_metadata import write_metadata_dir
from tests.builders.zk_history import T0, ZkHistory


def _under(h: ZkHistory, root: str, *, keep_root: bool = False) -> ZkHistory:
    """``h``'s snapshot with Kafka's znodes moved under the chroot ``root`` (or, ``keep_root``,
    copied there too: Kafka's znodes in two places), as a broker with ``zookeeper.connect=host/kafka``
    creates them; ``/zookeeper`` stays where ZooKeeper keeps it."""
    moved = {(p if p == "/zookeeper" else root + p): v for p, v in h.nodes.items()}
    h.nodes = {**(h.nodes if keep_root else {}), root: [None, 1, 0, 0], **moved}
    h._start_snapshot = h._snapshot()
    return h


def _written(h: ZkHistory, tmp_path: Path) -> Path:
    return h.write(tmp_path / "zk")


def test_a_time_selects_the_last_transaction_stamped_at_or_before_it(tmp_path) -> None:
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    orders = h.zxid
    h.create_topic("payments", {0: [1, 2, 3]})
    d = _written(h, tmp_path)
    at = load_cluster_state([d], at_time=T0 + orders * h.step_ms)
    assert (at.position, [t.name for t in at.topics]) == ({"zxid": orders}, ["orders"])
    # the counter-case: no time, the end of the log
    end = load_cluster_state([d])
    assert (end.position, [t.name for t in end.topics]) == ({"zxid": h.zxid}, ["orders", "payments"])


@pytest.mark.parametrize("at_time, offset, topics", [
    pytest.param(T0 + 15, 15, ["orders"], id="before-the-payments-transaction"),
    pytest.param(T0 + 20, 20, ["orders", "payments"], id="after-it"),
    pytest.param(None, 27, ["orders"], id="no-time-the-end-payments-deleted"),
])
def test_a_time_selects_the_kraft_image_there(tmp_path, at_time, offset, topics) -> None:
    """The history of tests/builders/kraft_metadata.py: each batch stamped T0 + its offset,
    payments created by the transaction of offsets 17-20 and deleted later."""
    state = load_cluster_state([write_metadata_dir(tmp_path)], at_time=at_time)
    assert (state.position, [t.name for t in state.topics]) == ({"offset": offset}, topics)


def test_kafkas_znodes_are_read_under_the_one_chroot_that_holds_them(tmp_path) -> None:
    state = load_cluster_state([_written(_under(ZkHistory(), "/kafka"), tmp_path)])
    assert [b.id for b in state.brokers] == [1, 2, 3]
    assert state.controller.broker_id == 1


def test_a_chroot_given_that_holds_no_kafka_znodes_is_refused_naming_the_point(tmp_path) -> None:
    h = _under(ZkHistory(), "/kafka")
    d = _written(h, tmp_path)
    with pytest.raises(UsageError) as refused:
        load_cluster_state([d], chroot="/other")
    assert refused.value.option == "--chroot"
    assert refused.value.reason == (f"no Kafka znodes (/brokers/ids) under --chroot /other at zxid "
                                    f"{h.snapshot_zxid:#x}; Kafka's znodes are under /kafka")
    # the counter-case: the chroot that holds them
    assert [b.id for b in load_cluster_state([d], chroot="/kafka").brokers] == [1, 2, 3]


def test_kafkas_znodes_in_two_places_are_refused_naming_the_source(tmp_path) -> None:
    d = _written(_under(ZkHistory(), "/kafka", keep_root=True), tmp_path)
    with pytest.raises(UsageError) as refused:
        load_cluster_state([d])
    assert refused.value.path == str(d)
    assert "holds Kafka's znodes in 2 places (/, /kafka): choose one with --chroot" in refused.value.reason


@pytest.mark.parametrize("root, says", [
    pytest.param(None, "/", id="at-the-root"),
    pytest.param("/kafka", "/kafka", id="under-a-chroot"),
])
def test_znodes_without_broker_or_topic_are_refused_naming_where_they_are(tmp_path, root, says) -> None:
    h = ZkHistory(brokers=(), controller=None)
    if root is not None:
        _under(h, root)
    d = _written(h, tmp_path)
    with pytest.raises(FormatError) as refused:
        load_cluster_state([d])
    assert refused.value.path == str(d)
    assert refused.value.reason == (f"Kafka's znodes under {says} register no broker and no topic at zxid "
                                    f"{h.snapshot_zxid:#x}: no cluster state to report")


def _state(kind: str, position: dict, *, cluster_id=None, features=None) -> ClusterState:
    return ClusterState(kind, "src", position, cluster_id, Controller(None, None), (), (), {}, Pending(),
                        compute_health((), [], {}), (), features or {})


@pytest.mark.parametrize("position", [pytest.param({"offset": -1}, id="offset-minus-1"),
                                      pytest.param({}, id="no-offset")])
def test_kraft_evidence_without_a_record_is_refused_word_for_word(position) -> None:
    with pytest.raises(FormatError) as refused:
        refuse_empty(_state("kraft", position))
    assert (refused.value.path, refused.value.reason) == (
        "src", "no KRaft metadata records: the snapshots and segments are empty or absent, so there is no cluster "
               "state to report")


@pytest.mark.parametrize("state, says", [
    pytest.param(_state("kraft", {"offset": 4}), "the metadata registers no broker and no topic at offset 4: "
                 "no cluster state to report", id="nothing-held"),
    pytest.param(_state("kraft", {"offset": 4}, features={"metadata.version": 7, "kraft.version": 1}),
                 "the metadata registers no broker and no topic at offset 4 (only kraft.version 1, "
                 "metadata.version 7): no cluster state to report", id="two-features"),
    pytest.param(_state("kraft", {"offset": 0}, cluster_id="abc", features={"metadata.version": 7}),
                 "the metadata registers no broker and no topic at offset 0 (only cluster id abc; "
                 "metadata.version 7): no cluster state to report", id="offset-0-is-a-record"),
])
def test_records_without_broker_or_topic_are_refused_saying_what_they_hold(state, says) -> None:
    with pytest.raises(FormatError) as refused:
        refuse_empty(state)
    assert refused.value.reason == says
