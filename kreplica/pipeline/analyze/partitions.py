"""``fleet analyze``: per partition, across its replicas, the analyses of the single-partition
commands, run on partition logs rebuilt from the scan's table rows.

The ``replicas``, ``segments``, ``batches``, ``markers`` and ``findings`` rows of a partition
(gathered in the driver or by a Spark job, :mod:`.analyze_run`) become one
:class:`~kreplica.model.log.partition_log.PartitionLog` per replica
(:func:`~kreplica.pipeline.tables.schemas.replica_log_from_rows`), handed to the same ``analysis/``
functions ``epochs``, ``truncate-plan`` and ``diverge`` call, with replicas in broker-id order;
where a follower's truncation loses records, the groups' committed offsets in the partition (the
scan's ``group_offsets`` rows, :func:`read_committed`) give its consumer impact, as
``truncate-plan`` gives it.
Where two replicas' batches differ, ``diverge``'s analysis reads those batches' records from the
segment files the rows name; where that evidence is not readable from the task (remote URIs,
another machine, a changed copy) the ranges are ``batches_differ`` and a note says why.
Each partition yields a :class:`PartitionAnalysis` of those commands' values, which the report
layer turns into the objects they print (passed in as ``render``, so the pipeline never imports
``report/``) and written to the analysis tables (:mod:`.analysis_tables`), from which the
command prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from kreplica.analysis.consumers.impact import ConsumerImpact
from kreplica.analysis.election.recovery_order import recovery_facts, recovery_order
from kreplica.analysis.replication.divergence import Divergence, compare_all
from kreplica.analysis.log.epoch_reconciliation import EpochsVerdict, reconcile_epochs
from kreplica.analysis.log.log_findings import log_findings
from kreplica.formats.findings import Finding
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.analysis.replication.truncation import TruncationPlan, plan_truncations
from kreplica.model.log.partition_log import PartitionLog
from kreplica.model.versions import KafkaVersion, Protocol
from kreplica.pipeline.spark.hadoop_files import LocalFiles, join_uri
from kreplica.pipeline.tables.schemas import replica_log_from_rows

LEADER_FROM_LEADERS_FILE = "leaders file"
LEADER_FROM_CLUSTER_STATE = "cluster state"
LEADER_FROM_EVIDENCE = "evidence: highest (last epoch, log end offset)"


@dataclass(frozen=True, slots=True)
class PartitionFacts:
    """What the control plane says of one partition (from a cluster state or a leaders file)."""

    leader: int | None
    offline: bool | None = None
    under_min_isr: bool | None = None
    isr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class PartitionAnalysis:
    """One partition across its replicas (in broker-id order): each replica's epochs verdict, the
    truncation each follower would do against the leader, every pair's divergence, and the
    committed data at risk."""

    topic: str
    partition: int
    replicas: tuple[str, ...]
    epochs: tuple[EpochsVerdict, ...]
    leader: str | None
    leader_source: str
    plans: tuple[TruncationPlan, ...]
    divergences: tuple[Divergence, ...]
    committed_loss_records: int
    followers_losing_committed: tuple[str, ...]
    facts: PartitionFacts | None
    notes: tuple[str, ...]
    #: the findings of the replicas' segments that bear on the answers
    #: (:func:`~kreplica.analysis.log.log_findings.log_findings`), replica by replica
    log_findings: tuple[Finding, ...] = ()
    #: the broker ids behind ``leader`` and ``followers_losing_committed`` (the tables name brokers by id)
    leader_broker: int | None = None
    brokers_losing_committed: tuple[int, ...] = ()
    #: each group's consumer impact of each truncation that loses records (``truncate-plan``'s)
    consumer_impacts: tuple[ConsumerImpact, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def divergent_pairs(self) -> int:
        return sum(d.differs for d in self.divergences)

    @property
    def divergent(self) -> bool:
        return self.divergent_pairs > 0


def _by_replica(rows: Iterable[Mapping]) -> dict[tuple, list[Mapping]]:
    out: dict[tuple, list[Mapping]] = {}
    for r in rows:
        out.setdefault((r["broker"], r["log_dir"]), []).append(r)
    return out


def _evidence_leader(logs: list[PartitionLog], kafka_version: KafkaVersion) -> PartitionLog:
    """The replica a KIP-966 unclean recovery would elect (the one order, shared with plan-elect)."""
    facts = [recovery_facts(log.broker_id or 0, log, kafka_version=kafka_version) for log in logs]
    return logs[facts.index(recovery_order(facts)[0])]


def analyze_partition(topic: str, partition: int, replicas: Iterable[Mapping], segments: Iterable[Mapping],
                      batches: Iterable[Mapping], markers: Iterable[Mapping], findings: Iterable[Mapping] = (), *,
                      facts: PartitionFacts | None,
                      facts_source: str | None, protocol: Protocol, kafka_version: KafkaVersion,
                      committed: Sequence[CommittedOffset] = ()) -> PartitionAnalysis:
    """Everything ``fleet analyze`` says about one partition, from its rows; ``committed`` are
    the groups' committed offsets in it."""
    name = f"{topic}-{partition}"
    segs, bats, marks, finds = _by_replica(segments), _by_replica(batches), _by_replica(markers), _by_replica(findings)
    notes: list[str] = []
    by_broker: dict[int, list] = {}
    for row in sorted(replicas, key=lambda r: (r["broker"], r["log_dir"])):
        if row["suffix"] is not None:
            notes.append(f"broker-{row['broker']} holds {row['dir']} (-{row['suffix']}): not a live replica, "
                         "left out of the comparison")
            continue
        by_broker.setdefault(row["broker"], []).append(row)
    logs: list[PartitionLog] = []
    for broker, rows in by_broker.items():
        if len(rows) > 1:
            notes.append(f"broker-{broker} holds this partition in {len(rows)} log directories "
                         f"({', '.join(r['log_dir'] for r in rows)}); the first is analysed")
        row = rows[0]
        rk = (row["broker"], row["log_dir"])
        logs.append(replica_log_from_rows(row, segs.get(rk, ()), bats.get(rk, ()), marks.get(rk, ()),
                                          finds.get(rk, ())))
    epochs = tuple(reconcile_epochs(log, kafka_version) for log in logs)

    leader, source = None, LEADER_FROM_EVIDENCE
    if facts is not None and facts.leader is not None and facts.leader >= 0:
        leader = next((log for log in logs if log.broker_id == facts.leader), None)
        source = facts_source or LEADER_FROM_EVIDENCE
        if leader is None:
            notes.append(f"the leader named by the {facts_source}, broker {facts.leader}, has no replica in the "
                         "fleet: the replica with the highest (last epoch, log end offset) is taken instead")
            source = LEADER_FROM_EVIDENCE
    elif facts is not None and facts.leader is not None:
        notes.append(f"the {facts_source} has no leader for {name} (offline): the replica with the highest "
                     "(last epoch, log end offset) is taken, as a KIP-966 recovery would")
    plans: list[TruncationPlan] = []
    if logs:
        if leader is None:
            leader = _evidence_leader(logs, kafka_version)
        followers = [log for log in logs if log is not leader]
        if followers:
            plans = plan_truncations([leader, *followers], protocol=protocol, kafka_version=kafka_version)
    impacts: list[ConsumerImpact] = []
    if plans and committed:
        from kreplica.analysis.consumers.truncation import truncation_impacts

        impacts = truncation_impacts(plans, [leader, *followers], committed, kafka_version=kafka_version)
    divergences = compare_all(logs)
    for d in divergences:
        if d.records_unread is not None:
            notes.append(f"{' and '.join(d.replicas)}: where their batches differ the records could not be read "
                         f"from the evidence ({d.records_unread}); those ranges are batches_differ, not compared")
    lost = 0
    losing = []
    for p in plans:
        if p.committed_loss and p.committed_loss_offsets is not None:
            rng = p.committed_loss_offsets
            lost += sum(b.records_read for b in p.discarded if rng.first <= b.base_offset <= rng.last)
            losing.append(p.follower)
    broker_of = {log.label: log.broker_id for log in logs}
    return PartitionAnalysis(topic, partition, tuple(log.label for log in logs), epochs,
                             leader.label if leader is not None else None, source, tuple(plans), tuple(divergences),
                             lost, tuple(losing), facts, tuple(notes),
                             tuple(f for log in logs for f in log_findings(log)),
                             leader.broker_id if leader is not None else None,
                             tuple(broker_of[label] for label in losing), tuple(impacts))


