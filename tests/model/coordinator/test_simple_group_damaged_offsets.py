"""The simple group a commit makes, in a log whose offsets repeat or start below zero (damage).

``OffsetMetadataManager.replay`` (new coordinator, 4.x): a non-null commit of a group that does
not exist makes a simple classic group (``groupMetadataManager.getOrMaybeCreateClassicGroup(groupId,
true)`` after ``GroupIdNotFoundException``), whatever the record's offset. ``CoordinatorLoaderImpl.doLoad``
replays every record of every batch it reads (``memoryRecords.batches.forEach`` →
``batch.asScala.foreach`` → ``coordinator.replay(record.offset(), ...)``), in file order, with no
check of the record's offset against the records before it: a batch overlapping the one before it
(``log.read`` hands both over in one buffer) or one whose base offset lies below its segment's is
replayed record by record as written. The old coordinator (``doLoadGroupsAndOffsets``) shows any
offsets without a loaded group as an ``Empty`` group (``emptyGroupOffsets``).

kreplica makes no group for such a commit when its offset is not above the offset of the record
that removed the group (``GroupReplay.touch``: ``offset > removed_at.get(group, -1)``), so these
two damaged logs show the group ``Dead`` where Kafka's new coordinator holds a simple group: marked
xfail (strict) until kreplica follows Kafka here. The counter-cases (the old coordinator) pass.
Loaded by the plain replay and by the fold (compiled and pure), which agree (tests/builders/groups.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from tests.builders.groups import TS, by_name, commit, group_record, kinds, load_dir
from tests.builders.replicas import generator

_KAFKA_MAKES_A_SIMPLE_GROUP = pytest.mark.xfail(strict=True, reason=(
    "OffsetMetadataManager.replay makes a simple group for a commit of a group that does not exist at any "
    "offset; kreplica's GroupReplay.touch needs the commit's offset above the group's removal (and above -1)"))


def _overlapping(root: Path) -> Path:
    """Batch 0-1: group g, then its tombstone at offset 1; batch 1-2 (overlapping it): g's commit
    at offset 1, h's at 2."""
    gen = generator()
    part = gen.Partition(root / "overlap", "__consumer_offsets-0")
    part.append(gen.build_batch([gen.NewRecord(0, TS, *group_record("g", [])),
                                 gen.NewRecord(1, TS + 1000, *group_record("g", None))], base_offset=0), 0, 2)
    part.append(gen.build_batch([gen.NewRecord(1, TS + 2000, *commit("g", "t", 0, 5)),
                                 gen.NewRecord(2, TS + 3000, *commit("h", "t", 0, 6))], base_offset=1), 1, 3)
    part.write()
    return part.dir.parent


def _below_zero(root: Path) -> Path:
    """One batch at offsets -1..0 in segment 0: g's commit at -1, h's at 0 (its last offset, 0,
    is at the log start offset: ``log.read(0)`` returns the batch, ``searchForOffsetFromPosition``
    stops at the first batch whose last offset is at least 0)."""
    gen = generator()
    part = gen.Partition(root / "below-zero", "__consumer_offsets-0")
    part.append(gen.build_batch([gen.NewRecord(-1, TS, *commit("g", "t", 0, 5)),
                                 gen.NewRecord(0, TS + 1000, *commit("h", "t", 0, 6))], base_offset=-1), 0, 1)
    part.write()
    return part.dir.parent


CASES = [pytest.param(_overlapping, "offset_overlap", id="commit-at-the-offset-of-the-groups-tombstone"),
         pytest.param(_below_zero, "offset_out_of_segment_range", id="commit-at-offset-minus-one")]


@_KAFKA_MAKES_A_SIMPLE_GROUP
@pytest.mark.parametrize(("build", "finding"), CASES)
def test_the_new_coordinator_makes_a_simple_group_for_the_commit(tmp_path, build, finding) -> None:
    state = load_dir(build(tmp_path), NEW_COORDINATOR)
    assert kinds(state) == [finding]
    g = by_name(state)["g"]
    assert (g.protocol, g.state, g.generation, [o.offset for o in g.offsets]) == (None, "Empty", 0, [5])


@pytest.mark.parametrize(("build", "finding"), CASES)
def test_the_old_coordinator_shows_the_offsets_in_an_empty_group(tmp_path, build, finding) -> None:
    """emptyGroupOffsets: offsets whose group is not loaded make an Empty group (the counter-case)."""
    state = load_dir(build(tmp_path), OLD_COORDINATOR)
    assert kinds(state) == [finding]
    g = by_name(state)["g"]
    assert (g.protocol, g.state, g.generation, [o.offset for o in g.offsets]) == (None, "Empty", 0, [5])
