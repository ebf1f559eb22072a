"""The ``consumer_impact`` object (``truncate-plan``, ``plan-elect --log-dirs``, ``timeline --log-dirs``
with group evidence). Machine object::

    consumer_impact  {type, event, group, topic, partition, committed_offset,
                      committed_leader_epoch, commit_timestamp, expired, coordinator_partition,
                      source, new_leader, new_leader_epoch, log_start_offset, new_log_end,
                      later_log_end, lost: {replica, first_offset, last_offset}, at_risk,
                      committed_after_event, read_from, consumed_and_lost, reused_offsets,
                      reused_seen,
                      behaviours: [{clients_from, clients_before, auto_offset_reset: [str],
                      when, action, cause, exception, resumes_at, records_re_read,
                      records_skipped, records_skipped_up_to,
                      validation: {leader_epoch, end_offset} | null}]}

``clients_from``/``clients_before`` bound the client versions a behaviour holds for (``null``: no
bound); ``auto_offset_reset`` lists the policies it holds under; ``when`` is ``fetches_first`` or
``writes_first`` where the race between the consumer's fetch and new writes past its committed
offset decides (``null`` otherwise). ``action`` is ``continues``, ``seeks_to_divergence``,
``resets``, ``fails`` (with ``exception``) or ``stalls`` (poll raises nothing and returns none of
the partition's records: 2.3 – 2.5 under ``none``, whose validation exception is lost); ``cause`` is ``offset_out_of_range``,
``log_truncation``, ``undefined_end_offset``, ``no_committed_offset`` or ``null``.
``records_skipped_up_to`` is ``null`` where no bound is known (a reset to latest skips what is
written before it). ``read_from`` is ``lost_replica`` or ``new_leader`` (whose record the group read
last), ``null`` when the evidence cannot tell or the group committed at or below the divergence
point; ``consumed_and_lost`` is then the most it can be. Counts are offsets. The text report
(:mod:`kreplica.report.text.consumer_impact`) leads with the groups at risk.
"""

from __future__ import annotations



from kreplica.analysis.consumers.impact import (
    ConsumerImpact,
)
from kreplica.model.versions import KafkaVersion


def _version(v: KafkaVersion | None) -> str | None:
    return None if v is None else str(v)


def consumer_impact_object(i: ConsumerImpact) -> dict:
    c, leader = i.committed, i.leader
    return {
        "type": "consumer_impact", "event": i.event, "group": c.group, "topic": c.topic, "partition": c.partition,
        "committed_offset": c.offset, "committed_leader_epoch": c.leader_epoch, "commit_timestamp": c.commit_timestamp,
        "expired": c.expired, "coordinator_partition": c.coordinator_partition, "source": c.source,
        "new_leader": leader.label, "new_leader_epoch": leader.leader_epoch,
        "log_start_offset": leader.log_start_offset, "new_log_end": leader.log_end_offset,
        "later_log_end": leader.later_log_end,
        "lost": {"replica": i.lost.replica, "first_offset": i.lost.first_offset, "last_offset": i.lost.end_offset - 1},
        "at_risk": i.at_risk, "committed_after_event": i.committed_after_event, "read_from": i.read_from,
        "consumed_and_lost": i.consumed_and_lost, "reused_offsets": i.reused_offsets, "reused_seen": i.reused_seen,
        "behaviours": [{
            "clients_from": _version(b.clients_from), "clients_before": _version(b.clients_before),
            "auto_offset_reset": list(b.auto_offset_reset), "when": b.when, "action": b.outcome.action,
            "cause": b.outcome.cause, "exception": b.outcome.exception, "resumes_at": b.outcome.resumes_at,
            "records_re_read": b.outcome.records_re_read, "records_skipped": b.outcome.records_skipped,
            "records_skipped_up_to": b.outcome.records_skipped_up_to,
            "validation": None if b.outcome.validation is None else {
                "leader_epoch": b.outcome.validation.leader_epoch, "end_offset": b.outcome.validation.end_offset},
        } for b in i.behaviours],
    }
