"""Kafka's znode payloads in ZooKeeper mode: the JSON (and one decimal) Kafka writes under its chroot.

Kafka ``core/src/main/scala/kafka/zk/ZkData.scala`` (3.x; ZooKeeper mode) defines one object per
znode, each with an ``encode`` and a ``decode``; this module is its ``decode`` side, once, for
every reader of a ZooKeeper tree (``cluster-state``, ``plan-elect``, ``timeline``, the fleet).
Pure: bytes in, frozen values out.

::

    /cluster/id                                  ClusterIdZNode        {"version":"1","id":str}
    /controller                                  ControllerZNode       {"version":1,"brokerid":int,"timestamp":str}
    /controller_epoch                            ControllerEpochZNode  decimal text
    /brokers/ids/<id>                            BrokerIdZNode         {"version":1..5,"host","port",
                                                                        "endpoints":[str],"rack",...}
    /brokers/topics/<t>                          TopicZNode            {"version":2,"partitions":{"p":[int]},
                                                                        "adding_replicas":{..},"removing_replicas":{..},
                                                                        "topic_id":str}
    /brokers/topics/<t>/partitions/<p>/state     TopicPartitionStateZNode
                                                 {"version":1,"leader":int,"leader_epoch":int,"isr":[int],
                                                  "controller_epoch":int[,"leader_recovery_state":int]}
    /config/<type>/<name>                        ConfigEntityZNode     {"version":1,"config":{k:str}}
    /admin/reassign_partitions                   ReassignPartitionsZNode
                                                 {"version":1,"partitions":[{"topic","partition","replicas"}]}
    /admin/preferred_replica_election            PreferredReplicaElectionZNode
                                                 {"version":1,"partitions":[{"topic","partition"}]}
    /isr_change_notification/isr_change_<n>      IsrChangeNotificationSequenceZNode
                                                 {"version":1,"partitions":[{"topic","partition"}]}
    /log_dir_event_notification/log_dir_event_<n> LogDirEventNotificationSequenceZNode
                                                 {"version":1,"broker":int,"event":int}

Bytes that are not JSON (or, for the objects Kafka reads with ``asJsonObject``, JSON that is not
an object) raise :class:`~kreplica.formats.errors.Malformed`: Kafka's ``Json.parseBytes`` gives
``None`` there and its callers treat the znode as holding nothing; the callers here do the
same and record a finding. An absent or empty payload is ``None`` (no value), as
``Json.parseBytes`` of no bytes is. Fields of the wrong type take the value Kafka's writers
never leave out (no leader, undefined epoch, empty lists), so one odd field does not hide the
rest of a forensic record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kreplica.formats.errors import Malformed

try:  # NOTE: a state znode is decoded per transaction of a history; orjson is ~4x faster (bench_timeline.py)
    from orjson import loads as _loads
except ImportError:  # a source checkout without it: same values, slower
    _loads = json.loads

#: ``LeaderAndIsr.NoLeader`` and ``LeaderAndIsr.InitialLeaderEpoch - 1``: what a state without them holds
NO_LEADER = -1
UNDEFINED_EPOCH = -1
#: ``LeaderRecoveryState.RECOVERED`` (KIP-704): absent from a state znode written before Kafka 3.2
RECOVERED = 0


class PartitionStateZnode(NamedTuple):
    """``TopicPartitionStateZNode``: ``LeaderIsrAndControllerEpoch`` (the znode's dataVersion,
    Kafka's ``partitionEpoch``, comes from the stat, not the payload). NOTE: a ``NamedTuple``
    built with ``tuple.__new__``, not a frozen dataclass: a history decodes one per
    transaction of a Kafka cluster (bench/bench_timeline.py), as ``TxnEntry`` is one."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int | None
    leader_recovery_state: int = RECOVERED


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """``ReplicaAssignment``: one partition's replicas and those being added or removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicZnode:
    """``TopicZNode.TopicIdReplicaAssignment``: the topic id (KIP-516, Kafka 2.8+) and the
    assignment by partition number."""

    topic_id: str | None
    partitions: Mapping[int, ReplicaAssignment]


@dataclass(frozen=True, slots=True)
class BrokerZnode:
    """``BrokerIdZNode``: a broker's registration (the broker epoch is the znode's czxid)."""

    version: int | None
    host: str | None
    port: int | None
    endpoints: tuple[str, ...]
    rack: str | None


@dataclass(frozen=True, slots=True)
class PartitionEntry:
    """One ``{"topic","partition"[,"replicas"]}`` item of an ``/admin`` or notification znode."""

    topic: str
    partition: int
    replicas: tuple[int, ...] | None = None

    def as_dict(self) -> dict:
        """The item as Kafka writes it (``replicas`` only where the znode has them)."""
        out: dict = {"topic": self.topic, "partition": self.partition}
        if self.replicas is not None:
            out["replicas"] = list(self.replicas)
        return out


@dataclass(frozen=True, slots=True)
class LogDirEventZnode:
    """``LogDirEventNotificationSequenceZNode``: a broker's log directory failed (event 1)."""

    broker: int | None
    event: int | None
    version: int | None = None


