"""``kreplica timeline`` on histories written by a real ZooKeeper 3.8.0 (``../shared/oracle/zookeeper``):

* replaying the timeline's partition events (``after`` of each, in order) up to every labelled
  point of ``expected.json`` leaves every partition with the leader, leader epoch and ISR that
  ZooKeeper recorded there, and no partition that ZooKeeper did not have;
* every event that came from a transaction carries that transaction's zxid, time and session:
  checked against the entry kreplica read (milliseconds) and against ZooKeeper's own
  TxnLogToolkit dump (its dates have one-second resolution);
* the causes of the labelled moments: the unclean election of ``audit.log-0``, the preferred
  election of ``orders-4``, the reassignment step of ``payments-3``, leader ISR changes (both
  through the controller, AlterPartition, and by a leader's own write), and the broker 5 return.

Cases are discovered by globbing, so held-back histories of the same kinds are checked the same way.
"""

from __future__ import annotations

import calendar
import json
import re
import time
from pathlib import Path

import pytest

from kreplica.analysis.timeline.events import BrokerEvent, ControllerEvent, PartitionEvent, TimelineEnd
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import find_zk_files, iter_log_entries
from tests.conftest import ORACLE, oracle_dir

ZK = ORACLE / "zookeeper"
CASES = sorted(p for p in ZK.iterdir() if p.is_dir() and any(
    zkl.parse_log_name(f.name) is not None for f in p.iterdir())) if ZK.is_dir() else []
_LINE = re.compile(r"^(\d{1,2}/\d{1,2}/\d{2}), (\d{1,2}:\d{2}:\d{2}) ([AP]M) (\S+) session 0x([0-9a-f]+) "
                   r"cxid 0x([0-9a-f]+) zxid 0x([0-9a-f]+) (\S+)", re.M)


def _cases() -> list:
    return [pytest.param(c, id=c.name) for c in CASES] or [pytest.param(None, id="oracle-absent")]


def _need(case: Path | None) -> Path:
    if case is None:
        oracle_dir("zookeeper")
        pytest.skip("the zookeeper oracle holds no history with logs")
    return case


def _timeline(case: Path) -> tuple[list, TimelineEnd]:
    items = list(iter_zookeeper_timeline(find_zk_files([case])))
    assert not [f for f in items if isinstance(f, Finding) and f.is_error]
    return [x for x in items if isinstance(x, (PartitionEvent, BrokerEvent, ControllerEvent))], items[-1]


def _points(expected: dict) -> list[dict]:
    return [expected["at_snapshot"], *expected.get("checkpoints", []), expected["after_replay"]]


def _expected_states(point: dict) -> dict[str, tuple]:
    out = {}
    for topic, t in point["kafka"]["topics"].items():
        for p, part in t["partitions"].items():
            s = part.get("state")
            if s is not None:
                out[f"{topic}-{p}"] = (s["leader"], s["leader_epoch"], tuple(s["isr"]))
    return out


@pytest.mark.parametrize("case", _cases())
def test_replaying_the_events_gives_zookeepers_state_at_every_labelled_point(case):
    case = _need(case)
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    events, end = _timeline(case)
    checked = 0
    for point in _points(expected):
        zxid = int(point["zxid"], 16)
        if zxid < end.start:
            continue
        state: dict[str, tuple] = {}
        for ev in events:
            if isinstance(ev, PartitionEvent) and ev.position <= zxid or (
                    isinstance(ev, PartitionEvent) and ev.cause == "snapshot"):
                if ev.after is None:
                    state.pop(ev.name, None)
                else:
                    state[ev.name] = (ev.after.leader, ev.after.leader_epoch, ev.after.isr)
        assert state == _expected_states(point), point["label"]
        checked += 1
    assert checked == len(_points(expected))


