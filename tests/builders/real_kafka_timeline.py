"""``kreplica timeline`` against what real Kafka logged (issue 28 §3), on one recording of
``fixtures/real-kafka`` (``tests/builders/real_kafka.py``): the leader, ISR and liveness changes
of the timeline come in the order, and at the points, that the brokers' ``state-change.log``,
the controllers' ``controller.log`` and the script's own log show.

Kafka's side, parsed here (wording checked against Kafka's source, ``Partition.scala``'s
``stateChangeLogger`` lines of 2.8.2, 3.0.2 and 3.9, and against the 4.4.0 files):

* a broker becoming leader or follower of a leader epoch: ``Leader orders-0 [with topic id ..]
  starts at leader epoch E from offset .. ISR [..]`` and ``Follower orders-0 starts at leader
  epoch E ..`` (3.1+: ``.. Current leader is L.``; 2.8/3.0 name the leader only in the TRACE
  ``Handling LeaderAndIsr request .. starting the become-follower transition for partition
  orders-0 with leader L`` before it);
* a state a broker was told or already held: the ``Skipped the become-leader/follower state
  change for orders-0`` lines (3.9: ``LeaderAndIsrPartitionState(..)``; 4.x:
  ``PartitionRegistration(..)``), ZooKeeper mode's TRACE ``Received LeaderAndIsr request
  LeaderAndIsrPartitionState(..)``, ``Sending become-leader/follower LeaderAndIsr request ..`` and
  ``Cached leader info UpdateMetadataPartitionState(..)`` lines;
* the controller's own decisions: ZooKeeper mode's ``Changed partition orders-0 from X to
  OnlinePartition with state LeaderAndIsr(leader=L, leaderEpoch=E, isr=List(..) | isrWithBrokerEpoch=
  List(BrokerState(brokerId=..)..) ..)`` and ``Partition orders-0 state changed to (Leader:L,ISR:..,
  LeaderEpoch:E,..)``; KRaft's ``UNCLEAN partition change for orders-0 ..: isr: [..] -> [..],
  leader: A -> B, .. leaderEpoch: X -> E``; and KRaft's registration changes as the controller
  replayed them (``Replayed [initial] RegisterBrokerRecord``, ``Replayed
  BrokerRegistrationChangeRecord modifying the registration for broker B: ..(fenced=F,
  inControlledShutdown=S ..)``; a no-op change is logged as ``Ignoring no-op registration
  change`` and changes nothing).

The log timestamps are UTC milliseconds, the clock every node of the recording shares (one host),
the same clock as the timeline's ``time`` (a KRaft record's append time, a ZooKeeper
transaction's time).
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tests.builders.real_kafka import Recording
from tests.builders.real_kafka_checks import objects

PARTITION = "orders-0"

# -- Kafka's logs ------------------------------------------------------------------------------

_PREFIX = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\] [A-Z]+ (.*)$")
_LEADER = re.compile(r"\[Broker id=(\d+)\] Leader orders-0 (?:with topic id \S+ )?starts at leader epoch (\d+) "
                     r"from offset \d+ .*?ISR \[([\d,]*)\]")
_FOLLOWER = re.compile(r"\[Broker id=(\d+)\] Follower orders-0 starts at leader epoch (\d+) "
                       r"(?:.*Current leader is (-?\d+)\.)?")
_BECOME_FOLLOWER = re.compile(r"\[Broker id=(\d+)\] Handling LeaderAndIsr request .* starting the become-follower "
                              r"transition for partition orders-0 with leader (-?\d+)")
# LeaderAndIsrPartitionState / UpdateMetadataPartitionState (ZooKeeper mode's requests, 3.9
# KRaft's "Skipped" lines): leader, leaderEpoch and isr in that order
_REQUEST_STATE = re.compile(r"PartitionState\(topicName='orders', partitionIndex=0, controllerEpoch=-?\d+, "
                            r"leader=(-?\d+), leaderEpoch=(\d+), isr=\[([\d, ]*)\]")
# 4.x KRaft's "Skipped" lines: PartitionRegistration(replicas=.., isr=[..], .., leader=L, .., leaderEpoch=E, ..)
_REGISTRATION = re.compile(r"state change for orders-0 .*PartitionRegistration\(.*?\bisr=\[([\d, ]*)\].*?"
                           r"\bleader=(-?\d+),.*?\bleaderEpoch=(\d+)")
_ZK_ONLINE = re.compile(r"\[Controller id=(\d+) epoch=\d+\] Changed partition orders-0 from \w+ to OnlinePartition "
                        r"with state LeaderAndIsr\(leader=(-?\d+), leaderEpoch=(\d+), "
                        r"(?:isr=List\(([\d, ]*)\)|isrWithBrokerEpoch=List\(((?:BrokerState\([^)]*\)(?:, )?)*)\))")
_ZK_CHANGED = re.compile(r"\[Controller id=(\d+) epoch=\d+\] Partition orders-0 state changed to "
                         r"\(Leader:(-?\d+),ISR:([\d,]*),(?:LeaderRecoveryState:\w+,)?LeaderEpoch:(\d+),")
_KRAFT_CHANGE = re.compile(r"\[QuorumController id=(\d+)\] \w+ partition change for orders-0 with topic ID \S+: (.*) "
                           r"\(org\.apache")
_BROKER_STATE = re.compile(r"brokerId=(\d+)")


def log_time(stamp: str, millis: str) -> int:
    """``2026-12-03 10:19:35`` and ``112`` (a log line's, UTC) as epoch milliseconds."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) * 1000 + int(millis)


def utc_second(stamp: str) -> int:
    """The script's ``utc`` (``2026-12-03T10:19:37Z``, to the second) as epoch milliseconds."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) * 1000


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    """(time, message) of each line of a Kafka log that starts with a timestamp."""
    if not path.is_file():
        return
    for line in path.read_text(errors="replace").splitlines():
        if m := _PREFIX.match(line):
            yield log_time(m[1], m[2]), m[3]


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.split(r"[,\s]+", text.strip()) if x)


@dataclass(frozen=True)
class Logged:
    """One line of Kafka's naming a leader epoch of orders-0 and its leader: ``kind`` ``leader``
    or ``follower`` (a broker became one at that epoch), ``told`` (a request or a state a broker
    held), ``controller`` (the controller's decision); ``isr`` when the line names it and it is
    the ISR the epoch started with (a ``Leader`` line, a controller's decision), else ``None``."""

    time: int
    node: int
    epoch: int
    leader: int | None
    isr: tuple[int, ...] | None
    kind: str
    line: str


def state_change_lines(path: Path, node: int) -> list[Logged]:
    """What one node's ``state-change.log`` says of orders-0's leader epochs."""
    found: list[Logged] = []
    becoming: dict[int, int] = {}          # broker -> leader of its last become-follower transition
    for at, text in _lines(path):
        if m := _LEADER.search(text):
            found.append(Logged(at, int(m[1]), int(m[2]), int(m[1]), _ids(m[3]), "leader", text))
        elif m := _FOLLOWER.search(text):
            broker = int(m[1])
            leader = int(m[3]) if m[3] is not None else becoming.get(broker)
            found.append(Logged(at, broker, int(m[2]), leader, None, "follower", text))
        elif m := _BECOME_FOLLOWER.search(text):
            becoming[int(m[1])] = int(m[2])
        elif m := _ZK_ONLINE.search(text):
            isr = _ids(m[4]) if m[4] is not None else tuple(int(b) for b in _BROKER_STATE.findall(m[5]))
            found.append(Logged(at, int(m[1]), int(m[3]), int(m[2]), isr, "controller", text))
        elif m := _ZK_CHANGED.search(text):
            found.append(Logged(at, int(m[1]), int(m[4]), int(m[2]), _ids(m[3]), "controller", text))
        elif m := _REQUEST_STATE.search(text):
            found.append(Logged(at, node, int(m[2]), int(m[1]), None, "told", text))
        elif m := _REGISTRATION.search(text):
            found.append(Logged(at, node, int(m[3]), int(m[2]), None, "told", text))
    return found


def _arrow(changes: str, field: str) -> tuple[str, str] | None:
    """``field: A -> B`` of a KRaft partition change line, as (A, B)."""
    m = re.search(rf"(?:^|, ){field}: (\[[^\]]*\]|-?\d+) -> (\[[^\]]*\]|-?\d+)", changes)
    return (m[1], m[2]) if m else None


def kraft_controller_lines(path: Path) -> list[Logged]:
    """The partition changes of orders-0 a KRaft controller logged (the unclean ones: a clean
    change is logged at DEBUG), as the epoch each starts, its leader and ISR."""
    found: list[Logged] = []
    for at, text in _lines(path):
        if (m := _KRAFT_CHANGE.search(text)) and (epoch := _arrow(m[2], "leaderEpoch")):
            leader, isr = _arrow(m[2], "leader"), _arrow(m[2], "isr")
            found.append(Logged(at, int(m[1]), int(epoch[1]), int(leader[1]) if leader else None,
                                _ids(isr[1].strip("[]")) if isr else None, "controller", text))
    return found


@dataclass(frozen=True)
class Registration:
    """A broker's registration change as a KRaft controller replayed it: ``registered``,
    ``fenced``, ``unfenced`` or ``controlled_shutdown``."""

    time: int
    broker: int
    change: str
    line: str


_REPLAYED_REGISTER = re.compile(r"Replayed (?:initial )?RegisterBrokerRecord .*?RegisterBrokerRecord\(brokerId=(\d+),")
_REPLAYED_UNREGISTER = re.compile(r"Replayed UnregisterBrokerRecord\(brokerId=(\d+),")
_REPLAYED_CHANGE = re.compile(r"Replayed BrokerRegistrationChangeRecord modifying the registration for broker (\d+): "
                              r".*fenced=(-?\d+), inControlledShutdown=(\d+)")


def kraft_registrations(path: Path) -> list[Registration]:
    """The broker registration changes a KRaft controller's ``controller.log`` says it replayed, in
    order (``ClusterControlManager.replay``: a change that changes nothing is logged as "Ignoring
    no-op registration change" instead, and is not one)."""
    found: list[Registration] = []
    for at, text in _lines(path):
        if m := _REPLAYED_REGISTER.search(text):
            found.append(Registration(at, int(m[1]), "registered", text))
        elif m := _REPLAYED_UNREGISTER.search(text):
            found.append(Registration(at, int(m[1]), "unregistered", text))
        elif m := _REPLAYED_CHANGE.search(text):
            broker = int(m[1])
            if m[3] == "1":
                found.append(Registration(at, broker, "controlled_shutdown", text))
            if m[2] in ("1", "-1"):
                found.append(Registration(at, broker, "fenced" if m[2] == "1" else "unfenced", text))
    return found


# -- the recording and its timeline ----------------------------------------------------------------

@dataclass(frozen=True)
class EpochStart:
    """A leader epoch of orders-0: its leader, the ISR it started with, and where it is said."""

    epoch: int
    leader: int
    isr: tuple[int, ...] | None
    time: int | None


@dataclass(frozen=True)
class Liveness:
    """One liveness change of the script's log for one node: ``killed`` (SIGKILL), ``stopped``
    (SIGTERM) or ``restarted``, at ``utc`` (the second the step was logged), the index of the step."""

    index: int
    action: str
    node: int
    utc: int
    step: dict


class Judged:
    """One recording at one point: ``kreplica timeline`` of its metadata and Kafka's logs."""

    def __init__(self, recording: Recording, point: str | None = None) -> None:
        self.recording = recording
        self.point = point or recording.description["points"][-1]

    @property
    def name(self) -> str:
        return f"{self.recording.name} at {self.point}"

    @cached_property
    def timeline(self) -> list[dict]:
        return objects("timeline", self.recording.metadata(self.point))

    @property
    def events(self) -> list[dict]:
        """The partition, broker and controller events, in the timeline's order."""
        return [o for o in self.timeline if o["type"] in ("partition_event", "broker_event", "controller_event")]

    @property
    def findings(self) -> list[dict]:
        """The timeline's findings but the known one: ``ClearElrRecord`` (api key 28, issue 30)."""
        return [o for o in self.timeline if o["type"] == "finding"
                and not (o["kind"] == "kraft_unknown_record" and o.get("api_key") == 28)]

    def nodes(self) -> list[int]:
        d = self.recording.description
        return sorted(set(d["brokers"]) | set(d["controllers"]))

    @cached_property
    def logged(self) -> list[Logged]:
        """Every line of every node naming a leader epoch of orders-0, in time order."""
        found: list[Logged] = []
        for node in self.nodes():
            where = self.recording.evidence(self.point) / f"node-{node}"
            found += state_change_lines(where / "state-change.log", node)
            if self.recording.mode == "kraft":
                found += kraft_controller_lines(where / "controller.log")
        return sorted(found, key=lambda x: x.time)

    # -- the timeline's side -----------------------------------------------------------------
    def timeline_epochs(self) -> list[EpochStart]:
        """Each leader epoch the timeline gives orders-0, in its order, with the state of the
        event that started it."""
        found: list[EpochStart] = []
        for e in self.events:
            if e["type"] != "partition_event" or e["partition"] != PARTITION or e["after"] is None:
                continue
            after, before = e["after"], e["before"]
            if before is None or before["leader_epoch"] != after["leader_epoch"]:
                found.append(EpochStart(after["leader_epoch"], after["leader"], tuple(after["isr"]), e["time"]))
        return found

    # -- Kafka's side --------------------------------------------------------------------------
    def kafka_leaders(self) -> dict[int, set[int]]:
        """Each leader epoch Kafka's logs name, with every leader they name for it."""
        leaders: dict[int, set[int]] = {}
        for x in self.logged:
            leaders.setdefault(x.epoch, set())
            if x.leader is not None:
                leaders[x.epoch].add(x.leader)
        return leaders

    def became(self) -> set[int]:
        """The epochs a broker logged becoming leader or follower at."""
        return {x.epoch for x in self.logged if x.kind in ("leader", "follower")}

    def kafka_epochs(self) -> list[tuple[int, int | None]]:
        """(epoch, leader) of every leader epoch Kafka's logs name, in epoch order (a leader
        ``None`` when the lines disagree or none names it: the judgment then fails on it)."""
        return [(epoch, next(iter(names)) if len(names) == 1 else None)
                for epoch, names in sorted(self.kafka_leaders().items())]

    def kafka_isr(self, epoch: int) -> tuple[tuple[int, ...], str] | None:
        """The ISR epoch ``epoch`` started with as Kafka logged it, and the line saying so: the new
        leader's ``Leader`` line, else the controller's decision, else (ZooKeeper mode) the first
        request naming the epoch (a request carries the state the controller wrote). ``None``
        when no line says it (a leaderless epoch of KRaft: only the followers' lines, which name
        no ISR)."""
        at = [x for x in self.logged if x.epoch == epoch]
        for kind in ("leader", "controller"):
            if (first := next((x for x in at if x.kind == kind and x.isr is not None), None)) is not None:
                return first.isr, first.line
        if self.recording.mode == "zookeeper":
            told = [x for x in at if x.kind == "told"]
            if told:
                m = _REQUEST_STATE.search(told[0].line)
                return _ids(m[3]), told[0].line
        return None

    def kafka_isr_at_end(self, epoch: int) -> tuple[tuple[int, ...], str] | None:
        """The ISR ``epoch`` ended with as a KRaft controller logged it: the ``isr: [..] -> [..]``
        of its change from ``leaderEpoch: epoch -> ..`` (the field is there when the ISR changed)."""
        for text in (x.line for x in self.logged if x.kind == "controller"):
            m = _KRAFT_CHANGE.search(text)
            if m and (e := _arrow(m[2], "leaderEpoch")) and int(e[0]) == epoch and (isr := _arrow(m[2], "isr")):
                return _ids(isr[0].strip("[]")), text
        return None

    def timeline_isr_at_end(self, epoch: int) -> tuple[int, ...] | None:
        """The ISR of the timeline's last state of orders-0 at ``epoch``."""
        last = None
        for e in self.events:
            if e["type"] == "partition_event" and e["partition"] == PARTITION and e["after"] is not None \
                    and e["after"]["leader_epoch"] == epoch:
                last = tuple(e["after"]["isr"])
        return last

    def first_logged(self, epoch: int) -> Logged | None:
        return next((x for x in self.logged if x.epoch == epoch), None)

    # -- the script's side ---------------------------------------------------------------------
    def liveness_steps(self) -> list[Liveness]:
        """Each step of the script's log (up to the point) that changes a node's liveness, one per node."""
        found: list[Liveness] = []
        for i, step in enumerate(self.recording.steps):
            if step["step"] == "recorded" and step["point"] == self.point:
                break
            action = {"killed": "killed", "stopped": "stopped", "restarted": "restarted"}.get(step["step"])
            if action is None:
                continue
            nodes = step.get("brokers") or [step[k] for k in ("broker", "node") if k in step]
            found += [Liveness(i, action, n, utc_second(step["utc"]), step) for n in nodes]
        return found

    def is_broker(self, node: int) -> bool:
        return node in self.recording.description["brokers"]


# the broker events that say a broker went, or came back, by how (kreplica's names)
GONE_AFTER_KILL = {"kraft": ("fenced", "unregistered"), "zookeeper": ("session_expired",)}
GONE_AFTER_STOP = {"kraft": ("controlled_shutdown",), "zookeeper": ("session_closed",)}
BACK = {"kraft": ("registered",), "zookeeper": ("registered",)}


# -- the judgments -------------------------------------------------------------------------------

#: how long after the timeline's start of an epoch Kafka's first line of it may come: on one host,
#: with a replica or the controller up, a broker applies a change or the controller logs its
#: decision within it (the corpus: 2 to 572 ms)
LOGGED_WITHIN_MS = 1000


def leader_epochs_are_kafkas(j: Judged) -> list[int]:
    """(a) The (leader epoch, leader) sequence the timeline gives orders-0 is the one Kafka's
    logs name, none missing, none extra; an epoch no broker logged becoming leader or follower
    at is there only when a controller's decision names it (the evidence proves it: ZooKeeper
    mode's controller writing two ISR removals in a row, sending only the second; a leaderless
    epoch no replica could follow); and each epoch starts in the timeline no later than Kafka's
    first line of it, and less than ``LOGGED_WITHIN_MS`` before. Returns the epochs only a
    controller's decision names."""
    ours = [(e.epoch, e.leader) for e in j.timeline_epochs()]
    theirs = j.kafka_epochs()
    assert ours == theirs, (f"{j.name}: the timeline's (leader epoch, leader) of {PARTITION} {ours}, "
                            f"Kafka logged {theirs}")
    decided = []
    for e in j.timeline_epochs():
        if e.epoch not in j.became():
            assert any(x.kind == "controller" and x.epoch == e.epoch for x in j.logged), (
                f"{j.name}: epoch {e.epoch} of {PARTITION}: no broker logged becoming its leader or a follower, "
                "and no controller's decision names it")
            decided.append(e.epoch)
        first = j.first_logged(e.epoch)
        if e.time is not None and first.time >= e.time + LOGGED_WITHIN_MS and _all_replicas_down(j, e.time):
            # no replica of the partition was up when the epoch began (a leaderless epoch after
            # the last one died): the first line of it is a replica's, once it restarted
            assert any(s.node == first.node and s.action == "restarted" and e.time <= s.utc + 1000 <= first.time + 1000
                       for s in j.liveness_steps()), (f"{j.name}: epoch {e.epoch} first logged at {first.time} by "
                                                      f"broker {first.node}, which was not restarted after it began")
            continue
        assert e.time is not None and e.time <= first.time < e.time + LOGGED_WITHIN_MS, (
            f"{j.name}: the timeline starts epoch {e.epoch} at {e.time}, Kafka's first line of it is at "
            f"{first.time}: {first.line}")
    return decided


def _all_replicas_down(j: Judged, at_ms: int) -> bool:
    """Whether every replica of orders-0 had been killed or stopped, and not restarted, by ``at_ms``
    (by the script's log)."""
    replicas = set(j.recording.partition_account(j.recording.description["points"][0])["replicas"])
    down: set[int] = set()
    for s in j.liveness_steps():
        if s.utc > at_ms:
            break
        if s.action in ("killed", "stopped"):
            down.add(s.node)
        else:
            down.discard(s.node)
    return replicas <= down


def isr_at_each_epoch_is_kafkas(j: Judged) -> list[int]:
    """(b) The ISR the timeline gives each leader epoch of orders-0 when it starts is the ISR the
    new leader logged at that epoch (``ISR [..]`` of its ``Leader`` line), or for an epoch whose
    leader logged none, the controller's decision (or ZooKeeper mode's first request of the
    epoch); for a KRaft epoch no line of which names its ISR (a leaderless one: the followers'
    lines name none), the ISR it ended with is the one the controller's change out of it logged
    (``isr: [..] -> ..``). Returns the epochs no line of Kafka's gives an ISR for (not judged)."""
    unsaid = []
    for e in j.timeline_epochs():
        said = j.kafka_isr(e.epoch)
        if said is None:
            ended = j.kafka_isr_at_end(e.epoch)
            if ended is None:
                unsaid.append(e.epoch)
                continue
            last = j.timeline_isr_at_end(e.epoch)
            assert last == ended[0], (f"{j.name}: the timeline ends epoch {e.epoch} of {PARTITION} with ISR "
                                      f"{list(last)}, the controller logged {list(ended[0])}: {ended[1]}")
            continue
        assert e.isr == said[0], (f"{j.name}: the timeline starts epoch {e.epoch} of {PARTITION} with ISR "
                                  f"{list(e.isr)}, Kafka logged {list(said[0])}: {said[1]}")
    return unsaid


def _broker_events(j: Judged) -> list[dict]:
    return [e for e in j.events if e["type"] == "broker_event"]


def liveness_is_the_scripts(j: Judged) -> None:
    """(c) Each step of the script's log that changes a broker's liveness has its broker event in
    the timeline, in the script's order, no earlier than the step's second and before the
    broker's next liveness step:

    * killed (SIGKILL): KRaft ``fenced`` (or ``unregistered``), ZooKeeper ``session_expired``;
    * stopped (SIGTERM, controlled shutdown): KRaft ``controlled_shutdown`` (``fenced`` for a
      broker that leads nothing, which the controller fences at once), ZooKeeper
      ``session_closed`` (the broker closes its session; ZooKeeper holds no controlled-shutdown
      state). The step is logged once the process has exited, so the event is at or before the
      step's second (+1 s) and no earlier than the previous step's second;
    * restarted: ``registered`` (KRaft: then ``unfenced``, before the next liveness step).

    A KRaft controller (not a broker) has no registration in the timeline: its kill is the
    ``controller_event`` electing another controller, after the step and before its restart; a
    restart of it is not in the timeline (no event of kreplica's says a controller came back)."""
    mode = j.recording.mode
    steps = j.liveness_steps()
    brokers = _broker_events(j)
    controllers = [e for e in j.events if e["type"] == "controller_event"]
    last_position: dict[int, int] = {}
    for k, s in enumerate(steps):
        following = next((t for t in steps[k + 1:] if t.node == s.node), None)
        until = following.utc if following is not None else None
        if not j.is_broker(s.node):
            if s.action == "killed":
                found = [e for e in controllers if e["event"] == "elected" and e["controller"] != s.node
                         and e["time"] >= s.utc and (until is None or e["time"] < until + 1000)]
                assert found, f"{j.name}: no controller elected after controller {s.node} was killed (step {s.index})"
            continue
        if s.action == "stopped":
            earliest = utc_second(j.recording.steps[s.index - 1]["utc"])
            latest = s.utc + 1000
            kinds = GONE_AFTER_STOP[mode]
            if mode == "kraft" and not _leads_at(j, s.node, earliest):
                # a broker that leads nothing is fenced at once when it asks to shut down
                # (BrokerHeartbeatManager.calculateNextBrokerState: SHUTDOWN_NOW without
                # leaderships; ReplicationControlManager.handleBrokerFenced)
                kinds = ("fenced",)
        else:
            earliest, latest = s.utc, (until + 1000 if until is not None else None)
            kinds = GONE_AFTER_KILL[mode] if s.action == "killed" else BACK[mode]
        mine = [(i, e) for i, e in enumerate(brokers) if e["broker"] == s.node and i > last_position.get(s.node, -1)]
        match = next(((i, e) for i, e in mine if e["event"] in kinds), None)
        assert match is not None, (f"{j.name}: broker {s.node} {s.action} (step {s.index}, {s.step['utc']}): no "
                                   f"{'/'.join(kinds)} event of the broker after it in the timeline")
        i, e = match
        assert earliest <= e["time"] and (latest is None or e["time"] < latest), (
            f"{j.name}: broker {s.node} {s.action} (step {s.index}, {s.step['utc']}): its {e['event']} at "
            f"position {e['position']} is at {e['time']}, outside [{earliest}, {latest})")
        wrong = tuple(k for k in {"killed": GONE_AFTER_STOP, "stopped": GONE_AFTER_KILL}.get(s.action, {}).get(mode, ())
                      if k not in kinds)
        between = [x for _, x in mine if x["time"] <= e["time"] and x["event"] in wrong]
        assert not between, f"{j.name}: broker {s.node} {s.action}, the timeline says {between[0]['event']}"
        if s.action == "restarted" and mode == "kraft":
            unfenced = next(((n, x) for n, x in mine if n > i and x["event"] == "unfenced"), None)
            assert unfenced is not None and (until is None or unfenced[1]["time"] < until + 1000), (
                f"{j.name}: broker {s.node} restarted (step {s.index}): registered at {e['position']} but never "
                "unfenced before its next liveness step")
            i = unfenced[0]
        last_position[s.node] = i


def _leads_at(j: Judged, broker: int, before_ms: int) -> bool:
    """Whether the timeline has ``broker`` leading any partition just before ``before_ms``."""
    last: dict[str, dict] = {}
    for e in j.events:
        if e["type"] == "partition_event" and e["time"] is not None and e["time"] < before_ms:
            last[e["partition"]] = e
    return any((e["after"] or {}).get("leader") == broker for e in last.values())


def liveness_is_what_the_controller_replayed(j: Judged) -> None:
    """(c, KRaft) The timeline's broker events (registered, fenced, unfenced, controlled_shutdown,
    unregistered) are, broker by broker and in order, the registration changes the active controllers replayed
    (``controller.log`` of a controller never killed: a restarted one replays the log again),
    none missing, none extra."""
    killed = {s.node for s in j.liveness_steps() if s.action in ("killed", "stopped")}
    steadies = [c for c in j.recording.description["controllers"] if c not in killed]
    steady = steadies[0]
    replayed = kraft_registrations(j.recording.evidence(j.point) / f"node-{steady}" / "controller.log")
    # 3.9's active controller does not log its own UnregisterBrokerRecord, its standbys do: an
    # unregistration is taken from every controller that was never killed
    held = {(r.broker, r.change) for r in replayed}
    for other in steadies[1:]:
        for r in kraft_registrations(j.recording.evidence(j.point) / f"node-{other}" / "controller.log"):
            if r.change == "unregistered" and (r.broker, r.change) not in held:
                replayed.append(r)
                held.add((r.broker, r.change))
    replayed.sort(key=lambda r: r.time)
    for broker in j.recording.description["brokers"]:
        theirs = [r.change for r in replayed if r.broker == broker]
        ours = [e["event"] for e in _broker_events(j) if e["broker"] == broker]
        assert ours == theirs, (f"{j.name}: broker {broker}'s events in the timeline {ours}, controller {steady} "
                                f"replayed {theirs}")


def events_are_in_time_order(j: Judged) -> None:
    """(d) The timeline's events come in time order."""
    times = [(e["time"], e["position"]) for e in j.events if e["time"] is not None]
    late = [(a, b) for a, b in zip(times, times[1:]) if b[0] < a[0]]
    assert not late, f"{j.name}: events out of time order (time, position): {late[:3]}"
    assert not j.findings, f"{j.name}: findings {j.findings}"


def _comparable(e: dict) -> tuple:
    return (e["type"], e["position"], e.get("event"), e.get("partition"), str(e.get("after")), e.get("broker"))


def earlier_point_adds_nothing(recording: Recording, point: str) -> None:
    """An earlier point's evidence is a beginning of the last point's: its timeline's events are
    the first ones of the last point's timeline, and each node's ``state-change.log`` and
    ``controller.log`` the first lines of the last point's; so the last point, judged above,
    holds everything an earlier one says."""
    early, last = Judged(recording, point), Judged(recording)
    ours, whole = [_comparable(e) for e in early.events], [_comparable(e) for e in last.events]
    assert ours == whole[:len(ours)], f"{early.name}: its timeline is no beginning of the last point's"
    for node in early.nodes():
        for log in ("state-change.log", "controller.log", "server.log"):
            a = recording.evidence(point) / f"node-{node}" / log
            b = recording.evidence(last.point) / f"node-{node}" / log
            if a.is_file():
                before = a.read_text(errors="replace")
                assert b.read_text(errors="replace").startswith(before), f"{early.name}: node-{node}/{log}"
