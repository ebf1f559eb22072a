"""The fold's one walk over the segments: the log's own findings, damaged batches, the checkpoints it is given.

``load_group_partition`` walks the segments once (``BatchWalk``) and must give the plain replay's
state, the partition log reader's findings included (tests/builders/groups.py checks both twins of
the fold against it). The rules the cases rest on are Kafka's log's:

* a segment's batches lie at or above the base offset its file is named for, within
  ``Integer.MAX_VALUE`` of it (``LogSegment``: relative offsets in ``OffsetIndex``), and the
  partition leader epoch never goes down along the whole log, across segments
  (``LeaderEpochFileCache.assign``);
* ``FileLogInputStream.nextBatch`` throws ``CorruptRecordException`` on an entry size below the
  record overhead: the loader reads nothing after it (kreplica finds the next batch and says so,
  and loads nothing past the break either);
* ``DefaultRecordBatch.iterator``: a batch smaller than its header ("Record batch is corrupt") or
  a record count below zero ("Found invalid record count") is an ``InvalidRecordException``, a
  compressed section that does not inflate a
  ``KafkaException`` from the codec's stream, an unknown compression id
  (``CompressionType.forId``) an ``IllegalArgumentException``; the batch's records are not loaded;
* both loaders read from the log start offset (``doLoadGroupsAndOffsets``: ``log.logStartOffset``;
  ``CoordinatorLoaderImpl.doLoad``: ``log.logStartOffset``).
"""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pytest

from kreplica.formats import codecs
from kreplica.formats.checksums import crc32c
from kreplica.formats.log.default_records import (ATTRIBUTES_OFFSET, CRC_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
                                                 RECORDS_OFFSET)
from kreplica.formats.logdir.naming import segment_file_name
from kreplica.model.coordinator.fold import load_group_partition
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from kreplica.model.logdir.log_dir import read_checkpoints, scan_log_dir
from tests.builders.groups import TS, commit, kinds, load_dir, offsets, write
from tests.builders.replicas import generator

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
_CASES = itertools.count()
_RECORD_COUNT = struct.Struct(">i")
_RECORD_COUNT_OFFSET = RECORD_BATCH_OVERHEAD - _RECORD_COUNT.size    # the header's last field: recordsCount


def c(partition: int, offset: int) -> tuple:
    return commit("g", "t", partition, offset)


def new_partition(root: Path, segment_bytes: int = 1 << 20):
    gen = generator()
    return gen, gen.Partition(root / f"walk-{next(_CASES)}", "__consumer_offsets-0", segment_bytes=segment_bytes)


def records_at(gen, offset: int, *records) -> list:
    return [gen.NewRecord(offset + k, TS + (offset + k) * 1000, key, value) for k, (key, value) in enumerate(records)]


def resealed(batch: bytes, edit) -> bytes:
    """``batch`` edited by ``edit(bytearray)``, its CRC-32C made right again (as the broker that
    wrote it would have computed it)."""
    data = bytearray(batch)
    edit(data)
    struct.pack_into(">I", data, CRC_OFFSET, crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    return bytes(data)


# -- the walk's checks across batches and segments ----------------------------------------------------------


@BOTH
def test_an_epoch_going_down_across_segments_is_the_logs_finding(tmp_path, coordinator) -> None:
    """LeaderEpochFileCache.assign: epochs grow along the whole log; the first batch of the next
    segment at a lower epoch than the last of the one before is found across the segment files."""
    gen, part = new_partition(tmp_path, segment_bytes=100)
    part.v2(records_at(gen, 0, c(0, 1)), partition_leader_epoch=5)
    part.v2(records_at(gen, 1, c(1, 2)), partition_leader_epoch=3)
    part.write()
    assert len(list(part.dir.glob("*.log"))) == 2
    state = load_dir(part.dir.parent, coordinator)
    assert kinds(state) == ["epoch_regression"]
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 1): 2}


@BOTH
def test_an_epoch_kept_across_segments_is_no_finding(tmp_path, coordinator) -> None:
    """The counter-case: the same epoch on both sides of the roll."""
    gen, part = new_partition(tmp_path, segment_bytes=100)
    part.v2(records_at(gen, 0, c(0, 1)), partition_leader_epoch=5)
    part.v2(records_at(gen, 1, c(1, 2)), partition_leader_epoch=5)
    part.write()
    assert kinds(load_dir(part.dir.parent, coordinator)) == []


@BOTH
def test_a_batch_below_its_segments_base_offset_is_the_logs_finding(tmp_path, coordinator) -> None:
    """LogSegment: a segment named for base offset 10 holds offsets from 10 on; a batch at offset
    0 in it does not fit. Without a checkpoint the log starts at its first segment's base offset
    (``LogLoader.load``: ``Math.max(logStartOffsetCheckpoint, segments.firstSegment().get()
    .baseOffset())``), so the load reads from 10: the batch at 0 lies below it, the one at 10 is
    loaded."""
    gen, part = new_partition(tmp_path)
    part.append(gen.build_batch(records_at(gen, 0, c(0, 1)), base_offset=0), 10, 1)
    part.append(gen.build_batch(records_at(gen, 10, c(1, 2)), base_offset=10), 10, 11)
    part.write()
    assert [p.name for p in part.dir.glob("*.log")] == ["00000000000000000010.log"]
    state = load_dir(part.dir.parent, coordinator)
    assert kinds(state) == ["offset_out_of_segment_range"]
    assert (state.log_start_offset, offsets(state)) == (10, {("g", "t", 1): 2})