def _toolkit(case: Path) -> dict[int, tuple[int, int, int]]:
    """zxid → (epoch seconds, session, cxid) from every TxnLogToolkit dump of the case."""
    out = {}
    for dump in case.glob("log.*.TxnLogToolkit.txt"):
        for m in _LINE.finditer(dump.read_text(encoding="utf-8", errors="replace")):
            assert m.group(4) == "UTC"
            secs = calendar.timegm(time.strptime(f"{m.group(1)} {m.group(2)} {m.group(3)}", "%m/%d/%y %I:%M:%S %p"))
            out[int(m.group(7), 16)] = (secs, int(m.group(5), 16), int(m.group(6), 16))
    return out


@pytest.mark.parametrize("case", _cases())
def test_every_event_has_the_zxid_and_time_of_its_transaction(case):
    case = _need(case)
    files = find_zk_files([case])
    entries = {e.zxid: e for e in iter_log_entries(files.logs) if isinstance(e, zkl.TxnEntry)}
    toolkit = _toolkit(case)
    events, end = _timeline(case)
    # what the logs hold after the snapshot, and the brokers they show leaving before it (a log
    # older than the snapshot dates those departures: session closes and expiries)
    before = [ev for ev in events if isinstance(ev, BrokerEvent) and ev.position <= end.start
              and ev.event in ("session_closed", "session_expired", "deregistered")]
    assert [(ev.broker, ev.event) for ev in before] == [(5, "session_closed"), (6, "session_expired")]
    from_txns = [ev for ev in events if ev.position > end.start] + before
    assert from_txns
    for ev in from_txns:
        e = entries[ev.position]
        assert ev.time == e.time
        secs, session, _cxid = toolkit[ev.position]
        assert ev.time // 1000 == secs
        if isinstance(ev, PartitionEvent) and ev.writer is not None:
            # the writer is the broker whose session wrote the transaction
            assert any(isinstance(b, BrokerEvent) and b.broker == ev.writer and b.session == session
                       for b in events)
    # snapshot events sit at or below the snapshot's zxid, at the zxid that wrote each state
    snap = [ev for ev in events if ev.position <= end.start and ev not in before]
    assert snap and all(getattr(ev, "cause", None) == "snapshot" or getattr(ev, "event", None) == "snapshot"
                        for ev in snap)


def _by_position(events) -> dict[tuple[str, int], PartitionEvent]:
    return {(ev.name, ev.position): ev for ev in events if isinstance(ev, PartitionEvent)}


@pytest.mark.parametrize("case", _cases())
def test_labelled_moments_get_their_causes(case):
    case = _need(case)
    events, end = _timeline(case)
    if end.start != 0xb6:
        pytest.skip("the labelled moments below belong to the committed history")
    ev = _by_position(events)
    assert ev[("audit.log-0", 0xbf)].cause == "unclean_leader_election"
    assert ev[("orders-4", 0xba)].cause == "leader_election"        # leader 5 gone, 1 was in the ISR
    assert (ev[("orders-3", 0xbc)].cause, ev[("orders-3", 0xbc)].by) == ("isr_shrink", "controller")
    assert (ev[("audit.log-0", 0xd1)].cause, ev[("audit.log-0", 0xd1)].by) == ("isr_expand", "leader")
    assert (ev[("orders-2", 0xd2)].cause, ev[("orders-2", 0xd2)].by) == ("isr_expand", "leader")
    assert ev[("orders-2", 0xd2)].writer == 3                          # the leader's own ZooKeeper write
    assert ev[("orders-4", 0xda)].cause == "preferred_election"
    assert ev[("payments-3", 0xdd)].cause == "reassignment"
    assert ev[("scratch-tmp-0", 0xee)].cause == "created" and ev[("scratch-tmp-0", 0xef)].cause == "deleted"
    assert ("audit.log-0", 0xd0) not in ev      # only the recovery state changed: not an event
    brokers = [(b.broker, b.event, b.position) for b in events if isinstance(b, BrokerEvent) and b.position > 0xb6]
    assert brokers == [(5, "registered", 0xcf)]
    ctrl = [(c.event, c.controller, c.controller_epoch, c.position) for c in events
            if isinstance(c, ControllerEvent) and c.position > 0xb6]
    assert ctrl == [("resigned", 1, 1, 0xb7), ("elected", 2, 2, 0xb8)]