_EMPTY: Mapping[int, ReplicaAssignment] = {}


def parse_json(data: bytes | None, field: str = "znode"):
    """The JSON value of ``data``; ``None`` for no bytes. Raises ``Malformed`` when not JSON."""
    if not data:
        return None
    try:
        return _loads(data)          # bytes: UTF-8 (Kafka writes nothing else)
    except ValueError:
        try:
            return json.loads(bytes(data).decode("utf-8", "replace"))
        except ValueError:
            raise Malformed("not JSON", field=field) from None


def _object(data: bytes | None, field: str) -> dict | None:
    doc = parse_json(data, field)
    if doc is None:
        return None
    if type(doc) is not dict:
        raise Malformed("not a JSON object", field=field, actual=type(doc).__name__)
    return doc


def _int(value, default):
    return value if type(value) is int else default


def _ints(value) -> tuple[int, ...]:
    if type(value) is not list:
        return ()
    if all(type(v) is int for v in value):
        return tuple(value)
    return tuple(v for v in value if type(v) is int)


def _str(value) -> str | None:
    return value if type(value) is str else None


_new = tuple.__new__


def decode_partition_state(data: bytes | None) -> PartitionStateZnode | None:
    """``TopicPartitionStateZNode.decode``; ``None`` when the znode holds no bytes."""
    if not data:
        return None
    try:   # NOTE: inline of _object: the most decoded znode by far (bench/bench_timeline.py)
        s = _loads(data)
    except ValueError:
        s = _object(data, "partition_state")
    if type(s) is not dict:
        raise Malformed("not a JSON object", field="partition_state", actual=type(s).__name__)
    leader, epoch, ce, lrs = s.get("leader"), s.get("leader_epoch"), s.get("controller_epoch"), \
        s.get("leader_recovery_state", RECOVERED)
    return _new(PartitionStateZnode, (leader if type(leader) is int else NO_LEADER,
                                      epoch if type(epoch) is int else UNDEFINED_EPOCH,
                                      _ints(s.get("isr")), ce if type(ce) is int else None,
                                      lrs if type(lrs) is int else RECOVERED))


def _partition_number(key: str) -> int | None:
    """A ``partitions`` key as ``partition.toInt`` reads it (decimal, optionally signed)."""
    return int(key) if key.lstrip("-").isdigit() else None


