"""Which replica should lead: every candidate ranked, with the records each choice would cost.

With the replicas' files at hand, each candidate leader of a partition is ranked by KIP-966's
unclean-recovery order (:mod:`~kreplica.analysis.election.recovery_order`) — and for
each candidate the truncation engine (:func:`kreplica.analysis.replication.truncation.plan_truncations`,
the protocol of the emulated version) says what every other replica would discard when it
follows that leader: how many records, which offset ranges, and whether any of it was committed
(below a high watermark a replica recorded).

The best candidate is the one that loses no committed data and the fewest records among those
that could lead (online after the scenario); ties go to the recovery order. The steps name what
an operator runs to make it win: nothing when the controller elects it, a preferred election, or
for an unclean choice the brokers to stop first (Kafka's unclean election takes the first live
replica in assignment order, ZooKeeper's ``offlinePartitionLeaderElection`` and KRaft's
``electAnyLeader`` alike) and ``kafka-leader-election.sh --election-type unclean``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kreplica.analysis.election.common import Election, Key, pname
from kreplica.analysis.election.recovery_order import recovery_facts, recovery_order
from kreplica.analysis.replication.truncation import plan_truncations
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion, protocol_for


@dataclass(frozen=True, slots=True)
class FollowerLoss:
    """What one follower discards when ``leader`` leads."""

    broker: int
    records: int
    ranges: tuple[tuple[int, int], ...]
    committed: bool


@dataclass(frozen=True, slots=True)
class Candidate:
    broker: int
    rank: int                      # 1 = first in the KIP-966 recovery order
    last_epoch: int                # -1: no epoch (pre-v2 message format or empty log)
    log_end_offset: int
    high_watermark: int
    electable: bool                # online after the scenario
    in_isr: bool
    records_lost: int
    committed_loss: bool
    losses: tuple[FollowerLoss, ...]


@dataclass(frozen=True, slots=True)
class LossRanking:
    """The ranking for one partition. ``election_type`` is what ``kafka-leader-election.sh``
    needs for the best candidate (``None``: the controller elects it without help)."""

    key: Key
    candidates: tuple[Candidate, ...]
    best: int | None
    recovery_choice: int | None
    planned_leader: int
    no_evidence: tuple[int, ...]
    election_type: str | None
    steps: tuple[str, ...]
    protocol: str

    @property
    def partition(self) -> str:
        return pname(self.key)


def _steps(e: Election, best: Candidate | None, online: frozenset[int], by: Mapping[int, Candidate]) -> tuple[str | None, tuple[str, ...]]:
    after = e.after
    if best is None:
        return None, ("no replica with evidence can lead: bring one of its brokers back first",)
    x = best.broker
    if x == after.leader:
        return None, (f"none: the controller elects broker {x} itself",)
    if not best.electable:
        return None, (f"broker {x} is not alive: start it first, then run plan-elect again",)
    replicas = list(after.replicas)
    live_isr = [r for r in after.isr if r in online and r in replicas]
    if x in live_isr:
        ahead = [r for r in replicas[:replicas.index(x)] if r in live_isr]
        if not ahead and replicas and replicas[0] == x:
            return "preferred", (f"kafka-leader-election.sh --election-type preferred --path-to-json-file FILE "
                                 f"(broker {x} is the preferred replica and in the ISR)",)
        # a controlled shutdown re-elects only the partitions the departing broker leads
        # (ControlledShutdownPartitionLeaderElectionStrategy), so a live leader behind x stops too
        shut = ahead + [after.leader] if after.leader in live_isr and after.leader not in ahead else ahead
        return None, (f"stop (controlled shutdown) brokers {shut}: the clean election takes the first live ISR "
                      f"member in assignment order {replicas}", f"broker {x} is then elected; restart {shut}")
    stop = sorted({r for r in live_isr} | {r for r in replicas[:replicas.index(x)] if r in online})
    steps = []
    if stop:
        steps.append(f"stop brokers {stop}: an unclean election takes the first live replica in assignment order "
                     f"{replicas}, and only when no ISR member is alive")
    steps.append("kafka-leader-election.sh --bootstrap-server HOST:PORT --election-type unclean "
                 "--path-to-json-file FILE (or set unclean.leader.election.enable=true on the topic)")
    others = [b for b in by if b != x and by[b].electable]
    if stop:
        steps.append(f"restart brokers {stop}: they truncate to broker {x}'s log"
                     + (f" (as do {sorted(set(others) - set(stop))})" if set(others) - set(stop) else ""))
    return "unclean", tuple(steps)


def rank_candidates(election: Election, replicas: Mapping[int, PartitionLog], *, kafka_version: KafkaVersion,
                    online: frozenset[int]) -> LossRanking:
    """Rank the replicas in ``replicas`` (broker → its partition log) as leaders of the
    partition of ``election`` (see the module docstring)."""
    protocol = protocol_for(kafka_version)
    brokers = sorted(replicas)
    facts = {f.broker: f for f in (recovery_facts(b, replicas[b], kafka_version=kafka_version) for b in brokers)}
    order = [f.broker for f in recovery_order(facts.values())]
    after = election.after
    cands: dict[int, Candidate] = {}
    for rank, b in enumerate(order, 1):
        others = [o for o in brokers if o != b]
        # the candidate leads at the epoch the controller elects it at (the scenario's for its own
        # choice, the next one for any other), registered at its log end: a candidate behind a
        # follower's epoch cannot lead as its files are (plan_truncations' elect)
        epoch = after.leader_epoch if b == after.leader and after.leader_epoch > election.before.leader_epoch \
            else election.before.leader_epoch + 1
        plans = plan_truncations([replicas[b], *[replicas[o] for o in others]], protocol=protocol,
                                 kafka_version=kafka_version, leader_epoch=epoch) if others else []
        losses = tuple(FollowerLoss(o, p.discarded_records, tuple((r.first, r.last) for r in p.ranges),
                                    p.committed_loss) for o, p in zip(others, plans))
        f = facts[b]
        cands[b] = Candidate(b, rank, f.last_epoch, f.log_end_offset, f.high_watermark, electable=b in online and b in after.replicas,
                             in_isr=b in after.isr, records_lost=sum(x.records for x in losses),
                             committed_loss=any(x.committed for x in losses), losses=losses)
    pool = [c for c in cands.values() if c.electable] or list(cands.values())
    best = min(pool, key=lambda c: (c.committed_loss, c.records_lost, c.rank)) if pool else None
    etype, steps = _steps(election, best, online, cands)
    return LossRanking(election.key, tuple(cands[b] for b in order), best.broker if best else None,
                       order[0] if order else None, after.leader,
                       tuple(r for r in after.replicas if r not in replicas), etype, steps, protocol.value)


def election_json(rankings: list[LossRanking]) -> dict:
    """``kafka-leader-election.sh --path-to-json-file`` input: the partitions whose best
    candidate needs an election run by hand."""
    return {"partitions": [{"topic": r.key[0], "partition": r.key[1]} for r in rankings if r.election_type]}
