"""Every command that answers from a replica's log reports the findings of that log that bear
on its answer (issue 20): ``epochs`` on a log whose first batch has a negative base offset
printed "epoch 0 -1-98" and exited 0, while ``inspect-log`` and ``inspect-dir`` report the
same bytes as an error (exit 1).

The replicas are written by the fixture generator's ``replica`` helper (kreplica's writers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.analysis.log.log_findings import bears_on_answer
from kreplica.cli.main import app
from kreplica.formats.findings import Finding
from tests.builders.replicas import generator
from tests.conftest import FIXTURES

KIND = "offset_out_of_segment_range"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """broker-1 holds a first batch at base offset -1 in segment 0 (an offset the segment
    cannot hold); broker-2 is a healthy copy."""
    root = tmp_path_factory.mktemp("negative-base")
    g = generator()
    g.replica(root, 1, [(-1, 100, 0, "a"), (99, 10, 1, "b")], hw=109, checkpoint=[(0, 0), (1, 99)], segment_base=0)
    g.replica(root, 2, [(0, 100, 0, "a"), (100, 10, 1, "b")], hw=110, checkpoint=[(0, 0), (1, 100)])
    return root


def _commands(damaged: Path, healthy: Path) -> dict[str, list]:
    return {
        "epochs": ["epochs", damaged],
        "offset-for-epoch": ["offset-for-epoch", damaged, "--epoch", 1],
        "truncate-plan": ["truncate-plan", "--leader", healthy, "--follower", damaged],
        "diverge": ["diverge", damaged, healthy],
    }


COMMANDS = [pytest.param(name, id=name) for name in ("epochs", "offset-for-epoch", "truncate-plan", "diverge")]


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def _args(root: Path, command: str) -> list:
    return _commands(root / "broker-1" / "orders-0", root / "broker-2" / "orders-0")[command]


def test_inspect_log_reports_the_same_bytes(root: Path) -> None:
    result = run("inspect-log", root / "broker-1" / "orders-0" / "00000000000000000000.log", "-f", "ndjson")
    assert result.exit_code == 1
    assert KIND in {o.get("kind") for o in map(json.loads, result.stdout.splitlines())}


@pytest.mark.parametrize("command", COMMANDS)
def test_machine_output_starts_with_the_logs_findings_and_exits_1(root: Path, command: str) -> None:
    result = run(*_args(root, command), "-f", "ndjson")
    assert result.exit_code == 1, result.stdout + result.stderr
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    first = objs[0]
    assert first["type"] == "finding" and first["kind"] == KIND and first["severity"] == "error"
    assert first["path"].endswith("broker-1/orders-0/00000000000000000000.log") and first["position"] == 0
    assert sum(o["type"] == "finding" and o["kind"] == KIND for o in objs) == 1   # once per replica
    assert objs[1]["type"] != "finding" or objs[1]["kind"] != KIND


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_every_machine_format_carries_them(root: Path, command: str, fmt: str) -> None:
    result = CliRunner().invoke(app, [str(a) for a in (*_args(root, command), "-f", fmt)])
    assert result.exit_code == 1
    if fmt == "json":
        objs = json.loads(result.stdout)
    else:
        import msgpack

        objs = list(msgpack.Unpacker(__import__("io").BytesIO(result.stdout_bytes)))
    assert objs[0]["type"] == "finding" and objs[0]["kind"] == KIND


@pytest.mark.parametrize("command", COMMANDS)
def test_text_lists_them_under_the_replica(root: Path, command: str) -> None:
    result = run(*_args(root, command), "-f", "text")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("broker-1: its log has 1 error")
    errors = [n for n, line in enumerate(lines) if line.startswith("  ERROR ")]
    assert len(errors) == 1 and lines[errors[0]].startswith(f"  ERROR {KIND} offsets -1-98 of the batch at byte 0")
    assert all(len(line) <= 80 for line in lines)


@pytest.mark.parametrize("command", COMMANDS)
def test_healthy_replicas_say_nothing_more(command: str) -> None:
    """The counter-case: fixtures/scenarios replicas are healthy; no log finding is added."""
    scenario = FIXTURES / "scenarios" / "kip279-fast-failover"
    args = _commands(scenario / "broker-1" / "orders-0", scenario / "broker-2" / "orders-0")[command]
    result = run(*args, "-f", "ndjson")
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert not [o for o in objs if o["type"] == "finding" and not o["path"].endswith("leader-epoch-checkpoint")]
    assert "its log has" not in run(*args, "-f", "text").stdout


@pytest.mark.parametrize("finding, bears", [
    pytest.param(Finding("crc_mismatch", "x.log", 0, "m"), True, id="error"),
    pytest.param(Finding("epoch_checkpoint_offset_mismatch", "c", 0, "m", severity="warning"), True,
                 id="warning-about-epochs"),
    pytest.param(Finding("trailing_zeros", "x.log", 0, "m"), False, id="preallocated-zeros-warning"),
    pytest.param(Finding("index_preallocated", "x.index", 0, "m"), False, id="info"),
])
def test_which_findings_bear_on_the_answer(finding: Finding, bears: bool) -> None:
    assert bears_on_answer(finding) is bears


def test_fleet_analyze_prints_the_same_log_findings_first(root: Path) -> None:
    """``fleet analyze`` runs these analyses on a partition rebuilt from the scan's rows: its
    objects for the partition begin with the same finding objects as ``epochs`` (checked row by
    row, without Spark; tests/pipeline/test_fleet.py runs the whole pipeline)."""
    pytest.importorskip("pyarrow", reason="the fleet tables are Parquet (the fleet extra)")
    from kreplica.model.log.replica import read_replicas
    from kreplica.model.versions import DEFAULT_VERSION, Protocol
    from kreplica.pipeline.analyze import partitions as analyze
    from kreplica.pipeline.tables import schemas as tables
    from kreplica.report.schemas.fleet import partition_objects

    logs = read_replicas([str(root / f"broker-{b}" / "orders-0") for b in (1, 2)], None, {})
    replicas, segments, batches, markers, findings = [], [], [], [], []
    for log in logs:
        key = (log.broker_id, log.log_dir.path, *log.key)
        replicas.append(tables.replica_row(key, "meta.properties", log))
        for s in log.segments:
            segments.append(tables.segment_row(key, s.files, s.file_size, s.valid_bytes, s.stopped_by,
                                               len(s.findings), s.txn_index_below_base))
            batches.extend(dict(zip(tables.BATCHES.names, tables.batch_row(key, b))) for b in s.batches)
            markers.extend(tables.marker_row(key, s.path, m) for m in s.markers.values())
            findings.extend(tables.finding_row(key, f) for f in s.findings)
    result = analyze.analyze_partition("orders", 0, replicas, segments, batches, markers, findings, facts=None,
                                       facts_source=None, protocol=Protocol.DIVERGING_EPOCH,
                                       kafka_version=DEFAULT_VERSION)
    objs = partition_objects(result, DEFAULT_VERSION)
    epochs = [json.loads(line) for line in run("epochs", *(log.path for log in logs), "-f", "ndjson").stdout.splitlines()]
    assert [o for o in objs if o["type"] in ("epochs", "finding")] == epochs
    assert objs[0]["kind"] == KIND
