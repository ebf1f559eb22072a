"""Healthy evidence is not marked: what is normal after a clean or unclean shutdown is said at
info level (the file named), and each message fits the shutdown it is printed under (issue 20)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

ORDERS = FIXTURES / "logs" / "orders-0"


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_preallocated_index_slots_are_info_naming_the_index_and_the_partition_is_ok() -> None:
    result = run("inspect-dir", ORDERS, "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    found = [o for o in map(json.loads, result.stdout.splitlines()) if o["type"] == "finding"]
    pre = [f for f in found if f["kind"] == "index_preallocated"]
    assert pre and all(f["severity"] == "info" for f in pre)
    assert {f["message"].split(":", 1)[0] for f in pre} == {"00000000000000000038.index", "00000000000000000038.timeindex"}
    text = run("inspect-dir", ORDERS, "-f", "text").stdout
    assert "OK orders-0" in text and "WARN" not in text and "INFO index_preallocated 00000000000000000038.index:" in text


def test_preallocated_index_slots_are_info_in_inspect_index() -> None:
    result = run("inspect-index", ORDERS / "00000000000000000038.index", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    assert [o["severity"] for o in map(json.loads, result.stdout.splitlines()) if o["type"] == "finding"] == ["info"]


@pytest.mark.parametrize("shutdown", ["clean", "unclean"])
def test_a_missing_epoch_checkpoint_is_explained_for_the_shutdown_judged(tmp_path, shutdown: str) -> None:
    """It began "after a clean shutdown..." under the unclean header too."""
    part = tmp_path / "orders-0"
    shutil.copytree(ORDERS, part)
    (part / "leader-epoch-checkpoint").unlink()
    result = run("inspect-dir", part, "--shutdown", shutdown, "-f", "ndjson")
    stale = [o for o in map(json.loads, result.stdout.splitlines())
             if o["type"] == "finding" and o["kind"] == "epoch_checkpoint_stale"]
    assert len(stale) == 1
    message = stale[0]["message"]
    assert f"after a {shutdown} shutdown" in message or f"after an {shutdown} shutdown" in message, message
    other = "unclean" if shutdown == "clean" else "clean"
    assert not message.split(": ", 1)[1].startswith(f"after a {other}"), message
    if shutdown == "unclean":
        assert "its epoch cache would be" in message
