"""``timeline`` as one call: the events of a ZooKeeper or KRaft history (:func:`iter_timeline`)
selected by partition and broker, summarised as they pass, and, once the walk is over, joined
with the replicas' data (:func:`~kreplica.analysis.timeline.evidence.join_partition`) and with the
consumer groups of each partition an unclean election lost records of
(:func:`~kreplica.analysis.consumers.elections.election_loss_impacts`).

The walk streams (:meth:`TimelineAnalysis.items`): a history of a million transactions is
written as it is read, in flat memory. A partition or broker the selection names is waited for:
nothing is yielded until every name given has appeared in the history (at once, usually: a
history starts with the state of every partition and broker), so that a name the evidence never
mentions is refused with nothing printed, not answered with an empty "OK".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from kreplica.analysis.consumers.elections import election_loss_impacts
from kreplica.analysis.consumers.impact import ConsumerImpact
from kreplica.analysis.timeline.events import PartitionEvent, TimelineEnd, TimelineSummary, involved_brokers, matches
from kreplica.analysis.timeline.evidence import PartitionEvidence, join_partition
from kreplica.formats.findings import Finding
from kreplica.model.cluster import NO_LEADER
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.log.broker_replicas import BrokerPartitions

#: ``(position, time)``: a zxid or metadata offset, and epoch milliseconds (``None``: not given)
Point = tuple[int | None, int | None]


def iter_timeline(kind: str, files, start: Point = (None, None), stop: Point = (None, None), *,
                  chroot: str | None = None) -> Iterator:
    """The event stream of a ZooKeeper (``kind`` ``"zookeeper"``) or KRaft history's ``files``,
    from ``start`` to ``stop``; ``chroot`` is where Kafka's znodes are (ZooKeeper only)."""
    (from_pos, from_time), (to_pos, to_time) = start, stop
    if kind == "zookeeper":
        from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline

        return iter_zookeeper_timeline(files, from_zxid=from_pos, from_time=from_time, to_zxid=to_pos,
                                       to_time=to_time, chroot=chroot)
    from kreplica.analysis.timeline.kraft import iter_kraft_timeline

    return iter_kraft_timeline(files, from_offset=from_pos, from_time=from_time, to_offset=to_pos, to_time=to_time)


def _no_offsets() -> Sequence[CommittedOffset]:
    return ()


def _unknown(what: str, name: object, known: Collection[object]) -> Exception:
    return LookupError(f"no {what} {name!r} in the history")


class TimelineAnalysis:
    """One run over ``walk`` (:func:`iter_timeline`'s events, findings and its ``TimelineEnd``).

    ``partitions`` and ``brokers`` select (``None``: all; :func:`~kreplica.analysis.timeline.
    events.matches`); ``replicas`` are the brokers' partitions to join with; ``committed()`` gives
    the groups' committed offsets, read only when an unclean election lost records; ``unknown(what,
    name, known)`` is the exception for a name never mentioned (``what``: ``"partition"`` or
    ``"broker"``; ``known``: the names the history does mention).

    :meth:`items` is read once; after it, :attr:`summary`, :attr:`findings`, :attr:`end`,
    :attr:`evidence` and :attr:`impacts` hold the whole run.
    """

    def __init__(self, walk: Iterable, *, partitions: frozenset[str] | None = None,
                 brokers: frozenset[int] | None = None, replicas: BrokerPartitions | None = None,
                 committed: Callable[[], Sequence[CommittedOffset]] = _no_offsets,
                 unknown: Callable[[str, object, Collection[object]], Exception] = _unknown) -> None:
        self._walk = walk
        self._partitions = partitions
        self._brokers = brokers
        self._replicas = replicas
        self._committed = committed
        self._unknown = unknown
        self.summary = TimelineSummary()
        self.findings: list[Finding] = []
        self.end: TimelineEnd | None = None
        self.evidence: list[PartitionEvidence] = []
        self.impacts: list[ConsumerImpact] = []

    def items(self) -> Iterator:
        """The findings and the selected events, in the history's order (module docstring)."""
        partitions, brokers = self._partitions, self._brokers
        selecting = partitions is not None or brokers is not None
        feed = self.summary.feed
        findings = self.findings
        # NOTE: the partitions with replicas as a plain mapping, tested once (bench/bench_timeline.py)
        located = self._replicas.located if self._replicas else None
        joined: dict[str, list[PartitionEvent]] = {}
        # the names given and not yet seen, per kind; nothing is yielded while any is missing
        missing = {what: list(names) for what, names in (("partition", partitions or ()), ("broker", brokers or ()))
                   if names}
        seen: dict[str, set] = {what: set() for what in missing}
        held: list | None = [] if missing else None
        for item in self._walk:
            if isinstance(item, Finding):
                findings.append(item)
            elif isinstance(item, TimelineEnd):
                self.end = item
                continue
            else:
                if held is not None:
                    if "partition" in seen and isinstance(item, PartitionEvent):
                        seen["partition"].add(item.name)
                    if "broker" in seen:
                        seen["broker"].update(involved_brokers(item) - {NO_LEADER, None})
                if selecting and not matches(item, partitions, brokers):
                    continue
                feed(item)
                if located is not None:
                    name = getattr(item, "name", None)
                    if name is not None and name in located:
                        joined.setdefault(name, []).append(item)
            if held is None:
                yield item
                continue
            held.append(item)
            if all(all(n in seen[what] for n in names) for what, names in missing.items()):
                yield from held
                held = None
        if held is not None:
            for what, names in missing.items():
                absent = [n for n in names if n not in seen[what]]
                if absent:
                    raise self._unknown(what, absent[0], seen[what])
            yield from held
        self._join(joined)

    def _join(self, joined: dict[str, list[PartitionEvent]]) -> None:
        """Each selected partition with replica data, read once per replica and joined with its
        events; then the consumer impact of what its unclean elections lost."""
        read = {}
        for name in sorted(joined):
            logs = read[name] = self._replicas.read(name)
            pe = join_partition(joined[name], logs)
            if pe is not None:
                self.evidence.append(pe)
        if not any(pe.losses for pe in self.evidence):    # the group evidence is read only when it can matter
            return
        offsets = self._committed()
        if not offsets:
            return
        for pe in self.evidence:
            logs = read.get(f"{pe.topic}-{pe.partition}", {})
            for loss in pe.losses:
                if loss.lost_offsets:
                    self.impacts += election_loss_impacts(
                        (loss.topic, loss.partition), loss.old_leader, loss.new_leader, logs, offsets,
                        leader_epoch=loss.leader_epoch, first_lost_offset=loss.first_lost_offset,
                        end_offset=loss.end_offset, event_time=loss.time)

    @property
    def has_problems(self) -> bool:
        """An unclean election, an offline period, a zombie epoch, data lost, damage found in the
        evidence, or a group known to have consumed lost records."""
        return (self.summary.has_problems or any(f.is_error for f in self.findings)
                or any(pe.has_problems for pe in self.evidence) or any(i.loses_consumed_records for i in self.impacts))
