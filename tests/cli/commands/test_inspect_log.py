"""``kreplica inspect-log`` through its command line: output contract, exit codes, filters,
stdin, and the promise that evidence is never modified."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES, generated_fixtures

LOGS = FIXTURES / "logs"
DAMAGED = FIXTURES / "damaged"


@pytest.fixture(autouse=True, params=["compiled", "python"])
def renderer(request, monkeypatch):
    """Every test here runs on both ndjson renderers: the compiled one (kreplica/report/_crender.c,
    with the Python one writing what it hands back) and the pure-Python reference alone; the
    subprocess tests get the same choice through KREPLICA_RENDER."""
    from kreplica.report.schemas import inspect_log

    if request.param == "compiled":
        compiled = inspect_log.load_compiled()
        if compiled is None:
            if os.environ.get("KREPLICA_REQUIRE_COMPILED") == "1":
                pytest.fail("KREPLICA_REQUIRE_COMPILED=1 but the compiled renderer is not built")
            pytest.skip("the compiled renderer is not built here")
        monkeypatch.setattr(inspect_log, "_crender", compiled)
        monkeypatch.delenv("KREPLICA_RENDER", raising=False)
    else:
        monkeypatch.setattr(inspect_log, "_crender", None)
        monkeypatch.setenv("KREPLICA_RENDER", "python")
    return request.param


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(app, list(args), input=input)


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_clean_log_directory_exits_0_with_typed_objects() -> None:
    result = run("inspect-log", "--format", "ndjson", str(LOGS))
    assert result.exit_code == 0, result.output
    objs = ndjson(result)
    assert {o["type"] for o in objs} == {"segment", "batch", "summary"}
    assert all("type" in o for o in objs)
    summaries = [o for o in objs if o["type"] == "summary"]
    assert len(summaries) == len(list(LOGS.glob("*/*.log")))
    assert all(s["recovery"]["truncated_bytes"] == 0 for s in summaries)


@pytest.mark.parametrize("case,kind", [
    pytest.param("crc-flip-0", "crc_mismatch", id="crc-flip"),
    pytest.param("truncated-tail-0", "truncated_tail", id="truncated-tail"),
    pytest.param("huge-length-0", "invalid_length", id="huge-length"),
    pytest.param("bad-magic-0", "invalid_magic", id="bad-magic"),
])
def test_damage_exits_1_with_a_finding_naming_file_and_position(case: str, kind: str) -> None:
    result = run("inspect-log", "-f", "ndjson", str(DAMAGED / case))
    assert result.exit_code == 1
    findings = [o for o in ndjson(result) if o["type"] == "finding" and o["kind"] == kind]
    assert findings and findings[0]["path"].endswith("00000000000000000000.log")
    assert isinstance(findings[0]["position"], int) and findings[0]["severity"] == "error"


def test_zero_tail_is_a_warning_and_exits_0() -> None:
    result = run("inspect-log", "-f", "ndjson", str(DAMAGED / "zero-tail-0"))
    assert result.exit_code == 0
    (finding,) = [o for o in ndjson(result) if o["type"] == "finding"]
    assert finding["kind"] == "trailing_zeros" and finding["severity"] == "warning"


def test_batches_after_a_break_are_listed_and_marked() -> None:
    objs = ndjson(run("inspect-log", "-f", "ndjson", str(DAMAGED / "huge-length-0")))
    batches = [o for o in objs if o["type"] == "batch"]
    before = [b for b in batches if not b["after_break"]]
    after = [b for b in batches if b["after_break"]]
    assert len(before) == 1 and after and after[-1]["last_offset"] == 16
    summary = next(o for o in objs if o["type"] == "summary")
    assert summary["valid_bytes"] == before[-1]["position"] + before[-1]["size"]


def test_records_and_payload_encodings() -> None:
    path = str(LOGS / "orders-0" / "00000000000000000000.log")
    b64 = [o for o in ndjson(run("inspect-log", "--records", "-f", "ndjson", path)) if o["type"] == "record"]
    hexed = [o for o in ndjson(run("inspect-log", "--records", "--payload", "hex", "-f", "ndjson", path))
             if o["type"] == "record"]
    none = [o for o in ndjson(run("inspect-log", "--records", "--payload", "none", "-f", "ndjson", path))
            if o["type"] == "record"]
    assert len(b64) == len(hexed) == len(none) == 17
    for a, h, n in zip(b64, hexed, none):
        if a["value"] is None:
            assert h["value"] is None
        else:
            assert base64.b64decode(a["value"]) == bytes.fromhex(h["value"])
        assert n["value"] is None and n["key"] is None
    assert any(o["value"] is None for o in b64), "fixtures hold tombstones"
    assert any(h["value"] == "" for o in b64 for h in o["headers"]), "empty header value is '' not null"
    assert any(h["value"] is None for o in b64 for h in o["headers"])


def test_filters_select_batches_but_not_totals() -> None:
    path = str(LOGS / "payments-0")
    objs = ndjson(run("inspect-log", "-f", "ndjson", "--control", path))
    batches = [o for o in objs if o["type"] == "batch"]
    assert len(batches) == 2 and all(b["is_control"] for b in batches)
    assert next(o for o in objs if o["type"] == "summary")["batches"] == 9
    pid = [o for o in ndjson(run("inspect-log", "-f", "ndjson", "--producer-id", "7001", path)) if o["type"] == "batch"]
    assert {b["producer_id"] for b in pid} == {7001} and len(pid) == 2
    ranged = [o for o in ndjson(run("inspect-log", "-f", "ndjson", "--records", "--from", "5", "--to", "9", path))
              if o["type"] == "record"]
    assert [r["offset"] for r in ranged] == [5, 6, 7, 8, 9]
    markers = [o for o in ndjson(run("inspect-log", "-f", "ndjson", "--records", "--control", path))
               if o["type"] == "record"]
    assert [(m["control_type"], m["coordinator_epoch"]) for m in markers] == [("commit", 5), ("abort", 6)]


def test_json_is_one_document_and_msgpack_the_same_stream() -> None:
    path = str(LOGS / "compacted-0")
    lines = ndjson(run("inspect-log", "-f", "ndjson", path))
    doc = json.loads(run("inspect-log", "-f", "json", path).stdout)
    assert doc == lines
    packed = CliRunner().invoke(app, ["inspect-log", "-f", "msgpack", path]).stdout_bytes
    assert lines and packed
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(packed)
    assert list(unpacker) == lines


def test_stdin_segment_matches_the_file() -> None:
    path = LOGS / "metrics-0" / "00000000000000000000.log"
    from_file = [o for o in ndjson(run("inspect-log", "-f", "ndjson", str(path))) if o["type"] == "batch"]
    from_stdin = [o for o in ndjson(run("inspect-log", "-f", "ndjson", "-", input=path.read_bytes()))
                  if o["type"] == "batch"]
    assert [dict(b, path="") for b in from_file] == [dict(b, path="") for b in from_stdin]


@pytest.mark.parametrize("args,needle", [
    pytest.param(["inspect-log", "/nonexistent/segment.log"], "/nonexistent/segment.log", id="missing-path"),
    pytest.param(["inspect-log", "--offsets", "x:y", str(LOGS)], "--offsets", id="bad-offsets"),
    pytest.param(["inspect-log", "--from", "x", str(LOGS)], "--from", id="bad-from"),
    pytest.param(["inspect-log", "--format", "yaml", str(LOGS)], "--format", id="bad-format"),
])
def test_bad_usage_and_unreadable_input_exit_2_with_one_line(args: list[str], needle: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == "" or "Usage" not in result.stdout
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_directory_without_segments_is_exit_2(tmp_path: Path) -> None:
    result = run("inspect-log", str(tmp_path))
    assert result.exit_code == 2
    assert str(tmp_path) in result.stderr and "no segment" in result.stderr


def _digest_tree(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.stat()
        out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir", st.st_mode, st.st_mtime_ns)
    return out


def test_evidence_is_not_modified(tmp_path: Path) -> None:
    import shutil

    evidence = tmp_path / "evidence"
    shutil.copytree(FIXTURES / "damaged", evidence / "damaged")
    shutil.copytree(LOGS, evidence / "logs")
    before = _digest_tree(evidence)
    for target in ("logs", "damaged"):
        run("inspect-log", "--records", "-f", "ndjson", str(evidence / target))
        run("inspect-log", "-f", "text", str(evidence / target))
    assert _digest_tree(evidence) == before


def test_console_script_and_python_m_agree() -> None:
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent))
    version = subprocess.run([sys.executable, "-m", "kreplica", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("kreplica ")
    piped = subprocess.run([sys.executable, "-m", "kreplica", "inspect-log", str(LOGS / "orders-0")],
                           capture_output=True, text=True, env=env)
    assert piped.returncode == 0
    assert json.loads(piped.stdout.splitlines()[0])["type"] == "segment", "ndjson is the default off a terminal"


def test_broken_pipe_is_quiet() -> None:
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parent))
    cmd = (f"{sys.executable} -m kreplica inspect-log --records {LOGS} | head -1")
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env)
    assert out.stdout.count("\n") == 1
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr


def test_an_index_file_given_as_a_segment_is_a_usage_error() -> None:
    result = run("inspect-log", str(LOGS / "orders-0" / "00000000000000000000.index"))
    assert result.exit_code == 2
    assert "inspect-index" in result.stderr and "Traceback" not in result.stderr


def test_inspect_dir_on_a_directory_that_is_not_kafka_evidence(tmp_path: Path) -> None:
    (tmp_path / "notes.log").write_text("not a segment")
    result = run("inspect-dir", str(tmp_path))
    assert result.exit_code == 2 and "neither a partition directory nor a log directory" in result.stderr


@pytest.mark.parametrize("fmt", ["ndjson", "json", "msgpack"])
def test_both_renderers_write_the_same_bytes_in_every_format_and_payload(renderer, fmt, monkeypatch) -> None:
    from kreplica.report.schemas import inspect_log

    paths = [str(p) for p in generated_fixtures("*.log")]
    for payload in ("base64", "hex", "utf8", "none"):
        args = ["inspect-log", "--records", "--payload", payload, "-f", fmt, *paths]
        ours = CliRunner().invoke(app, args)
        assert ours.exit_code == 1 and ours.stdout_bytes, ours.output
        with monkeypatch.context() as m:
            m.setattr(inspect_log, "_crender", None)
            reference = CliRunner().invoke(app, args)
        assert ours.stdout_bytes == reference.stdout_bytes
