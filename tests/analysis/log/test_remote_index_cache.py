"""A log directory's ``remote-log-index-cache`` as ``RemoteIndexCache.init`` (4.4.0) treats it at
start-up, each rule with its counter-case, and ``inspect-dir`` knowing the directory: what Kafka
writes in its normal course is a note, never a warning; only a name ``init`` cannot parse is an
error."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kreplica.analysis.log.remote_index_cache import remote_index_cache_findings
from kreplica.cli.main import app
from tests.conftest import FIXTURES

SEG = "AAECAwQFBgcICQoLDA0ODw"
OTHER = "EBESExQVFhcYGRobHB0eHw"


def _triple(offset: int, seg: str) -> tuple[str, ...]:
    return tuple(f"{offset}_{seg}.{s}" for s in ("index", "timeindex", "txnindex"))


@pytest.mark.parametrize(("names", "segments", "leftovers", "incomplete", "refused"), [
    pytest.param((), 0, 0, 0, 0, id="empty-cache"),
    pytest.param(_triple(0, SEG) + _triple(100, OTHER), 2, 0, 0, 0, id="two-complete-triples"),
    pytest.param(_triple(0, SEG) + (f"100_{OTHER}.index.deleted", f"100_{OTHER}.txnindex.tmp"), 1, 2, 0, 0,
                 id="evicted-and-cut-short-leftovers"),
    pytest.param(_triple(0, SEG)[:2], 0, 0, 1, 0, id="triple-missing-its-txnindex"),
    pytest.param(_triple(0, SEG) + ("notes.txt",), 1, 0, 0, 1, id="a-name-init-cannot-parse"),
    pytest.param(_triple(0, SEG) + ("notes.txt.deleted",), 1, 1, 0, 0, id="the-same-name-as-a-leftover-is-deleted-first"),
    pytest.param(tuple(n.replace("0_", "x_", 1) for n in _triple(0, SEG)), 0, 0, 0, 1,
                 id="complete-triple-offset-not-a-long"),
    pytest.param(tuple(n.replace("0_", "x_", 1) for n in _triple(0, SEG)[:2]), 0, 0, 1, 0,
                 id="incomplete-triple-offset-never-parsed"),
])
def test_what_the_next_start_does(names, segments, leftovers, incomplete, refused) -> None:
    note, *errors = remote_index_cache_findings("ld", names)
    assert (note.kind, note.severity, note.path) == ("remote_index_cache", "info", "ld/remote-log-index-cache")
    assert (note.details["segments"], note.details["leftovers"], note.details["incomplete"]) == (
        segments, leftovers, incomplete)
    assert [(e.kind, e.severity) for e in errors] == [("restart_refused", "error")] * refused


def _log_dir(tmp_path, names):
    import shutil

    log_dir = tmp_path / "ld"
    shutil.copytree(FIXTURES / "logs" / "orders-0", log_dir / "orders-0")
    cache = log_dir / "remote-log-index-cache"
    cache.mkdir()
    for name in names:
        (cache / name).write_bytes(b"")
    return log_dir


def _run(*args):
    return CliRunner().invoke(app, ["inspect-dir", *map(str, args), "-f", "ndjson"])


def test_inspect_dir_knows_the_cache_and_a_healthy_one_is_no_warning(tmp_path) -> None:
    log_dir = _log_dir(tmp_path, _triple(0, SEG) + (f"5_{OTHER}.index.deleted",))
    result = _run(log_dir)
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.stdout.splitlines()]
    cache = [o for o in out if o.get("kind") == "remote_index_cache"]
    assert [(o["severity"], o["segments"], o["leftovers"]) for o in cache] == [("info", 1, 1)]
    assert [o["name"] for o in out if o["type"] == "partition"] == ["orders-0"]   # not taken for a partition
    assert not [o for o in out if o["type"] == "finding" and o["severity"] != "info"]


def test_a_name_the_broker_cannot_start_with_exits_1(tmp_path) -> None:
    result = _run(_log_dir(tmp_path, _triple(0, SEG) + ("stray",)))
    assert result.exit_code == 1, result.output
    (refused,) = [o for o in map(json.loads, result.stdout.splitlines()) if o.get("kind") == "restart_refused"]
    assert refused["path"].endswith("remote-log-index-cache/stray")


def test_the_cache_given_alone_is_named_for_what_it_is(tmp_path) -> None:
    result = _run(_log_dir(tmp_path, _triple(0, SEG)) / "remote-log-index-cache")
    assert result.exit_code == 2
    assert "remote-log-index-cache (tiered storage's RemoteIndexCache" in result.output
