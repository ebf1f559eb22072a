"""The recorded real-cluster corpus (``fixtures/real-kafka``, written by
``python -m tests.realkafka.record``) as the tests read it, with parsers of what Kafka itself
said: its brokers' ``server.log`` lines and Admin's answers (``account.json``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tests.conftest import RECORDED

CORPUS = RECORDED

# Kafka's LogLoader before and at each restart, and UnifiedLog/Log when a follower truncates
# (3.x and 4.x word them alike; "has no effect" when the offset is at or past the log end)
_LOAD_DONE = re.compile(r"Completed load of Log\(dir=\S*/(?P<partition>[^/,]+), .*logEndOffset=(?P<end>\d+)\)")
_RECOVERING = re.compile(r"\[(?:LogLoader|Log) partition=(?P<partition>\S+), dir=\S+\] Recovering unflushed segment "
                         r"(?P<base>\d+)")
_TRUNCATING = re.compile(r"\[(?:UnifiedLog|Log) partition=(?P<partition>\S+), dir=\S+\] "
                         r"Truncating to (?:offset )?(?P<offset>\d+)")


@dataclass(frozen=True)
class Restart:
    """What a broker's log says of one partition at one start: the segments it recovered, the
    log end it loaded, and the truncations it did afterwards (until its next start)."""

    recovered_bases: tuple[int, ...]
    loaded_log_end: int | None
    truncations: tuple[int, ...]


def restarts(server_log: Path, partition: str) -> list[Restart]:
    """Each load of ``partition`` in the log, in order: the first is the partition's creation
    (nothing loaded), the next ones the broker's restarts."""
    found: list[Restart] = []
    recovered: list[int] = []
    end: int | None = None
    truncations: list[int] = []
    for line in server_log.read_text(errors="replace").splitlines():
        if (m := _RECOVERING.search(line)) and m["partition"] == partition:
            if end is not None:  # a recovery after the last load: the next restart has begun
                found.append(Restart(tuple(recovered), end, tuple(truncations)))
                recovered, end, truncations = [], None, []
            recovered.append(int(m["base"]))
        elif (m := _LOAD_DONE.search(line)) and m["partition"] == partition:
            if end is not None:
                found.append(Restart(tuple(recovered), end, tuple(truncations)))
                recovered, truncations = [], []
            end = int(m["end"])
        elif (m := _TRUNCATING.search(line)) and m["partition"] == partition:
            truncations.append(int(m["offset"]))
    found.append(Restart(tuple(recovered), end, tuple(truncations)))
    return found


@dataclass(frozen=True)
class Recording:
    """One recorded incident: its description, the script's log, and each point's evidence and
    Kafka's account."""

    root: Path

    @cached_property
    def description(self) -> dict:
        return json.loads((self.root / "recording.json").read_text())

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def scenario(self) -> str:
        return self.description["scenario"]

    @property
    def mode(self) -> str:
        return self.description["mode"]

    @property
    def kafka_version(self) -> str:
        return self.description["kafka_version"]

    @cached_property
    def steps(self) -> list[dict]:
        return [json.loads(line) for line in (self.root / "script.ndjson").read_text().splitlines()]

    def step(self, name: str) -> dict:
        return next(s for s in self.steps if s["step"] == name)

    def account(self, point: str) -> dict:
        return json.loads((self.root / point / "account.json").read_text())

    def evidence(self, point: str) -> Path:
        return self.root / point / "evidence"

    def log_dir(self, point: str, broker: int) -> Path:
        return self.evidence(point) / f"node-{broker}" / "data"

    def server_log(self, point: str, broker: int) -> Path:
        return self.evidence(point) / f"node-{broker}" / "server.log"

    def metadata(self, point: str) -> Path:
        """The cluster metadata a responder reads: ZooKeeper's data dir, or the metadata log of
        the first controller running at that point (a live KRaft controller's copy holds every
        committed record; a killed one's stops where it died)."""
        if self.mode == "zookeeper":
            return self.evidence(point) / "zookeeper"
        running = self.account(point).get("running")
        live = [c for c in self.description["controllers"] if running is None or c in running]
        return self.evidence(point) / f"node-{live[0]}" / "metadata"

    def partition_account(self, point: str, topic: str = "orders", partition: int = 0) -> dict:
        return next(row for row in self.account(point)["topics"]
                    if row["topic"] == topic and row["partition"] == partition)


def recordings(scenario: str | None = None) -> list[Recording]:
    found = [Recording(p.parent) for p in sorted(CORPUS.glob("*/recording.json"))]
    return [r for r in found if scenario is None or r.scenario == scenario]
