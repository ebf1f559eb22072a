"""A KRaft metadata record applied to the cluster image, as a broker's metadata loader applies it;
and the metadata transactions it applies together.

Sources: Kafka ``metadata/src/main/java/org/apache/kafka/image/MetadataDelta.java`` and the
deltas it hands each record to (``ClusterDelta``, ``TopicsDelta``/``TopicDelta``,
``ConfigurationsDelta``, ``FeaturesDelta``, ``AclsDelta``, ``ClientQuotasDelta``/``ClientQuotaDelta``,
``ScramDelta``, ``DelegationTokenDelta``, ``ProducerIdsDelta``), ``image/loader/MetadataBatchLoader.java``
(transactions), ``metadata/PartitionRegistration.java`` (``merge``, in
:mod:`~kreplica.model.cluster.partition_change`), and for what a controller would have refused
``controller/ClusterControlManager.java`` (``replay``). ``cluster-state`` and ``plan-elect`` apply
every record up to a point; the timeline applies the same records one by one and classifies
the :class:`BrokerDelta`, :class:`PartitionDelta`, :class:`ControllerDelta` and
:class:`ConfigDelta` each returns.

What a delta refuses (``ClusterDelta.getBrokerOrThrow`` throws, and ``MetadataBatchLoader``
hands the fault to its handler and goes on without the record) is a ``kraft_invalid_record``
finding on the image and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kreplica.formats.findings import Finding
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster.image import ClusterImage, TopicImage
from kreplica.model.cluster.partition_change import PartitionChange, merge_partition_change, partition_from_record
from kreplica.model.cluster.state import (
    DEFAULT_BROKER_ENTITY,
    Acl,
    Broker,
    ClusterState,
    ControllerRegistration,
    DelegationToken,
    PartitionState,
    Pending,
    ProducerIds,
)


@dataclass(frozen=True, slots=True)
class BrokerDelta:
    """A broker's registration changed: ``change`` is ``registered``, ``unregistered``,
    ``fenced``, ``unfenced`` or ``controlled_shutdown``; ``epoch`` the record's broker epoch. A
    record that leaves the registration as it was (a fenced broker fenced again, a broker in
    controlled shutdown marked again) makes none."""

    broker: int
    change: str
    epoch: int


@dataclass(frozen=True, slots=True)
class PartitionDelta:
    """A partition's registration before and after a record (``None``: absent). ``change`` is
    the ``PartitionChangeRecord``'s, ``None`` for a ``PartitionRecord`` or a removed topic."""

    topic: str
    partition: int
    before: PartitionState | None
    after: PartitionState | None
    change: PartitionChange | None = None


@dataclass(frozen=True, slots=True)
class ControllerDelta:
    """A ``LeaderChange`` control record: the Raft leader (the active controller; ``None`` for
    none) of ``epoch``."""

    controller: int | None
    epoch: int


@dataclass(frozen=True, slots=True)
class ConfigDelta:
    """A ``ConfigRecord`` that changed a topic's or broker's config: ``resource`` is ``topic`` or
    ``broker``, ``entity`` the topic or broker (:data:`~kreplica.model.cluster.state.DEFAULT_BROKER_ENTITY`
    for the cluster-wide default), ``before``/``after`` the value (``None``: not set). A record
    that leaves the value as it was (the same value again, or deleting a key not set) makes none."""

    resource: str
    entity: str
    key: str
    before: str | None
    after: str | None


Delta = BrokerDelta | PartitionDelta | ControllerDelta | ConfigDelta
_NONE: tuple = ()
#: ``MetadataVersion.FEATURE_NAME``: the one feature a level of 0 does not remove
METADATA_VERSION = "metadata.version"


