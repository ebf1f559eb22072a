"""``__consumer_offsets`` partitions written in the test as a coordinator writes them (the fixture
generator's ``offsets_partition`` and record helpers), then loaded both ways: the plain replay of
the partition log and the fold of the streamed walk, the fold run on its compiled twin and on its
pure-Python reference. ``load`` asserts the three agree and returns the state.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from pathlib import Path

from kreplica.formats.log import key_fold
from kreplica.model.coordinator.fold import load_group_partition
from kreplica.model.coordinator.replay import GroupPartitionState, ReplayPoint, replay_partition_log
from kreplica.model.coordinator.groups import Group
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from tests.builders.replicas import generator

TS = 1_700_000_000_000
_CASES = itertools.count()


@contextmanager
def pure_fold():
    """The fold's pure-Python reference in place of its compiled twin."""
    saved = key_fold._compiled
    key_fold._compiled = None
    try:
        yield
    finally:
        key_fold._compiled = saved


def write(root: Path, entries: list, *, partition: int = 0, log_start: int | None = None) -> Path:
    """A log directory under ``root`` holding ``__consumer_offsets-<partition>`` with ``entries``
    (``offsets_partition``'s batches); ``log_start`` writes a log-start-offset-checkpoint."""
    log_dir = root / f"case-{next(_CASES)}"
    generator().offsets_partition(log_dir, partition, entries)
    if log_start is not None:
        from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint

        (log_dir / "log-start-offset-checkpoint").write_bytes(
            build_offset_checkpoint({("__consumer_offsets", partition): log_start}))
    return log_dir


def load_dir(log_dir: Path, coordinator: str, point: ReplayPoint = ReplayPoint()) -> GroupPartitionState:
    """The partition loaded both ways (and the fold on both twins), checked equal."""
    scanned = scan_log_dir(log_dir)
    partition = scanned.partitions[0]
    plain = replay_partition_log(read_partition_log(partition, scanned), coordinator, point)
    folded = load_group_partition(partition, scanned, coordinator, point)
    with pure_fold():
        reference = load_group_partition(partition, scanned, coordinator, point)
    assert folded == plain
    assert reference == plain
    return plain


def load(root: Path, entries: list, coordinator: str, point: ReplayPoint = ReplayPoint(), **options
         ) -> GroupPartitionState:
    return load_dir(write(root, entries, **options), coordinator, point)


def by_name(state: GroupPartitionState) -> dict[str, Group]:
    return {g.group: g for g in state.groups}


def offsets(state: GroupPartitionState) -> dict[tuple[str, str, int], int]:
    """(group, topic, partition) -> committed offset, every group."""
    return {(o.group, o.topic, o.partition): o.offset for g in state.groups for o in g.offsets}


def pending(state: GroupPartitionState) -> dict[tuple[str, str, int, int], int]:
    """(group, topic, partition, producer) -> offset of the transactional commits still pending."""
    return {(o.group, o.topic, o.partition, o.producer_id): o.offset for g in state.groups for o in g.pending_offsets}


def kinds(state: GroupPartitionState) -> list[str]:
    return [f.kind for f in state.findings]


# the generator's record helpers, short
def commit(group: str, topic: str, partition: int, offset: int | None = None, **kw):
    return generator().offset_commit(group, topic, partition, offset, **kw)


def group_record(group: str, members=(), **kw):
    return generator().group_metadata(group, members, **kw)


def member(member_id: str, topics: list[str], assignment: dict[str, list[int]], **kw) -> dict:
    return generator().consumer_member(member_id, topics, assignment, **kw)


def record(record_type: int, key: dict, version: int = 0, value: dict | None = None):
    return generator().coordinator_record(record_type, key, version, value)
