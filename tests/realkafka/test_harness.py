"""The harness end to end on a real cluster, once a run: Kafka 4.4 in KRaft mode (three
controllers, three brokers) through the scenario CI can afford (the leader killed under an acks=1
producer, the old leader rejoining), recorded into a temporary directory and judged by every
check the committed corpus gets. Proves the pins still resolve, the clusters still start and
stop, and no process outlives the test. Needs Java and Maven: skipped with the reason without
them, required in CI (CI=true)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders.real_kafka import Recording
from tests.builders.real_kafka_checks import BY_SCENARIO, cluster_state_is_described
from tests.realkafka.jars import Unavailable, release
from tests.realkafka.processes import free_ports
from tests.realkafka.scenarios import SCENARIOS, run

pytestmark = pytest.mark.real_kafka
VERSION = "4.4.0"
SCENARIO = "leader-killed-acks1"


def _release():
    try:
        return release(VERSION)
    except Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"real Kafka {VERSION} is required in CI (CI=true): {exc}")
        pytest.skip(f"real Kafka {VERSION} cannot run here: {exc}")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Recording, list]:
    root = tmp_path_factory.mktemp("real-kafka")
    started = run(SCENARIOS[SCENARIO], _release(), "kraft", root / "cluster", root / "recording")
    return Recording(root / "recording"), started


def test_every_process_the_cluster_started_has_ended(recorded) -> None:
    _recording, started = recorded
    assert len(started) >= 7  # six nodes and the old leader's restart
    assert [p.name for p in started if p.alive] == []


@pytest.mark.parametrize("check", BY_SCENARIO[SCENARIO], ids=lambda c: c.__name__)
def test_judgment_on_a_fresh_recording(recorded, check) -> None:
    check(recorded[0])


def test_cluster_state_at_every_point_of_a_fresh_recording(recorded) -> None:
    recording = recorded[0]
    assert recording.description["points"] == ["before-incident", "after-election", "after-rejoin"]
    for point in recording.description["points"]:
        cluster_state_is_described(recording, point)


def test_free_ports_are_distinct_and_on_loopback() -> None:
    import socket

    ports = free_ports(8)
    assert len(set(ports)) == 8
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # nothing holds it


def test_a_release_that_maven_central_does_not_serve_is_unavailable(tmp_path: Path, monkeypatch) -> None:
    if not _maven_present():
        pytest.skip("no mvn on PATH")
    monkeypatch.setenv("KREPLICA_KAFKA_CACHE", str(tmp_path))
    with pytest.raises(Unavailable, match="could not resolve Kafka 0.0.1"):
        release("0.0.1")


def _maven_present() -> bool:
    import shutil

    return shutil.which("mvn") is not None and shutil.which("java") is not None
