"""``kreplica timeline`` against what real Kafka did (issue 28 §3), on every recording of
``fixtures/real-kafka``: the timeline's leader, ISR and liveness changes of orders-0 and its
brokers come in the order, and at the points, that the brokers' ``state-change.log``, the
controllers' ``controller.log`` and the script's own log show
(``tests/builders/real_kafka_timeline.py``). Each recording is judged at its last point, whose
evidence holds the whole history; each earlier point's evidence is a beginning of it.

Where kreplica disagrees with Kafka, Kafka wins: a disagreement not fixed yet is listed in
``DISAGREEMENTS`` (an xfail, strict) with its cause, never a looser assert."""

from __future__ import annotations

import pytest

from tests.builders.real_kafka import recordings
from tests.builders.real_kafka_timeline import (
    Judged,
    earlier_point_adds_nothing,
    events_are_in_time_order,
    isr_at_each_epoch_is_kafkas,
    leader_epochs_are_kafkas,
    liveness_is_the_scripts,
    liveness_is_what_the_controller_replayed,
)

ALL = recordings()

pytestmark = pytest.mark.skipif(not ALL, reason="no recordings under fixtures/real-kafka")

CHECKS = {
    "leader_epochs": leader_epochs_are_kafkas,
    "isr": isr_at_each_epoch_is_kafkas,
    "liveness_script": liveness_is_the_scripts,
    "liveness_controller": liveness_is_what_the_controller_replayed,
    "time_order": events_are_in_time_order,
}

#: (recording, check) -> why kreplica disagrees with Kafka there, until it is fixed. Empty: the
#: one disagreement found (a second ``fenced`` of broker 5 in clean-failover-kraft-4.4.0, offset
#: 72, a no-op fence Kafka ignored) is fixed (``KraftImage._fence``).
DISAGREEMENTS: dict[tuple[str, str], str] = {}

_judged: dict[str, Judged] = {}


def _judge(recording) -> Judged:
    """One timeline run per recording, shared by its checks."""
    if recording.name not in _judged:
        _judged[recording.name] = Judged(recording)
    return _judged[recording.name]


def _cases() -> list:
    cases = []
    for r in ALL:
        for name in CHECKS:
            if name == "liveness_controller" and r.mode != "kraft":
                continue   # ZooKeeper mode: the controller logs no registration it replays
            why = DISAGREEMENTS.get((r.name, name))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(pytest.param(r, name, marks=marks, id=f"{r.name}-{name}"))
    return cases


@pytest.mark.parametrize(("recording", "check"), _cases())
def test_timeline_is_what_kafka_logged(recording, check: str) -> None:
    CHECKS[check](_judge(recording))


def test_every_disagreement_listed_is_a_case() -> None:
    names = {(r.name, c) for r in ALL for c in CHECKS}
    assert set(DISAGREEMENTS) <= names


EARLIER = [(r, p) for r in ALL for p in r.description["points"][:-1]]


@pytest.mark.parametrize(("recording", "point"), EARLIER, ids=[f"{r.name}-{p}" for r, p in EARLIER])
def test_an_earlier_point_adds_nothing(recording, point: str) -> None:
    earlier_point_adds_nothing(recording, point)
