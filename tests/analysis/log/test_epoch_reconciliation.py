"""The leader-epoch checkpoint against the batch headers (``epochs``), each disagreement with what a
restart does about it, and the counter-case that must not be reported.

What a restart does is Kafka's loader (kafka-algorithms spec §1.6): ``LeaderEpochFileCache`` reads
the checkpoint through ``assign``'s repair (2.1+: the later line wins, conflicting entries go);
``LogLoader.load`` ends with ``truncateFromEnd(recovered LEO)`` (an entry starting at or after the
log end goes, inclusive) and ``truncateFromStart(log start)``; only an unclean shutdown recovers
segments (``LogSegment.recover``), and recovery assigns a batch's epoch only when it is above the
latest cached epoch, so a missing epoch older than the checkpoint's newest never comes back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.log.epoch_reconciliation import reconcile_epochs
from kreplica.formats.findings import ERROR, INFO, WARNING
from kreplica.model.versions import DEFAULT_VERSION
from tests.builders.replicas import replica_log

# epochs 0, 1, 3 start at 0, 5, 10; the log ends at 15
BATCHES = [(0, 5, 0, "a"), (5, 5, 1, "a"), (10, 5, 3, "a")]
LINEAGE = [(0, 0), (1, 5), (3, 10)]
MISMATCH, BEYOND, STALE, ORDER = ("epoch_checkpoint_offset_mismatch", "epoch_checkpoint_beyond_log_end",
                                  "epoch_checkpoint_stale", "epoch_checkpoint_out_of_order")


def reconcile(tmp_path: Path, checkpoint, batches=BATCHES, **options):
    return reconcile_epochs(replica_log(tmp_path, 1, batches, hw=None, checkpoint=checkpoint, **options),
                            DEFAULT_VERSION)


def summary(v) -> list[tuple]:
    """(kind, severity, epoch) of each finding, in order."""
    return [(f.kind, f.severity, f.details.get("epoch")) for f in v.findings]


@pytest.mark.parametrize("checkpoint, findings, loaded", [
    pytest.param(LINEAGE, [], LINEAGE, id="agrees"),
    # an extra epoch: a leader elected without writing (2.1+ registers (epoch, LEO) on election)
    pytest.param([(0, 0), (1, 5), (2, 8), (3, 10)], [(MISMATCH, WARNING, 2)], [(0, 0), (1, 5), (2, 8), (3, 10)],
                 id="extra-epoch-inside-the-log-is-kept"),
    # what Kafka writes when a leader is elected and has not written yet (Partition.makeLeader,
    # maybeAssignEpochStartOffset at the log end): information, not a warning
    pytest.param(LINEAGE + [(4, 15)], [(BEYOND, INFO, 4)], LINEAGE, id="extra-epoch-at-the-log-end-is-dropped"),
    pytest.param(LINEAGE + [(4, 20)], [(BEYOND, ERROR, 4)], LINEAGE, id="checkpoint-ahead-of-the-log-is-dropped"),
    pytest.param([(0, 0), (1, 5), (3, 14)], [(MISMATCH, ERROR, 3)], [(0, 0), (1, 5), (3, 14)],
                 id="last-entry-just-below-the-log-end-is-kept"),
    # start offsets differ: the broker keeps the checkpoint's; earlier can be compaction
    pytest.param([(0, 0), (1, 3), (3, 10)], [(MISMATCH, WARNING, 1)], [(0, 0), (1, 3), (3, 10)],
                 id="earlier-start-as-after-compaction"),
    pytest.param([(0, 0), (1, 7), (3, 10)], [(MISMATCH, ERROR, 1)], [(0, 0), (1, 7), (3, 10)],
                 id="later-start"),
    # a missing epoch: nothing on a clean restart re-adds it
    pytest.param([(0, 0), (1, 5)], [(STALE, ERROR, 3)], [(0, 0), (1, 5)], id="misses-the-newest-epoch"),
    pytest.param([(0, 0), (3, 10)], [(STALE, ERROR, 1)], [(0, 0), (3, 10)], id="misses-a-middle-epoch"),
    pytest.param([], [(STALE, ERROR, 0), (STALE, ERROR, 1), (STALE, ERROR, 3)], [], id="empty-checkpoint"),
    # lines out of order: reported; assign(1, 5) after 3@10 removes 3@10 on load (last write wins)
    pytest.param([(0, 0), (3, 10), (1, 5)], [(ORDER, ERROR, 1)], [(0, 0), (1, 5)], id="epoch-goes-back"),
    pytest.param([(0, 0), (1, 5), (2, 5), (3, 10)], [(ORDER, ERROR, 2), (MISMATCH, WARNING, 2)],
                 [(0, 0), (2, 5), (3, 10)], id="same-start-offset-twice"),
])
def test_checkpoint_against_the_batches_after_a_clean_shutdown(tmp_path: Path, checkpoint, findings, loaded) -> None:
    v = reconcile(tmp_path, checkpoint)
    assert summary(v) == findings
    assert v.checkpoint == tuple(tuple(e) for e in checkpoint)
    assert v.state.restart.shutdown == "clean"
    assert [tuple(e) for e in v.state.cache.entries] == loaded
    assert all(f.details.get("restored_on_restart") is False for f in v.findings if f.kind == STALE)


@pytest.mark.parametrize("checkpoint, restored, loaded", [
    # recovery assigns epoch 3 (above the latest cached 1) from the batch at 10
    pytest.param([(0, 0), (1, 5)], True, LINEAGE, id="newest-epoch-re-added-by-recovery"),
    # ...but never an epoch below the latest cached one
    pytest.param([(0, 0), (3, 10)], False, [(0, 0), (3, 10)], id="middle-epoch-not-re-added"),
])
def test_an_unclean_restart_restores_only_epochs_newer_than_the_checkpoint(tmp_path: Path, checkpoint, restored,
                                                                           loaded) -> None:
    v = reconcile(tmp_path, checkpoint, clean=False, recovery_point=0)
    assert v.state.restart.shutdown == "unclean"
    (f,) = v.findings
    assert (f.kind, f.details["restored_on_restart"]) == (STALE, restored)
    assert [tuple(e) for e in v.state.cache.entries] == loaded


@pytest.mark.parametrize("checkpoint, newer", [
    pytest.param([(0, 0), (1, 5)], True, id="epoch-3-above-the-newest-entry-1"),
    pytest.param([(0, 0), (3, 10)], False, id="epoch-1-below-the-newest-entry-3"),
    pytest.param([(0, 0), (1, 5), (4, 12)], False, id="epoch-3-just-below-the-newest-entry-4"),
])
def test_the_stale_message_says_whether_the_epoch_is_newer_than_the_checkpoint(tmp_path: Path, checkpoint,
                                                                               newer: bool) -> None:
    (stale,) = [f for f in reconcile(tmp_path, checkpoint).findings if f.kind == STALE]
    assert ("newer than any checkpoint entry" in stale.message) == newer
    assert "would NOT restore it" in stale.message


@pytest.mark.parametrize("checkpoint, findings", [
    # the log starts at 5: epoch 0 (start 0) is below it, in the checkpoint or in the headers
    pytest.param([(0, 0), (1, 5), (3, 10)], [], id="checkpoint-entry-below-the-log-start"),
    pytest.param([(1, 5), (3, 10)], [], id="batch-epoch-below-the-log-start"),
    pytest.param([(1, 5), (2, 7), (3, 10)], [(MISMATCH, WARNING, 2)], id="counter-case-above-the-log-start"),
    # an epoch without batches starting exactly at the log start is compared; epoch 1 (batches from 5)
    # is then missing
    pytest.param([(2, 5), (3, 10)], [(MISMATCH, WARNING, 2), (STALE, ERROR, 1)], id="counter-case-at-the-log-start"),
])
def test_offsets_below_the_log_start_are_not_compared(tmp_path: Path, checkpoint, findings) -> None:
    v = reconcile(tmp_path, checkpoint, log_start=5)
    assert summary(v) == findings
    # truncateFromStart(5): the epoch covering offset 5 keeps (or takes) 5 as its start
    assert v.state.cache.entries[0].start_offset == 5


def test_batch_epoch_at_the_log_start_is_compared(tmp_path: Path) -> None:
    # counter-case of the above: without the log start checkpoint, epoch 0 is in reach and missing
    v = reconcile(tmp_path, [(1, 5), (3, 10)])
    assert summary(v) == [(STALE, ERROR, 0)]


@pytest.mark.parametrize("content, findings", [
    pytest.param(None, [], id="absent"),
    pytest.param(b"0\n2\n0 0\n", [("checkpoint_malformed", ERROR, None)], id="count-does-not-match"),
    pytest.param(b"1\n0\n", [("checkpoint_malformed", ERROR, None)], id="unknown-version"),
])
def test_absent_or_unreadable_checkpoint_is_not_compared(tmp_path: Path, content, findings) -> None:
    v = reconcile(tmp_path, content)
    assert summary(v) == findings and v.checkpoint is None


# -- every field of each finding (the text is what `epochs` and `inspect-dir` print) ---------------

CP = "broker-1/orders-0/leader-epoch-checkpoint"


def checkpoint_bytes(entries) -> bytes:
    """The file Kafka's ``CheckpointFile`` writes: version 0, the count, then ``epoch offset`` lines."""
    return f"0\n{len(entries)}\n".encode() + b"".join(f"{e} {o}\n".encode() for e, o in entries)


