"""``timeline --broker B`` keeps the events involving B (README, timeline): a partition event
involves its leader and ISR before and after and its replicas (``events.involved_brokers``).

Kafka's controller keeps the leader inside the ISR (``PartitionStateMachine``'s elections and
``PartitionChangeBuilder`` both), but the metadata kreplica reads is evidence, not a promise: a
state znode written by hand or by a broken tool can name a leader outside both its ISR and the
replicas. That leader is still involved: a selection on it must keep the event."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import LEADER_ELECTION, LeaderIsr, PartitionEvent, involved_brokers, matches

# leader 4 named outside its ISR (1, 2) and outside the replicas (1, 2, 3), before and after
EVENT = PartitionEvent("orders", 0, 0x17, None, 1, LeaderIsr(4, 3, (1, 2)), LeaderIsr(5, 4, (1, 2)),
                       LEADER_ELECTION, None, "", replicas=(1, 2, 3))


def test_the_leaders_before_and_after_are_involved_even_outside_the_isr_and_replicas() -> None:
    assert involved_brokers(EVENT) == {1, 2, 3, 4, 5}


@pytest.mark.parametrize("broker, kept", [(4, True), (5, True), (3, True), (6, False)])
def test_broker_selection_keeps_the_event_of_its_leader(broker: int, kept: bool) -> None:
    assert matches(EVENT, None, frozenset({broker})) is kept
