"""Offline periods dated when the leader stopped (TimelineSummary), each rule with its
counter-case: a broker leaving (ZooKeeper session closed or expired, znode deleted; KRaft fenced
or unregistered) opens a period for the partitions it leads, its return closes those still naming
it, and a partition the history starts offline is offline since after its state's last write."""

from __future__ import annotations

from kreplica.analysis.timeline.events import BrokerEvent, LeaderIsr, PartitionEvent, TimelineSummary

T = 1_700_000_000_000


def part(pos: int, leader: int, isr, cause: str = "leader_election", offline: bool = False, before=None,
         topic: str = "orders", partition: int = 0) -> PartitionEvent:
    return PartitionEvent(topic, partition, pos, T + pos, 1, before, LeaderIsr(leader, 0, tuple(isr)), cause,
                          "controller", "", (1, 2, 3), offline)


def periods(*events) -> list[tuple]:
    s = TimelineSummary()
    for ev in events:
        s.feed(ev)
    return [(p.topic, p.partition, p.start, p.end, p.since_after) for p in s.periods()]


def test_a_leaders_session_ending_opens_the_period_before_the_controllers_write() -> None:
    # leader 1's session expires at 0x15, the controller writes leader -1 at 0x17, elects 2 at 0x18
    assert periods(part(0x10, 1, [1, 2]), BrokerEvent(1, "session_expired", 0x15, T),
                   part(0x17, -1, [1], offline=True), part(0x18, 2, [2])) == [("orders", 0, 0x15, 0x18, False)]


def test_a_follower_leaving_opens_nothing() -> None:
    assert periods(part(0x10, 1, [1, 2]), BrokerEvent(2, "session_closed", 0x15, T), part(0x17, 1, [1])) == []


def test_the_leader_back_before_any_write_closes_the_period() -> None:
    # KRaft: fenced at 20, unfenced at 25, the partition state never rewritten
    assert periods(part(10, 1, [1, 2]), BrokerEvent(1, "fenced", 20, T), BrokerEvent(1, "unfenced", 25, T)) == \
        [("orders", 0, 20, 25, False)]


def test_a_broker_event_that_is_not_a_departure_opens_nothing() -> None:
    # a controlled shutdown moves leadership away first; the registration stays
    assert periods(part(10, 1, [1, 2]), BrokerEvent(1, "controlled_shutdown", 20, T)) == []


def test_a_partition_the_history_starts_offline_is_offline_since_after_its_last_write() -> None:
    assert periods(part(0x86, 5, [5, 1], cause="snapshot", offline=True), part(0xba, 1, [1])) == \
        [("orders", 0, 0x86, 0xba, True)]
    # the counter-case: one that goes offline within the history has a known start
    assert periods(part(0x80, 5, [5, 1], cause="snapshot"), part(0x86, 5, [5], offline=True),
                   part(0xba, 1, [1])) == [("orders", 0, 0x86, 0xba, False)]


def test_a_starting_state_without_a_leader_is_offline_from_its_last_isr_members_departure() -> None:
    # snapshot-plus-logs: broker 6's session expired at 0xb3 (a log older than the snapshot), the
    # controller wrote payments-1 leader none, ISR [6] at 0xb4: offline from 0xb3
    none = part(0xb4, -1, [6], cause="snapshot", offline=True, topic="payments", partition=1)
    assert periods(BrokerEvent(6, "session_expired", 0xb3, T), none) == [("payments", 1, 0xb3, None, False)]
    # without the departure in the evidence: from the write that left it without a leader
    assert periods(none) == [("payments", 1, 0xb4, None, False)]
    # a departure of another broker does not date it
    assert periods(BrokerEvent(5, "session_closed", 0xb2, T), none) == [("payments", 1, 0xb4, None, False)]


def test_a_broker_gone_between_two_snapshots_leaves_what_it_led_offline_since_after_the_first() -> None:
    # only snapshots: broker 1 registered at snapshot 0x40, absent from snapshot 0x90 (gone, placed
    # at the later one); the partition it led is offline since after 0x40, when it was last seen
    gone = BrokerEvent(1, "gone", 0x90, None, alive_at=0x40)
    assert periods(part(0x30, 1, [1, 2]), gone) == [("orders", 0, 0x40, None, True)]
    # the counter-case: a departure the logs record has its own position, a known start
    assert periods(part(0x30, 1, [1, 2]), BrokerEvent(1, "session_expired", 0x55, T)) == \
        [("orders", 0, 0x55, None, False)]