def facts_from_leaders(document: Mapping) -> dict[tuple[str, int], PartitionFacts]:
    """``{"partitions":[{"topic","partition","leader"}, ...]}`` (Kafka's election JSON plus ``leader``)."""
    out = {}
    for entry in document.get("partitions", ()):
        out[(str(entry["topic"]), int(entry["partition"]))] = PartitionFacts(int(entry["leader"]))
    return out


def facts_from_cluster_state(state) -> dict[tuple[str, int], PartitionFacts]:
    """Leader, ISR and health of every partition of a :class:`~kreplica.model.cluster.ClusterState`.

    The health lists name partitions ``topic-p``, as ``cluster-state`` prints them."""
    offline = set(state.health.offline)
    under = set(state.health.under_min_isr)
    out = {}
    for topic in state.topics:
        for p in topic.partitions:
            name = f"{topic.name}-{p.partition}"
            out[(topic.name, p.partition)] = PartitionFacts(p.leader, name in offline, name in under, tuple(p.isr))
    return out


def partition_row(analysis: PartitionAnalysis) -> tuple:
    """The ``analysis/partitions`` row of one partition (:data:`ANALYSIS_PARTITIONS`' columns):
    what its ``fleet_partition`` object says, with brokers as ids, as every table names them."""
    facts = analysis.facts
    return (analysis.topic, analysis.partition, analysis.leader_broker, analysis.leader_source,
            analysis.committed_loss_records, list(analysis.brokers_losing_committed), analysis.divergent_pairs,
            facts.offline if facts else None, facts.under_min_isr if facts else None)


