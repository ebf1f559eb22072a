"""kreplica against what real Kafka did, on every recording of ``fixtures/real-kafka`` (real
clusters started by ``tests/realkafka``, incidents caused by its scripts): each judgment of
``tests/builders/real_kafka_checks.py`` that the recording's scenario gets, and cluster-state at
every point it recorded."""

from __future__ import annotations

import pytest

from tests.builders.real_kafka import recordings
from tests.builders.real_kafka_checks import BY_SCENARIO, cluster_state_is_described

ALL = recordings()

pytestmark = pytest.mark.skipif(not ALL, reason="no recordings under fixtures/real-kafka")

# consumer-after-unclean is judged by tests/interop/test_real_kafka_consumers.py
JUDGED = [(r, check) for r in ALL for check in BY_SCENARIO.get(r.scenario, ())]
POINTS = [(r, point) for r in ALL for point in r.description["points"]]


def test_every_scenario_of_the_harness_is_in_the_corpus_on_each_mode() -> None:
    from tests.realkafka.record import RECORDED

    assert {(r.scenario, r.mode, r.kafka_version) for r in ALL} == set(RECORDED)


def test_the_corpus_readme_says_what_each_recording_holds() -> None:
    from tests.builders.real_kafka import CORPUS
    from tests.realkafka.record import readme

    assert (CORPUS / "README.md").read_text() == readme()


@pytest.mark.parametrize(("recording", "check"), JUDGED, ids=[f"{r.name}-{c.__name__}" for r, c in JUDGED])
def test_judgment(recording, check) -> None:
    check(recording)


@pytest.mark.parametrize(("recording", "point"), POINTS, ids=[f"{r.name}-{p}" for r, p in POINTS])
def test_cluster_state_is_what_admin_described(recording, point: str) -> None:
    cluster_state_is_described(recording, point)