def line_position(entries, index: int) -> int:
    """Byte position of entry ``index``'s line in :func:`checkpoint_bytes` (what a finding points at)."""
    whole = checkpoint_bytes(entries)
    return len(whole) - len(b"".join(f"{e} {o}\n".encode() for e, o in entries[index:]))


def fields(tmp_path: Path, v) -> list[tuple]:
    return [(f.kind, str(Path(f.path).relative_to(tmp_path)), f.position, f.message, f.severity, f.details)
            for f in v.findings]


@pytest.mark.parametrize("checkpoint, index, kind, message, severity, details", [
    pytest.param([(0, 0), (3, 10), (1, 5)], 2, ORDER,
                 "line 5 (1 5) does not follow (3 10): epochs and start offsets must both increase; the broker "
                 "repairs this in memory (the later line wins and earlier conflicting entries are dropped)",
                 ERROR, {"epoch": 1, "start_offset": 5}, id="out-of-order"),
    pytest.param(LINEAGE + [(4, 20)], 3, BEYOND,
                 "epoch 4 starts at offset 20, beyond the log end offset 15: the broker drops this entry on load "
                 "(truncateFromEnd); the offsets it claims are not in this replica",
                 ERROR, {"epoch": 4, "start_offset": 20, "log_end_offset": 15}, id="beyond-the-log-end"),
    pytest.param(LINEAGE + [(4, 15)], 3, BEYOND,
                 "epoch 4 starts at the log end offset 15 with no batches yet (a leader elected that has not "
                 "written); the broker drops this entry on load (truncateFromEnd)",
                 INFO, {"epoch": 4, "start_offset": 15, "log_end_offset": 15}, id="at-the-log-end"),
    pytest.param([(0, 0), (1, 3), (3, 10)], 1, MISMATCH,
                 "epoch 1 starts at 3 in the checkpoint but at 5 in the batch headers (the log cleaner may have "
                 "removed the batch that opened it)",
                 WARNING, {"epoch": 1, "checkpoint_start_offset": 3, "batch_start_offset": 5}, id="earlier-start"),
    pytest.param([(0, 0), (1, 7), (3, 10)], 1, MISMATCH,
                 "epoch 1 starts at 7 in the checkpoint but at 5 in the batch headers",
                 ERROR, {"epoch": 1, "checkpoint_start_offset": 7, "batch_start_offset": 5}, id="later-start"),
    pytest.param([(0, 0), (1, 5), (2, 8), (3, 10)], 2, MISMATCH,
                 "epoch 2 (from offset 8) has no batches in this replica: a leader elected without writing, or its "
                 "batches were truncated",
                 WARNING, {"epoch": 2, "checkpoint_start_offset": 8}, id="epoch-without-batches"),
])
def test_each_line_finding_names_the_checkpoint_line_and_says_what_a_restart_does(
        tmp_path: Path, checkpoint, index, kind, message, severity, details) -> None:
    """Rules: ``LeaderEpochFileCache.assign``/``maybeTruncateNonMonotonicEntries`` (epochs and start
    offsets both increase), ``truncateFromEnd`` on the recovered log end; the finding points at the
    offending line's byte in the file."""
    v = reconcile(tmp_path, checkpoint_bytes(checkpoint))
    assert fields(tmp_path, v) == [(kind, CP, line_position(checkpoint, index), message, severity, details)]