def run_partitions(groups: Iterator, facts: Mapping, facts_source: str | None, protocol: Protocol,
                   kafka_version: KafkaVersion, render: Callable[[PartitionAnalysis], object],
                   committed: Mapping[tuple[str, int], Sequence[CommittedOffset]] | None = None) -> Iterator[tuple]:
    """Per ``((topic, partition), (replicas, segments, batches, markers,
    findings))`` group, the :func:`partition_row` and ``render`` of its :class:`PartitionAnalysis`
    (``committed``: the groups' committed offsets by partition)."""
    committed = committed or {}
    for (topic, partition), (replicas, segments, batches, markers, findings) in groups:
        analysis = analyze_partition(topic, partition, replicas, segments, batches, markers, findings,
                                     facts=facts.get((topic, partition)), facts_source=facts_source,
                                     protocol=protocol, kafka_version=kafka_version,
                                     committed=committed.get((topic, partition), ()))
        yield partition_row(analysis), render(analysis)


def read_committed(scan_dir: str, spark=None) -> dict[tuple[str, int], tuple[CommittedOffset, ...]]:
    """The groups' committed offsets by partition from the scan's ``group_offsets`` table (none
    when the scan predates it), read on the driver: a row per group and partition (with Arrow,
    or through ``spark`` for a URI)."""
    from kreplica.pipeline.evidence.remote import is_remote
    from kreplica.pipeline.scan.groups import committed_by_partition
    from kreplica.pipeline.tables.schemas import SUCCESS_MARKER

    table = join_uri(scan_dir, "group_offsets")
    if is_remote(scan_dir):
        from kreplica.pipeline.spark.hadoop_files import HadoopFiles

        if not HadoopFiles(spark).is_file(join_uri(table, SUCCESS_MARKER)):
            return {}
        return committed_by_partition(row.asDict(recursive=True) for row in spark.read.parquet(table).collect())
    import pyarrow.parquet as pq

    if not LocalFiles.is_file(join_uri(table, SUCCESS_MARKER)):
        return {}
    return committed_by_partition(pq.read_table(table).to_pylist())


def check_scan_dir(scan_dir: str, files=LocalFiles) -> None:
    """A usage error (exit 2) unless ``scan_dir`` holds the tables ``fleet scan`` writes, each
    marked complete: a scan cut short leaves none that is. ``files`` answers for a URI
    (:class:`~.hadoop_files.HadoopFiles`)."""
    from kreplica.formats.mapped import EvidenceError
    from kreplica.pipeline.tables.schemas import SCAN_TABLES, STAGING_DIR, SUCCESS_MARKER

    missing = [t for t in SCAN_TABLES if not files.is_dir(join_uri(scan_dir, t))]
    if missing and files.is_dir(join_uri(scan_dir, STAGING_DIR)):
        raise EvidenceError(f"holds a fleet scan that did not finish (no {missing[0]} table yet): scan again into "
                            "an empty directory", path=scan_dir)
    if missing:
        raise EvidenceError(f"is not the output of kreplica fleet scan (no {', '.join(missing)} table)", path=scan_dir)
    for table in SCAN_TABLES:
        if not files.is_file(join_uri(scan_dir, table, SUCCESS_MARKER)):
            raise EvidenceError(f"the {table} table is incomplete (no {SUCCESS_MARKER}: the fleet scan that wrote "
                                "it did not finish): scan again into an empty directory",
                                path=join_uri(scan_dir, table))


#: ``DIR/analysis/partitions``: one row per partition, its ``fleet_partition`` object's answers
ANALYSIS_PARTITIONS = (("topic", "string"), ("partition", "int"), ("leader_broker", "int"),
                       ("leader_source", "string"), ("committed_loss_records", "bigint"),
                       ("brokers_losing_committed", "array<int>"), ("divergent_pairs", "bigint"),
                       ("offline", "boolean"), ("under_min_isr", "boolean"))
#: ``DIR/analysis/objects``: every object ``fleet analyze`` prints, as JSON, by partition
ANALYSIS_OBJECTS = (("topic", "string"), ("partition", "int"), ("type", "string"), ("object", "string"))
