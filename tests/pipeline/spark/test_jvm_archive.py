"""The driver JVM's class-data-sharing archive (issue 22): made by a first run in kreplica's cache
directory, named once the JVM has written it whole, used by every run after; never two made at
once, an abandoned one cleared, an earlier setting's removed; silent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

pytest.importorskip("pyspark", reason="the archive is of Spark's JVM (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

from kreplica.pipeline.spark import jvm_archive  # noqa: E402

COMPLETE = (0xF00BABA8).to_bytes(4, "little")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(jvm_archive.ARCHIVE_ENV, raising=False)
    return tmp_path / "kreplica"


def _option(options: str, name: str) -> Path:
    (value,) = [o.partition("=")[2] for o in options.split() if o.startswith(f"-XX:{name}=")]
    return Path(value)


def test_a_first_run_makes_the_archive_under_a_temporary_name(cache) -> None:
    options = jvm_archive.archive_options()
    part = _option(options, "ArchiveClassesAtExit")
    assert part.parent == cache and part.name.endswith(".jsa.part") and part.is_file()
    assert "-Xlog:cds=off" in options
    assert jvm_archive.archive_options() is None, "one archive made at a time"


def test_an_archive_written_whole_is_named_and_used(cache) -> None:
    part = _option(jvm_archive.archive_options(), "ArchiveClassesAtExit")
    part.write_bytes(COMPLETE + bytes(100))
    used = _option(jvm_archive.archive_options(), "SharedArchiveFile")
    assert used == cache / f"spark-{jvm_archive.setting_digest()}.jsa" and used.is_file() and not part.exists()
    assert _option(jvm_archive.archive_options(), "SharedArchiveFile") == used


def test_an_abandoned_archive_is_cleared_and_an_earlier_settings_removed(cache) -> None:
    part = _option(jvm_archive.archive_options(), "ArchiveClassesAtExit")
    old = time.time() - 2 * jvm_archive._ABANDONED_SECONDS
    os.utime(part, (old, old))
    earlier = cache / "spark-0123456789abcdef.jsa"
    earlier.write_bytes(COMPLETE)
    again = _option(jvm_archive.archive_options(), "ArchiveClassesAtExit")
    assert again != part and not part.exists() and not earlier.exists()


def test_off_leaves_the_cache_alone(cache, monkeypatch) -> None:
    monkeypatch.setenv(jvm_archive.ARCHIVE_ENV, "off")
    assert jvm_archive.archive_options() is None and not cache.exists()


def test_an_unwritable_cache_means_no_archive(tmp_path, monkeypatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    monkeypatch.delenv(jvm_archive.ARCHIVE_ENV, raising=False)
    assert jvm_archive.archive_options() is None


def test_a_scan_makes_the_archive_the_next_uses_it_and_neither_says_a_word_of_it(tmp_path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop(jvm_archive.ARCHIVE_ENV, None)

    def scan(out: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kreplica", "fleet", "scan",
                               str(FIXTURES / "scenarios" / "three-replicas"), "--output-dir", str(tmp_path / out),
                               "--master", "local[1]", "-f", "ndjson"], capture_output=True, text=True, env=env,
                              timeout=600)

    first = scan("first")
    cache = tmp_path / "cache" / "kreplica"
    deadline = time.monotonic() + 600  # the JVM writes the archive as it exits, after the command
    while time.monotonic() < deadline and not any(p.read_bytes()[:4] == COMPLETE for p in cache.glob("*.jsa.part")):
        time.sleep(1)
    second = scan("second")
    for result in (first, second):
        assert result.returncode == 0 and len(result.stdout.splitlines()) == 1
        assert [line.startswith("kreplica: note: ") for line in result.stderr.splitlines()] == [True]
    (archive,) = cache.iterdir()
    assert archive.name.endswith(".jsa") and archive.read_bytes()[:4] == COMPLETE
