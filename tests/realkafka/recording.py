"""What a scenario keeps of an incident: the evidence a responder would copy, Kafka's own
account of the cluster at that point, and a log of what the script did and when.

A recording is one directory::

    script.ndjson          one line per step: seconds since the start, the step, its details
    <point>/evidence/      every node's log dirs, metadata log and logs; ZooKeeper's data dir
    <point>/account.json   Admin's answers (describeCluster, describeTopics with offsets,
                           describeLogDirs, the consumer groups with their committed offsets,
                           the share groups with their start offsets (4.x),
                           listPartitionReassignments, the dynamic topic and broker configs,
                           describeMetadataQuorum in KRaft)
    <point>/<tool>.txt     what one of Kafka's command-line tools printed there (``tool``)
    <point>/dump-log/      kafka-dump-log --deep-iteration of each partition of the scenario's topics,
                           and with its decoder of each internal partition holding records:
                           __consumer_offsets-* (--offsets-decoder), __transaction_state-*
                           (--transaction-log-decoder), each KRaft node's __cluster_metadata-0
                           (--cluster-metadata-decoder); one node-N/{data,metadata}/<partition>.txt
                           each (``dump_logs``; ``python -m tests.realkafka.record --redump``
                           remakes them from the evidence)
    <point>/trimmed-indexes.json   the index files whose preallocated zero tail the copy cut, with
                           their sizes as Kafka left them (``copy_evidence``)
    recording.json         the scenario, the Kafka release, the mode, the points in order
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.realkafka.cluster import Cluster, KraftCluster, copy_evidence
from tests.realkafka.driver import DriverError
from tests.realkafka.jars import Release, java

DUMP_TIMEOUT_S = 300
# the internal partitions dumped, each with the decoder of kafka-dump-log that reads its records as
# Kafka's coordinators and controllers do (a decoder implies --print-data-log)
DECODERS = {"__consumer_offsets": "--offsets-decoder", "__transaction_state": "--transaction-log-decoder",
            "__cluster_metadata": "--cluster-metadata-decoder",
            "__share_group_state": "--share-group-state-decoder"}   # 4.x: share groups (KIP-932)


@dataclass
class Recording:
    """One scenario's recording in progress, under ``root``."""

    root: Path
    scenario: str
    cluster: Cluster
    topics: list[str] = field(default_factory=list)
    points: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._script = (self.root / "script.ndjson").open("a", encoding="utf-8")

    def log(self, step: str, **details: Any) -> None:
        """One line of the script's log: when (seconds since the start and UTC), what, details."""
        line = {"t": round(time.monotonic() - self.started, 3),
                "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "step": step, **details}
        self._script.write(json.dumps(line, sort_keys=False) + "\n")
        self._script.flush()

    def keep(self, name: str, data: Any) -> None:
        """A whole answer too long for the script's log (every acknowledged offset), as JSON."""
        (self.root / name).write_text(json.dumps(data, sort_keys=True) + "\n")

    def point(self, name: str) -> Path:
        """Evidence and Kafka's account at this point of the incident, under ``<name>/``."""
        directory = self.root / name
        trimmed = copy_evidence(self.cluster, directory / "evidence")
        (directory / "trimmed-indexes.json").write_text(json.dumps(trimmed, indent=1, sort_keys=True) + "\n")
        # the answers name the cluster's temporary directory (describeLogDirs): keep them relative
        account = json.dumps(self.account(), indent=1, sort_keys=True).replace(str(self.cluster.root) + "/", "")
        (directory / "account.json").write_text(account + "\n")
        self._dump_logs(directory)
        self.points.append(name)
        self.log("recorded", point=name)
        return directory

    def account_at(self, point: str) -> dict[str, Any]:
        """The account recorded at ``point``."""
        return json.loads((self.root / point / "account.json").read_text())

    def tool(self, point: str, name: str, main: str, *args: str) -> str:
        """One of Kafka's command-line tools (its main class, in the release's jars) run now, its
        output kept as ``<point>/<name>.txt``: part of Kafka's account at that point."""
        done = subprocess.run([java(), "-Xmx256m", "-Dlog4j.configuration=file:/dev/null",
                               "-Dlog4j2.configurationFile=/dev/null", "-cp", self.cluster.release.classpath(),
                               main, *args], capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
        text = done.stdout if done.returncode == 0 else done.stdout + done.stderr
        (self.root / point).mkdir(parents=True, exist_ok=True)
        (self.root / point / f"{name}.txt").write_text(text)
        self.log("tool", name=name, main=main, args=list(args), exit=done.returncode)
        return text

    def account(self) -> dict[str, Any]:
        """Admin's answers now; a question the cluster cannot answer now is kept as its error."""
        driver = self.cluster.driver
        alive = sorted(n for n in self.cluster.running if self.cluster.nodes[n].is_broker)
        questions: dict[str, Any] = {
            "cluster": lambda: driver.call("cluster"),
            "topics": lambda: driver.call("describe", topics=self.topics),
            "log_dirs": lambda: driver.call("log_dirs", brokers=alive),
            "groups": lambda: driver.call("groups"),
            "reassignments": lambda: driver.call("reassignments"),
            "share_groups": lambda: driver.call("share_groups"),
            "streams_groups": lambda: driver.call("streams_groups"),
            "configs": lambda: driver.call("configs", topics=self.topics, brokers=alive),
        }
        if isinstance(self.cluster, KraftCluster):
            questions["quorum"] = lambda: driver.call("quorum")
        answers: dict[str, Any] = {"running": sorted(self.cluster.running)}  # the nodes up at this point
        for name, ask in questions.items():
            try:
                answers[name] = ask()
            except DriverError as exc:
                answers[name] = {"error": str(exc)}
        return answers

    def _dump_logs(self, directory: Path) -> None:
        dump_logs(directory, self.cluster.release, self.topics)

    def close(self) -> None:
        description = {"scenario": self.scenario, "kafka_version": self.cluster.release.version,
                       "mode": "kraft" if isinstance(self.cluster, KraftCluster) else "zookeeper",
                       "topics": self.topics, "points": self.points,
                       "brokers": self.cluster.brokers,
                       "controllers": sorted(n for n, spec in self.cluster.nodes.items() if spec.is_controller)}
        (self.root / "recording.json").write_text(json.dumps(description, indent=1) + "\n")
        self._script.close()


def dump_main(release: Release) -> str:
    """DumpLogSegments' main class: moved from core (Scala) to tools (Java) in Kafka 4."""
    return "org.apache.kafka.tools.DumpLogSegments" if release.major >= 4 else "kafka.tools.DumpLogSegments"


def dumped_partitions(evidence: Path, topics: list[str]) -> list[tuple[Path, list[Path], str | None]]:
    """What ``dump_logs`` dumps of a point's evidence: each partition directory, its segments and
    its decoder (None for the scenario's topics). A partition of the scenario's topics is dumped
    when it has a segment; an internal one (``DECODERS``) only when a segment holds records."""
    found: list[tuple[Path, list[Path], str | None]] = []
    candidates = [*evidence.glob("node-*/data/*"), *evidence.glob("node-*/metadata/__cluster_metadata-0")]
    for partition in sorted(candidates):
        segments = sorted(partition.glob("*.log"))
        topic = partition.name.rsplit("-", 1)[0]
        if topic in topics and segments:
            found.append((partition, segments, None))
        elif topic in DECODERS and any(s.stat().st_size > 0 for s in segments):
            found.append((partition, segments, DECODERS[topic]))
    return found


def dump_logs(directory: Path, release: Release, topics: list[str], into: Path | None = None) -> None:
    """``<directory>/dump-log/`` (or ``into``): ``kafka-dump-log --deep-iteration`` of each
    partition of the point's evidence that ``dumped_partitions`` names, with its decoder, one
    ``.txt`` a partition at the partition directory's path under ``evidence/``. Run at each point
    of a recording, and by ``python -m tests.realkafka.record --redump`` over a committed one."""
    evidence = directory.resolve() / "evidence"
    into = directory / "dump-log" if into is None else into
    for partition, segments, decoder in dumped_partitions(evidence, topics):
        # one JVM per partition: the tool takes its segments as one comma-separated list
        done = subprocess.run([java(), "-Xmx256m", "-Dlog4j.configuration=file:/dev/null",
                               "-Dlog4j2.configurationFile=/dev/null", "-cp", release.classpath(), dump_main(release),
                               "--files", ",".join(map(str, segments)), "--deep-iteration",
                               *([decoder] if decoder else [])],
                              capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
        target = into / f"{partition.relative_to(evidence)}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        # the dump names the absolute paths it read: keep them relative to the evidence
        text = done.stdout.replace(str(evidence) + "/", "")
        target.write_text(text if done.returncode == 0 else text + done.stderr)
