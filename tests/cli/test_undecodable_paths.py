"""Evidence under a file name that is not valid UTF-8 (issue 14): every output format, whatever
the locale's error handler for stdout, ends normally (never exit 3). Machine formats write the
name's exact bytes (json, ndjson: ``surrogateescape``; msgpack: a str holding those bytes), and
the same bytes under a ``strict`` stdout as under ``surrogateescape``; text shows ``\\xNN``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import msgpack
import pytest

from tests.conftest import FIXTURES

BAD = b"bad-\xff\xfe-0"  # not UTF-8: Python sees "bad-\udcff\udcfe-0"
SEGMENT = "00000000000000000000.log"


@pytest.fixture(scope="module")
def partition(tmp_path_factory) -> bytes:
    """A copy of a fixture partition under a name that is not UTF-8, as bytes."""
    root = os.fsencode(tmp_path_factory.mktemp("undecodable"))
    target = os.path.join(root, BAD)
    shutil.copytree(FIXTURES / "logs" / "orders-0", os.fsdecode(target))
    return target


def _kreplica(args: list[bytes | str], errors: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": f"utf-8:{errors}"}
    return subprocess.run([sys.executable, "-m", "kreplica", *args], capture_output=True, env=env)


COMMANDS = [
    pytest.param(lambda p: ["inspect-log", "--records", os.path.join(p, SEGMENT.encode())], id="inspect-log"),
    pytest.param(lambda p: ["inspect-index", p], id="inspect-index"),
    pytest.param(lambda p: ["inspect-dir", p], id="inspect-dir"),
    pytest.param(lambda p: ["epochs", p], id="epochs"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fmt", ["ndjson", "json", "msgpack"])
def test_machine_formats_write_the_names_bytes_under_any_locale(partition, command, fmt):
    args = [*command(partition), "--format", fmt]
    strict = _kreplica(args, "strict")
    assert strict.returncode in (0, 1), strict.stderr.decode(errors="replace")
    assert strict.stderr == b""
    assert BAD in strict.stdout
    assert _kreplica(args, "surrogateescape").stdout == strict.stdout  # the locale does not matter
    if fmt == "msgpack":
        unpacker = msgpack.Unpacker(unicode_errors="surrogateescape")
        unpacker.feed(strict.stdout)
        objs = list(unpacker)
    elif fmt == "ndjson":
        objs = [json.loads(line.decode("utf-8", "surrogateescape")) for line in strict.stdout.splitlines()]
    else:
        doc = json.loads(strict.stdout.decode("utf-8", "surrogateescape"))
        objs = doc if isinstance(doc, list) else [doc]
    paths = [o["path"] for o in objs if isinstance(o, dict) and "path" in o]
    assert any(os.fsencode(p).startswith(partition) for p in paths)  # the name comes back exactly


@pytest.mark.parametrize("command", COMMANDS)
def test_text_shows_the_names_bytes_escaped(partition, command):
    for errors in ("strict", "surrogateescape"):
        text = _kreplica([*command(partition), "--format", "text"], errors)
        assert text.returncode in (0, 1), text.stderr.decode(errors="replace")
        assert BAD not in text.stdout
        assert b"bad-\\xff\\xfe-0" in text.stdout
