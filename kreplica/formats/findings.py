"""Findings: damage and anomalies kreplica reports while it keeps reading.

A finding is the product, not an error: each names the file, the absolute byte position, a
stable snake_case ``kind`` and a plain-language message. Every kind lives in :data:`KINDS` with
its default severity, a one-line meaning and a hint, so the catalogue in the README, the man
pages and the code cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"
#: normal on healthy evidence, said so the reader knows what the bytes are; not counted as a
#: warning in any verdict
INFO = "info"


@dataclass(frozen=True, slots=True)
class Kind:
    """One entry of the catalogue: what a finding kind means and what to do about it."""

    name: str
    severity: str
    meaning: str
    hint: str


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("crc_mismatch", ERROR,
             "the stored checksum does not match the bytes it covers",
             "the batch was damaged after it was written; a broker recovering this segment truncates here"),
        Kind("not_a_segment", ERROR,
             "a file named like a segment holds no record batch at all",
             "another file copied under a segment's name, or a segment overwritten beyond reading"),
        Kind("truncated_tail", ERROR,
             "the last batch is cut off by the end of the file",
             "usual after a crash or a copy taken during a write; Kafka's reader silently ignores it"),
        Kind("invalid_length", ERROR,
             "a batch length is impossible (negative, below the minimum, or past the end of the file)",
             "Kafka's reader stops here; later batches found by resynchronising are marked after_break"),
        Kind("invalid_magic", ERROR,
             "the magic (format version) byte is not 0, 1 or 2",
             "magic lies outside the v2 CRC, so Kafka's file reader treats any magic above 2 as v2"),
        Kind("trailing_zeros", WARNING,
             "the file ends in zero bytes, as a preallocated segment does",
             "log.preallocate=true or a crash before the segment was trimmed; recovery drops the zeros"),
        Kind("offset_regression", ERROR,
             "a batch's offsets lie wholly below those of the batch before it",
             "offsets must increase; two logs may have been concatenated or a header was damaged"),
        Kind("offset_overlap", ERROR,
             "a batch starts at or below the last offset of the batch before it",
             "offsets must increase; the header may be damaged (the CRC does not cover offsets)"),
        Kind("epoch_regression", ERROR,
             "a batch's partition leader epoch is lower than an earlier batch's",
             "leader epochs never decrease in a log; the header may be damaged (the CRC does not cover it)"),
        Kind("decompression_error", ERROR,
             "the records of a batch do not decompress",
             "the CRC is computed over the compressed bytes, so a valid CRC here points at a producer bug"),
        Kind("invalid_record", ERROR,
             "a record inside a batch is malformed (lengths, varints or header counts)",
             "Kafka's reader throws when it reaches this record; batch-level recovery does not notice"),
        Kind("unknown_codec", ERROR,
             "the compression codec id is not one Kafka defines",
             "Kafka fails on this batch as soon as it needs the codec"),
        Kind("offset_out_of_segment_range", ERROR,
             "a batch offset cannot be stored relative to the segment's base offset",
             "the file name and contents disagree; the segment may have been renamed"),
        Kind("resynchronised", WARNING,
             "unreadable bytes were skipped to the next position that holds a valid batch",
             "the skipped bytes are invisible to Kafka; batches after them are marked after_break"),
        Kind("unrecognised_file", WARNING,
             "a file or directory was skipped because it is not a segment",
             "kreplica inspect-log reads *.log segment files"),
        Kind("zk_checksum_mismatch", ERROR,
             "a ZooKeeper snapshot seal or txn log entry does not match its Adler-32 checksum",
             "ZooKeeper refuses the file (an older snapshot is tried; a log stops with 'CRC check failed')"),
        Kind("zk_truncated_snapshot", ERROR,
             "a ZooKeeper snapshot ends or breaks before its node list and seal are complete",
             "a copy taken while the snapshot was written, or damage; ZooKeeper falls back to an older snapshot"),
        Kind("zk_orphan_znode", ERROR,
             "a snapshot node comes before its parent node",
             "ZooKeeper refuses to load such a snapshot; the file is damaged or not written by ZooKeeper"),
        Kind("zk_trailing_bytes", WARNING,
             "bytes follow the last seal of a snapshot that belong to no known trailer",
             "a newer ZooKeeper trailer kreplica does not know, or damage after the seal"),
        Kind("torn_txn_entry", WARNING,
             "the last txn log entry was only partly written (cut off, or no 'B' end marker)",
             "usual after a crash; ZooKeeper logs 'Last transaction was partial' and ends the file there"),
        Kind("zk_invalid_length", ERROR,
             "a txn log entry declares an impossible length",
             "ZooKeeper stops reading the log here; later entries are invisible to it"),
        Kind("zk_unread_tail", WARNING,
             "non-zero bytes follow the zero length that ends a txn log",
             "ZooKeeper treats the zero length as the end of the preallocated file and never reads them"),
        Kind("zk_invalid_txn", ERROR,
             "a txn log entry's body does not parse as the record its type names",
             "the entry is kept raw; replay skips it, which ZooKeeper would not survive"),
        Kind("zk_unknown_txn_type", WARNING,
             "a txn log entry has a type kreplica does not know",
             "a newer ZooKeeper opcode; replay skips it"),
        Kind("zk_digest_mismatch", ERROR,
             "the replayed tree's digest differs from the digest ZooKeeper logged or sealed",
             "the evidence is inconsistent (a missing or damaged log, or a snapshot from another server)"),
        Kind("zk_zxid_gap", WARNING,
             "the txn logs skip zxids or go backwards between the snapshot and the requested point",
             "a log file is missing from the copy; the replayed state may lack changes"),
        Kind("zk_snapshot_rejected", WARNING,
             "a snapshot was passed over because ZooKeeper would not load it",
             "ZooKeeper falls back to an older snapshot; the rejected file is damaged or incomplete"),
        Kind("zk_fuzzy_snapshot", WARNING,
             "the snapshot used may already contain changes made after the requested zxid",
             "rolled snapshots are fuzzy; supply an older snapshot (and its logs) to reach that point exactly"),
        Kind("zk_ephemeral_without_session", WARNING,
             "an ephemeral znode belongs to a session the server no longer tracks",
             "normal in a fuzzy snapshot; if nothing in the logs resolves it, ZooKeeper deletes it at start-up"),
        Kind("kafka_invalid_znode", WARNING,
             "a Kafka znode's payload is not the JSON Kafka writes",
             "the object is left out of the cluster state; inspect it with kreplica zk dump --path"),
        Kind("kraft_invalid_record", ERROR,
             "a KRaft metadata record does not decode (frame, api key, version or body)",
             "Kafka's metadata loader fails on it; the record is skipped"),
        Kind("kraft_incomplete_snapshot", ERROR,
             "a KRaft snapshot lacks its SNAPSHOT_HEADER first or its SNAPSHOT_FOOTER last",
             "Kafka does not load such a snapshot; an unfinished one normally stays a .checkpoint.part"),
        Kind("kraft_offset_gap", WARNING,
             "metadata log offsets are missing between the snapshot used (or the log's start) and the next "
             "segment present, or between two segments",
             "a segment is missing from the copy; the replayed state and history lack the records in between"),
        Kind("coordinator_invalid_record", ERROR,
             "a record of __consumer_offsets, __transaction_state or __share_group_state does not decode",
             "the coordinator loading this partition fails on it; kreplica skips the record"),
        Kind("coordinator_unknown_record", WARNING,
             "a coordinator record has a record type or value version kreplica does not know",
             "written by a newer Kafka; the record is listed raw and left out of the state"),
        Kind("coordinator_replay_error", ERROR,
             "a coordinator record decodes, but Kafka's replay of it fails (a tombstone out of order, a group "
             "of another kind, an unreadable transaction marker)",
             "the coordinator fails to load the partition; kreplica skips the record"),
        Kind("group_offset_beyond_log_end", ERROR,
             "a group's committed offset lies beyond the log end offset of every replica of its partition read",
             "the records the consumer had read up to there are gone (truncation or data loss); its next fetch is "
             "out of range and auto.offset.reset decides"),
        Kind("group_offset_below_log_start", INFO,
             "a group's committed offset lies below the log start offset of every replica of its partition read",
             "retention deleted records the group never read; its next fetch is out of range (normal for an idle "
             "group)"),
        Kind("kraft_unknown_record", WARNING,
             "a KRaft metadata record has an api key or version kreplica does not know",
             "written by a newer Kafka; the record is kept raw and skipped in replay"),
        Kind("remote_log_metadata_invalid_record", ERROR,
             "a record of __remote_log_metadata does not decode (frame, body, a tombstone) or names a state "
             "Kafka does not know",
             "the broker's remote log metadata consumer fails on it; the tiered partitions it describes are not "
             "served until it is skipped"),
        Kind("remote_log_metadata_unknown_record", WARNING,
             "a __remote_log_metadata record has an api key, frame or version kreplica does not know",
             "written by a newer Kafka, or not a remote log metadata record; it is listed raw"),
        Kind("remote_index_cache", INFO,
             "the log directory's remote-log-index-cache/ holds indexes of remote segments, fetched by RemoteIndexCache",
             "not partition data: a cache the broker refills from remote storage; leftovers it removes at its next "
             "start are named"),
        Kind("index_size_not_multiple", ERROR,
             "an offset or time index file's length is not a multiple of its entry size",
             "Kafka's index sanity check throws CorruptIndexException; the trailing bytes are ignored"),
        Kind("index_offset_regression", ERROR,
             "an index entry's offset is not above the previous entry's (offset index) or below it (time index)",
             "entries after it are not trusted; Kafka rebuilds indexes of recovered segments"),
        Kind("index_timestamp_regression", ERROR,
             "a time index entry's timestamp is not above the previous entry's",
             "Kafka only appends strictly increasing timestamps; the index is damaged from here on"),
        Kind("index_position_regression", ERROR,
             "an offset index entry points at a file position not above the previous entry's",
             "positions increase with offsets in a Kafka-written index; lookups near this entry go wrong"),
        Kind("index_negative_entry", ERROR,
             "an index entry holds a negative relative offset or file position",
             "Kafka never writes one; the entry is damaged"),
        Kind("index_preallocated", INFO,
             "the index ends in zero-filled preallocated slots",
             "normal: the segment was active when copied, or the broker stopped before trimming it on close; "
             "Kafka resizes the index on load and rebuilds it if its sanity check fails; not damage"),
        Kind("index_nonzero_after_end", ERROR,
             "non-zero bytes follow the first empty slot of an index",
             "Kafka counts every slot as an entry; the tail may hold stale or damaged entries"),
        Kind("txn_index_partial_entry", WARNING,
             "a transaction index ends with a partial 34-byte entry",
             "Kafka's reader ignores it; usual after a crash during an append"),
        Kind("txn_index_unknown_version", ERROR,
             "a transaction index entry's version byte is above 0",
             "Kafka throws 'Unexpected aborted transaction version' reading it; later entries are unread"),
        Kind("txn_index_offset_regression", ERROR,
             "an aborted transaction's last offset is not above the previous entry's",
             "Kafka refuses such appends; the index is damaged or was concatenated"),
        Kind("txn_index_before_segment", ERROR,
             "an aborted transaction's last offset lies below the segment's base offset",
             "Kafka's sanity check throws CorruptIndexException and the broker rebuilds the segment"),
        Kind("txn_index_inverted_range", ERROR,
             "an aborted transaction's first offset is above its last offset",
             "Kafka never writes one; the entry is damaged"),
        Kind("snapshot_crc_mismatch", ERROR,
             "a producer-state snapshot's CRC-32C does not match its contents",
             "Kafka deletes the snapshot on load and falls back to an older one, then replays the log"),
        Kind("snapshot_corrupt", ERROR,
             "a producer-state snapshot cannot be parsed (version, truncated or impossible entry count)",
             "Kafka logs CorruptSnapshotException, deletes the file and tries an older snapshot"),
        Kind("checkpoint_malformed", ERROR,
             "a checkpoint or metadata text file breaks the grammar Kafka reads it with",
             "Kafka refuses the file (for most files the whole log directory goes offline); see the message"),
        Kind("index_entry_mismatch", ERROR,
             "an index entry does not agree with the segment beside it",
             "offset entries must point at a batch start from which their offset is reached; lookups through "
             "this entry land in the wrong place until the index is rebuilt"),
        Kind("txn_index_mismatch", ERROR,
             "the transaction index and the ABORT markers in the segment disagree",
             "a missing entry makes read_committed consumers see aborted records; recovery rebuilds the index"),
        Kind("epoch_checkpoint_out_of_order", ERROR,
             "leader-epoch-checkpoint lines do not increase in both epoch and start offset",
             "the broker repairs it in memory on load: the later line wins and conflicting entries are dropped"),
        Kind("epoch_checkpoint_beyond_log_end", ERROR,
             "a leader-epoch-checkpoint entry starts at or beyond the log end offset",
             "the broker drops it on load (truncateFromEnd); at exactly the log end it is a leader that has "
             "not written yet"),
        Kind("epoch_checkpoint_offset_mismatch", ERROR,
             "an epoch starts at a different offset in the checkpoint than in the batch headers, or has no batches",
             "an earlier checkpoint start can be compaction; a later one, or an epoch without data, needs a look"),
        Kind("epoch_checkpoint_stale", ERROR,
             "the batch headers carry an epoch the leader-epoch-checkpoint lacks",
             "a crash before the checkpoint was flushed; only recovery of unflushed segments re-adds it"),
        Kind("high_watermark_beyond_log_end", ERROR,
             "the checkpointed high watermark lies beyond the replica's log end",
             "acknowledged records are missing from this replica"),
        Kind("restart_truncation", ERROR,
             "a broker restarting on these files would truncate records",
             "copy the bytes first: after a restart they are gone (see the restart verdict)"),
        Kind("restart_trims", INFO,
             "a broker restarting on these files would cut bytes that hold no record",
             "zeros or the cut-off tail the segment's own finding reports: no record goes that is not already lost"),
        Kind("restart_refused", ERROR,
             "a broker would refuse to load this partition or log directory",
             "the reasons name the file and Kafka's exception"),
        Kind("partition_dir_state", WARNING,
             "the partition directory carries a -delete, -future or -stray suffix",
             "the replica is being deleted, moved between log directories, or was disowned by the broker"),
        Kind("leftover_file", WARNING,
             "a .deleted, .cleaned, .swap, .tmp or orphaned index file is in the partition directory",
             "an interrupted retention, compaction, swap or checkpoint write; .deleted segments may hold "
             "recoverable data"),
    )
}


#: The fields every finding has in machine output (``{"type":"finding","path","position","kind",
#: "severity","message",...details}``): no detail may take one of these names.
ENVELOPE_FIELDS = frozenset({"type", "path", "position", "kind", "severity", "message"})


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong (or odd) at ``path``:``position``.

    ``details`` holds kind-specific extras (expected and actual values, sizes) that machine
    output carries next to the common fields, in one object; so a detail may not take a name
    the envelope uses (:data:`ENVELOPE_FIELDS`): such a finding is refused (``ValueError``, a
    bug in the code that made it) rather than written with one of the two values lost.
    """

    kind: str
    path: str
    position: int
    message: str
    severity: str = ""
    details: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        clash = ENVELOPE_FIELDS.intersection(self.details)
        if clash:
            raise ValueError(f"a {self.kind} finding's details may not be named {', '.join(sorted(clash))}: "
                             "machine output writes the envelope's field under that name")
        if not self.severity:
            object.__setattr__(self, "severity", KINDS[self.kind].severity)

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    @property
    def is_info(self) -> bool:
        """Normal on healthy evidence: shown, never counted as a warning."""
        return self.severity == INFO
