"""The timeline of a KRaft cluster: the metadata log's partition, broker and controller records,
offset by offset.

Sources: ``../shared/specs/kafka-algorithms.md`` §4.6 (``PartitionChangeBuilder``) and §5.5 (KRaft
reassignment); Kafka ``ClusterDelta``. Partition records are applied by
:func:`~kreplica.model.cluster.partition_change.merge_partition_change`
(``PartitionRegistration.merge``: a change record naming a leader, even the same one or -1, bumps
the leader epoch; the partition epoch always moves), so each partition's registration is whole,
eligible leader replicas included. The records come from
:mod:`kreplica.model.cluster.kraft_history`; the causes from
:func:`~kreplica.analysis.timeline.events.classify`, told that KRaft records controlled shutdowns
(``in_controlled_shutdown``) and fencing, so nothing is inferred from liveness alone.

A broker's fencing or unregistration is written after the changes it causes:
``ReplicationControlManager.handleBrokerFenced`` / ``handleBrokerUnregistered`` append
``generateLeaderAndIsrUpdates``' ``PartitionChangeRecord``s first, then the
``FenceBrokerRecord`` (``BrokerRegistrationChangeRecord`` with ``fenced``, MV 3.3+) or
``UnregisterBrokerRecord``, in one batch. So a change is classified with the brokers whose
fencing closes its run of change records in the batch taken as gone already (for the
partitions whose ISR holds them, the ones ``generateLeaderAndIsrUpdates`` touches). A broker in
more than 10,000 ISRs has its changes split over several batches (``QuorumController``'s
``MAX_RECORDS_PER_BATCH``); only the last batch's are classified so.

``position`` is the record's offset in ``__cluster_metadata-0``; for the ``snapshot`` events, the
last offset the snapshot holds, and its ``last_contained_log_timestamp`` as the time.
"""

from __future__ import annotations

from collections.abc import Iterator

from kreplica.analysis.timeline.events import (
    BY_CONTROLLER,
    BY_RECORD,
    CREATED,
    DELETED,
    SNAPSHOT,
    BrokerEvent,
    ChangeContext,
    ControllerEvent,
    LeaderIsr,
    PartitionEvent,
    TimelineEnd,
    classify,
    is_offline,
)
from kreplica.formats.kraft import records as kraft
from kreplica.formats.findings import Finding
from kreplica.model.cluster import PartitionChange, PartitionState, merge_partition_change, partition_from_record
from kreplica.model.cluster.from_kraft import KraftFiles
from kreplica.model.cluster.kraft_history import iter_kraft_records, kraft_start


class _Image:
    """The parts of the metadata image the causes need, kept record by record."""

    def __init__(self) -> None:
        self.topics: dict[str, str] = {}                       # topic id -> name
        self.parts: dict[tuple[str, int], PartitionState] = {}  # (name, p) -> registration
        self.changed_at: dict[tuple[str, int], int] = {}       # (name, p) -> offset of its last event
        self.brokers: dict[int, dict] = {}                     # id -> {"epoch","fenced","shutdown"}
        self.gone_at: dict[int, int] = {}
        self.controller: int | None = None
        self.controller_epoch: int | None = None

    def alive(self) -> frozenset[int]:
        return frozenset(b for b, r in self.brokers.items() if not r["fenced"])

    def shutting_down(self) -> frozenset[int]:
        return frozenset(b for b, r in self.brokers.items() if r["shutdown"])


_NOBODY: frozenset[int] = frozenset()


def _state(p: PartitionState) -> LeaderIsr:
    return LeaderIsr(p.leader, p.leader_epoch, p.isr, p.leader_recovery_state, p.version)