class KraftImage(ClusterImage):
    """The cluster image a KRaft metadata log replays to; :meth:`apply` takes one record."""

    __slots__ = ("topic_names",)

    def __init__(self) -> None:
        super().__init__("kraft")
        self.topic_names: dict[str, str] = {}          # topic id -> name

    def apply(self, r) -> tuple[Delta, ...]:
        """Apply one metadata record (or ``LeaderChange`` control record); what changed."""
        if isinstance(r, kraft.ControlRecord):
            if r.control_type != kraft.LEADER_CHANGE:
                return _NONE
            leader = r.data.get("leader_id")
            self.controller = leader if leader is not None and leader >= 0 else None
            self.controller_epoch = r.epoch
            return (ControllerDelta(self.controller, r.epoch),)
        handler = _HANDLERS.get(r.name)
        return handler(self, r, r.data) if handler is not None else _NONE

    # -- ClusterDelta ----------------------------------------------------------------------------
    def _register(self, r, d) -> tuple[Delta, ...]:
        """``BrokerRegistration.fromRecord``: the listeners are a map by name (a snapshot writes
        them in that map's order, not the registration's), so they are held sorted by name."""
        self.brokers[d["broker_id"]] = Broker(
            id=d["broker_id"], alive=not d["fenced"], rack=d["rack"],
            endpoints=tuple(f"{e['name']}://{e['host']}:{e['port']}"
                            for e in sorted(d["end_points"], key=lambda e: e["name"])),
            broker_epoch=d["broker_epoch"], fenced=d["fenced"], in_controlled_shutdown=d["in_controlled_shutdown"],
            log_dirs=tuple(d.get("log_dirs") or ()), cordoned_log_dirs=tuple(d.get("cordoned_log_dirs") or ()))
        return (BrokerDelta(d["broker_id"], "registered", d["broker_epoch"]),)

    def _unregister(self, r, d) -> tuple[Delta, ...]:
        """``ClusterDelta.replay(UnregisterBrokerRecord)`` removes the broker whatever the epoch;
        the controller's own replay (``ClusterControlManager.replay``) refuses an unknown broker or
        another epoch, so such a record is flagged, as a warning, and still applied."""
        b = self.brokers.pop(d["broker_id"], None)
        if b is None or b.broker_epoch != d["broker_epoch"]:
            why = "was not registered" if b is None else f"has broker epoch {b.broker_epoch}, not {d['broker_epoch']}"
            self.findings.append(Finding(
                "kraft_invalid_record", r.path, r.batch_position,
                f"UnregisterBrokerRecord at offset {r.offset} unregisters broker {d['broker_id']}, which {why}: "
                "a broker's metadata image applies it, a controller's replay would have refused it",
                severity="warning", details={"offset": r.offset, "broker_id": d["broker_id"]}))
        return (BrokerDelta(d["broker_id"], "unregistered", d["broker_epoch"]),)

    def _fence_record(self, r, d) -> tuple[Delta, ...]:
        fenced = r.name == "FenceBrokerRecord"
        b = self._broker(r, d["id"], d["epoch"], "fence" if fenced else "unfence")
        return self._fence(b, fenced, d["epoch"]) if b is not None else _NONE

    def _change_broker(self, r, d) -> tuple[Delta, ...]:
        """``ClusterDelta.replay(BrokerRegistrationChangeRecord)``: the epoch must be the
        registered one for any of it to apply. Log directories: a list that is not empty replaces
        them (``Optional.ofNullable(record.logDirs()).filter(list -> !list.isEmpty())``); cordoned
        ones (v3+): a list, even an empty one, replaces them, null leaves them."""
        b = self._broker(r, d["broker_id"], d["broker_epoch"], "change")
        if b is None:
            return _NONE
        dirs = {}
        if d.get("log_dirs"):
            dirs["log_dirs"] = tuple(d["log_dirs"])
        if d.get("cordoned_log_dirs") is not None:
            dirs["cordoned_log_dirs"] = tuple(d["cordoned_log_dirs"])
        if dirs:
            b = self.brokers[b.id] = replace(b, **dirs)
        out: tuple[Delta, ...] = ()
        if d["in_controlled_shutdown"] == kraft.IN_CONTROLLED_SHUTDOWN and not b.in_controlled_shutdown:
            b = self.brokers[b.id] = replace(b, in_controlled_shutdown=True)
            out = (BrokerDelta(b.id, "controlled_shutdown", d["broker_epoch"]),)
        if d["fenced"] in (kraft.FENCE, kraft.UNFENCE):
            out += self._fence(b, d["fenced"] == kraft.FENCE, d["broker_epoch"])
        return out

    def _fence(self, b: Broker, fenced: bool, epoch: int) -> tuple[Delta, ...]:
        """A fencing change that leaves the registration as it was (fencing a fenced broker, as the
        controller does when the session of a broker fenced by its controlled shutdown times out)
        is no change: ``BrokerRegistration.cloneWith`` returns the registration itself, and
        ``ClusterControlManager.replay`` logs "Ignoring no-op registration change"."""
        if b.fenced == fenced:
            return _NONE
        self.brokers[b.id] = replace(b, fenced=fenced, alive=not fenced)
        return (BrokerDelta(b.id, "fenced" if fenced else "unfenced", epoch),)

    def _broker(self, r, broker_id: int, epoch: int, action: str) -> Broker | None:
        """``ClusterDelta.getBrokerOrThrow``: the registration, or a finding (Kafka throws) when
        the broker is not registered or the record's epoch is not the registered one."""
        b = self.brokers.get(broker_id)
        if b is not None and b.broker_epoch == epoch:
            return b
        why = "was not registered" if b is None else f"has broker epoch {b.broker_epoch}, not {epoch}"
        self.findings.append(Finding("kraft_invalid_record", r.path, r.batch_position,
                                     f"{r.name} at offset {r.offset} tries to {action} broker {broker_id}, "
                                     f"which {why}; Kafka's metadata loader refuses it",
                                     details={"offset": r.offset, "broker_id": broker_id}))
        return None

    # -- TopicsDelta -----------------------------------------------------------------------------
    def _topic(self, r, d) -> tuple[Delta, ...]:
        self.topic_names[d["topic_id"]] = d["name"]
        self.topics[d["name"]] = TopicImage(d["topic_id"])
        return _NONE

    def _remove_topic(self, r, d) -> tuple[Delta, ...]:
        name = self.topic_names.pop(d["topic_id"], None)
        if name is None:   # TopicsDelta.replay(RemoveTopicRecord) throws: "no such topic found"
            return self._orphan(r)
        t = self.topics.pop(name)
        self.topic_configs.pop(name, None)
        return tuple(PartitionDelta(name, pid, p, None) for pid, p in sorted(t.partitions.items()))

    def _partition(self, r, d) -> tuple[Delta, ...]:
        name = self.topic_names.get(d["topic_id"])
        if name is None:
            return self._orphan(r)
        parts = self.topics[name].partitions
        before = parts.get(d["partition_id"])
        after = parts[d["partition_id"]] = partition_from_record(d)
        return (PartitionDelta(name, d["partition_id"], before, after),)

    def _change_partition(self, r, d) -> tuple[Delta, ...]:
        name = self.topic_names.get(d["topic_id"])
        parts = self.topics[name].partitions if name is not None else None
        before = parts.get(d["partition_id"]) if parts is not None else None
        if before is None:
            return self._orphan(r)
        change = PartitionChange.from_record(d)
        after = parts[d["partition_id"]] = merge_partition_change(before, change)
        return (PartitionDelta(name, d["partition_id"], before, after, change),)

    def _clear_elr(self, r, d) -> tuple[Delta, ...]:
        """``TopicsDelta.replay(ClearElrRecord)``: every partition of the named topic (of every
        topic, when the name is empty) whose ELR or last known ELR is not empty gets both emptied,
        as a merged PartitionChangeRecord (``removeTopicElrs``: the partition epoch moves on);
        the others are left as they are. A name no topic has: Kafka throws ("no such topic")."""
        if d["topic_name"]:
            if d["topic_name"] not in self.topics:
                return self._orphan(r)
            names = [d["topic_name"]]
        else:
            names = sorted(self.topics)
        clear = PartitionChange(elr=(), last_known_elr=())
        out = []
        for name in names:
            parts = self.topics[name].partitions
            for pid, before in sorted(parts.items()):
                if before.elr or before.last_known_elr:
                    after = parts[pid] = merge_partition_change(before, clear)
                    out.append(PartitionDelta(name, pid, before, after, clear))
        return tuple(out)

    def _orphan(self, r) -> tuple[Delta, ...]:
        self.findings.append(Finding("kraft_invalid_record", r.path, r.batch_position,
                                     f"{r.name} at offset {r.offset} names a topic or partition "
                                     "that does not exist at that point", details={"offset": r.offset}))
        return _NONE

    # -- ConfigurationsDelta, FeaturesDelta ------------------------------------------------------
    def _config(self, r, d) -> tuple[Delta, ...]:
        if d["resource_type"] == kraft.RESOURCE_TOPIC:
            configs, name = self.topic_configs, d["resource_name"]
        elif d["resource_type"] == kraft.RESOURCE_BROKER:
            configs, name = self.broker_configs, d["resource_name"] or DEFAULT_BROKER_ENTITY
        else:
            return _NONE
        held = configs.get(name)
        before = held.get(d["name"]) if held is not None else None
        if before == d["value"]:      # ConfigurationDelta.replay stores it; the image is as it was
            return _NONE
        if d["value"] is None:
            held.pop(d["name"])
            if not held and configs is self.broker_configs:   # an entity without configs is not listed
                del configs[name]
        else:
            configs.setdefault(name, {})[d["name"]] = d["value"]
        resource = "topic" if d["resource_type"] == kraft.RESOURCE_TOPIC else "broker"
        return (ConfigDelta(resource, name, d["name"], before, d["value"]),)

    def _feature(self, r, d) -> tuple[Delta, ...]:
        """``FeaturesDelta.replay``: a level of 0 removes a feature, except ``metadata.version``."""
        if d["feature_level"] == 0 and d["name"] != METADATA_VERSION:
            self.features.pop(d["name"], None)
        else:
            self.features[d["name"]] = d["feature_level"]
        return _NONE

    # -- ClusterDelta (controllers), AclsDelta, ClientQuotasDelta, ScramDelta, DelegationTokenDelta,
    # -- ProducerIdsDelta -----------------------------------------------------------------------
    def _register_controller(self, r, d) -> tuple[Delta, ...]:
        """``ClusterDelta.replay(RegisterControllerRecord)``: the registration replaces any
        earlier one of that id; listeners by name (``ControllerRegistration.Builder``)."""
        self.controllers[d["controller_id"]] = ControllerRegistration(
            id=d["controller_id"], incarnation_id=d["incarnation_id"], zk_migration_ready=d["zk_migration_ready"],
            endpoints=tuple(f"{e['name']}://{e['host']}:{e['port']}"
                            for e in sorted(d["end_points"], key=lambda e: e["name"])),
            features={f["name"]: (f["min_supported_version"], f["max_supported_version"])
                      for f in sorted(d["features"], key=lambda f: f["name"])})
        return _NONE

    def _unregister_controller(self, r, d) -> tuple[Delta, ...]:
        """``ClusterDelta.replay(UnregisterControllerRecord)`` (4.1+) removes the registration,
        whether there was one or not."""
        self.controllers.pop(d["controller_id"], None)
        return _NONE

    def _acl(self, r, d) -> tuple[Delta, ...]:
        """``AclsDelta.replay(AccessControlEntryRecord)``: the ACL by its id (``StandardAclWithId.fromRecord``)."""
        self.acls[d["id"]] = Acl(d["id"], d["resource_type"], d["resource_name"], d["pattern_type"],
                                 d["principal"], d["host"], d["operation"], d["permission_type"])
        return _NONE

    def _remove_acl(self, r, d) -> tuple[Delta, ...]:
        """``AclsDelta.replay(RemoveAccessControlEntryRecord)`` throws for an id it does not hold
        ("Failed to find existing ACL with ID"): a ``kraft_invalid_record`` finding, nothing changed."""
        if self.acls.pop(d["id"], None) is None:
            self.findings.append(Finding("kraft_invalid_record", r.path, r.batch_position,
                                         f"RemoveAccessControlEntryRecord at offset {r.offset} removes ACL {d['id']}, "
                                         "which does not exist at that point; Kafka's metadata loader refuses it",
                                         details={"offset": r.offset, "acl_id": d["id"]}))
        return _NONE

    def _client_quota(self, r, d) -> tuple[Delta, ...]:
        """``ClientQuotasDelta.replay``/``ClientQuotaDelta.replay``: the entity is its (type, name)
        pairs as a map (``ClientQuotaImage.dataToEntity``: a type given twice keeps the last);
        ``remove`` deletes the key, and an entity left without quotas is dropped (``apply`` keeps
        only images that are not empty)."""
        entity = tuple(sorted({e["entity_type"]: e["entity_name"] for e in d["entity"]}.items()))
        quotas = self.client_quotas.get(entity)
        if d["remove"]:
            if quotas is not None:
                quotas.pop(d["key"], None)
                if not quotas:
                    del self.client_quotas[entity]
        else:
            self.client_quotas.setdefault(entity, {})[d["key"]] = d["value"]
        return _NONE

    def _scram(self, r, d) -> tuple[Delta, ...]:
        """``ScramDelta.replay(UserScramCredentialRecord)``: the user's credential for the mechanism
        (only its iterations are kept: salt and keys are secrets)."""
        self.scram.setdefault(d["name"], {})[d["mechanism"]] = d["iterations"]
        return _NONE

    def _remove_scram(self, r, d) -> tuple[Delta, ...]:
        """``ScramDelta.replay(RemoveUserScramCredentialRecord)``: the mechanism's credential goes; a
        user left without any is not listed."""
        held = self.scram.get(d["name"])
        if held is not None:
            held.pop(d["mechanism"], None)
            if not held:
                del self.scram[d["name"]]
        return _NONE

    def _token(self, r, d) -> tuple[Delta, ...]:
        """``DelegationTokenDelta.replay(DelegationTokenRecord)``: the token by id, replacing an earlier
        record of it (a renewal moves its expiration)."""
        self.delegation_tokens[d["token_id"]] = DelegationToken(
            d["token_id"], d["owner"], d["requester"], tuple(d["renewers"]), d["issue_timestamp"],
            d["expiration_timestamp"], d["max_timestamp"])
        return _NONE

    def _remove_token(self, r, d) -> tuple[Delta, ...]:
        """``DelegationTokenDelta.replay(RemoveDelegationTokenRecord)``: removed, held or not."""
        self.delegation_tokens.pop(d["token_id"], None)
        return _NONE

    def _producer_ids(self, r, d) -> tuple[Delta, ...]:
        """``ProducerIdsDelta.replay``: the next producer id is the record's (its broker is not
        kept, as ``ProducerIdsImage`` keeps none: a snapshot writes it as -1)."""
        self.producer_ids = ProducerIds(d["next_producer_id"])
        return _NONE

    def state(self, source: str, position: dict[str, int], *, cluster_id: str | None = None,
              findings=()) -> ClusterState:
        """As :meth:`ClusterImage.state`, with the reassignments in progress as pending work:
        each partition with adding or removing replicas, towards its replicas less the removing."""
        self.pending = Pending(reassignments=tuple(
            {"topic": name, "partition": p.partition, "replicas": [x for x in p.replicas if x not in p.removing_replicas]}
            for name, t in sorted(self.topics.items()) for _, p in sorted(t.partitions.items())
            if p.adding_replicas or p.removing_replicas))
        return ClusterImage.state(self, source, position, cluster_id=cluster_id, findings=findings)


