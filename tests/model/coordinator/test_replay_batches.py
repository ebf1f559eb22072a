"""``replay_batches``, the plain replay's loop over a partition's batches, called as its callers call it.

What it must do is the loaders': read from the log start offset (``doLoadGroupsAndOffsets`` and
``CoordinatorLoaderImpl.doLoad`` both start at ``log.logStartOffset``: a batch wholly below it
is not read), end a transaction only on a control record that is there (old:
``if (recordIterator.hasNext)``; new: ``batch.asScala.foreach`` over the control batch's records),
and stop where the replay point says (kreplica.model.coordinator.replay's module docstring:
``(replayed to, newest timestamp, records replayed, stopped at the point)``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kreplica.formats.log.batch import CONTROL_COMMIT
from kreplica.formats.logdir.naming import segment_file_name
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, GroupReplay, ReplayPoint, replay_batches
from kreplica.model.log.partition_log import iter_batch_records_with_errors, read_partition_log
from kreplica.model.logdir.log_dir import scan_log_dir
from tests.builders.groups import TS, commit, load_dir, offsets, pending, write
from tests.builders.replicas import generator

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
P = 7000
_CASES = itertools.count()


def c(partition: int, offset: int) -> tuple:
    return commit("g", "t", partition, offset)


def replayed(log_dir: Path, coordinator: str, point: ReplayPoint = ReplayPoint(), log_start: int = 0):
    """Every batch of the partition (none left out beforehand) through ``replay_batches``."""
    scanned = scan_log_dir(log_dir)
    log = read_partition_log(scanned.partitions[0], scanned)
    data = iter_batch_records_with_errors(log, [b for b in log.batches if not b.is_control])

    def batches():
        for b in log.batches:
            yield (b, (), None) if b.is_control else next(data)

    replay = GroupReplay(coordinator, 0, log.path)
    result = replay_batches(replay, batches(), log.marker, point, log_start)
    return result, {(o.group, o.topic, o.partition): o.offset for g in replay.result() for o in g.offsets}


@BOTH
def test_a_batch_below_the_log_start_offset_is_not_read(tmp_path, coordinator) -> None:
    """Offsets 0 and 1 below a log start of 2: the loader reads from offset 2 on."""
    log_dir = write(tmp_path, [[c(0, 1)], [c(1, 2)], [c(2, 3)]])
    (last, newest, count, stopped), got = replayed(log_dir, coordinator, log_start=2)
    assert got == {("g", "t", 2): 3}
    assert (last, newest, count, stopped) == (2, TS + 2000, 1, False)


@BOTH
@pytest.mark.parametrize(("point", "expected", "result"), [
    pytest.param(ReplayPoint(), {("g", "t", 0): 1, ("g", "t", 1): 2, ("g", "t", 2): 3}, (3, TS + 3000, 4, False),
                 id="to-the-end-not-stopped"),
    pytest.param(ReplayPoint(at_offset=1), {("g", "t", 0): 1, ("g", "t", 1): 2}, (1, TS + 1000, 2, True),
                 id="cut-in-a-batch-stopped"),
    pytest.param(ReplayPoint(at_offset=2), {("g", "t", 0): 1, ("g", "t", 1): 2, ("g", "t", 2): 3},
                 (2, TS + 2000, 3, True), id="at-a-marker-stopped"),
])
def test_the_replay_says_whether_it_stopped_at_the_point(tmp_path, coordinator, point, expected, result) -> None:
    log_dir = write(tmp_path, [[c(0, 1), c(1, 2), c(2, 3)], {"marker": CONTROL_COMMIT, "producer_id": P}])
    got_result, got = replayed(log_dir, coordinator, point)
    assert (got, got_result) == (expected, result)


@BOTH
def test_a_control_batch_without_its_record_ends_nothing(tmp_path, coordinator) -> None:
    """The cleaner keeps an emptied batch's header to preserve its producer's state
    (``MemoryRecords.filterTo``, ``BatchRetention.RETAIN_EMPTY``: ``writeEmptyHeader``); a control
    batch with no record has no marker to read, so the transaction stays open and the load goes
    on to the batches after it."""
    gen = generator()
    part = gen.Partition(tmp_path / f"empty-control-{next(_CASES)}", "__consumer_offsets-0")
    part.v2([gen.NewRecord(0, TS, *c(0, 5))], producer_id=P, producer_epoch=0, base_sequence=0, is_transactional=True)
    part.append(gen.build_batch([], base_offset=1, last_offset_delta=0, max_timestamp=TS + 1000, producer_id=P,
                                producer_epoch=0, is_transactional=True, is_control=True), 1, 2)
    part.v2([gen.NewRecord(2, TS + 2000, *c(1, 7))])
    for base, data in part.segments:        # the segment alone (the fixture's index writer wants a marker record)
        (part.dir / segment_file_name(base)).write_bytes(bytes(data))
    state = load_dir(part.dir.parent, coordinator)
    assert (offsets(state), pending(state)) == ({("g", "t", 1): 7}, {("g", "t", 0, P): 5})
    assert state.replayed_to == 2
