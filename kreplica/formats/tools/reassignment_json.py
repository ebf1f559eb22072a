"""The partition reassignment JSON, version 1: what ``kafka-reassign-partitions.sh`` prints and takes.

The same document is the tool's ``--generate`` output (current assignment, then proposal), the
``--reassignment-json-file`` of ``--execute``/``--verify``/``--cancel``, and the rollback text
``--execute`` prints. Kafka's code: ``ReassignPartitionsCommand.parsePartitionReassignmentData``
and ``formatAsReassignmentJson`` in ``tools/src/main/java/org/apache/kafka/tools/reassign/
ReassignPartitionsCommand.java`` (3.7+; ``core/src/main/scala/kafka/admin/
ReassignPartitionsCommand.scala`` up to 3.6), apache/kafka trunk 2024-10 (kafka-algorithms spec §5.4).

Layout::

    Reassignment => {"version": 1, "partitions": [Partition, ...]}     # version optional, default 1
    Partition    => {"topic": str, "partition": int, "replicas": [int, ...],
                     "log_dirs": [str, ...]}                           # log_dirs optional (KIP-113)
    log_dirs[i]  => "any" | an absolute path (an intra-broker move for replicas[i])

What ``--execute`` refuses, and so this reader refuses (``Malformed``): a version other than 1,
no partition list or an empty one, an empty replica list, a partition listed twice, a broker
twice in one replica list, ``log_dirs`` not as long as ``replicas``. No checksum.

Text around the document is skipped, so the tool's own printout can be read as it is: prose lines
before the first ``{`` (``Current partition replica assignment``) and anything after the first
complete value (Jackson stops there; ``--generate`` prints the proposal after the current
assignment, so the first document read is the current one).

The writer produces the tool's own output: version 1, partitions sorted by topic then partition,
``log_dirs`` all ``"any"`` unless given, compact, one line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

from kreplica.formats.errors import Malformed
from kreplica.formats.mapped import open_buffer
from kreplica.formats.tools._tool_json import first_json_document

REASSIGNMENT_VERSION = 1     # the only version ReassignPartitionsCommand accepts
ANY_LOG_DIR = "any"          # ReassignPartitionsCommand.ANY_LOG_DIR: no directory preference


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """One entry: the replicas of ``topic``-``partition`` in order (the first is the preferred
    leader); ``log_dirs`` is ``None`` when the entry has none."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...] | None = None


def parse_reassignment_json(content: bytes | str, *, path: str | None = None) -> tuple[PartitionReassignment, ...]:
    """The entries of a version-1 reassignment document, in file order.

    Raises :class:`Malformed` with the byte position of bad JSON, or with the field
    (``partitions[3].replicas``) of an entry ``--execute`` would refuse (see the module docstring).
    """
    doc, at = first_json_document(content, path=path, expected='{"version":1,"partitions":[...]}')
    return _entries(doc, path, at)


def read_reassignment_json(path: str | os.PathLike) -> tuple[PartitionReassignment, ...]:
    """:func:`parse_reassignment_json` of the file at ``path`` (opened read-only)."""
    with open_buffer(path) as buf:
        return parse_reassignment_json(bytes(buf), path=str(path))


def _fail(reason: str, path: str | None, at: int, field: str) -> Malformed:
    return Malformed(reason, path=path, position=at, field=field)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _entries(doc: object, path: str | None, at: int) -> tuple[PartitionReassignment, ...]:
    if not isinstance(doc, dict):
        raise _fail("expected a JSON object", path, at, "document")
    version = doc.get("version", REASSIGNMENT_VERSION)
    if version != REASSIGNMENT_VERSION:
        raise _fail(f"not supported version field value {version!r} (only 1 exists)", path, at, "version")
    parts = doc.get("partitions")
    if not isinstance(parts, list):
        raise _fail("missing partitions list (expected \"partitions\":[...])", path, at, "partitions")
    if not parts:
        raise _fail("partition reassignment list cannot be empty", path, at, "partitions")
    out: list[PartitionReassignment] = []
    seen: set[tuple[str, int]] = set()
    for i, p in enumerate(parts):
        field = f"partitions[{i}]"
        if not isinstance(p, dict):
            raise _fail("expected an object", path, at, field)
        topic, partition, replicas = p.get("topic"), p.get("partition"), p.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise _fail("missing or empty topic", path, at, f"{field}.topic")
        if not _int(partition) or partition < 0:
            raise _fail(f"expected a partition number, got {partition!r}", path, at, f"{field}.partition")
        if not isinstance(replicas, list) or not all(_int(r) for r in replicas):
            raise _fail("expected a list of broker ids", path, at, f"{field}.replicas")
        if not replicas:
            raise _fail(f"partition replica list cannot be empty ({topic}-{partition})", path, at, f"{field}.replicas")
        if len(set(replicas)) != len(replicas):
            raise _fail(f"duplicate brokers in the replica list of {topic}-{partition}: {replicas}",
                        path, at, f"{field}.replicas")
        if (topic, partition) in seen:
            raise _fail(f"partition {topic}-{partition} is listed twice", path, at, field)
        seen.add((topic, partition))
        log_dirs = p.get("log_dirs")
        if log_dirs is not None:
            if not isinstance(log_dirs, list) or not all(isinstance(d, str) for d in log_dirs):
                raise _fail("expected a list of directories", path, at, f"{field}.log_dirs")
            if len(log_dirs) != len(replicas):
                raise _fail(f"log_dirs has {len(log_dirs)} entries for {len(replicas)} replicas",
                            path, at, f"{field}.log_dirs")
        out.append(PartitionReassignment(topic, partition, tuple(replicas),
                                         None if log_dirs is None else tuple(log_dirs)))
    return tuple(out)


def build_reassignment_json(entries: Iterable[PartitionReassignment]) -> bytes:
    """The document as ``kafka-reassign-partitions.sh`` prints it: version 1, sorted by topic then
    partition, ``log_dirs`` ``"any"`` for every replica unless the entry has its own; one line."""
    parts = [{"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas),
              "log_dirs": list(e.log_dirs) if e.log_dirs is not None else [ANY_LOG_DIR] * len(e.replicas)}
             for e in sorted(entries, key=lambda e: (e.topic, e.partition))]
    doc = {"version": REASSIGNMENT_VERSION, "partitions": parts}
    return (json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
