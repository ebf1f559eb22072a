"""SOURCE paths of ``kreplica groups`` resolved (:func:`kreplica.model.coordinator.sources.find_group_sources`):
a path that holds no ``__consumer_offsets`` partition is refused naming that path (the command
prints ``kreplica: error: PATH: reason`` on one line and exits 2: tests/cli/commands/test_groups.py)."""

from __future__ import annotations

import pytest

from kreplica.formats.mapped import EvidenceError
from kreplica.model.coordinator.sources import find_group_sources
from tests.builders.groups import commit, write
from tests.conftest import FIXTURES


def _segment(tmp_path) -> str:
    return str(next((write(tmp_path, [[commit("g", "t", 0, 1)]]) / "__consumer_offsets-0").glob("*.log")))


def _unnamed(tmp_path) -> str:
    """Segments in a directory whose name is no ``<topic>-<n>``: a partition of no known topic."""
    import shutil

    folder = tmp_path / "copied-segments"
    folder.mkdir()
    shutil.copy(FIXTURES / "logs" / "orders-0" / "00000000000000000000.log", folder)
    return str(folder)


@pytest.mark.parametrize(("path", "reason"), [
    pytest.param(_segment, "is a file, not a broker log directory or a __consumer_offsets-N directory (kreplica "
                 "inspect-log reads segment files)", id="a-file"),
    pytest.param(lambda _t: str(FIXTURES / "logs" / "orders-0"), "is a partition of topic orders, not of "
                 "__consumer_offsets: give a broker log directory or a __consumer_offsets-N directory",
                 id="data-partition"),
    pytest.param(lambda t: _unnamed(t), "is a partition directory, not of __consumer_offsets: give a broker log "
                 "directory or a __consumer_offsets-N directory", id="segments-in-a-directory-of-no-partition-name"),
])
def test_a_path_refused_is_named(tmp_path, path, reason) -> None:
    raw = path(tmp_path)
    with pytest.raises(EvidenceError) as refused:
        find_group_sources([raw])
    assert (refused.value.path, refused.value.reason) == (raw, reason)
    assert str(refused.value) == f"{raw}: {reason}"


def test_no_offsets_partition_names_the_first_path(tmp_path) -> None:
    logs = str(FIXTURES / "logs")
    with pytest.raises(EvidenceError) as refused:
        find_group_sources([logs])
    assert refused.value.path == logs
    assert refused.value.reason == ("holds no __consumer_offsets partition (partitions found: compacted-0, "
                                    "legacy-v0-0, legacy-v1-0, metrics-0, orders-0, payments-0): give the log "
                                    "directories of the brokers that hosted the group coordinators")


@pytest.mark.parametrize(("names", "shown"), [
    pytest.param((), "none", id="none"),
    # at most 8 names, sorted
    pytest.param([f"a-{n}" for n in (8, 0, 1, 2, 3, 4, 5, 6, 7)], "a-0, a-1, a-2, a-3, a-4, a-5, a-6, a-7",
                 id="first-eight"),
])
def test_no_offsets_partition_names_what_was_found(tmp_path, names, shown) -> None:
    import shutil

    root = tmp_path / "broker"
    root.mkdir()
    (root / "meta.properties").write_text("version=0\nbroker.id=1\n")
    for name in names:
        (root / name).mkdir()
        shutil.copy(FIXTURES / "logs" / "orders-0" / "00000000000000000000.log", root / name)
    with pytest.raises(EvidenceError) as refused:
        find_group_sources([str(root)])
    assert refused.value.reason == (f"holds no __consumer_offsets partition (partitions found: {shown}): give the "
                                    "log directories of the brokers that hosted the group coordinators")


def test_consumer_offsets_paths_keeps_every_path_that_holds_group_evidence(tmp_path) -> None:
    """Each path is judged on its own: a ``__consumer_offsets-N`` directory, a log directory
    holding one; not a log directory without one, nor one whose only such directory is a
    partition Kafka deleted (``UnifiedLog.logDeleteDirName``: ``<topic>-<n>.<id>-delete``), nor
    a path that cannot be listed; the order of the paths is kept."""
    from kreplica.model.coordinator.sources import consumer_offsets_paths

    holder = write(tmp_path, [[commit("g", "t", 0, 1)]], partition=3)
    partition = str(write(tmp_path, [[commit("g", "t", 0, 1)]]) / "__consumer_offsets-0")
    deleted = tmp_path / "deleted"
    (deleted / "__consumer_offsets-7.0f5e1c4b9a7d4e0c8f3b2a1d6c5e4f3a-delete").mkdir(parents=True)
    missing = str(tmp_path / "no-such-dir")
    paths = [partition, str(FIXTURES / "logs"), missing, str(deleted), str(holder)]
    assert consumer_offsets_paths(paths) == [partition, str(holder)]


