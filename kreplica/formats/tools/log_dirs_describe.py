"""The JSON ``kafka-log-dirs.sh --describe`` prints: every replica's size, per broker and log dir.

Kafka's code: ``LogDirsCommand`` in ``tools/src/main/java/org/apache/kafka/tools/LogDirsCommand.java``
(``formatAsJson``), apache/kafka trunk 2024-10; the values are the broker's ``DescribeLogDirs``
answer (``UnifiedLog.size``: the bytes of the replica's segment files).

Layout (after two prose lines the tool prints first, ``Querying brokers for log directories
information`` and ``Received log directory information from brokers 1,2,3``, which are skipped)::

    LogDirs   => {"version": 1, "brokers": [Broker, ...]}
    Broker    => {"broker": int, "logDirs": [LogDir, ...]}
    LogDir    => {"logDir": str, "error": str | null, "partitions": [Replica, ...]}
    Replica   => {"partition": "<topic>-<partition>", "size": int, "offsetLag": int, "isFuture": bool}

A log dir whose ``error`` is not null is offline on that broker; its replicas are listed as the
broker answered (usually none). The partition name splits at its last ``-``, as Kafka names
partition directories. No checksum.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.errors import Malformed
from kreplica.formats.mapped import open_buffer
from kreplica.formats.tools._tool_json import first_json_document

LOG_DIRS_VERSION = 1   # LogDirsCommand writes version 1


@dataclass(frozen=True, slots=True)
class ReplicaLogDirInfo:
    """One replica as ``kafka-log-dirs.sh --describe`` lists it."""

    broker: int
    log_dir: str
    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirError:
    """A log dir the broker reported with an error (offline)."""

    broker: int
    log_dir: str
    error: str


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_log_dirs_describe(content: bytes | str, *, path: str | None = None
                            ) -> tuple[tuple[ReplicaLogDirInfo, ...], tuple[LogDirError, ...]]:
    """The replicas and the failed log dirs of a ``kafka-log-dirs.sh --describe`` printout.

    Prose before the first ``{`` is skipped. Raises :class:`Malformed` (with the byte position of
    bad JSON, or the field of a bad entry such as ``brokers[0].logDirs[1].partitions[2].size``).
    """
    doc, at = first_json_document(content, path=path, expected="the output of kafka-log-dirs.sh --describe")

    def fail(reason: str, field: str) -> Malformed:
        return Malformed(reason, path=path, position=at, field=field)

    if not isinstance(doc, dict) or not isinstance(doc.get("brokers"), list):
        raise fail("expected {\"version\":1,\"brokers\":[...]}", "brokers")
    if doc.get("version", LOG_DIRS_VERSION) != LOG_DIRS_VERSION:
        raise fail(f"unsupported version {doc.get('version')!r}", "version")
    replicas: list[ReplicaLogDirInfo] = []
    errors: list[LogDirError] = []
    for i, b in enumerate(doc["brokers"]):
        bf = f"brokers[{i}]"
        if not isinstance(b, dict) or not _int(b.get("broker")) or not isinstance(b.get("logDirs"), list):
            raise fail("expected {\"broker\":id,\"logDirs\":[...]}", bf)
        broker = b["broker"]
        for j, d in enumerate(b["logDirs"]):
            df = f"{bf}.logDirs[{j}]"
            if not isinstance(d, dict) or not isinstance(d.get("logDir"), str):
                raise fail("expected {\"logDir\":path,\"error\":...,\"partitions\":[...]}", df)
            if d.get("error") is not None:
                errors.append(LogDirError(broker, d["logDir"], str(d["error"])))
            parts = d.get("partitions", [])
            if not isinstance(parts, list):
                raise fail("expected a list", f"{df}.partitions")
            for k, p in enumerate(parts):
                pf = f"{df}.partitions[{k}]"
                name = p.get("partition") if isinstance(p, dict) else None
                topic, sep, num = name.rpartition("-") if isinstance(name, str) else ("", "", "")
                if not sep or not topic or not num.isdigit():
                    raise fail(f"expected a partition name like orders-0, got {name!r}", f"{pf}.partition")
                size = p.get("size")
                if not _int(size) or size < 0:
                    raise fail(f"expected a size in bytes, got {size!r}", f"{pf}.size")
                lag = p.get("offsetLag", 0)
                replicas.append(ReplicaLogDirInfo(broker, d["logDir"], topic, int(num), size,
                                                  lag if _int(lag) else 0, bool(p.get("isFuture", False))))
    return tuple(replicas), tuple(errors)


def read_log_dirs_describe(path: str | os.PathLike) -> tuple[tuple[ReplicaLogDirInfo, ...], tuple[LogDirError, ...]]:
    """:func:`parse_log_dirs_describe` of the file at ``path`` (opened read-only)."""
    with open_buffer(path) as buf:
        return parse_log_dirs_describe(bytes(buf), path=str(path))


def build_log_dirs_describe(replicas: Iterable[ReplicaLogDirInfo]) -> bytes:
    """The JSON line ``kafka-log-dirs.sh --describe`` prints for these replicas (brokers and log
    dirs in first-seen order; no errors), for fixtures and tests."""
    brokers: dict[int, dict[str, list]] = {}
    for r in replicas:
        brokers.setdefault(r.broker, {}).setdefault(r.log_dir, []).append(
            {"partition": f"{r.topic}-{r.partition}", "size": r.size, "offsetLag": r.offset_lag,
             "isFuture": r.is_future})
    doc = {"version": LOG_DIRS_VERSION, "brokers": [
        {"broker": b, "logDirs": [{"logDir": d, "error": None, "partitions": ps} for d, ps in dirs.items()]}
        for b, dirs in brokers.items()]}
    return (json.dumps(doc, separators=(",", ":")) + "\n").encode("utf-8")
