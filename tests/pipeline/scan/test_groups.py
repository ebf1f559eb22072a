"""Which ``__consumer_offsets`` replica answers: ``fleet analyze`` (the scan's ``group_offsets``
rows, :func:`committed_by_partition`) and ``groups`` (:func:`committed_offsets`) take the same
one, :func:`~kreplica.analysis.groups.replicas.answering_replica`.

Kafka decides: the group coordinator is the partition's leader and loads its own log from the log
start to the log end offset (``CoordinatorLoaderImpl.doLoad``: ``FetchIsolation.LOG_END``), and no
follower is ahead of the leader, so the replica with the highest log end answers, not the one
whose commits reach the highest record offset. The rows are made by the scan's own stage 1 code
(:func:`coordinator_rows`, keyed as stage 1 keys them) without Spark, which the Parquet round trip
of ``tests/pipeline/test_fleet_groups.py`` adds; nothing here needs the ``fleet`` extra.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kreplica.analysis.groups.committed import committed_offsets
from kreplica.formats.mapped import EvidenceError
from kreplica.model.logdir.log_dir import read_checkpoints, scan_log_dir
from kreplica.pipeline.evidence.layout import discover
from kreplica.pipeline.scan.groups import committed_by_partition, coordinator_rows
from tests.builders.groups import commit, group_record, write
from tests.conftest import FIXTURES, ORACLE


def _log_dirs(root: Path) -> list:
    """The fleet's log directories under ``root``, in the order the fleet ranks replicas in."""
    return sorted(discover(str(root)), key=lambda d: (d.broker, d.path))


def _rows(root: Path) -> list[dict]:
    rows = []
    for fleet_dir in _log_dirs(root):
        log_dir = scan_log_dir(fleet_dir.path)
        cps = read_checkpoints(log_dir)
        for partition in log_dir.partitions:
            key = (fleet_dir.broker, fleet_dir.path, *(partition.key or (partition.name, -1)))
            rows += [row for _table, row in coordinator_rows(key, partition, log_dir, cps)]
    return rows


def _committed(rows: list[dict]) -> list:
    return sorted((o for offsets in committed_by_partition(rows).values() for o in offsets), key=repr)


def _fleet(root: Path) -> list:
    return _committed(_rows(root))


def _groups(root: Path) -> list:
    return sorted(committed_offsets([d.path for d in _log_dirs(root)]), key=repr)


def test_the_longest_log_answers_not_the_latest_commit(tmp_path) -> None:
    """Broker 1 holds the whole log: ``h``'s commit, then its tombstone (offset 3, the log end 4);
    broker 2 lags at log end 3, its newest commit at offset 2, above broker 1's newest (1). The
    coordinator loads the leader's log to its end, so ``h`` has no committed offset (counter-case:
    the replica with the highest commit record offset, broker 2, still has it)."""
    entries = [[group_record("g", [])], [commit("g", "t", 0, 5)], [commit("h", "t", 0, 1)], [commit("h", "t", 0)]]
    root = tmp_path / "fleet"
    shutil.move(write(tmp_path, entries), root / "1" / "logs")
    shutil.move(write(tmp_path, entries[:3]), root / "2" / "logs")
    fleet, groups = _fleet(root), _groups(root)
    assert fleet == groups
    assert [(o.group, o.offset) for o in fleet] == [("g", 5)]


def test_a_longest_log_with_no_offset_left_still_answers(tmp_path) -> None:
    """Broker 1, the leader, committed ``g`` then deleted it (the tombstone at offset 1, log end 2):
    it holds no offset at all. Broker 2 lags at log end 1 with the commit. The coordinator loads
    the leader's log (``CoordinatorLoaderImpl.doLoad``): ``g`` has no committed offset, so the scan
    must say broker 1's log exists and where it ends though it has no offset row (counter-case:
    without broker 1, broker 2's commit answers)."""
    entries = [[commit("g", "t", 0, 5)], [commit("g", "t", 0)]]
    root = tmp_path / "fleet"
    shutil.move(write(tmp_path, entries), root / "1" / "logs")
    shutil.move(write(tmp_path, entries[:1]), root / "2" / "logs")
    fleet, groups = _fleet(root), _groups(root)
    assert fleet == groups == []
    shutil.rmtree(root / "1")
    assert [(o.group, o.offset) for o in _fleet(root)] == [("g", 5)] == [(o.group, o.offset) for o in _groups(root)]


def test_rows_of_an_older_scan_tie_and_the_first_replica_answers(tmp_path) -> None:
    """A scan before ``replica_log_end_offset`` has no log ends to compare: the first replica in
    broker and log directory order answers (here the shorter one, broker 1)."""
    entries = [[commit("g", "t", 0, 5)], [commit("g", "t", 0, 9)]]
    root = tmp_path / "fleet"
    shutil.move(write(tmp_path, entries[:1]), root / "1" / "logs")
    shutil.move(write(tmp_path, entries), root / "2" / "logs")
    rows = _rows(root)
    assert [(o.group, o.offset) for o in _committed(rows)] == [("g", 9)]
    old = [{k: v for k, v in r.items() if k != "replica_log_end_offset"} for r in rows]
    assert [(o.group, o.offset) for o in _committed(old)] == [("g", 5)]


def _roots() -> list[Path]:
    """Every fixture and wild directory laid out as a fleet (brokers' log directories) that holds
    a ``__consumer_offsets`` partition."""
    found = {FIXTURES / "groups", FIXTURES / "scenarios" / "unclean-with-groups"}
    wild = ORACLE / "wild"
    if wild.is_dir():
        found |= {p.parent.parent for p in wild.glob("**/__consumer_offsets-*") if p.is_dir()}
    return sorted(found)


@pytest.mark.parametrize("root", _roots(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_the_fleet_commits_what_groups_answers(root) -> None:
    """On every fixture and wild directory, ``fleet analyze``'s committed offsets are ``groups``'."""
    try:
        log_dirs = _log_dirs(root)
    except EvidenceError as exc:
        pytest.skip(f"not laid out as a fleet: {exc}")
    if not any(p.is_dir() for d in log_dirs for p in Path(d.path).glob("__consumer_offsets-*")):
        pytest.skip("the fleet's log directories hold no __consumer_offsets partition")
    assert _fleet(root) == _groups(root)
