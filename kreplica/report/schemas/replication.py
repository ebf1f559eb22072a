"""Output of the replication commands: ``epochs``, ``offset-for-epoch``, ``truncate-plan``,
``diverge``. Machine objects::

    epochs                   {type, replica, path, partition, kafka_version, log_start_offset,
                              log_end_offset, high_watermark, lineage: [{epoch, start_offset,
                              last_offset, batches, first_timestamp, last_timestamp}],
                              checkpoint: [[epoch, start_offset]] | null, loaded_cache: [[epoch, start_offset]]}
    offset_for_leader_epoch  {type, replica, requested_epoch, current_leader_epoch, leader_epoch,
                              end_offset, error, kafka_version}
    truncation               {type, partition, leader, follower, protocol, kafka_version, rounds:
                              [{requested_epoch, leader_epoch, end_offset}], follower_log_end_before,
                              truncate_to, out_of_range, discarded: {records, batches, bytes,
                              first_offset, last_offset, ranges: [[first, last]]}, segments_cut:
                              [{file, position}], committed_loss, held_elsewhere: [{first, last,
                              replicas}], reopened_transactions: [{producer_id, marker_offset,
                              marker}], notes, elected: {epoch, start_offset, given,
                              previous_epoch, behind, reason} | null, epoch_cache_after, after: {leader_log_end,
                              follower_log_end, refetch_records, still_divergent: [[first, last]],
                              never_refetched: [[first, last]], heals}, exported: [path]}
    divergence               {type, partition, replicas: [a, b], first_divergent_offset,
                              common_prefix_end, ranges: [{first, last, kind, below_high_watermark}],
                              high_watermarks, records_unread}

A truncation's ``elected`` is set when the leader was modelled as Kafka elects it: a leader whose
latest epoch is older than a follower's (or given ``--leader-epoch``) leads at a new epoch
registered at its log end (``start_offset``); ``given`` says the epoch was ``--leader-epoch``'s,
not the lowest possible. A truncation's ``exported`` lists the files ``--output-dir`` wrote for that follower (its records as
ndjson, then its segment), empty without ``--output-dir`` or when it discards nothing.

A divergence range's ``kind`` is ``divergent`` (other records), ``same_records`` (other batches, the
same records: not divergence of data), ``batches_differ`` (other batches whose records could not be
read; ``records_unread`` says why) or ``only_<label>``.
"""

from __future__ import annotations

from collections.abc import Sequence


from kreplica.analysis.replication.divergence import Divergence
from kreplica.analysis.replication.offset_for_epoch import OffsetForLeaderEpochAnswer
from kreplica.analysis.replication.truncation import TruncationPlan
from kreplica.model.log.lineage import LineageEntry


def lineage_objects(lineage: tuple[LineageEntry, ...]) -> list[dict]:
    return [{"epoch": e.epoch, "start_offset": e.start_offset, "last_offset": e.last_offset, "batches": e.batches,
             "first_timestamp": e.first_timestamp, "last_timestamp": e.last_timestamp} for e in lineage]


def epochs_object(state, checkpoint, kafka_version) -> dict:
    r = state.replica
    return {
        "type": "epochs", "replica": r.label, "path": r.path, "partition": r.name, "kafka_version": str(kafka_version),
        "log_start_offset": state.log_start_offset, "log_end_offset": state.log_end_offset,
        "high_watermark": r.high_watermark, "lineage": lineage_objects(r.lineage),
        "checkpoint": None if checkpoint is None else [list(e) for e in checkpoint],
        "loaded_cache": [] if state.cache is None else [[e.epoch, e.start_offset] for e in state.cache.entries],
    }


def offset_for_epoch_object(replica: str, a: OffsetForLeaderEpochAnswer, kafka_version) -> dict:
    return {"type": "offset_for_leader_epoch", "replica": replica, "requested_epoch": a.requested_epoch,
            "current_leader_epoch": a.current_leader_epoch, "leader_epoch": a.leader_epoch,
            "end_offset": a.end_offset, "error": a.error, "kafka_version": str(kafka_version)}


def truncation_object(p: TruncationPlan, exported: Sequence[str] = ()) -> dict:
    d = p.discarded
    return {
        "type": "truncation", "partition": p.partition, "leader": p.leader, "follower": p.follower,
        "protocol": p.protocol, "kafka_version": p.kafka_version,
        "rounds": [{"requested_epoch": r.requested_epoch, "leader_epoch": r.leader_epoch, "end_offset": r.end_offset}
                   for r in p.rounds],
        "follower_log_end_before": p.follower_log_end_before, "truncate_to": p.truncate_to,
        "out_of_range": p.out_of_range,
        "discarded": {
            "records": p.discarded_records, "batches": len(d), "bytes": sum(b.size for b in d),
            "first_offset": min((b.base_offset for b in d), default=None),
            "last_offset": max((b.last_offset for b in d), default=None),
            "ranges": [[r.first, r.last] for r in p.ranges],
        },
        "segments_cut": [{"file": f, "position": pos} for f, pos in p.segments_cut],
        "committed_loss": p.committed_loss,
        "held_elsewhere": [{"first": r.first, "last": r.last, "replicas": list(holders)}
                           for r, holders in p.held_elsewhere],
        "reopened_transactions": [{"producer_id": pid, "marker_offset": off, "marker": kind}
                                  for pid, off, kind in p.reopened_transactions],
        "notes": list(p.notes),
        "elected": None if p.elected is None else {
            "epoch": p.elected.epoch, "start_offset": p.elected.start_offset, "given": p.elected.given,
            "previous_epoch": p.elected.previous_epoch, "behind": p.elected.behind, "reason": p.elected.reason},
        "epoch_cache_after": [list(e) for e in p.cache_after],
        "after": {"leader_log_end": p.leader_log_end, "follower_log_end": p.follower_log_end_after,
                  "refetch_records": p.refetch_records, "still_divergent": [[r.first, r.last] for r in p.still_divergent],
                  "never_refetched": [[r.first, r.last] for r in p.never_refetched], "heals": p.heals},
        "exported": list(exported),
    }


def divergence_object(d: Divergence) -> dict:
    return {"type": "divergence", "partition": d.partition, "replicas": list(d.replicas),
            "first_divergent_offset": d.first_divergent_offset, "common_prefix_end": d.common_prefix_end,
            "ranges": [{"first": r.first, "last": r.last, "kind": r.kind,
                        "below_high_watermark": r.below_high_watermark} for r in d.ranges],
            "high_watermarks": d.high_watermarks, "records_unread": d.records_unread}