_HANDLERS = {
    "RegisterBrokerRecord": KraftImage._register,
    "UnregisterBrokerRecord": KraftImage._unregister,
    "FenceBrokerRecord": KraftImage._fence_record,
    "UnfenceBrokerRecord": KraftImage._fence_record,
    "BrokerRegistrationChangeRecord": KraftImage._change_broker,
    "TopicRecord": KraftImage._topic,
    "RemoveTopicRecord": KraftImage._remove_topic,
    "PartitionRecord": KraftImage._partition,
    "PartitionChangeRecord": KraftImage._change_partition,
    "ClearElrRecord": KraftImage._clear_elr,
    "ConfigRecord": KraftImage._config,
    "FeatureLevelRecord": KraftImage._feature,
    "RegisterControllerRecord": KraftImage._register_controller,
    "UnregisterControllerRecord": KraftImage._unregister_controller,
    "AccessControlEntryRecord": KraftImage._acl,
    "RemoveAccessControlEntryRecord": KraftImage._remove_acl,
    "ClientQuotaRecord": KraftImage._client_quota,
    "UserScramCredentialRecord": KraftImage._scram,
    "RemoveUserScramCredentialRecord": KraftImage._remove_scram,
    "DelegationTokenRecord": KraftImage._token,
    "RemoveDelegationTokenRecord": KraftImage._remove_token,
    "ProducerIdsRecord": KraftImage._producer_ids,
}


class MetadataTransaction:
    """``MetadataBatchLoader``'s transactions: records between ``BeginTransactionRecord`` and
    ``EndTransactionRecord`` are applied together at the End; an ``AbortTransactionRecord``
    drops them, and a transaction still open where the records stop is not applied."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending: list | None = None

    def feed(self, r) -> list | tuple:
        """The records to apply now that ``r`` is read (``r`` itself outside a transaction)."""
        if isinstance(r, kraft.ControlRecord):
            return (r,)
        name = r.name
        if name == "BeginTransactionRecord":
            self.pending = []
        elif name == "EndTransactionRecord":
            done, self.pending = self.pending or [], None
            return done
        elif name == "AbortTransactionRecord":
            self.pending = None
        elif name is not None:
            if self.pending is None:
                return (r,)
            self.pending.append(r)
        return _NONE