def decode_topic(data: bytes | None) -> TopicZnode:
    """``TopicZNode.decode``: the assignment of the ``partitions`` map, each with its
    ``adding_replicas``/``removing_replicas`` entry; no bytes: no topic id, no partitions (as
    Kafka's ``getOrElse``)."""
    t = _object(data, "topic_assignment")
    if t is None:
        return TopicZnode(None, _EMPTY)
    parts = t.get("partitions")
    adding = t.get("adding_replicas")
    removing = t.get("removing_replicas")
    adding = adding if type(adding) is dict else {}
    removing = removing if type(removing) is dict else {}
    out = {}
    for key, replicas in (parts.items() if type(parts) is dict else ()):
        pid = _partition_number(str(key))
        if pid is not None:
            out[pid] = ReplicaAssignment(_ints(replicas), _ints(adding.get(key)), _ints(removing.get(key)))
    return TopicZnode(_str(t.get("topic_id")), out)


def decode_controller(data: bytes | None) -> int | None:
    """``ControllerZNode.decode``: the controller's broker id."""
    doc = _object(data, "controller")
    return _int(doc.get("brokerid"), None) if doc is not None else None


def decode_controller_epoch(data: bytes | None) -> int | None:
    """``ControllerEpochZNode.decode`` (``new String(bytes, UTF_8).toInt``: optional sign and
    decimal digits, nothing else); ``None`` for no bytes. Raises ``Malformed`` otherwise."""
    if not data:
        return None
    text = bytes(data).decode("utf-8", "replace")
    if not text.lstrip("+-").isdigit() or not text.isascii():
        raise Malformed("not a decimal integer", field="controller_epoch")
    return int(text)


def decode_cluster_id(data: bytes | None) -> str | None:
    """``ClusterIdZNode.fromJson``: the cluster id."""
    doc = _object(data, "cluster_id")
    return _str(doc.get("id")) if doc is not None else None


def decode_broker(data: bytes | None) -> BrokerZnode | None:
    """``BrokerIdZNode.decode``: version, host, port, endpoints (as written: ``NAME://host:port``)
    and rack."""
    reg = _object(data, "broker_registration")
    if reg is None:
        return None
    endpoints = reg.get("endpoints")
    return BrokerZnode(_int(reg.get("version"), None), _str(reg.get("host")), _int(reg.get("port"), None),
                       tuple(str(e) for e in endpoints) if type(endpoints) is list else (), _str(reg.get("rack")))


def decode_config(data: bytes | None) -> dict[str, str] | None:
    """``ConfigEntityZNode.decode``: the ``config`` object; ``None`` when there is none."""
    doc = _object(data, "config")
    cfg = doc.get("config") if doc is not None else None
    return dict(cfg) if type(cfg) is dict else None


def _entries(data: bytes | None, field: str, with_replicas: bool) -> tuple[PartitionEntry, ...]:
    doc = _object(data, field)
    items = doc.get("partitions") if doc is not None else None
    out = []
    for item in (items if type(items) is list else ()):
        if type(item) is dict and type(item.get("topic")) is str and type(item.get("partition")) is int:
            out.append(PartitionEntry(item["topic"], item["partition"],
                                      _ints(item.get("replicas")) if with_replicas else None))
    return tuple(out)


def decode_reassignment(data: bytes | None) -> tuple[PartitionEntry, ...]:
    """``ReassignPartitionsZNode.decode``: each partition with its target replicas."""
    return _entries(data, "reassign_partitions", True)


def decode_preferred_election(data: bytes | None) -> tuple[PartitionEntry, ...]:
    """``PreferredReplicaElectionZNode.decode``: the partitions whose preferred replica should lead."""
    return _entries(data, "preferred_replica_election", False)


def decode_isr_change(data: bytes | None) -> tuple[PartitionEntry, ...]:
    """``IsrChangeNotificationSequenceZNode.decode``: the partitions whose ISR a leader changed."""
    return _entries(data, "isr_change_notification", False)


def decode_log_dir_event(data: bytes | None) -> LogDirEventZnode | None:
    """``LogDirEventNotificationSequenceZNode.decode``: the broker (and event) of a failed log directory."""
    doc = _object(data, "log_dir_event_notification")
    if doc is None:
        return None
    return LogDirEventZnode(_int(doc.get("broker"), None), _int(doc.get("event"), None),
                            _int(doc.get("version"), None))
