"""The timeline of a KRaft cluster: the metadata log's partition, broker and controller records,
offset by offset.

Sources: ``../shared/specs/kafka-algorithms.md`` §4.6 (``PartitionChangeBuilder``) and §5.5 (KRaft
reassignment); Kafka ``ClusterDelta``. Partition records are applied by
:func:`~kreplica.model.cluster.partition_change.merge_partition_change`
(``PartitionRegistration.merge``: a change record naming a leader, even the same one or -1, bumps
the leader epoch; the partition epoch always moves), so each partition's registration is whole,
eligible leader replicas included. The timeline is a fold of the one cluster image
(:mod:`~kreplica.model.cluster.kraft_image`, what ``cluster-state`` replays): each record is
applied to it and the difference it reports (a partition before and after, a broker's
registration, the controller) is classified. The records come from
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

Offsets missing from the copy (``kraft_offset_gap``) are bridged by the snapshots the copy holds
beyond them: each later snapshot the history reaches while records are missing replaces the
image (as ``cluster-state --at`` starts from the newest snapshot at or before its point), and
what differs between the two images is reported at the snapshot's last offset, the cause
``unknown`` for a partition (the records that say why are missing), a broker ``registered``,
``fenced``, ``unfenced`` or ``unregistered``, a partition ``created`` or ``deleted``
(:func:`_bridge`).

A ``ConfigRecord`` that changes a topic's, a broker's or the cluster default's config is a
:class:`~kreplica.analysis.timeline.events.ConfigEvent` (one setting the value already held, or
deleting a key not set, is none; one in an aborted metadata transaction is never applied). Its
``writer`` is the Raft leader of the record's batch epoch, from the ``LeaderChange`` control
record that began the epoch: KRaft records carry no principal, so who changed a config is told
only down to the active controller that wrote it (the admin client's request went through it).
Config changes in a snapshot are its state, not events; a gap bridged by a snapshot reports none.

``position`` is the record's offset in ``__cluster_metadata-0``; for the ``snapshot`` events, the
last offset the snapshot holds, and its ``last_contained_log_timestamp`` as the time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kreplica.analysis.timeline.events import (
    BY_CONTROLLER,
    BY_RECORD,
    CREATED,
    DELETED,
    SNAPSHOT,
    UNKNOWN,
    BrokerEvent,
    ChangeContext,
    ConfigEvent,
    ControllerEvent,
    LeaderIsr,
    PartitionEvent,
    TimelineEnd,
    classify,
    is_offline,
)
from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import PartitionState
from kreplica.model.cluster.kraft_files import KraftFiles
from kreplica.model.cluster.kraft_history import KraftStart, iter_kraft_records, kraft_start, load_snapshot
from kreplica.model.cluster.kraft_image import BrokerDelta, ConfigDelta, KraftImage, PartitionDelta


class ImageFold:
    """The cluster image (:class:`~kreplica.model.cluster.kraft_image.KraftImage`) folded record
    by record, and what the causes need beside it: the offset of each partition's last event and
    when each broker went."""

    def __init__(self) -> None:
        self.image = KraftImage()
        self.changed_at: dict[tuple[str, int], int] = {}       # (name, p) -> offset of its last event
        self.gone_at: dict[int, int] = {}
        self.reported = 0                                       # image findings already yielded
        self.leaders: dict[int, int | None] = {}                # Raft epoch -> its leader (LeaderChange)

    def alive(self) -> frozenset[int]:
        return self.image.alive()

    def shutting_down(self) -> frozenset[int]:
        return frozenset(b for b, r in self.image.brokers.items() if r.in_controlled_shutdown)

    def new_findings(self) -> list[Finding]:
        found = self.image.findings
        if len(found) == self.reported:
            return []
        out, self.reported = found[self.reported:], len(found)
        return out


_NOBODY: frozenset[int] = frozenset()


def _state(p: PartitionState) -> LeaderIsr:
    return LeaderIsr(p.leader, p.leader_epoch, p.isr, p.leader_recovery_state, p.version)


def apply_record(fold: ImageFold, r, quiet: bool, leaving: frozenset[int] = _NOBODY) -> Iterator:
    """Apply one record to the image and classify what changed; yield its events unless
    ``quiet`` (records before the history's start), then the findings the image raised.
    ``leaving``: for a change record, the brokers a record after it in its batch fences or
    unregisters (see the module docstring)."""
    for delta in fold.image.apply(r):
        if isinstance(delta, PartitionDelta):
            event = _partition(fold, r, delta, leaving)
        elif isinstance(delta, BrokerDelta):
            if delta.change in ("fenced", "unregistered"):
                fold.gone_at[delta.broker] = r.offset
            event = BrokerEvent(delta.broker, delta.change, r.offset, r.timestamp, delta.epoch)
        elif isinstance(delta, ConfigDelta):
            # the record carries no principal: who wrote it is the controller that led its batch's epoch
            event = ConfigEvent(delta.resource, delta.entity, delta.key, delta.before, delta.after, r.offset,
                                r.timestamp, r.epoch, fold.leaders.get(r.epoch))
        else:
            fold.leaders[delta.epoch] = delta.controller
            event = ControllerEvent("elected" if delta.controller is not None else "none", r.offset, r.timestamp,
                                    delta.controller, delta.epoch)
        if event is not None and not quiet:
            yield event
    yield from fold.new_findings()


def _partition(fold: ImageFold, r, delta: PartitionDelta, leaving: frozenset[int]) -> PartitionEvent | None:
    key = (delta.topic, delta.partition)
    at, time = r.offset, r.timestamp
    if delta.after is None:             # RemoveTopicRecord
        fold.changed_at.pop(key, None)
        return PartitionEvent(key[0], key[1], at, time, None, _state(delta.before), None, DELETED, BY_CONTROLLER,
                              "RemoveTopicRecord", delta.before.replicas)
    if delta.change is None:            # PartitionRecord
        fold.changed_at[key] = at
        after = _state(delta.after)
        return PartitionEvent(key[0], key[1], at, time, None, None, after,
                              CREATED if delta.before is None else SNAPSHOT, BY_CONTROLLER,
                              f"PartitionRecord: leader {after.leader}, ISR {list(after.isr)}",
                              delta.after.replicas, is_offline(after, fold.alive()))
    return _change(fold, r, delta, leaving)


def _change(fold: ImageFold, r, delta: PartitionDelta, leaving: frozenset[int]) -> PartitionEvent | None:
    """A ``PartitionChangeRecord`` merged into its partition: an event when leader, leader epoch
    or ISR changed (the ELR fields are carried through the registration, not reported). Brokers
    in ``leaving`` and in the partition's ISR are taken as gone already."""
    p, key = delta.before, (delta.topic, delta.partition)
    before = _state(p)
    alive = fold.alive().difference(b for b in leaving if b in p.isr)
    ctx = ChangeContext(
        alive=alive, shutting_down=fold.shutting_down(),
        gone_since=frozenset(b for b, z in fold.gone_at.items() if z > fold.changed_at[key]),
        replicas=p.replicas, adding=p.adding_replicas, removing=p.removing_replicas,
        replicas_changed=delta.change.moves_replicas, epoch_tells_writer=False, shutdown_known=True)
    after = _state(delta.after)
    cause = classify(before, after, ctx)
    if cause is None:
        return None
    fold.changed_at[key] = r.offset
    return PartitionEvent(delta.topic, delta.partition, r.offset, r.timestamp, None, before, after, cause.cause,
                          cause.by, cause.evidence, delta.after.replicas, is_offline(after, alive))


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


def _with_leaving(items: Iterator) -> Iterator:
    """Each ``(record read, applied)`` of :func:`~kreplica.model.cluster.kraft_history.iter_kraft_records`
    (or finding), with each applied record paired with the brokers fenced or unregistered after
    its run of change records in the batch read: a batch is held until it ends, then read backwards."""
    batch: list = []
    for x in items:
        where = None if isinstance(x, Finding) else (x[0].path, x[0].batch_position)
        if batch and where != (batch[0][0].path, batch[0][0].batch_position):
            yield from _batch_with_leaving(batch)
            batch = []
        if where is None:
            yield x
        else:
            batch.append(x)
    yield from _batch_with_leaving(batch)


def _batch_with_leaving(batch: list) -> list[tuple]:
    """``batch``'s records in order, each applied change record with the broker whose fencing or
    unregistration ends its run of change records (the next applied record that is not one)."""
    out, run = [], _NOBODY
    for read, applied in reversed(batch):
        if applied is None:
            out.append((read, None))
            continue
        paired = []
        for r in reversed(applied):
            if isinstance(r, kraft.MetadataRecord) and r.name == "PartitionChangeRecord":
                paired.append((r, run))
            else:
                broker = _leaving_broker(r)
                run = _NOBODY if broker is None else frozenset((broker,))
                paired.append((r, _NOBODY))
        paired.reverse()
        out.append((read, paired))
    out.reverse()
    return out


def _snapshot_events(fold: ImageFold, position: int, time: int | None, label: str) -> list:
    img = fold.image
    alive = img.alive()
    out: list = [BrokerEvent(b, SNAPSHOT, position, time, r.broker_epoch) for b, r in sorted(img.brokers.items())]
    if img.controller is not None:
        out.append(ControllerEvent(SNAPSHOT, position, time, img.controller, img.controller_epoch))
    for topic, t in sorted(img.topics.items()):
        for pid, p in sorted(t.partitions.items()):
            state = _state(p)
            out.append(PartitionEvent(topic, pid, position, time, None, None, state, SNAPSHOT, None,
                                      f"as {label} holds it", p.replicas, is_offline(state, alive)))
    return out


def _bridge(fold: ImageFold, snap: KraftStart, missing: tuple[int, int]) -> tuple[ImageFold, list]:
    """The fold replaced by the image of ``snap``, a snapshot past offsets ``missing`` (first,
    last) of the copy, and the events of what differs between the two, at the snapshot's last
    offset and time; then the findings of its records."""
    new = ImageFold()
    new.leaders.update(fold.leaders)
    refused = [x for rec in snap.records for x in apply_record(new, rec, True)]
    at, time = snap.end_offset - 1, snap.time
    held = f"as {snap.path.rsplit('/', 1)[-1]} holds it (offsets {missing[0]}..{missing[1]} are missing from the copy)"
    events: list = []
    old, img = fold.image, new.image
    for b in sorted(old.brokers.keys() | img.brokers.keys()):
        was, now = old.brokers.get(b), img.brokers.get(b)
        if now is None:
            change, epoch = "unregistered", was.broker_epoch
            new.gone_at[b] = at
        elif was is None or was.broker_epoch != now.broker_epoch:
            change, epoch = ("fenced" if now.fenced else "registered"), now.broker_epoch
        elif was.fenced != now.fenced:
            change, epoch = ("fenced" if now.fenced else "unfenced"), now.broker_epoch
        else:
            continue
        if change == "fenced":
            new.gone_at[b] = at
        events.append(BrokerEvent(b, change, at, time, epoch))
    for b, gone in fold.gone_at.items():
        new.gone_at.setdefault(b, gone)
    if (old.controller, old.controller_epoch) != (img.controller, img.controller_epoch) and \
            img.controller_epoch is not None:
        events.append(ControllerEvent("elected" if img.controller is not None else "none", at, time,
                                      img.controller, img.controller_epoch))
    alive = new.alive()
    for topic in sorted(old.topics.keys() | img.topics.keys()):
        was_t, now_t = old.topics.get(topic), img.topics.get(topic)
        was_ps = was_t.partitions if was_t is not None else {}
        now_ps = now_t.partitions if now_t is not None else {}
        for pid in sorted(was_ps.keys() | now_ps.keys()):
            was, now = was_ps.get(pid), now_ps.get(pid)
            key = (topic, pid)
            if now is None:
                events.append(PartitionEvent(topic, pid, at, time, None, _state(was), None, DELETED, None, held,
                                             was.replicas))
                continue
            new.changed_at[key] = fold.changed_at.get(key, at)
            before, after = (_state(was) if was is not None else None), _state(now)
            if was is not None and before == after and was.replicas == now.replicas:
                continue
            new.changed_at[key] = at
            events.append(PartitionEvent(topic, pid, at, time, None, before, after,
                                         CREATED if was is None else UNKNOWN, None, held, now.replicas,
                                         is_offline(after, alive)))
    return new, events + refused


def iter_kraft_timeline(files: KraftFiles, *, from_offset: int | None = None, from_time: int | None = None,
                        to_offset: int | None = None, to_time: int | None = None,
                        watch: Callable[[int, KraftImage], None] | None = None,
                        ) -> Iterator[PartitionEvent | BrokerEvent | ControllerEvent | Finding | TimelineEnd]:
    """Every partition, broker and controller event of a KRaft metadata log in offset order, then one
    :class:`TimelineEnd`.

    The history starts at the beginning of the log when it holds offset 0, else at a snapshot
    (the newest ending at or before ``from_offset``, else the oldest); a snapshot's contents (or,
    with ``from_offset``/``from_time``, the state at that point) become ``snapshot`` events.
    Records of the log are then walked to the end or to ``to_offset``/``to_time`` (inclusive):
    a metadata transaction's records count as read at its End, where the image takes them.
    Records the image refuses or flags are findings in the stream, until a ``kraft_offset_gap``:
    past offsets missing from the copy, a record that names what the gap held cannot apply, and
    the gap's finding already says why; a later snapshot reached then bridges the gap
    (:func:`_bridge`, the module docstring). ``watch``, when given, is called with the offset
    reached and the image there: at the start, then after each record (and each snapshot bridged).
    """
    start, findings = kraft_start(files, from_offset=from_offset)
    yield from findings
    fold = ImageFold()
    refused = [x for rec in start.records for x in apply_record(fold, rec, True)]
    yield from refused
    bounded = from_offset is not None or from_time is not None
    end = TimelineEnd("kraft", files.source, start.end_offset - 1, start.end_offset - 1,
                      "snapshot" if start.path is not None and not bounded else ("replay" if bounded else "log"),
                      resolution=BY_RECORD)
    end.findings.extend(refused)
    if watch is not None:
        watch(start.end_offset - 1, fold.image)
    started = False
    last_time = start.time
    if start.path is not None and not bounded:
        yield from _snapshot_events(fold, start.end_offset - 1, start.time, start.path)
        started = True
    # the offsets of the last gap while no snapshot has bridged it: records fail for want of what it held
    missing: tuple[int, int] | None = None
    # one snapshot per end offset, the highest epoch's (the one cluster-state --at would start from)
    bridges = sorted({e: path for e, _epoch, path in sorted(files.snapshots) if e > start.end_offset}.items())
    held_below = start.end_offset   # the records below are in the snapshot the image is

    def window_start() -> Iterator:
        """Once, where ``--from`` is passed: the state reached so far as ``snapshot`` events."""
        nonlocal started
        if not started:
            yield from _snapshot_events(fold, end.end, last_time, f"the replay to offset {end.end}")
            end.start = end.end
            started = True

    def bridge(upto: int) -> Iterator:
        """Replace the image by each complete snapshot whose last offset is at most ``upto``."""
        nonlocal fold, missing, held_below, last_time
        while bridges and bridges[0][0] - 1 <= upto:
            e, path = bridges.pop(0)
            if (to_offset is not None and e - 1 > to_offset) or missing is None:
                continue
            snap, found = load_snapshot(path)
            yield from found
            end.findings.extend(found)
            if snap is None or (to_time is not None and snap.time is not None and snap.time > to_time):
                continue
            if bounded and ((from_offset is not None and e - 1 > from_offset)
                            or (from_time is not None and snap.time is not None and snap.time > from_time)):
                yield from window_start()
            fold, events = _bridge(fold, snap, missing)
            held_below = e
            if e >= missing[1] + 1:
                missing = None
            for x in events:
                if isinstance(x, Finding):
                    end.findings.append(x)
                    yield x
                elif started or not bounded:
                    yield x
            end.end = e - 1
            last_time = snap.time if snap.time is not None else last_time
            if watch is not None:
                watch(e - 1, fold.image)

    for item in _with_leaving(iter_kraft_records(files, start)):
        if isinstance(item, Finding):
            end.findings.append(item)
            yield item
            if item.kind == "kraft_offset_gap":
                missing = (item.details["expected"], item.details["actual"] - 1)
                bridges = [b for b in bridges if b[0] > missing[0]]
                yield from bridge(missing[1])
            continue
        read, applied = item
        if applied is None:
            continue
        if (to_offset is not None and read.offset > to_offset) or (to_time is not None and read.timestamp > to_time):
            break
        if missing is not None and bridges:
            yield from bridge(read.offset)
        if read.offset < held_below:
            continue
        if (from_offset is not None and read.offset > from_offset) or (from_time is not None
                                                                         and read.timestamp > from_time):
            yield from window_start()
        quiet = not started and bounded
        for rec, leaving in applied:
            for x in apply_record(fold, rec, quiet, leaving):
                if isinstance(x, Finding):
                    if missing is not None:
                        continue
                    end.findings.append(x)
                yield x
        end.end, last_time = read.offset, read.timestamp
        if watch is not None:
            watch(read.offset, fold.image)
    if bounded:
        yield from window_start()
    yield end
