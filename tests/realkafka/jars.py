"""Kafka's jars of one release from Maven Central, resolved by the project's pom and cached.

A release is a class path directory (``<cache>/<version>/lib``) that ``mvn dependency:copy-
dependencies`` fills once; the driver compiled against it sits beside it (``classes/``). Where
Maven or Java is missing, or Maven Central refuses the release, ``Unavailable`` says why, so a
test can skip with the reason instead of failing on a machine that cannot run Kafka.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
DRIVER_SOURCE = HERE / "Driver.java"
RESOLVE_TIMEOUT_S = 900
COMPILE_TIMEOUT_S = 300


class Unavailable(Exception):
    """This machine cannot run the release: no Java, no Maven, or the jars did not resolve."""


@dataclass(frozen=True)
class Release:
    """One resolved Kafka release: its version and where its jars and the driver are."""

    version: str
    home: Path

    @property
    def lib(self) -> Path:
        return self.home / "lib"

    @property
    def classes(self) -> Path:
        return self.home / "classes"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def minor(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def logs_with_log4j2(self) -> bool:
        """Kafka 4 logs through log4j2; 2.x and 3.x through log4j 1's API (log4j or reload4j)."""
        return self.major >= 4

    def classpath(self, *extra: Path) -> str:
        return os.pathsep.join([str(self.lib / "*"), *map(str, extra)])


def cache_root() -> Path:
    """``KREPLICA_KAFKA_CACHE``, or ``~/.cache/kreplica/kafka``: kept between runs and sessions."""
    configured = os.environ.get("KREPLICA_KAFKA_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "kreplica" / "kafka"


def java() -> str:
    path = shutil.which("java")
    if path is None:
        raise Unavailable("no java on PATH")
    return path


def release(version: str) -> Release:
    """The release's jars and compiled driver, resolving and compiling on first use."""
    found = release_jars(version)
    if not (found.classes / "Driver.class").exists() or _stale(found):
        _compile(found)
    return found


def release_jars(version: str) -> Release:
    """The release's jars alone, resolved on first use: enough for Kafka's own tools (no driver)."""
    java()
    found = Release(version, cache_root() / version)
    done = found.lib / ".resolved"
    stamp = _stamp(version, POM)
    if not done.exists() or done.read_text() != stamp:
        _resolve(found)
        done.write_text(stamp)
    return found


def _stamp(version: str, pom: Path) -> str:
    """What a resolved directory was resolved from: the version and its pom's digest (a jar added
    to the pom resolves every cached release again)."""
    return f"{version} {hashlib.sha256(pom.read_bytes()).hexdigest()[:16]}\n"


def _resolve(found: Release) -> None:
    profiles = ["-P", "kafka4"] if found.logs_with_log4j2 else []
    _maven(found, POM, [*profiles, f"-Dkafka.version={found.version}"], f"Kafka {found.version}")


def _maven(found: Release, pom: Path, options: list[str], what: str) -> None:
    """``pom``'s dependencies copied into ``found.lib`` (emptied first), or :class:`Unavailable`."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Unavailable(f"no mvn on PATH to resolve {what}")
    if found.lib.exists():
        shutil.rmtree(found.lib)
    command = [mvn, "-q", "-B", "-f", str(pom), *options, f"-DoutputDirectory={found.lib}",
               "dependency:copy-dependencies"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise Unavailable(f"Maven did not resolve {what} in {RESOLVE_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line] or ["no output"]
        raise Unavailable(f"Maven could not resolve {what}: {errors[0][:200]}")


def _stale(found: Release) -> bool:
    return (found.classes / "Driver.class").stat().st_mtime < DRIVER_SOURCE.stat().st_mtime


def _compile(found: Release, source: Path = DRIVER_SOURCE, what: str = "the scenario driver",
             against: str | None = None) -> None:
    """``source`` compiled into ``found.classes`` against its jars, or :class:`Unavailable`."""
    javac = shutil.which("javac")
    if javac is None:
        raise Unavailable(f"no javac on PATH to compile {what}")
    found.classes.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([javac, "-nowarn", "-d", str(found.classes), "-cp", found.classpath(),
                           str(source)], capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    if done.returncode != 0:
        raise Unavailable(f"{what} does not compile against {against or f'Kafka {found.version}'}: "
                          f"{done.stderr.strip().splitlines()[0][:200]}")


COVERAGE_SOURCE = HERE / "RecordCoverage.java"


def record_coverage(version: str) -> Release:
    """The release's jars with ``RecordCoverage.java`` (every internal record type at every version,
    written by Kafka's own classes) compiled beside the driver, on first use."""
    found = release_jars(version)
    compiled = found.classes / "RecordCoverage.class"
    if not compiled.exists() or compiled.stat().st_mtime < COVERAGE_SOURCE.stat().st_mtime:
        _compile(found, COVERAGE_SOURCE, "the record coverage program")
    return found


CLIENTS_POM = HERE / "clients-pom.xml"
PROBE_SOURCE = HERE / "ConsumerProbe.java"


def clients(version: str) -> Release:
    """One generation of Kafka's Java clients alone (``kafka-clients`` of ``version`` and
    slf4j-simple, by ``clients-pom.xml``), cached as ``<cache>/clients-<version>/lib``, with the
    consumer probe compiled against them beside it (``classes/``): a client older than the
    brokers it talks to, as a responder's applications often are."""
    java()
    found = Release(version, cache_root() / f"clients-{version}")
    done = found.lib / ".resolved"
    stamp = _stamp(version, CLIENTS_POM)
    if not done.exists() or done.read_text() != stamp:
        _maven(found, CLIENTS_POM, [f"-Dclients.version={version}"], f"kafka-clients {version}")
        done.write_text(stamp)
    probe = found.classes / "ConsumerProbe.class"
    if not probe.exists() or probe.stat().st_mtime < PROBE_SOURCE.stat().st_mtime:
        _compile(found, PROBE_SOURCE, "the consumer probe", f"kafka-clients {version}")
    return found
