"""Record stamps in a load: LogAppendTime batches, stamps out of order, and where a point cuts.

Kafka stamps the records of a LogAppendTime batch with the batch's max timestamp, the broker's
append time (``DefaultRecordBatch.iterator``: ``logAppendTime = timestampType() ==
LOG_APPEND_TIME ? maxTimestamp() : null``; ``DefaultRecord.readFrom``: ``timestamp =
logAppendTime == null ? baseTimestamp + timestampDelta : logAppendTime``), and keeps the
producer's base timestamp in the header (``DefaultRecordBatch.setMaxTimestamp`` changes only the
max timestamp and the timestamp type). Stamps need not grow along a log (a CreateTime record
carries its writer's clock). A replay point (``--at-time``) replays the log's prefix up to the
first record stamped after it (kreplica.model.coordinator.replay's module docstring).

Each case is loaded by the plain replay and by the fold (compiled and pure), which must agree
(tests/builders/groups.py).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kreplica.formats.log.batch import CONTROL_COMMIT, LOG_APPEND_TIME
from kreplica.formats.log.default_records import build_control_record
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, ReplayPoint
from tests.builders.groups import TS, commit, load_dir, offsets, pending
from tests.builders.replicas import generator

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
APPENDED = TS + 50_000          # the broker's append time of a LogAppendTime batch
_CASES = itertools.count()


def write_batches(root: Path, batches: list) -> Path:
    """A log directory holding ``__consumer_offsets-0`` with ``batches``: each ``(records, kw)``,
    ``records`` a list of ``(timestamp, (key, value))`` at the next offsets, ``kw`` the batch's
    header fields (``Partition.v2``); ``kw`` ``{"marker": type, "producer_id": p}`` writes a
    transaction marker stamped with its one ``records`` stamp."""
    gen = generator()
    log_dir = root / f"stamps-{next(_CASES)}"
    part = gen.Partition(log_dir, "__consumer_offsets-0", segment_bytes=1 << 20)
    for records, kw in batches:
        offset = part.next_offset
        if "marker" in kw:
            ((ts, _),) = records
            part.v2([build_control_record(offset, ts, kw["marker"], 1)], producer_id=kw["producer_id"],
                    producer_epoch=0, is_transactional=True, is_control=True)
            continue
        part.v2([gen.NewRecord(offset + k, ts, key, value) for k, (ts, (key, value)) in enumerate(records)], **kw)
    part.write()
    return log_dir


def appended(*records) -> tuple:
    """A plain LogAppendTime batch of commits created at TS, TS + 1000, ... and appended at APPENDED."""
    return ([(TS + k * 1000, r) for k, r in enumerate(records)],
            {"timestamp_type": LOG_APPEND_TIME, "max_timestamp": APPENDED})


def c(partition: int, offset: int) -> tuple:
    return commit("g", "t", partition, offset)


# -- the evidence's first record time -----------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(("batch", "first_time"), [
    pytest.param(appended(c(0, 1), c(1, 1)), APPENDED, id="log-append-time-the-append-time"),
    pytest.param(([(TS, c(0, 1)), (TS + 1000, c(1, 1))], {}), TS, id="create-time-the-first-records"),
])
def test_the_first_record_time_is_the_first_records_stamp(tmp_path, coordinator, batch, first_time) -> None:
    state = load_dir(write_batches(tmp_path, [batch]), coordinator)
    assert (state.first_time, state.last_time) == (first_time, batch[1].get("max_timestamp", TS + 1000))


# -- a point in a LogAppendTime batch ----------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(("point", "expected", "newest"), [
    # the records were created before the point but appended after it: all past the point
    pytest.param(ReplayPoint(at_time=TS + 10_000), {}, None, id="created-before-appended-after"),
    pytest.param(ReplayPoint(at_time=APPENDED), {("g", "t", 0): 1, ("g", "t", 1): 1, ("g", "t", 2): 1}, APPENDED,
                 id="at-the-append-time"),
    # cut by offset: the records replayed count at the append time
    pytest.param(ReplayPoint(at_offset=1), {("g", "t", 0): 1, ("g", "t", 1): 1}, APPENDED, id="cut-by-offset"),
])
def test_a_log_append_time_batch_is_stamped_with_its_append_time(tmp_path, coordinator, point, expected,
                                                                  newest) -> None:
    state = load_dir(write_batches(tmp_path, [appended(c(0, 1), c(1, 1), c(2, 1))]), coordinator, point)
    assert (offsets(state), state.newest_timestamp) == (expected, newest)


# -- stamps out of order ----------------------------------------------------------------------------------


@BOTH
def test_the_newest_stamp_is_the_newest_of_every_batch_replayed(tmp_path, coordinator) -> None:
    """A later batch stamped earlier (another writer's clock) leaves the newest stamp replayed."""
    log_dir = write_batches(tmp_path, [([(TS + 9000, c(0, 1))], {}), ([(TS + 1000, c(1, 1))], {})])
    state = load_dir(log_dir, coordinator)
    assert (state.newest_timestamp, state.replayed_to, state.records) == (TS + 9000, 1, 2)
    assert state.last_time == TS + 9000


@BOTH
def test_a_marker_stamped_before_the_batches_before_it_leaves_the_newest_stamp(tmp_path, coordinator) -> None:
    """A control batch counts as one record stamped with its max timestamp; stamped before the
    transaction's commit it does not lower the newest stamp replayed."""
    log_dir = write_batches(tmp_path, [([(TS + 9000, c(0, 5))], {"producer_id": 7000, "producer_epoch": 0,
                                                                 "base_sequence": 0, "is_transactional": True}),
                                       ([(TS + 1000, None)], {"marker": CONTROL_COMMIT, "producer_id": 7000})])
    state = load_dir(log_dir, coordinator)
    assert (offsets(state), pending(state)) == ({("g", "t", 0): 5}, {})
    assert (state.newest_timestamp, state.replayed_to, state.records) == (TS + 9000, 1, 2)


@BOTH
def test_a_plain_batch_cut_by_the_point_ends_the_replay(tmp_path, coordinator) -> None:
    """The point replays a prefix: a batch cut at --at-time ends the replay, and a later batch
    stamped before the point is not replayed; the counter-case, a point past every stamp, replays it."""
    entries = [([(TS, c(0, 1)), (TS + 20_000, c(1, 1))], {}), ([(TS + 1000, c(2, 1))], {})]
    log_dir = write_batches(tmp_path, entries)
    cut = load_dir(log_dir, coordinator, ReplayPoint(at_time=TS + 10_000))
    assert offsets(cut) == {("g", "t", 0): 1}
    assert (cut.replayed_to, cut.records, cut.newest_timestamp) == (0, 1, TS)
    whole = load_dir(log_dir, coordinator, ReplayPoint(at_time=TS + 20_000))
    assert offsets(whole) == {("g", "t", 0): 1, ("g", "t", 1): 1, ("g", "t", 2): 1}
