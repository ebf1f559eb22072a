"""Files a command writes where the user said (``plan-reassign --output-dir``, ``truncate-plan
--output-dir``) cannot be mistaken for others: a directory holding earlier output is refused (exit 2,
naming what it holds) unless ``--overwrite``, which removes only that command's own files; every
file written is named; the throttle to give Kafka's tool is printed in its unit (bytes/s); and
exported records point into the exported segment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

ASSIGNMENT = FIXTURES / "reassign" / "assignment.json"
PLAN = ["plan-reassign", "--assignment", str(ASSIGNMENT), "--brokers", "1-6", "decommission", "4"]
SCENARIOS = FIXTURES / "scenarios"


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "1000"})   # text: one line each


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def plan_summary(result) -> dict:
    (plan,) = [o for o in ndjson(result) if o["type"] == "plan"]
    return plan


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- plan-reassign --output-dir ------------------------------------------------------------------


def test_an_earlier_plan_in_the_output_dir_is_refused_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    assert run(*PLAN, "--phases", "2", "--output-dir", out, "-f", "ndjson").exit_code == 0
    before = snapshot(out)
    result = run(*PLAN, "--output-dir", out, "-f", "ndjson")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert str(out) in line and "phase-1.json, phase-2.json, proposal.json, rollback.json" in line
    assert "--overwrite" in line
    assert snapshot(out) == before


def test_overwrite_replaces_the_earlier_plan_and_keeps_everything_else(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    assert run(*PLAN, "--phases", "3", "--output-dir", out, "-f", "ndjson").exit_code == 0
    (out / "notes.txt").write_text("mine")
    (out / "phase-x.json").write_text("mine too")
    (out / "old").mkdir()
    result = run(*PLAN, "--output-dir", out, "--overwrite", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(out)) == ["notes.txt", "old", "phase-x.json", "proposal.json", "rollback.json"]
    assert (out / "notes.txt").read_text() == "mine"
    plan = plan_summary(result)
    assert plan["files"] == [str(out / "proposal.json"), str(out / "rollback.json")]
    assert all(str(out / f"phase-{n}.json") in result.stderr for n in (1, 2, 3)), "the removed files are named"


def test_a_directory_of_other_files_is_refused_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    refused = run(*PLAN, "--output-dir", tmp_path, "-f", "ndjson")
    assert refused.exit_code == 2 and "notes.txt" in refused.stderr
    assert os.listdir(tmp_path) == ["notes.txt"]
    written = run(*PLAN, "--output-dir", tmp_path, "--overwrite", "-f", "ndjson")
    assert written.exit_code == 0
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "proposal.json", "rollback.json"]


def test_a_link_under_a_plan_files_name_is_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("not kreplica's")
    out = tmp_path / "plan"
    out.mkdir()
    (out / "proposal.json").symlink_to(target)
    result = run(*PLAN, "--output-dir", out, "--overwrite", "-f", "ndjson")
    assert result.exit_code == 2 and "proposal.json" in result.stderr
    assert target.read_text() == "not kreplica's" and (out / "proposal.json").is_symlink()


@pytest.mark.parametrize("where", [pytest.param("file", id="a-file"), pytest.param("file/sub", id="under-a-file")])
def test_an_output_dir_that_cannot_be_a_directory_is_refused(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("")
    result = run(*PLAN, "--output-dir", tmp_path / where, "-f", "ndjson")
    assert result.exit_code == 2
    assert str(tmp_path / where) in result.stderr and "--output-dir" in result.stderr


def test_an_output_dir_that_cannot_be_written_is_refused(tmp_path: Path, monkeypatch) -> None:
    # the tests run as root, for whom every directory is writable: os.access says what a user would meet
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: access(path, mode, **kw)
                        and not (Path(path) == tmp_path and mode & os.W_OK))
    result = run(*PLAN, "--output-dir", tmp_path, "-f", "ndjson")
    assert result.exit_code == 2 and "not writable" in result.stderr


# -- plan-reassign --throttle: the value Kafka's tool takes ----------------------------------------


def test_each_phase_names_the_throttle_to_give_kafkas_tool(tmp_path: Path) -> None:
    result = run(*PLAN, "--phases", "2", "--throttle", "50", "--output-dir", tmp_path, "-f", "ndjson")
    phases = plan_summary(result)["phases"]
    assert [(p["file"], p["throttle"]) for p in phases] == [(str(tmp_path / "phase-1.json"), 50_000_000),
                                                           (str(tmp_path / "phase-2.json"), 50_000_000)]
    text = run(*PLAN, "--phases", "2", "--throttle", "50", "--output-dir", tmp_path / "again", "-f", "text").stdout
    for n in (1, 2):
        (line,) = [x for x in text.splitlines() if x.startswith(f"phase {n}:")]
        assert line.endswith(f"phase-{n}.json (kafka-reassign-partitions.sh --execute --throttle 50000000)")


def test_one_phase_names_the_throttle_with_the_proposal(tmp_path: Path) -> None:
    text = run(*PLAN, "--throttle", "50", "--output-dir", tmp_path, "-f", "text").stdout
    assert f"wrote {tmp_path / 'proposal.json'} (kafka-reassign-partitions.sh --execute --throttle 50000000)" in text
    assert plan_summary(run(*PLAN, "--throttle", "50", "-f", "ndjson"))["phases"][0]["throttle"] == 50_000_000


def test_without_a_throttle_phases_carry_none() -> None:
    assert [p["throttle"] for p in plan_summary(run(*PLAN, "--phases", "2", "-f", "ndjson"))["phases"]] == [None, None]


def test_a_fractional_rate_converts_exactly() -> None:
    # 4.1 * 10^6 is 4099999.9999999995 in binary floating point
    result = run(*PLAN, "--throttle", "4.1", "-f", "ndjson")
    assert {o["rate"] for o in ndjson(result) if o["type"] == "throttle"} == {4_100_000}
    assert plan_summary(result)["phases"][0]["throttle"] == 4_100_000


# -- truncate-plan --output-dir ----------------------------------------------------------------------


def truncate(scenario: str, *extra) -> list[str]:
    return ["truncate-plan", "--leader", SCENARIOS / scenario / "broker-1" / "orders-0",
            "--follower", SCENARIOS / scenario / "broker-2" / "orders-0", *extra]


def test_export_dir_that_is_a_file_is_refused_even_with_nothing_to_export(tmp_path: Path) -> None:
    a_file = tmp_path / "salvage"
    a_file.write_text("")
    nothing = run(*truncate("kip279-fast-failover", "--protocol", "kip101", "-f", "ndjson"))
    assert nothing.exit_code == 0 and ndjson(nothing)[0]["discarded"]["batches"] == 0
    result = run(*truncate("kip279-fast-failover", "--protocol", "kip101", "--output-dir", a_file, "-f", "ndjson"))
    assert result.exit_code == 2 and str(a_file) in result.stderr and "--output-dir" in result.stderr
    assert a_file.read_text() == ""


def test_export_names_every_file_written(tmp_path: Path) -> None:
    out = tmp_path / "salvage"
    result = run(*truncate("kip279-fast-failover", "--output-dir", out, "-f", "ndjson"))
    assert result.exit_code == 1
    (o,) = ndjson(result)
    written = [str(out / "broker-2" / "orders-0.records.ndjson"),
               str(out / "broker-2" / "orders-0" / "00000000000000000002.log")]
    assert o["exported"] == written
    assert sorted(str(p) for p in out.rglob("*") if p.is_file()) == sorted(written)
    text = run(*truncate("kip279-fast-failover", "--output-dir", tmp_path / "text", "-f", "text")).stdout
    assert f"wrote {tmp_path / 'text' / 'broker-2' / 'orders-0.records.ndjson'}" in text
    assert ndjson(run(*truncate("kip279-fast-failover", "-f", "ndjson")))[0]["exported"] == []


def test_an_earlier_export_is_refused_and_overwrite_replaces_only_it(tmp_path: Path) -> None:
    out = tmp_path / "salvage"
    assert run(*truncate("kip279-fast-failover", "--output-dir", out, "-f", "ndjson")).exit_code == 1
    stale = out / "broker-2" / "orders-0" / "00000000000000000001.log"   # an export that began elsewhere
    stale.write_bytes(b"old")
    (out / "broker-2" / "notes.txt").write_text("mine")
    before = snapshot(out)
    refused = run(*truncate("kip279-fast-failover", "--output-dir", out, "-f", "ndjson"))
    assert refused.exit_code == 2 and refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert "broker-2/orders-0.records.ndjson" in line and "00000000000000000001.log" in line and "--overwrite" in line
    assert snapshot(out) == before
    replaced = run(*truncate("kip279-fast-failover", "--output-dir", out, "--overwrite", "-f", "ndjson"))
    assert replaced.exit_code == 1
    assert not stale.exists() and (out / "broker-2" / "notes.txt").read_text() == "mine"
    assert str(stale) in replaced.stderr


def test_exported_records_point_into_the_exported_segment(tmp_path: Path) -> None:
    out = tmp_path / "salvage"
    run(*truncate("unclean-shorter-leader", "--output-dir", out, "-f", "ndjson"))
    (segment,) = out.rglob("*.log")
    exported = [json.loads(line) for line in next(out.rglob("*.records.ndjson")).read_text().splitlines()]
    read_back = [o for o in ndjson(run("inspect-log", "--records", "-f", "ndjson", segment)) if o["type"] == "record"]
    assert [(r["path"], r["batch_position"], r["offset"]) for r in exported] == \
           [(r["path"], r["batch_position"], r["offset"]) for r in read_back]
    assert exported[0]["batch_position"] == 0
    assert all(r["batch_position"] < segment.stat().st_size for r in exported)