def _apply(img: _Image, r, quiet: bool, leaving: frozenset[int] = _NOBODY) -> Iterator:
    """Apply one record; yield its events unless ``quiet`` (records before the history's start).
    ``leaving``: for a change record, the brokers a record after it in its batch fences or
    unregisters (see the module docstring)."""
    if isinstance(r, kraft.ControlRecord):
        if r.control_type == kraft.LEADER_CHANGE:
            leader = r.data.get("leader_id")
            img.controller = leader if leader is not None and leader >= 0 else None
            img.controller_epoch = r.epoch
            if not quiet:
                yield ControllerEvent("elected" if img.controller is not None else "none", r.offset, r.timestamp,
                                      img.controller, r.epoch)
        return
    d, name, at, time = r.data, r.name, r.offset, r.timestamp
    if name == "RegisterBrokerRecord":
        img.brokers[d["broker_id"]] = {"epoch": d["broker_epoch"], "fenced": d["fenced"],
                                       "shutdown": d["in_controlled_shutdown"]}
        if not quiet:
            yield BrokerEvent(d["broker_id"], "registered", at, time, d["broker_epoch"])
    elif name == "UnregisterBrokerRecord":
        img.brokers.pop(d["broker_id"], None)
        img.gone_at[d["broker_id"]] = at
        if not quiet:
            yield BrokerEvent(d["broker_id"], "unregistered", at, time, d["broker_epoch"])
    elif name in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
        yield from _fence(img, d["id"], d["epoch"], name == "FenceBrokerRecord", at, time, quiet)
    elif name == "BrokerRegistrationChangeRecord":
        b = img.brokers.get(d["broker_id"])
        if d["in_controlled_shutdown"] == kraft.IN_CONTROLLED_SHUTDOWN and b is not None:
            b["shutdown"] = True
            if not quiet:
                yield BrokerEvent(d["broker_id"], "controlled_shutdown", at, time, d["broker_epoch"])
        if d["fenced"] in (kraft.FENCE, kraft.UNFENCE):
            yield from _fence(img, d["broker_id"], d["broker_epoch"], d["fenced"] == kraft.FENCE, at, time, quiet)
    elif name == "TopicRecord":
        img.topics[d["topic_id"]] = d["name"]
    elif name == "RemoveTopicRecord":
        topic = img.topics.pop(d["topic_id"], None)
        for key in sorted(k for k in img.parts if k[0] == topic):
            p = img.parts.pop(key)
            img.changed_at.pop(key)
            if not quiet:
                yield PartitionEvent(key[0], key[1], at, time, None, _state(p), None, DELETED, BY_CONTROLLER,
                                     "RemoveTopicRecord", p.replicas)
    elif name == "PartitionRecord":
        topic = img.topics.get(d["topic_id"])
        if topic is None:
            return
        p = partition_from_record(d)
        key = (topic, d["partition_id"])
        existed = key in img.parts
        img.parts[key] = p
        img.changed_at[key] = at
        if not quiet:
            after = _state(p)
            yield PartitionEvent(topic, key[1], at, time, None, None, after, CREATED if not existed else SNAPSHOT,
                                 BY_CONTROLLER, f"PartitionRecord: leader {after.leader}, ISR {list(after.isr)}",
                                 p.replicas, is_offline(after, img.alive()))
    elif name == "PartitionChangeRecord":
        yield from _change(img, r, quiet, leaving)


def _leaving_broker(r) -> int | None:
    """The broker a record fences or unregisters (``None`` for any other record)."""
    if not isinstance(r, kraft.MetadataRecord):
        return None
    d = r.data
    if r.name == "FenceBrokerRecord":
        return d["id"]
    if r.name == "UnregisterBrokerRecord" or (r.name == "BrokerRegistrationChangeRecord"
                                              and d["fenced"] == kraft.FENCE):
        return d["broker_id"]
    return None


def _with_leaving(items: Iterator) -> Iterator[tuple]:
    """Each record (or finding) with the brokers fenced or unregistered after its run of change
    records in its batch: a batch is held until it ends, then read backwards."""
    batch: list = []
    for x in items:
        where = None if isinstance(x, Finding) else (x.path, x.batch_position)
        if batch and where != (batch[0].path, batch[0].batch_position):
            yield from _batch_with_leaving(batch)
            batch = []
        if where is None:
            yield x, _NOBODY
        else:
            batch.append(x)
    yield from _batch_with_leaving(batch)


def _batch_with_leaving(batch: list) -> list[tuple]:
    """``batch``'s records in order, each change record with the broker whose fencing or
    unregistration ends its run of change records (the next record that is not one)."""
    out, run = [], _NOBODY
    for r in reversed(batch):
        if isinstance(r, kraft.MetadataRecord) and r.name == "PartitionChangeRecord":
            out.append((r, run))
        else:
            broker = _leaving_broker(r)
            run = _NOBODY if broker is None else frozenset((broker,))
            out.append((r, _NOBODY))
    out.reverse()
    return out


def _fence(img: _Image, broker: int, epoch: int, fenced: bool, at: int, time: int, quiet: bool) -> Iterator:
    b = img.brokers.get(broker)
    if b is None or b["epoch"] != epoch:
        return   # ClusterDelta refuses it; cluster-state reports it
    b["fenced"] = fenced
    if fenced:
        img.gone_at[broker] = at
    if not quiet:
        yield BrokerEvent(broker, "fenced" if fenced else "unfenced", at, time, epoch)


