"""``timeline`` as one call (:class:`~kreplica.analysis.timeline.analysis.TimelineAnalysis`), on
``fixtures/timeline`` (the story is in fixtures/generate.py): the selection, the summary fed as the
walk passes, the data joined once the walk is over, and a name the history never mentions refused
before anything is yielded."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.analysis import TimelineAnalysis, iter_timeline
from kreplica.analysis.timeline.events import BrokerEvent, PartitionEvent, TimelineEnd, involved_brokers
from kreplica.formats.findings import Finding
from kreplica.model.log.broker_replicas import BrokerLogDirs
from kreplica.model.zookeeper import find_zk_files
from tests.conftest import FIXTURES

ROOT = FIXTURES / "timeline"


def _walk():
    return iter_timeline("zookeeper", find_zk_files([ROOT / "zookeeper"]))


class Refused(Exception):
    pass


def _refuse(what, name, known):
    return Refused(what, name, sorted(known))


def test_every_event_and_finding_of_the_walk_is_yielded_and_summarised() -> None:
    everything = [i for i in _walk() if not isinstance(i, TimelineEnd)]
    run = TimelineAnalysis(_walk())
    items = list(run.items())
    assert items == everything
    assert run.end is not None and run.summary.counts["partition"] == sum(isinstance(i, PartitionEvent) for i in items)
    assert run.findings == [i for i in items if isinstance(i, Finding)]
    assert run.evidence == [] and run.impacts == []       # no replicas given: nothing joined


def test_the_replicas_are_joined_after_the_walk() -> None:
    dirs = BrokerLogDirs({b: str(ROOT / f"broker-{b}") for b in (1, 2, 3)})
    run = TimelineAnalysis(_walk(), replicas=dirs.partitions())
    list(run.items())
    (pe,) = run.evidence
    assert (pe.topic, pe.partition, pe.zombie_epochs) == ("orders", 0, (1,))
    assert run.has_problems   # an unclean election and a zombie epoch


def test_a_broker_selection_keeps_the_events_that_involve_it() -> None:
    run = TimelineAnalysis(_walk(), brokers=frozenset({3}), unknown=_refuse)
    kept = [i for i in run.items() if not isinstance(i, Finding)]
    events = [i for i in _walk() if isinstance(i, (PartitionEvent, BrokerEvent))]
    assert kept and all(3 in involved_brokers(i) for i in kept)
    # the counter-case: events without broker 3 exist, and are left out
    assert any(3 not in involved_brokers(i) for i in events)
    assert run.summary.counts["partition"] + run.summary.counts["broker"] + run.summary.counts["controller"] == len(kept)


@pytest.mark.parametrize("selection, refused", [
    pytest.param({"partitions": frozenset({"orders-9"})}, ("partition", "orders-9"), id="partition"),
    pytest.param({"brokers": frozenset({3, 7})}, ("broker", 7), id="broker"),
])
def test_a_name_the_history_never_mentions_is_refused_with_nothing_yielded(selection, refused) -> None:
    run = TimelineAnalysis(_walk(), unknown=_refuse, **selection)
    items = run.items()
    with pytest.raises(Refused) as caught:
        next(items)         # held until the end of the walk, then refused: nothing came out first
    what, name, known = caught.value.args
    assert (what, name) == refused
    assert known and name not in known


def test_names_the_history_mentions_are_not_refused() -> None:
    # the counter-case: the fixture's partition and brokers are all there
    run = TimelineAnalysis(_walk(), partitions=frozenset({"orders-0"}), brokers=frozenset({1, 2, 3}),
                           unknown=_refuse)
    assert any(isinstance(i, PartitionEvent) for i in run.items())


def test_without_its_own_refusal_an_unknown_name_is_a_lookup_error_naming_it() -> None:
    run = TimelineAnalysis(_walk(), partitions=frozenset({"orders-9"}))
    with pytest.raises(LookupError) as caught:
        next(run.items())
    assert str(caught.value) == "no partition 'orders-9' in the history"