@pytest.mark.parametrize("checkpoint, options, message, details", [
    pytest.param([(0, 0), (1, 5)], {},
                 "the checkpoint lacks epoch 3 (its batches start at offset 10) — newer than any checkpoint entry, "
                 "as when the broker crashed before flushing the checkpoint; a clean restart would NOT restore it",
                 {"epoch": 3, "start_offset": 10, "restored_on_restart": False}, id="newest-clean"),
    pytest.param([(0, 0), (1, 5)], {"clean": False, "recovery_point": 0},
                 "the checkpoint lacks epoch 3 (its batches start at offset 10) — newer than any checkpoint entry, "
                 "as when the broker crashed before flushing the checkpoint; a unclean restart re-assigns it from "
                 "the batches",
                 {"epoch": 3, "start_offset": 10, "restored_on_restart": True}, id="newest-unclean-restored"),
    pytest.param([(0, 0), (3, 10)], {},
                 "the checkpoint lacks epoch 1 (its batches start at offset 5); a clean restart would NOT restore it",
                 {"epoch": 1, "start_offset": 5, "restored_on_restart": False}, id="middle-clean"),
])
def test_a_stale_checkpoint_finding_points_at_the_file(tmp_path: Path, checkpoint, options, message,
                                                       details) -> None:
    """``LogSegment.recover`` assigns a batch's epoch only above the cache's latest (unclean restart);
    a clean restart recovers nothing. The finding is about the file as a whole: position 0."""
    v = reconcile(tmp_path, checkpoint_bytes(checkpoint), **options)
    assert fields(tmp_path, v) == [(STALE, CP, 0, message, ERROR, details)]


