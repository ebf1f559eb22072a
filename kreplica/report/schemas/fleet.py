"""Output of ``fleet scan`` and ``fleet analyze``.

Per partition, ``fleet analyze`` prints the objects the single-partition commands print for the
same replicas — the ``finding`` objects of their segments that bear on the answers (the
log-directory checkpoint findings a single-partition command adds are kept in the scan's
``findings`` table, not joined to each partition), ``epochs`` (with its findings),
``truncation``, ``divergence``, and ``consumer_impact`` (each group with a committed offset in a
partition whose truncation loses records, from the scan's ``group_offsets``, as ``truncate-plan``
prints it) — then one ``fleet_partition`` object; the run ends with a
``fleet_summary``::

    fleet_partition  {type, partition, replicas, leader, leader_source, committed_loss_records,
                      followers_losing_committed, divergent_pairs, offline, under_min_isr, notes}
    fleet_summary    {type, partitions, committed_loss_partitions, committed_loss_records,
                      divergent_partitions, damaged_partitions}

``damaged_partitions`` counts the partitions with an error finding in a replica's log; the
summary is folded from the partitions' objects as they stream (:class:`FleetSummary`, which also
keeps the :data:`TOP` worst ``fleet_partition`` objects the text ranks)::

    fleet_scan       {type, out, replicas, segments, bytes, batches, records, findings, errors}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kreplica.report.output.findings import finding_object
from kreplica.report.schemas.consumer_impact import consumer_impact_object
from kreplica.report.schemas.replication import divergence_object, epochs_object, truncation_object


def partition_objects(analysis, kafka_version) -> tuple[dict, ...]:
    """The objects of one partition, in the order ``epochs``, ``truncate-plan`` and ``diverge``
    print them (the replicas' log findings first, as those commands begin), the consumer impact of
    its truncations, then its ``fleet_partition`` object."""
    out: list[dict] = [finding_object(f) for f in analysis.log_findings]
    for verdict in analysis.epochs:
        out.append(epochs_object(verdict.state, verdict.checkpoint, kafka_version))
        out.extend(finding_object(f) for f in verdict.findings)
    out.extend(truncation_object(p) for p in analysis.plans)
    out.extend(divergence_object(d) for d in analysis.divergences)
    out.extend(consumer_impact_object(i) for i in analysis.consumer_impacts)
    facts = analysis.facts
    out.append({
        "type": "fleet_partition", "partition": analysis.name, "replicas": list(analysis.replicas),
        "leader": analysis.leader, "leader_source": analysis.leader_source,
        "committed_loss_records": analysis.committed_loss_records,
        "followers_losing_committed": list(analysis.followers_losing_committed),
        "divergent_pairs": analysis.divergent_pairs,
        "offline": facts.offline if facts else None, "under_min_isr": facts.under_min_isr if facts else None,
        "notes": list(analysis.notes),
    })
    return tuple(out)


def scan_object(out: str, totals) -> dict:
    return {"type": "fleet_scan", "out": out, "replicas": totals.replicas, "segments": totals.segments,
            "bytes": totals.bytes, "batches": totals.batches, "records": totals.records,
            "findings": totals.findings, "errors": totals.errors}


#: the partitions text output ranks
TOP = 20


def risk_key(row: dict) -> tuple:
    """Worst first: committed records lost, then offline, divergence, under min ISR."""
    return (-row["committed_loss_records"], not row["offline"], -row["divergent_pairs"], not row["under_min_isr"],
            row["partition"])


@dataclass
class FleetSummary:
    """The analysis so far: partitions, those losing committed data (and the records), those with
    divergent replicas, those with an error finding in a replica's log; and the worst
    ``fleet_partition`` rows (at most :data:`TOP` once :meth:`worst` is asked)."""

    partitions: int = 0
    committed_loss_partitions: int = 0
    committed_loss_records: int = 0
    divergent_partitions: int = 0
    damaged_partitions: int = 0
    _worst: list[dict] = field(default_factory=list, repr=False)

    def add(self, objs: tuple[dict, ...]) -> None:
        """One partition's objects: its findings, its answers, its ``fleet_partition``."""
        self.damaged_partitions += any(o["type"] == "finding" and o["severity"] == "error" for o in objs)
        for o in objs:
            if o["type"] != "fleet_partition":
                continue
            self.partitions += 1
            self.committed_loss_partitions += o["committed_loss_records"] > 0
            self.committed_loss_records += o["committed_loss_records"]
            self.divergent_partitions += o["divergent_pairs"] > 0
            if o["committed_loss_records"] or o["divergent_pairs"] or o["offline"] or o["under_min_isr"]:
                self._worst.append(o)
                if len(self._worst) > 4 * TOP:
                    self._worst = sorted(self._worst, key=risk_key)[:TOP]

    def worst(self) -> list[dict]:
        return sorted(self._worst, key=risk_key)[:TOP]

    def summary_object(self) -> dict:
        return {"type": "fleet_summary", "partitions": self.partitions,
                "committed_loss_partitions": self.committed_loss_partitions,
                "committed_loss_records": self.committed_loss_records,
                "divergent_partitions": self.divergent_partitions, "damaged_partitions": self.damaged_partitions}

    @property
    def has_problems(self) -> bool:
        """Committed data at risk, divergence, or damage."""
        return bool(self.committed_loss_partitions or self.divergent_partitions or self.damaged_partitions)