def _change(img: _Image, r, quiet: bool, leaving: frozenset[int]) -> Iterator:
    """Merge a ``PartitionChangeRecord`` into its partition; an event when leader, leader epoch or
    ISR changed (the ELR fields are carried through the registration, not reported). Brokers in
    ``leaving`` and in the partition's ISR are taken as gone already."""
    d = r.data
    topic = img.topics.get(d["topic_id"])
    key = (topic, d["partition_id"])
    p = img.parts.get(key) if topic is not None else None
    if p is None:
        return
    change = PartitionChange.from_record(d)
    before = _state(p)
    alive = img.alive().difference(b for b in leaving if b in p.isr)
    ctx = ChangeContext(
        alive=alive, shutting_down=img.shutting_down(),
        gone_since=frozenset(b for b, z in img.gone_at.items() if z > img.changed_at[key]),
        replicas=p.replicas, adding=p.adding_replicas, removing=p.removing_replicas,
        replicas_changed=change.moves_replicas, epoch_tells_writer=False, shutdown_known=True)
    p = merge_partition_change(p, change)
    img.parts[key] = p
    after = _state(p)
    cause = classify(before, after, ctx)
    if cause is None:
        return
    img.changed_at[key] = r.offset
    if not quiet:
        yield PartitionEvent(topic, d["partition_id"], r.offset, r.timestamp, None, before, after, cause.cause,
                             cause.by, cause.evidence, p.replicas, is_offline(after, alive))


def _snapshot_events(img: _Image, position: int, time: int | None, label: str) -> list:
    alive = img.alive()
    out: list = [BrokerEvent(b, SNAPSHOT, position, time, r["epoch"]) for b, r in sorted(img.brokers.items())]
    if img.controller is not None:
        out.append(ControllerEvent(SNAPSHOT, position, time, img.controller, img.controller_epoch))
    for (topic, pid), p in sorted(img.parts.items()):
        state = _state(p)
        out.append(PartitionEvent(topic, pid, position, time, None, None, state, SNAPSHOT, None,
                                  f"as {label} holds it", p.replicas, is_offline(state, alive)))
    return out


def iter_kraft_timeline(files: KraftFiles, *, from_offset: int | None = None, from_time: int | None = None,
                        to_offset: int | None = None, to_time: int | None = None
                        ) -> Iterator[PartitionEvent | BrokerEvent | ControllerEvent | Finding | TimelineEnd]:
    """Every partition, broker and controller event of a KRaft metadata log in offset order, then one
    :class:`TimelineEnd`.

    The history starts at the beginning of the log when it holds offset 0, else at a snapshot
    (the newest ending at or before ``from_offset``, else the oldest); a snapshot's contents (or,
    with ``from_offset``/``from_time``, the state at that point) become ``snapshot`` events.
    Records of the log are then walked to the end or to ``to_offset``/``to_time`` (inclusive).
    """
    start, findings = kraft_start(files, from_offset=from_offset)
    yield from findings
    img = _Image()
    for rec in start.records:
        for _ in _apply(img, rec, True):
            pass
    bounded = from_offset is not None or from_time is not None
    end = TimelineEnd("kraft", files.source, start.end_offset - 1, start.end_offset - 1,
                      "snapshot" if start.path is not None and not bounded else ("replay" if bounded else "log"),
                      resolution=BY_RECORD)
    started = False
    last_time = start.time
    if start.path is not None and not bounded:
        yield from _snapshot_events(img, start.end_offset - 1, start.time, start.path)
        started = True
    for rec, leaving in _with_leaving(iter_kraft_records(files, start)):
        if isinstance(rec, Finding):
            end.findings.append(rec)
            yield rec
            continue
        if (to_offset is not None and rec.offset > to_offset) or (to_time is not None and rec.timestamp > to_time):
            break
        if not started and ((from_offset is not None and rec.offset > from_offset)
                            or (from_time is not None and rec.timestamp > from_time)):
            yield from _snapshot_events(img, end.end, last_time, f"the replay to offset {end.end}")
            end.start = end.end
            started = True
        quiet = not started and bounded
        yield from _apply(img, rec, quiet, leaving)
        end.end, last_time = rec.offset, rec.timestamp
    if not started and bounded:
        yield from _snapshot_events(img, end.end, last_time, f"the replay to offset {end.end}")
        end.start = end.end
    yield end
