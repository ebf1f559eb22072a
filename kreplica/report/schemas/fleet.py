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

``damaged_partitions`` counts the partitions with an error finding in a replica's log.
    fleet_scan       {type, out, replicas, segments, bytes, batches, records, findings, errors}
"""

from __future__ import annotations


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