def test_the_same_epoch_on_two_lines_is_out_of_order(tmp_path: Path) -> None:
    """Counter-case of an increasing epoch: ``LeaderEpochFileCache.isUpdateNeeded`` ignores a second
    line for the latest epoch at a later offset, so the epoch must strictly increase."""
    checkpoint = [(0, 0), (1, 5), (1, 7), (3, 10)]
    v = reconcile(tmp_path, checkpoint_bytes(checkpoint))
    # the line also disagrees with the batch headers (the file says 7), reported on its own
    assert [(f.kind, f.position, f.details) for f in v.findings] == [
        (ORDER, line_position(checkpoint, 2), {"epoch": 1, "start_offset": 7}),
        (MISMATCH, line_position(checkpoint, 2), {"epoch": 1, "checkpoint_start_offset": 7, "batch_start_offset": 5})]
    assert [tuple(e) for e in v.state.cache.entries] == LINEAGE


@pytest.mark.parametrize("checkpoint, log_start, findings", [
    # truncateFromStartAsyncFlush(7) rewrites epoch 1 (batches from 5, covering 7) to start at 7
    pytest.param([(1, 7), (3, 10)], 7, [], id="first-entry-moved-to-the-log-start"),
    # epoch 1's batches start exactly at the log start 5: Kafka would write (1, 5), never (0, 5)
    pytest.param([(0, 5), (3, 10)], 5, [(MISMATCH, ERROR, 0), (STALE, ERROR, 1)],
                 id="epoch-before-the-one-starting-at-the-log-start"),
])
def test_an_entry_moved_to_the_log_start_is_the_one_holding_that_offset(tmp_path: Path, checkpoint, log_start,
                                                                        findings) -> None:
    """``LeaderEpochFileCache.truncateFromStartAsyncFlush``: the last entry at or below the new log
    start is kept, starting at it; an epoch whose batches begin at the log start is that entry."""
    assert summary(reconcile(tmp_path, checkpoint, log_start=log_start)) == findings


