"""Leader election by the ZooKeeper controller of Kafka 0.8 – 1.0 (the selectors).

Sources: ``core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala``
(``OfflinePartitionLeaderSelector``, ``ReassignedPartitionLeaderSelector``,
``PreferredReplicaPartitionLeaderSelector``, ``ControlledShutdownLeaderSelector``) and
``KafkaController.removeReplicaFromIsr`` at the tags 0.8.1.1, 0.8.2.0, 0.10.0.0, 0.10.2.0,
0.11.0.0 and 1.0.0; kafka-algorithms spec §4.5 and the §7 version rows. The event sequences
(broker failure, controlled shutdown, reassignment, preferred election) are those of
:class:`~kreplica.analysis.election.zk.ZkRules`; what differs is chosen by
:class:`~kreplica.model.versions.Feature`:

* 0.8.1: the offline selector takes the head of the live ISR (ISR order) and always allows an
  unclean election; 0.8.2 (KAFKA-1503, KAFKA-1028): assignment order, unclean only when
  ``unclean.leader.election.enable`` (default true until 0.10.2, false from 0.11, KIP-106);
* the controlled-shutdown selector takes the head of (ISR minus shutting-down brokers) with no
  liveness check before 0.10.0, and the first live-or-shutting-down replica in assignment order
  in that ISR from 0.10.0 (KAFKA-3670);
* removing a replica from the ISR keeps the last member only when unclean election is disabled
  for the topic: with it enabled the ISR becomes ``[]`` (the forensic flag of an old controller).

Liveness is ``ControllerContext.liveBrokerIds``: registered and not shutting down.
"""

from __future__ import annotations

from kreplica.analysis.election.common import IsrUpdate, Key, bump
from kreplica.analysis.election.zk import ZkRules
from kreplica.model.cluster import NO_LEADER, PartitionState
from kreplica.model.versions import Feature

_SELECTORS = "PartitionLeaderSelector.scala"


class LegacyRules(ZkRules):
    """The 0.8 – 1.0 ZooKeeper controller (``PartitionLeaderSelector``)."""

    name = "zookeeper-legacy"

    def offline_leader(self, key: Key, p: PartitionState) -> tuple[int | None, tuple[int, ...], bool, str]:
        """``OfflinePartitionLeaderSelector.selectLeader``."""
        v = self.view
        live_assigned = [r for r in p.replicas if v.online(r)]
        live_isr = [r for r in p.isr if v.online(r)]
        if live_isr:
            if v.version.has(Feature.OFFLINE_LEADER_IN_ASSIGNMENT_ORDER):
                leader = next((r for r in live_assigned if r in live_isr), None)
                if leader is None:   # liveReplicasInIsr.head throws: the transition fails, nothing is written
                    return None, p.isr, False, (f"no live ISR member of {list(p.isr)} is an assigned replica of "
                                                f"{list(p.replicas)} (NoSuchElementException)")
                how = f"first replica in assignment order {list(p.replicas)} that is alive and in the ISR"
            else:
                leader = live_isr[0]
                how = f"head of the live ISR {live_isr} (0.8.1: ISR order)"
            return leader, tuple(live_isr), False, how
        configurable = v.version.has(Feature.UNCLEAN_ELECTION_CONFIGURABLE)
        if configurable and not v.unclean_enabled(key[0]):
            return None, p.isr, False, self._no_leader_reason(p, live_assigned)
        if not live_assigned:
            return None, p.isr, False, f"no replica of {list(p.replicas)} is alive (NoReplicaOnlineException)"
        why = "unclean.leader.election.enable allows" if configurable else "0.8.1 always allows"
        return live_assigned[0], (live_assigned[0],), True, (
            f"no ISR member of {list(p.isr)} is alive; {why} the first live replica in assignment order")

    def controlled_shutdown_leader(self, p: PartitionState, shutting: set[int]) -> tuple[int | None, tuple[int, ...]]:
        """``ControlledShutdownLeaderSelector.selectLeader``."""
        new_isr = tuple(r for r in p.isr if r not in shutting)
        if self.view.version.has(Feature.CONTROLLED_SHUTDOWN_IN_ASSIGNMENT_ORDER):
            leader = next((r for r in p.replicas if self.view.live_or_shutting_down(r) and r in new_isr), None)
        else:
            leader = new_isr[0] if new_isr else None
        return leader, new_isr

    def _shutdown_reason(self, p: PartitionState) -> str:
        if self.view.version.has(Feature.CONTROLLED_SHUTDOWN_IN_ASSIGNMENT_ORDER):
            return super()._shutdown_reason(p)
        return "head of the ISR without the brokers shutting down (before 0.10.0: ISR order, no liveness check)"

    def remove_from_isr(self, key: Key, replica: int) -> None:
        """``KafkaController.removeReplicaFromIsr``: an ISR that would become empty is kept only
        when unclean election is disabled for the topic (always emptied in 0.8.1)."""
        v = self.view
        p = v.partitions[key]
        if replica not in p.isr:
            return
        leader = NO_LEADER if p.leader == replica else p.leader
        isr = tuple(r for r in p.isr if r != replica)
        if not isr and v.version.has(Feature.UNCLEAN_ELECTION_CONFIGURABLE) and not v.unclean_enabled(key[0]):
            isr = p.isr
        after = v.write(key, **bump(p, leader=leader, isr=isr))
        v.isr_updates.append(IsrUpdate(key, p, after, f"replica {replica} goes offline (removeReplicaFromIsr)"))

    def _offline_election(self, key: Key) -> tuple[bool, bool, str, str]:
        elected, unclean, reason, rule = super()._offline_election(key)
        if rule.startswith("Election.scala"):
            rule = f"{_SELECTORS} OfflinePartitionLeaderSelector"
        return elected, unclean, reason, rule

    def on_controlled_shutdown(self, broker: int):
        return [self._renamed(e, "ControlledShutdownLeaderSelector") for e in super().on_controlled_shutdown(broker)]

    def on_reassignment_complete(self, keys):
        return [self._renamed(e, "ReassignedPartitionLeaderSelector") for e in super().on_reassignment_complete(keys)]

    def on_preferred(self, keys):
        return [self._renamed(e, "PreferredReplicaPartitionLeaderSelector") for e in super().on_preferred(keys)]

    @staticmethod
    def _renamed(e, selector: str):
        from dataclasses import replace

        return replace(e, rule=f"{_SELECTORS} {selector}")
