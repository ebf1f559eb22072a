"""Small hand-built cluster states for the election tests: ``cluster(...)`` from tuples."""

from __future__ import annotations

from kreplica.model.cluster import Broker, ClusterState, Controller, PartitionState, Pending, Topic, compute_health


def part(pid: int, replicas, leader: int, isr, *, epoch: int = 5, version: int | None = 7, adding=(), removing=(),
         elr=(), last_known_elr=(), recovery: int = 0) -> PartitionState:
    return PartitionState(partition=pid, replicas=tuple(replicas), adding_replicas=tuple(adding),
                          removing_replicas=tuple(removing), leader=leader, leader_epoch=epoch, isr=tuple(isr),
                          controller_epoch=1, leader_recovery_state=recovery, version=version, elr=tuple(elr),
                          last_known_elr=tuple(last_known_elr))


def cluster(topics: dict, *, alive=(1, 2, 3, 4), dead=(), kind: str = "zookeeper", configs: dict | None = None,
            broker_configs: dict | None = None, racks: dict | None = None, shutting=(), features=None,
            pending: Pending | None = None) -> ClusterState:
    """``topics``: name -> [PartitionState]; ``dead`` brokers are registered (KRaft: fenced) only
    for KRaft — in ZooKeeper a dead broker has no registration znode. Broker 1 is the controller."""
    racks = racks or {}
    brokers = [Broker(id=b, alive=True, rack=racks.get(b), endpoints=(), broker_epoch=b, fenced=False,
                      in_controlled_shutdown=b in shutting) for b in alive]
    if kind == "kraft":
        brokers += [Broker(id=b, alive=False, rack=racks.get(b), endpoints=(), broker_epoch=b, fenced=True)
                    for b in dead]
    ts = tuple(Topic(name, None, dict((configs or {}).get(name, {})), tuple(parts)) for name, parts in topics.items())
    bc = broker_configs or {}
    return ClusterState(kind, "test", {"zxid": 1} if kind == "zookeeper" else {"offset": 1}, None,
                        Controller(1, 1), tuple(brokers), ts, bc, pending or Pending(),
                        compute_health(brokers, ts, bc, controller=1), (), dict(features or {}))
