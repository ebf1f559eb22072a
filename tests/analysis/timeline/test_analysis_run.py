"""``TimelineAnalysis`` beyond the walk (``analysis/timeline/analysis.py``): events stream out as
soon as every name selected has been seen, a leaderless partition's ``-1`` is no broker, the
groups' committed offsets are read only when an unclean election lost records and joined only
with the partition that lost them, and what makes the run a problem (exit 1): an error finding,
not a warning. The history is ``fixtures/timeline`` (ZooKeeper): the unclean election of broker 2
at zxid 24 loses broker 1's offsets 100..124."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.analysis import TimelineAnalysis
from kreplica.analysis.timeline.events import PartitionEvent, TimelineEnd
from kreplica.formats.findings import Finding
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.broker_replicas import BrokerLogDirs
from tests.analysis.timeline.test_analysis import ROOT, _walk

UNCLEAN_AT = 23   # the first change of the incident: broker 1's session expired before it


def replicas():
    return BrokerLogDirs({b: str(ROOT / f"broker-{b}") for b in (1, 2, 3)}).partitions()


def before_the_incident() -> list:
    return [i for i in _walk() if not (isinstance(i, PartitionEvent) and i.position >= UNCLEAN_AT)]


def commit(topic: str, partition: int, offset: int) -> CommittedOffset:
    return CommittedOffset("g", topic, partition, offset, None, "", 1_700_000_010_000, None, 5, 0, "broker-1", 3)


def never_read():
    raise AssertionError("the committed offsets were read although no election lost a record")


def test_committed_offsets_are_not_read_when_nothing_was_lost() -> None:
    run = TimelineAnalysis(iter(before_the_incident()), replicas=replicas(), committed=never_read)
    list(run.items())
    (pe,) = run.evidence
    assert (pe.topic, pe.partition, pe.losses, run.impacts) == ("orders", 0, (), [])


@pytest.mark.parametrize("offsets, impacted", [
    pytest.param([commit("orders", 0, 110)], [("orders", 0, 110)], id="the-partition-that-lost"),
    pytest.param([commit("orders", 1, 110)], [], id="another-partition"),
    pytest.param([], [], id="no-commit"),
])
def test_each_commit_on_the_partition_that_lost_records_is_judged(offsets, impacted) -> None:
    reads = []
    run = TimelineAnalysis(_walk(), replicas=replicas(), committed=lambda: reads.append(1) or offsets)
    list(run.items())
    assert reads == [1]
    assert [(i.committed.topic, i.committed.partition, i.committed.offset) for i in run.impacts] == impacted
    assert all(i.event == "the unclean election of broker 2 at epoch 2" for i in run.impacts)


def _end(walk: list) -> TimelineEnd:
    return next(i for i in walk if isinstance(i, TimelineEnd))


@pytest.mark.parametrize("finding, problems", [
    pytest.param(None, False, id="none"),
    pytest.param(Finding("zk_zxid_gap", "log.10", 0, "a gap"), False, id="a-warning"),
    pytest.param(Finding("zk_invalid_txn", "log.10", 9, "bad"), True, id="an-error"),
])
def test_only_an_error_finding_makes_a_quiet_history_a_problem(finding, problems) -> None:
    walk = [i for i in before_the_incident() if isinstance(i, (PartitionEvent, TimelineEnd))]
    assert [i.position for i in walk if isinstance(i, PartitionEvent)] == [19, 20]
    if finding is not None:
        walk.insert(1, finding)
    run = TimelineAnalysis(iter(walk))
    assert list(run.items()) == [i for i in walk if not isinstance(i, TimelineEnd)]
    assert (run.has_problems, run.findings, run.end) == (problems, [finding] if finding else [], _end(walk))


def test_the_incident_is_a_problem_without_any_finding() -> None:
    run = TimelineAnalysis(_walk())
    list(run.items())
    assert run.findings == [] and run.has_problems


def test_events_stream_out_once_every_selected_name_was_seen() -> None:
    consumed = []

    def walk():
        for item in _walk():
            consumed.append(item)
            yield item

    items = TimelineAnalysis(walk(), partitions=frozenset({"orders-0"})).items()
    next(items)
    # held until orders-0 first appears (zxid 19), then out: the walk is read no further yet
    last = consumed[-1]
    assert isinstance(last, PartitionEvent) and last.position == 19
    assert [i.position for i in items if isinstance(i, PartitionEvent)] == [19, 20, 23, 24, 25, 26]


def test_a_leaderless_partitions_no_leader_is_not_a_broker_seen() -> None:
    # the history holds leader -1 (offline) at zxid 23, but -1 names no broker
    with pytest.raises(LookupError) as refused:
        list(TimelineAnalysis(_walk(), brokers=frozenset({-1})).items())
    assert str(refused.value) == "no broker -1 in the history"
    assert any(isinstance(i, PartitionEvent) and i.after.leader == -1 for i in _walk())
