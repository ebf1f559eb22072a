"""What the controller does to one partition while it is reassigned, step by step.

Three controllers (kafka-algorithms spec §5.5), chosen by :func:`controller_for`:

* ``zookeeper-legacy`` (ZooKeeper controller up to 2.3, ``KafkaController.onPartitionReassignment``,
  the 12-step process): AR := OAR ∪ RAR in the topic znode (in Scala set order, unspecified here
  shown sorted), a leader-epoch bump, the new replicas fetch and join the ISR, the reassignment
  election (or an epoch bump), one ISR shrink and epoch bump per old replica, AR := RAR;
* ``zookeeper-kip455`` (ZooKeeper controller 2.4 – 3.9, KIP-455): the topic znode holds
  RS = TRS ++ (ORS − TRS) with ``adding``/``removing``; phase A (epoch bump, new replicas fetch,
  one ISR write per replica that catches up) then phase B (election or epoch bump, one ISR shrink
  and epoch bump per removed replica in the ISR, RS := TRS);
* ``kraft`` (the KRaft controller, ``PartitionChangeBuilder`` and ``PartitionReassignmentReplicas``):
  replicas := T ++ sorted(C − T), adding/removing sorted, one record per change (partition epoch
  + 1 each); each AlterPartition that adds a caught-up replica to the ISR is a record, and the one
  that makes the ISR cover the target completes the reassignment in the same record: removed
  replicas leave, the first target replica in the ISR leads if the leader left, and the leader
  epoch goes up once (the replica set shrank, or the leader changed).

Epochs and versions are given as deltas from the partition's values before the reassignment
(``E`` and ``V`` in the spec's worked example), and as absolute numbers when the source knew them.
Which ISR member catches up first is not knowable offline: replicas join in target order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.model.cluster.assignment import PartitionReplicas
from kreplica.model.cluster import NO_LEADER
from kreplica.model.versions import Feature, KafkaVersion

CONTROLLERS = ("zookeeper-legacy", "zookeeper-kip455", "kraft")


@dataclass(frozen=True, slots=True)
class TransitionRow:
    """The partition after one controller step: the topic znode (or KRaft registration) replica
    lists, the leader, the ISR, and how far the leader epoch and the state version (ZooKeeper's
    partition state znode dataVersion, KRaft's partition epoch) moved since the start."""

    step: str
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    leader: int
    isr: tuple[int, ...]
    leader_epoch_delta: int
    version_delta: int
    note: str


@dataclass(frozen=True, slots=True)
class TransitionTable:
    """The rows for one partition; ``leader_epoch``/``version`` are the starting values when known."""

    topic: str
    partition: int
    controller: str
    leader_epoch: int | None
    version: int | None
    rows: tuple[TransitionRow, ...]


def controller_for(version: KafkaVersion, source_kind: str) -> str:
    """The controller a reassignment runs under: KRaft for KRaft evidence, and for an assignment
    file at a version without ZooKeeper mode; otherwise ZooKeeper's, KIP-455 from 2.4."""
    if source_kind == "kraft" or (source_kind != "zookeeper" and not version.has(Feature.ZOOKEEPER_CONTROLLER)):
        return "kraft"
    return "zookeeper-kip455" if version.has(Feature.KIP_455_REASSIGNMENT) else "zookeeper-legacy"


def transition_table(p: PartitionReplicas, target: Iterable[int], controller: str,
                     live: Iterable[int] | None = None) -> TransitionTable:
    """The controller's steps taking ``p`` from its replicas to ``target`` (every broker in
    ``live`` alive; all when ``None``). The leader is the source's, else the first replica; the
    ISR the source's, else every replica. A partition already being reassigned starts from that
    reassignment's target (taken as completed, as the plan is)."""
    target = tuple(target)
    live_set = set(live) if live is not None else None
    leader = p.leader if p.leader is not None and p.leader >= 0 else p.replicas[0]
    isr = tuple(p.isr) if p.isr is not None else tuple(p.replicas)
    build = {"zookeeper-legacy": _legacy, "zookeeper-kip455": _kip455, "kraft": _kraft}[controller]
    rows = build(tuple(p.target), target, leader, isr, live_set)
    return TransitionTable(p.topic, p.partition, controller, p.leader_epoch, p.version, tuple(rows))


def _elect(target: tuple[int, ...], isr: Iterable[int], live: set[int] | None) -> int:
    """The reassignment election: the first target replica that is alive and in the ISR, else none."""
    in_isr = set(isr)
    return next((b for b in target if b in in_isr and (live is None or b in live)), NO_LEADER)


def _needs_election(leader: int, target: tuple[int, ...], live: set[int] | None) -> bool:
    return leader not in target or (live is not None and leader not in live)


def _elect_or_bump(leader: int, target: tuple[int, ...], isr, live: set[int] | None, prefix: str, target_name: str,
                   member: str) -> tuple[int, str]:
    """The ZooKeeper controller once the target is in sync: a reassignment election when the
    leader is not in the target (or dead), else an epoch bump of the same leader."""
    if _needs_election(leader, target, live):
        return (_elect(target, isr, live), f"{prefix}the leader is not in {target_name}: reassignment election "
                                           f"picks the first {member} in the ISR")
    return leader, f"{prefix}the leader stays; its epoch is bumped"


def _kip455(ors, trs, leader, isr, live):
    rows = [TransitionRow("initial", ors, (), (), leader, isr, 0, 0, "before the reassignment")]
    rs = trs + tuple(b for b in ors if b not in trs)
    ar = tuple(b for b in rs if b not in ors)
    rr = tuple(b for b in rs if b not in trs)
    e = v = 0
    rows.append(TransitionRow("U1", rs, ar, rr, leader, isr, e, v,
                              "topic znode: RS = target then the other originals, adding and removing written"))
    isr = list(isr)
    if not set(trs) <= set(isr):
        e, v = e + 1, v + 1
        rows.append(TransitionRow("A1-A2", rs, ar, rr, leader, tuple(isr), e, v,
                                  f"leader epoch bumped; LeaderAndIsr to {_ids(ors + ar)}; {_ids(ar)} start fetching"))
        joined = [b for b in trs if b not in isr]
        isr += joined
        v += len(joined)
        rows.append(TransitionRow("catch-up", rs, ar, rr, leader, tuple(isr), e, v,
                                  f"the leader adds {_ids(joined)} to the ISR, one write per replica"))
    leader, note = _elect_or_bump(leader, trs, isr, live, "B3: ", "the target", "target replica")
    e, v = e + 1, v + 1
    rows.append(TransitionRow("B3", rs, ar, rr, leader, tuple(isr), e, v, note))
    gone = [b for b in rr if b in isr]
    if gone:
        isr = [b for b in isr if b not in gone]
        e, v = e + len(gone), v + len(gone)
        rows.append(TransitionRow("B4", rs, ar, rr, leader, tuple(isr), e, v,
                                  f"removed replicas {_ids(gone)} go offline one by one: an ISR shrink and epoch bump each"))
    rows.append(TransitionRow("B6", trs, (), (), leader, tuple(isr), e, v,
                              "topic znode: RS = target, adding and removing cleared"))
    return rows


def _legacy(oar, rar, leader, isr, live):
    rows = [TransitionRow("initial", oar, (), (), leader, isr, 0, 0, "before the reassignment")]
    ar = tuple(sorted(set(oar) | set(rar)))
    e = v = 0
    isr = list(isr)
    if not set(rar) <= set(isr):
        rows.append(TransitionRow("1", ar, (), (), leader, tuple(isr), e, v,
                                  "topic znode: AR = OAR + RAR (Scala set order, unspecified; shown sorted)"))
        e, v = e + 1, v + 1
        rows.append(TransitionRow("2", ar, (), (), leader, tuple(isr), e, v,
                                  f"leader epoch bumped; step 3: {_ids(b for b in rar if b not in oar)} start fetching"))
        joined = [b for b in rar if b not in isr]
        isr += joined
        v += len(joined)
        rows.append(TransitionRow("4", ar, (), (), leader, tuple(isr), e, v,
                                  f"{_ids(joined)} join the ISR; the controller waits for all of RAR"))
    else:
        ar = oar
    leader, note = _elect_or_bump(leader, rar, isr, live, "", "RAR", "RAR member")
    e, v = e + 1, v + 1
    rows.append(TransitionRow("7", ar, (), (), leader, tuple(isr), e, v, note))
    gone = [b for b in oar if b not in rar and b in isr]
    if gone:
        isr = [b for b in isr if b not in gone]
        e, v = e + len(gone), v + len(gone)
        rows.append(TransitionRow("8", ar, (), (), leader, tuple(isr), e, v,
                                  f"replicas {_ids(gone)} of OAR - RAR go offline (StopReplica): an ISR shrink and epoch bump each"))
    rows.append(TransitionRow("10", rar, (), (), leader, tuple(isr), e, v,
                              "topic znode: AR = RAR; the partition leaves /admin/reassign_partitions"))
    return rows


def _kraft(current, target, leader, isr, live):
    rows = [TransitionRow("initial", current, (), (), leader, isr, 0, 0, "before the reassignment")]
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    replicas = target + removing
    e, v = 0, 1
    isr = list(isr)

    def complete(step: str, note: str) -> TransitionRow:
        nonlocal leader, isr, e
        new_isr = [b for b in isr if b not in removing]
        new_leader = leader
        if leader in removing or (live is not None and leader not in live):
            new_leader = _elect(target, new_isr, live)
        if removing or new_leader != leader:
            e += 1
        leader, isr = new_leader, new_isr
        return TransitionRow(step, target, (), (), leader, tuple(isr), e, v, note)

    if set(target) <= set(isr):
        rows.append(complete("start", "one PartitionChangeRecord: the ISR already covers the target, so the "
                                      "reassignment completes at once"))
        return rows
    rows.append(TransitionRow("start", replicas, adding, removing, leader, tuple(isr), e, v,
                              "PartitionChangeRecord: replicas = target then sorted removed; adding and removing sorted"))
    joining = [b for b in target if b not in isr]
    for k, b in enumerate(joining):
        isr.append(b)
        v += 1
        if k == len(joining) - 1:
            rows.append(complete("catch-up", f"AlterPartition adds {b} to the ISR; the ISR covers the target, so the "
                                             "same record completes the reassignment"
                                             + (" (the replica set shrank: leader epoch bumped)" if removing else "")))
        else:
            rows.append(TransitionRow("catch-up", replicas, adding, removing, leader, tuple(isr), e, v,
                                      f"AlterPartition adds {b} to the ISR"))
    return rows


def _ids(brokers: Iterable[int]) -> str:
    return ",".join(str(b) for b in brokers) or "none"
