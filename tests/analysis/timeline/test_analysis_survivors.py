"""``timeline`` as one call (``kreplica/analysis/timeline/analysis.py``): :func:`iter_timeline`
hands every bound to the history it walks (ZooKeeper: ``FileTxnSnapLog`` zxids and transaction
times, Kafka's znodes under the ``zookeeper.connect`` chroot; KRaft: metadata offsets and batch
append times, ``MetadataLoader``'s image at each), and :class:`TimelineAnalysis` joins only the
partitions with replica data, reads the walk to its end, and judges the consumers of every
unclean election that lost records (``Partition.makeLeader`` with ``unclean.leader.election``: the
new leader's log is the partition's; the old leader's records past its end are gone)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kreplica.analysis.timeline.analysis import TimelineAnalysis, iter_timeline
from kreplica.analysis.timeline.events import PartitionEvent, TimelineEnd
from kreplica.formats.findings import Finding
from kreplica.formats.usage import UsageError
from kreplica.model.cluster import find_kraft_files
from kreplica.model.log.broker_replicas import BrokerPartitions
from kreplica.model.zookeeper import find_zk_files
from tests.analysis.timeline.test_analysis import _walk
from tests.analysis.timeline.test_analysis_run import commit, replicas
from tests.builders.kraft_metadata import write_metadata_dir
from tests.builders.zk_history import T0, ZkHistory
from tests.model.cluster.test_sources_survivors import _under

ELECTED_AT = 1_700_000_024_000     # the unclean election of broker 2 in fixtures/timeline (zxid 24)


def _end(items) -> TimelineEnd:
    (end,) = [i for i in items if isinstance(i, TimelineEnd)]
    return end


@pytest.mark.parametrize("start, stop, first, last, start_from", [
    pytest.param((20, None), (None, None), 20, 27, "replay", id="from-offset"),
    pytest.param((None, T0 + 20), (None, None), 20, 27, "replay", id="from-time"),
    pytest.param((None, None), (15, None), -1, 15, "log", id="to-offset"),
    pytest.param((None, None), (None, T0 + 15), -1, 15, "log", id="to-time"),
    pytest.param((None, None), (None, None), -1, 27, "log", id="unbounded"),
])
def test_a_kraft_walk_runs_between_the_bounds_given(tmp_path, start, stop, first, last, start_from) -> None:
    """The history of tests/builders/kraft_metadata.py (offsets 0-27, each batch stamped T0 + its
    offset): a time bound selects the same offset as the offset bound."""
    files = find_kraft_files([write_metadata_dir(tmp_path)])
    end = _end(iter_timeline("kraft", files, start, stop))
    assert (end.start, end.end, end.start_from) == (first, last, start_from)


def _zk_history() -> tuple[ZkHistory, int, int]:
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    shrink = h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    expand = h.set_state("orders", 0, 1, 0, [1, 2, 3], by_broker=1)
    h.set_state("orders", 0, 2, 1, [2, 3], controller=1)
    return h, shrink, expand


@pytest.mark.parametrize("start, stop, first, last", [
    pytest.param("from", None, "shrink", "end", id="from-time"),
    pytest.param(None, "to", "snapshot", "expand", id="to-time"),
])
def test_a_zookeeper_walk_runs_between_the_times_given(tmp_path, start, stop, first, last) -> None:
    """A transaction is stamped T0 + zxid * 1000 (tests/builders/zk_history.py): the time of the
    shrink starts the walk at its zxid, the time of the expansion ends it there."""
    h, shrink, expand = _zk_history()
    files = find_zk_files([h.write(tmp_path / "zk")])
    at = {"shrink": shrink, "expand": expand, "snapshot": h.snapshot_zxid, "end": h.zxid}
    end = _end(iter_timeline("zookeeper", files, (None, T0 + shrink * 1000) if start else (None, None),
                             (None, T0 + expand * 1000) if stop else (None, None)))
    assert (end.start, end.end) == (at[first], at[last])


def test_a_zookeeper_walk_reads_kafkas_znodes_under_the_chroot_given(tmp_path) -> None:
    """Kafka's znodes at the root and under /kafka: --chroot chooses; without it the walk is refused."""
    files = find_zk_files([_under(ZkHistory(), "/kafka", keep_root=True).write(tmp_path / "zk")])
    brokers = [i for i in iter_timeline("zookeeper", files, chroot="/kafka") if getattr(i, "broker", None)]
    assert sorted(b.broker for b in brokers) == [1, 2, 3]
    with pytest.raises(UsageError, match="in 2 places"):
        list(iter_timeline("zookeeper", files))


def test_a_walk_cut_before_its_end_leaves_the_end_unknown() -> None:
    walk = [i for i in _walk() if not isinstance(i, TimelineEnd)]
    run = TimelineAnalysis(iter(walk))
    assert run.end is None
    assert list(run.items()) == walk
    assert run.end is None


def test_the_walk_is_read_to_its_end() -> None:
    """Whatever a walk yields after its TimelineEnd is still read and passed on (a finding here)."""
    late = Finding("zk_zxid_gap", "log.10", 0, "a gap")
    done = []

    def walk():
        yield from _walk()
        yield late
        done.append(True)

    run = TimelineAnalysis(walk())
    items = list(run.items())
    assert (items[-1], run.findings, done) == (late, [late], [True])
    assert isinstance(run.end, TimelineEnd)


def _two_partitions():
    """The fixture's walk with each orders-0 event repeated as audit-0: two partitions, each with
    the unclean election that lost broker 1's offsets 100-124."""
    for item in _walk():
        yield item
        if isinstance(item, PartitionEvent):
            yield item._replace(topic="audit")


def test_only_the_partitions_with_replica_data_are_joined() -> None:
    located = replicas().located
    run = TimelineAnalysis(_two_partitions(), replicas=BrokerPartitions({"orders-0": located["orders-0"]}))
    list(run.items())
    assert [(pe.topic, pe.partition) for pe in run.evidence] == [("orders", 0)]


def test_the_consumers_of_every_partition_that_lost_records_are_judged() -> None:
    located = replicas().located["orders-0"]
    run = TimelineAnalysis(_two_partitions(), replicas=BrokerPartitions({"orders-0": located, "audit-0": located}),
                           committed=lambda: [commit("orders", 0, 110), commit("audit", 0, 110)])
    list(run.items())
    assert [(pe.topic, [loss.lost_offsets for loss in pe.losses]) for pe in run.evidence] == [
        ("audit", [25]), ("orders", [25])]
    assert sorted((i.committed.topic, i.committed.offset) for i in run.impacts) == [("audit", 110), ("orders", 110)]


@pytest.mark.parametrize("committed_at, read_from", [
    pytest.param(ELECTED_AT - 1, "lost_replica", id="committed-before-the-election"),
    pytest.param(ELECTED_AT, None, id="committed-at-the-election"),
])
def test_a_commit_above_both_logs_is_judged_by_the_elections_time(committed_at, read_from) -> None:
    """Offset 130 is above the new leader's end at its election (100) and the lost replica's (125),
    without an epoch: only its time says whose history the group read, the old leader's when the
    coordinator stamped it before the election (at 1_700_000_024_000, zxid 24)."""
    late = replace(commit("orders", 0, 130), commit_timestamp=committed_at)
    run = TimelineAnalysis(_walk(), replicas=replicas(), committed=lambda: [late])
    list(run.items())
    ((loss,),) = [pe.losses for pe in run.evidence]
    assert (loss.time, loss.end_offset) == (ELECTED_AT, 125)
    (impact,) = run.impacts
    assert impact.read_from == read_from
