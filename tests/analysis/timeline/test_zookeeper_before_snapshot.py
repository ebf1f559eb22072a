"""A transaction log older than the starting snapshot dates what the snapshot only shows gone:
``../shared/oracle/zookeeper/snapshot-plus-logs`` (a real 3.9 ensemble): log.a0 holds zxids
0xa0-0xb6 and snapshot.b6 the state after them. Brokers 5 and 6 left at 0xb2 (session closed)
and 0xb3 (expired, cxid 0); orders-4 (led by 5) and orders-5 (led by 6) were offline from then,
not from their state znodes' last writes (0x86, 0x87), and payments-1, left without a leader at
0xb4 with ISR [6], from broker 6's expiry."""

from __future__ import annotations

from kreplica.analysis.timeline.events import BrokerEvent, PartitionEvent, TimelineSummary
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.model.zookeeper import find_zk_files
from tests.conftest import oracle_dir


def _events():
    root = oracle_dir("zookeeper", "snapshot-plus-logs")
    return [ev for ev in iter_zookeeper_timeline(find_zk_files([root]))
            if isinstance(ev, (BrokerEvent, PartitionEvent))]


def test_departures_before_the_snapshot_are_events_and_date_the_offline_periods() -> None:
    events = _events()
    left = [(ev.broker, ev.event, ev.position) for ev in events if isinstance(ev, BrokerEvent) and ev.position < 0xb6
            and ev.event != "snapshot"]
    assert left == [(5, "session_closed", 0xb2), (6, "session_expired", 0xb3)]
    # the snapshot rows of orders-4 and orders-5: written while their leaders lived, not offline there
    rows = {ev.name: ev for ev in events if isinstance(ev, PartitionEvent) and ev.cause == "snapshot"}
    assert (rows["orders-4"].position, rows["orders-4"].offline) == (0x86, False)
    summary = TimelineSummary()
    for ev in events:
        summary.feed(ev)
    starts = {f"{p.topic}-{p.partition}": (p.start, p.since_after) for p in summary.periods()}
    assert starts["orders-4"] == (0xb2, False) and starts["orders-5"] == (0xb3, False)
    assert starts["payments-1"] == (0xb3, False)