def test_a_malformed_checkpoint_finding_points_at_the_file(tmp_path: Path) -> None:
    v = reconcile(tmp_path, b"0\n2\n0 0\n")
    (f,) = v.findings
    path = tmp_path / CP
    assert (f.kind, f.path, f.position, f.severity) == ("checkpoint_malformed", str(path), 0, ERROR)
    assert f.message == (f"leader-epoch-checkpoint cannot be read as Kafka reads it: {path}: byte 2: entry count: "
                         f"Expected [2] entries in checkpoint file [{path}], but found only [1] (expected 2, got 1)")


def test_the_kafka_version_given_decides_the_loaded_cache(tmp_path: Path) -> None:
    """KAFKA-10432: a 2.1.1-2.6 broker's recovery never re-adds an epoch-0 entry, a current one does
    (``LogSegment.recover`` → ``LeaderEpochFileCache.assign``)."""
    from kreplica.model.versions import parse_kafka_version

    log = replica_log(tmp_path, 1, [(0, 5, 0, "a"), (5, 5, 2, "a")], hw=None, checkpoint=None, clean=False,
                      recovery_point=0)
    assert [tuple(e) for e in reconcile_epochs(log, parse_kafka_version("2.5")).state.cache.entries] == [(2, 5)]
    assert [tuple(e) for e in reconcile_epochs(log, DEFAULT_VERSION).state.cache.entries] == [(0, 0), (2, 5)]


def test_an_earlier_checkpoint_start_in_a_log_the_cleaner_has_compacted_is_information(tmp_path: Path) -> None:
    """The log cleaner removes records and whole batches but never rewrites the leader-epoch
    checkpoint (``LogCleaner`` leaves the epoch cache alone), so an epoch's first surviving batch
    lies after the start the checkpoint gives it; with the partition in the log directory's
    cleaner-offset-checkpoint, cleaned past that batch, this is Kafka's own state (a real 4.4
    compacted topic: epoch 0 at 0 in the checkpoint, its first batch at 1540)."""
    v = reconcile(tmp_path, checkpoint_bytes([(0, 0), (1, 3), (3, 10)]), cleaned_to=12)
    assert summary(v) == [(MISMATCH, INFO, 1)]
    assert "the log cleaner, which has cleaned this log to offset 12, removed the batches that opened it" \
        in v.findings[0].message


@pytest.mark.parametrize("cleaned_to", [None, 4], ids=["no-cleaner-checkpoint", "cleaned-below-the-batch"])
def test_an_earlier_checkpoint_start_the_cleaner_does_not_explain_stays_a_warning(tmp_path: Path, cleaned_to) -> None:
    """The counter-cases: no cleaner-offset-checkpoint entry for the partition, or one below the
    epoch's first batch (5): the cleaner has not been over the missing offsets."""
    v = reconcile(tmp_path, checkpoint_bytes([(0, 0), (1, 3), (3, 10)]), cleaned_to=cleaned_to)
    assert summary(v) == [(MISMATCH, WARNING, 1)]
