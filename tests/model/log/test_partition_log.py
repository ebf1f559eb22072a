"""The partition log is read once and can be rebuilt from table rows.

Each command that needs a replica walks its segments once: every batch header is parsed once
(counted by wrapping the two header parsers the segment walker dispatches to), and the same
analyses give the same answers on a partition log rebuilt from rows of batch headers, with no
segment file at hand.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.analysis.log.log_loading import load_partition
from kreplica.analysis.replication.divergence import compare_all
from kreplica.analysis.replication.truncation import plan_truncations
from kreplica.cli.main import app
from kreplica.formats.log import default_records, legacy_records
from kreplica.model.logdir.log_dir import find_log_dirs
from kreplica.model.log.partition_log import (
    BATCH_COLUMNS,
    RecordsUnavailable,
    iter_batch_records,
    partition_log_from_rows,
    read_partition_log,
)
from kreplica.model.log.replica import read_replicas
from kreplica.model.versions import Protocol, parse_kafka_version
from tests.conftest import FIXTURES

SCENARIOS = FIXTURES / "scenarios"


@pytest.fixture()
def parses(monkeypatch) -> Counter:
    """Counts header parses per (segment, position)."""
    seen: Counter = Counter()
    for module, name in ((default_records, "parse_header"), (legacy_records, "parse_entry")):
        original = getattr(module, name)

        def counting(buf, position, *args, _original=original, **kwargs):
            seen[(kwargs.get("path"), position)] += 1
            return _original(buf, position, *args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return seen


def _replicas(scenario: str) -> list[str]:
    return sorted(str(p / "orders-0") for p in (SCENARIOS / scenario).glob("broker-*"))


@pytest.mark.parametrize("scenario", ["kip101-scenario-1", "divergent-middle", "legacy-format"])
def test_truncate_plan_parses_each_batch_once(parses: Counter, scenario: str) -> None:
    leader, *followers = _replicas(scenario)
    args = ["truncate-plan", "--leader", leader, "-f", "ndjson"]
    for f in followers:
        args += ["--follower", f]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    assert parses and set(parses.values()) == {1}
    walked = {path for path, _ in parses}
    assert all(any(path.startswith(r) for path in walked) for r in [leader, *followers])


def test_inspect_dir_parses_each_batch_once(parses: Counter) -> None:
    result = CliRunner().invoke(app, ["inspect-dir", str(FIXTURES / "logs"), "-f", "ndjson"])
    assert result.exit_code in (0, 1), result.output
    partitions = [json.loads(line) for line in result.stdout.splitlines() if '"partition"' in line]
    assert partitions and parses and set(parses.values()) == {1}


def _rows(log) -> tuple[list[dict], list[dict], list[dict]]:
    segment_rows = [{"path": s.path, "file_size": s.file_size, "valid_bytes": s.valid_bytes,
                     "stopped_by": s.stopped_by} for s in log.segments]
    batch_rows = [dict(zip(BATCH_COLUMNS, b)) for s in log.segments for b in s.batches]
    marker_rows = [{"path": s.path, **asdict(m)} for s in log.segments for m in s.markers.values()]
    return segment_rows, batch_rows, marker_rows


@pytest.mark.parametrize("scenario", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_a_partition_log_from_rows_gives_the_same_answers(scenario: str) -> None:
    paths = _replicas(scenario)
    from_files = read_replicas(paths, None, {})
    from_rows = []
    for log in from_files:
        segment_rows, batch_rows, marker_rows = _rows(log)
        rebuilt = partition_log_from_rows(log.partition, log.log_dir, log.checkpoints, segment_rows, batch_rows,
                                          marker_rows=marker_rows, label=log.label,
                                          epoch_checkpoint=log.epoch_checkpoint)
        assert rebuilt.batches == log.batches
        assert (rebuilt.lineage, rebuilt.batch_cache, rebuilt.log_end_offset, rebuilt.high_watermark) == \
               (log.lineage, log.batch_cache, log.log_end_offset, log.high_watermark)
        for version in ("0.11", "2.5", "4.0"):
            v = parse_kafka_version(version)
            assert load_partition(rebuilt, kafka_version=v) == load_partition(log, kafka_version=v)
        from_rows.append(rebuilt)
    if len(from_files) > 1:
        for protocol in Protocol:
            a = plan_truncations(from_files, protocol=protocol, kafka_version=parse_kafka_version("4.0"))
            b = plan_truncations(from_rows, protocol=protocol, kafka_version=parse_kafka_version("4.0"))
            assert [vars(x) for x in a] == [vars(y) for y in b]
        # the rows name the segment files, which are here: divergence reads the same records
        assert compare_all(from_rows) == compare_all(from_files)


def test_records_of_a_log_from_rows_away_from_its_evidence_are_unavailable() -> None:
    (log,) = read_replicas(_replicas("same-records-other-batches")[1:], None, {})
    segment_rows, batch_rows, marker_rows = _rows(log)
    moved = {s.path: "hdfs://evidence/" + Path(s.path).name for s in log.segments}
    rebuilt = partition_log_from_rows(
        log.partition, log.log_dir, log.checkpoints, [{**r, "path": moved[r["path"]]} for r in segment_rows],
        [{**r, "path": moved[r["path"]]} for r in batch_rows], label=log.label)
    with pytest.raises(RecordsUnavailable, match="hdfs://evidence/"):
        list(iter_batch_records(rebuilt, rebuilt.batches))
    (d,) = compare_all([*read_replicas(_replicas("same-records-other-batches")[:1], None, {}), rebuilt])
    assert [(r.first, r.last, r.kind) for r in d.ranges] == [(0, 9, "batches_differ")]
    assert d.first_divergent_offset is None and "hdfs://evidence/" in d.records_unread


def test_records_are_read_where_the_walk_found_them() -> None:
    (log,) = read_replicas(_replicas("same-records-other-batches")[1:], None, {})
    got = [(b.base_offset, [r.offset for r in records], whole) for b, records, whole in iter_batch_records(
        log, log.batches)]
    assert got == [(0, [0, 1], True), (2, [2, 3, 4], True), (5, [5, 6, 7, 8, 9], True)]


def test_diverge_parses_each_batch_once(parses: Counter) -> None:
    # the records of differing batches are read at their recorded positions: no header is parsed again
    result = CliRunner().invoke(app, ["diverge", *_replicas("same-records-other-batches"), "-f", "ndjson"])
    assert result.exit_code == 0, result.output
    assert parses and set(parses.values()) == {1}


def test_a_log_directory_shares_its_checkpoints() -> None:
    (log_dir,) = find_log_dirs([str(SCENARIOS / "kip101-scenario-1" / "broker-1")])
    log = read_partition_log(log_dir.partitions[0], log_dir)
    assert log.label.startswith("broker-") and log.batches and log.log_end_offset == log.batches[-1].last_offset + 1


@pytest.mark.parametrize(("checkpointed", "start_end"), [
    pytest.param(None, (0, 0), id="no-checkpoint-at-0"),
    pytest.param(7, (7, 7), id="at-the-checkpointed-log-start"),
])
def test_a_partition_without_segments_loads_at_its_log_start(tmp_path, checkpointed, start_end) -> None:
    """LogLoader.load: a partition directory with no segment gets an empty one at the
    checkpointed log start offset (``LogSegment.open(dir, logStartOffsetCheckpoint, ...)``): its
    log start and log end are both there, never an end below the start."""
    from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint
    from kreplica.model.log.partition_log import read_partition_log

    root = tmp_path / "broker-1"
    (root / "orders-3").mkdir(parents=True)
    (root / "meta.properties").write_text("version=0\nbroker.id=1\n")
    (root / "orders-3" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    if checkpointed is not None:
        (root / "log-start-offset-checkpoint").write_bytes(build_offset_checkpoint({("orders", 3): checkpointed}))
    log_dir = find_log_dirs([str(root)])[0]
    log = read_partition_log(log_dir.partitions[0], log_dir)
    assert (log.log_start_offset, log.log_end_offset) == start_end