def test_data_partition_bounds_read_the_checkpoints(tmp_path) -> None:
    """(log start, log end, recorded end) of a data partition: the log start offset is the
    checkpoint's or the first segment's base, whichever is later (``UnifiedLog``'s
    logStartOffset, as assemble_partition_log computes it); the recorded end is the largest of
    the log end, the high watermark (replication-offset-checkpoint) and the recovery point."""
    import shutil

    from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
    from kreplica.model.coordinator.sources import data_partition_bounds
    from kreplica.model.logdir.log_dir import read_checkpoints, scan_log_dir

    root = tmp_path / "broker-1"
    shutil.copytree(FIXTURES / "groups" / "broker-1", root)
    for name, offsets in (("log-start-offset-checkpoint", {("orders", 0): 5}),
                          ("replication-offset-checkpoint", {("orders", 0): 40, ("orders", 1): 3}),
                          ("recovery-point-offset-checkpoint", {("orders", 0): 20})):
        (root / name).write_bytes(build_offset_checkpoint(offsets))
    log_dir = scan_log_dir(root)
    cps = read_checkpoints(log_dir)
    bounds = {p.name: data_partition_bounds(p, cps) for p in log_dir.partitions if p.name.startswith("orders")}
    assert bounds == {"orders-0": (5, 30, 40), "orders-1": (0, 12, 12)}


def test_the_group_evidence_span_bounds_every_replica(tmp_path) -> None:
    """group_evidence_span: the first offset and time of any replica read, the last of any (a
    point outside is refused: "is before the evidence", "is beyond the evidence")."""
    from kreplica.model.coordinator.replay import NEW_COORDINATOR
    from kreplica.model.coordinator.sources import group_evidence_span
    from kreplica.model.evidence_span import EvidenceSpan
    from tests.builders.groups import TS, load

    entries = [[commit("g", "t", 0, n)] for n in range(3)]           # offsets 0-2, stamped TS + o * 1000
    whole = load(tmp_path, entries, NEW_COORDINATOR)
    later = load(tmp_path, entries, NEW_COORDINATOR, log_start=1)
    assert group_evidence_span([later, whole]) == EvidenceSpan("log", 0, 2, TS, TS + 2000)
    assert group_evidence_span([later]) == EvidenceSpan("log", 1, 2, TS + 1000, TS + 2000)


def _broker_dir(tmp_path, *, meta: bool = True):
    """fixtures/groups/broker-1 (``__consumer_offsets-0``, ``orders-0``, ``orders-1``) with an
    empty ``orders-7/`` (no partition's file: not a partition) and an ``orders-8/`` holding only
    ``partition.metadata`` (a partition with no segment yet)."""
    import shutil

    root = tmp_path / "broker-1"
    shutil.copytree(FIXTURES / "groups" / "broker-1", root)
    if not meta:
        (root / "meta.properties").unlink()
    (root / "orders-7").mkdir()
    (root / "orders-8").mkdir()
    (root / "orders-8" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    return root


def test_each_replica_is_read_once_and_data_partitions_are_the_others(tmp_path) -> None:
    """A ``__consumer_offsets-N`` directory given and then the log directory holding it is one
    replica, and the log directory's other partitions are still its data; a directory holding no
    partition's file is not a partition."""
    root = _broker_dir(tmp_path)
    sources = find_group_sources([str(root / "__consumer_offsets-0"), str(root)])
    assert {n: [p.name for p, _ in r] for n, r in sources.replicas.items()} == {0: ["__consumer_offsets-0"]}
    assert {key: [p.name for p, _ in r] for key, r in sources.data.items()} == {
        ("orders", 0): ["orders-0"], ("orders", 1): ["orders-1"], ("orders", 8): ["orders-8"]}


@pytest.mark.parametrize(("meta", "label"), [
    pytest.param(True, "broker-1", id="meta.properties-names-the-broker"),
    pytest.param(False, None, id="no-meta.properties-the-path"),
])
def test_data_replicas_are_labelled_by_broker_else_by_path(tmp_path, meta, label) -> None:
    from kreplica.model.coordinator.sources import DataReplica, LogDirFiles

    root = _broker_dir(tmp_path, meta=meta)
    sources = find_group_sources([str(root)])
    path = str(root / "orders-1")
    assert LogDirFiles().data_replicas(sources.data[("orders", 1)]) == [
        DataReplica(label or path, path, 0, 12, 12)]


@pytest.mark.parametrize(("checkpointed", "bounds"), [
    pytest.param(None, (0, 0, 0), id="no-checkpoint-at-0"),
    pytest.param(5, (5, 5, 5), id="at-the-checkpointed-log-start"),
])
def test_a_partition_without_segments_ends_at_its_log_start(tmp_path, checkpointed, bounds) -> None:
    """LogLoader.load: a partition directory without segments gets an empty segment at the
    checkpointed log start offset (``LogSegment.open(dir, logStartOffsetCheckpoint, ...)``), so
    its log start and log end are both there (0 without a checkpoint)."""
    from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
    from kreplica.model.coordinator.sources import data_partition_bounds
    from kreplica.model.logdir.log_dir import read_checkpoints

    root = _broker_dir(tmp_path)
    if checkpointed is not None:
        (root / "log-start-offset-checkpoint").write_bytes(build_offset_checkpoint({("orders", 8): checkpointed}))
    sources = find_group_sources([str(root)])
    (partition, log_dir), = sources.data[("orders", 8)]
    assert data_partition_bounds(partition, read_checkpoints(log_dir)) == bounds