@BOTH
def test_nothing_after_a_corrupt_entry_is_loaded_and_every_finding_of_the_segment_is_kept(tmp_path,
                                                                                        coordinator) -> None:
    """FileLogInputStream.nextBatch: an entry size of 0 (a zero-filled stretch) throws
    CorruptRecordException: the batches after it are not loaded; the walk still reports what
    follows in the segment (where it resynchronised, zeros at its end)."""
    gen, part = new_partition(tmp_path)
    part.v2(records_at(gen, 0, c(0, 1)))
    part.append(bytes(16), 1, 1)                              # a zero-filled stretch
    part.v2(records_at(gen, 1, c(1, 2)))
    part.append(bytes(5), 2, 2)                               # zeros at the end of the file
    part.write()
    state = load_dir(part.dir.parent, coordinator)
    assert kinds(state) == ["invalid_length", "resynchronised", "trailing_zeros"]
    assert offsets(state) == {("g", "t", 0): 1}
    assert (state.replayed_to, state.records) == (0, 1)


# -- batches whose records Kafka's reader refuses -------------------------------------------------------------


def _gzip_broken(data: bytearray) -> None:
    """The deflate stream after the gzip member header zeroed: it no longer inflates."""
    start = RECORDS_OFFSET + len(codecs.GZIP_HEADER_JDK)
    data[start:len(data) - 8] = bytes(len(data) - 8 - start)


@BOTH
@pytest.mark.parametrize(("build", "edit", "finding"), [
    pytest.param({"compression": codecs.GZIP}, _gzip_broken, "decompression_error", id="gzip-that-does-not-inflate"),
    pytest.param({}, lambda d: _RECORD_COUNT.pack_into(d, _RECORD_COUNT_OFFSET, -1), "invalid_record",
                 id="record-count-below-zero"),
    pytest.param({}, lambda d: struct.pack_into(">h", d, ATTRIBUTES_OFFSET, 5), "invalid_record",
                 id="unknown-compression-id"),
])
def test_a_batch_whose_records_kafka_cannot_read_loads_none_of_them(tmp_path, coordinator, build, edit,
                                                                    finding) -> None:
    gen, part = new_partition(tmp_path)
    part.v2(records_at(gen, 0, c(0, 1)))
    broken = resealed(gen.build_batch(records_at(gen, 1, c(1, 2), c(2, 3)), base_offset=1, **build), edit)
    part.append(broken, 1, 3)
    part.v2(records_at(gen, 3, c(3, 4)))
    part.write()
    state = load_dir(part.dir.parent, coordinator)
    assert finding in kinds(state)
    assert offsets(state) == {("g", "t", 0): 1, ("g", "t", 3): 4}
    assert (state.replayed_to, state.records) == (3, 2)


@BOTH
def test_a_compressed_batch_that_inflates_is_loaded(tmp_path, coordinator) -> None:
    """The counter-case: the same gzip batch unbroken."""
    gen, part = new_partition(tmp_path)
    part.v2(records_at(gen, 0, c(0, 1), c(1, 2)), compression=codecs.GZIP)
    part.write()
    state = load_dir(part.dir.parent, coordinator)
    assert (kinds(state), offsets(state), state.records) == ([], {("g", "t", 0): 1, ("g", "t", 1): 2}, 2)


# -- the checkpoints the caller read ---------------------------------------------------------------------------


@BOTH
def test_the_checkpoints_given_are_the_ones_loaded_from(tmp_path, coordinator) -> None:
    """A caller that read the directory's checkpoints once hands them to each load: the log start
    offset they give (1) is where the load begins, whatever the directory holds by then."""
    log_dir = write(tmp_path, [[c(0, 1)], [c(1, 2)]], log_start=1)
    scanned = scan_log_dir(log_dir)
    checkpoints = read_checkpoints(scanned)
    (log_dir / "log-start-offset-checkpoint").unlink()
    state = load_group_partition(scanned.partitions[0], scanned, coordinator, checkpoints=checkpoints)
    assert (state.log_start_offset, offsets(state)) == (1, {("g", "t", 1): 2})


@BOTH
@pytest.mark.parametrize("records", [pytest.param(0, id="no-record"), pytest.param(1, id="one-commit")])
def test_a_batch_shorter_than_its_header_loads_nothing(tmp_path, coordinator, records) -> None:
    """DefaultRecordBatch.iterator: ``sizeInBytes() < RECORD_BATCH_OVERHEAD`` throws "Record batch
    is corrupt"; a batch whose length field says 40 (an entry of 52 bytes, below the 61 of a v2
    header) loads nothing, whatever record count its header holds."""
    gen, part = new_partition(tmp_path)
    part.v2(records_at(gen, 0, c(0, 1)))
    short_length = 40

    def shorten(data: bytearray) -> None:
        struct.pack_into(">i", data, LOG_OVERHEAD - 4, short_length)      # the batch length field

    batch = bytearray(gen.build_batch(records_at(gen, 1, c(1, 2))[:records], base_offset=1, last_offset_delta=0,
                                      max_timestamp=TS + 1000))
    shorten(batch)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c(bytes(batch[ATTRIBUTES_OFFSET:LOG_OVERHEAD + short_length])))
    part.append(bytes(batch), 1, 2)
    for base, data in part.segments:     # the segment alone (the fixture's index writer reads whole batches)
        (part.dir / segment_file_name(base)).write_bytes(bytes(data))
    state = load_dir(part.dir.parent, coordinator)
    assert "invalid_record" in kinds(state)
    assert (offsets(state), state.records, state.replayed_to) == ({("g", "t", 0): 1}, 1, 0)
