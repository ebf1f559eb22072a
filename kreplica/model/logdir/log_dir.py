"""A broker's log directory as found on disk: which partitions, which files, which checkpoints.

This module only looks at names and sizes (kafka-formats spec §8–9); parsing the files is left
to the format readers, called by :func:`read_checkpoints` and by the analyses. A path given by a
user may be a whole log directory or one partition directory; for the latter, the parent is
taken as its log directory when it holds a log directory's files (checkpoints,
``meta.properties``, ``.kafka_cleanshutdown``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.logdir.clean_shutdown import parse_clean_shutdown
from kreplica.formats.logdir.meta_properties import parse_meta_properties
from kreplica.formats.logdir.naming import (REMOTE_LOG_INDEX_CACHE, PartitionDirName, classify_partition_file,
                                            parse_partition_dir)
from kreplica.formats.logdir.offset_checkpoint import parse_offset_checkpoint
from kreplica.formats.mapped import EvidenceError, read_small_file, refuse_special

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
OFFSET_CHECKPOINTS = (REPLICATION_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
                      CLEANER_OFFSET_CHECKPOINT)
LOG_DIR_MARKERS = (*OFFSET_CHECKPOINTS, META_PROPERTIES, CLEAN_SHUTDOWN)
CONFIG_SUFFIX = ".properties"                      # server.properties, log4j.properties
#: Leftover kinds that only a partition directory holds (``classify_partition_file``).
PARTITION_LEFTOVERS = ("deleted", "cleaned", "swap", "tmp")
#: Subdirectories a broker skips rather than parsing as partitions.
IGNORED_SUBDIRS = (REMOTE_LOG_INDEX_CACHE, "__cluster_metadata-0")


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """The files of one segment; any may be missing (``None``)."""

    base_offset: int
    log: str | None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None

    @property
    def size(self) -> int:
        return os.path.getsize(self.log) if self.log else 0


@dataclass(frozen=True, slots=True)
class PartitionDir:
    """One partition directory: its segments in offset order and everything else in it."""

    path: str
    name: str
    parsed: PartitionDirName | None
    segments: tuple[SegmentFiles, ...]
    snapshots: tuple[tuple[int, str], ...] = ()
    leader_epoch_checkpoint: str | None = None
    partition_metadata: str | None = None
    leftovers: tuple[tuple[str, str], ...] = ()  # (path, kind): .deleted, .cleaned, .swap, .tmp, other
    orphan_indexes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.parsed.name if self.parsed else self.name

    @property
    def holds_partition_files(self) -> bool:
        """Whether anything in it is a partition's (segments, indexes, producer snapshots,
        checkpoints, leftovers of them): ``version-2`` parses as partition 2 of topic
        ``version``, but a ZooKeeper data directory's holds none of these."""
        return bool(self.segments or self.snapshots or self.leader_epoch_checkpoint or self.partition_metadata
                    or self.orphan_indexes or any(kind in PARTITION_LEFTOVERS for _, kind in self.leftovers))

    @property
    def key(self) -> tuple[str, int] | None:
        return (self.parsed.topic, self.parsed.partition) if self.parsed else None


@dataclass(frozen=True, slots=True)
class LogDir:
    """A broker log directory (one ``log.dirs`` entry) and the partitions in it."""

    path: str
    partitions: tuple[PartitionDir, ...]
    files: dict[str, str] = field(default_factory=dict)   # marker file name -> path, when present
    bad_subdirs: tuple[str, ...] = ()                      # names a broker refuses to parse
    is_whole: bool = True                                  # False: only the partitions the user named
    #: the names in its ``remote-log-index-cache/`` (tiered storage's RemoteIndexCache), ``None``
    #: when it has none; entries that are not files are listed with a trailing ``/``
    remote_index_cache: tuple[str, ...] | None = None


def scan_partition_dir(path: str | Path) -> PartitionDir:
    """List a partition directory's files by kind (names only; nothing is read)."""
    path = Path(path)
    segs: dict[int, dict[str, str]] = {}
    snapshots = []
    leftovers = []
    lec = pm = None
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if not entry.is_file():
            leftovers.append((entry.path, "directory"))
            continue
        f = classify_partition_file(entry.name)
        kind = f.kind
        if kind in ("log", "index", "timeindex", "txnindex") and f.base_offset is not None:
            segs.setdefault(f.base_offset, {})[kind] = entry.path
        elif kind == "snapshot" and f.base_offset is not None:
            snapshots.append((f.base_offset, entry.path))
        elif kind == "leader_epoch_checkpoint":
            lec = entry.path
        elif kind == "partition_metadata":
            pm = entry.path
        else:
            leftovers.append((entry.path, kind))
    segments = []
    orphans = []
    for base in sorted(segs):
        files = segs[base]
        if "log" not in files:
            orphans.extend(files.values())
            continue
        segments.append(SegmentFiles(base, files["log"], files.get("index"), files.get("timeindex"),
                                     files.get("txnindex")))
    return PartitionDir(str(path), path.name, parse_partition_dir(path.name), tuple(segments), tuple(snapshots),
                        lec, pm, tuple(leftovers), tuple(orphans))


def _looks_like_partition(path: Path) -> bool:
    """A directory holding a Kafka-named segment or index, or a partition's own metadata files."""
    try:
        for e in os.scandir(path):
            if not e.is_file():
                continue
            f = classify_partition_file(e.name)
            if f.kind in ("leader_epoch_checkpoint", "partition_metadata"):
                return True
            if f.kind in ("log", "index") and f.base_offset is not None:
                return True
    except OSError:
        return False
    return False


def _marker_files(path: Path) -> dict[str, str]:
    return {name: str(path / name) for name in LOG_DIR_MARKERS if (path / name).is_file()}


def scan_log_dir(path: str | Path) -> LogDir:
    """A whole log directory: every subdirectory parsed as Kafka's ``LogManager`` would."""
    path = Path(path)
    partitions = []
    bad = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if not entry.is_dir() or entry.name in IGNORED_SUBDIRS:
            continue
        if parse_partition_dir(entry.name) is None:
            bad.append(entry.name)
            continue
        partitions.append(scan_partition_dir(entry.path))
    return LogDir(str(path), tuple(partitions), _marker_files(path), tuple(bad),
                  remote_index_cache=_remote_index_cache(path / REMOTE_LOG_INDEX_CACHE))


def _remote_index_cache(path: Path) -> tuple[str, ...] | None:
    """The names in a ``remote-log-index-cache`` directory (nothing is read), or ``None``."""
    if not path.is_dir():
        return None
    return tuple(sorted(e.name if e.is_file() else e.name + "/" for e in os.scandir(path)))


def _refuse_broker_folders(path: Path, log_dir: LogDir) -> None:
    """A folder of brokers (``broker-1/`` holding checkpoints and partition directories) is not a
    log directory, although ``broker-1`` parses as topic ``broker`` partition 1: say so."""
    for partition in log_dir.partitions:
        if partition.holds_partition_files:
            continue
        inner = Path(partition.path)
        markers = _marker_files(inner)
        if markers or any(e.is_dir() and parse_partition_dir(e.name) for e in os.scandir(inner)):
            raise EvidenceError(f"holds broker folders or log directories ({partition.name}/ holds "
                                f"{', '.join(sorted(markers)) or 'partition directories'}), not partitions: give each "
                                "log directory (or partition directory), or scan the fleet with kreplica fleet scan",
                                path=str(path))


def _what_it_is(path: Path) -> str:
    """What a directory that is neither a partition nor a log directory holds instead."""
    from kreplica.model.zookeeper.files import find_zk_files

    if path.name == REMOTE_LOG_INDEX_CACHE:
        return (f"is a log directory's {REMOTE_LOG_INDEX_CACHE} (tiered storage's RemoteIndexCache: indexes fetched "
                f"from remote storage), not a partition: give its log directory, {path.parent}")
    zk = find_zk_files([path])
    if zk.snapshots or zk.logs:
        return ("is a ZooKeeper data directory (snapshots and transaction logs), not a Kafka log directory: "
                "try kreplica cluster-state")
    names = sorted(e.name for e in os.scandir(path))
    if not names:
        return "is an empty directory, not a partition or log directory"
    config = [n for n in names if n.endswith(CONFIG_SUFFIX)]
    if config:
        return (f"holds configuration files ({', '.join(config[:3])}), not log data: give a directory that "
                "log.dirs names, or a partition directory in it")
    return ("is neither a partition directory nor a log directory (no segments, checkpoints or partition "
            "directories in it)")


def find_log_dirs(paths: list[str]) -> list[LogDir]:
    """Resolve user paths (log directories or partition directories) to log directories.

    A partition directory is wrapped in a partial :class:`LogDir` for its parent, so the parent's
    checkpoints still apply. A directory is a log directory when it holds a log directory's own
    files or a subdirectory with partition files; one whose subdirectories merely parse as
    partition names (a ZooKeeper data directory's ``version-2``) is not. Raises
    :class:`EvidenceError` for a path that is neither, saying what it is.
    """
    out: list[LogDir] = []
    for raw in paths:
        refuse_special(raw)
        path = Path(raw)
        if not path.is_dir():
            raise EvidenceError("no such directory", path=raw)
        if _looks_like_partition(path):
            parent = path.parent
            out.append(LogDir(str(parent), (scan_partition_dir(path),), _marker_files(parent), (), is_whole=False))
            continue
        log_dir = scan_log_dir(path)
        _refuse_broker_folders(path, log_dir)
        if not log_dir.files and not any(p.holds_partition_files for p in log_dir.partitions):
            raise EvidenceError(_what_it_is(path), path=raw)
        out.append(log_dir)
    return out


def given_paths(log_dirs: Iterable[LogDir]) -> list[str]:
    """What the user gave for these log directories (:func:`find_log_dirs`): a whole one's path,
    else the partition directories given in it (a partition directory given alone does not
    bring its siblings)."""
    return [d.path for d in log_dirs if d.is_whole] + [p.path for d in log_dirs if not d.is_whole
                                                       for p in d.partitions]


def read_bytes(path: str) -> bytes:
    """A small file's content (checkpoints and properties are a few KB), opened read-only; a
    pipe, socket or device is refused (exit 2), never read."""
    return read_small_file(path)


@dataclass(frozen=True, slots=True)
class LogDirCheckpoints:
    """The parsed offset checkpoints of a log directory (``None`` = file absent) and the
    findings of reading them. ``unreadable`` lists files a broker could not read."""

    high_watermarks: dict[tuple[str, int], int] | None
    recovery_points: dict[tuple[str, int], int] | None
    log_start_offsets: dict[tuple[str, int], int] | None
    cleaner_offsets: dict[tuple[str, int], int] | None
    meta: object | None
    clean_shutdown: object | None
    findings: tuple[Finding, ...]
    unreadable: tuple[str, ...]


def broker_id_of(cps: LogDirCheckpoints) -> int | None:
    """The broker (ZooKeeper mode) or node (KRaft) id ``meta.properties`` gives, if any."""
    meta = cps.meta
    if meta is None:
        return None
    return meta.broker_id if meta.broker_id is not None else meta.node_id


def read_checkpoints(log_dir: LogDir) -> LogDirCheckpoints:
    """Parse the log directory's own files; a malformed one becomes a finding, never an exception."""
    parsed: dict[str, object] = {}
    findings: list[Finding] = []
    unreadable: list[str] = []
    readers = {
        REPLICATION_OFFSET_CHECKPOINT: parse_offset_checkpoint,
        RECOVERY_POINT_CHECKPOINT: parse_offset_checkpoint,
        LOG_START_OFFSET_CHECKPOINT: parse_offset_checkpoint,
        CLEANER_OFFSET_CHECKPOINT: parse_offset_checkpoint,
        META_PROPERTIES: parse_meta_properties,
        CLEAN_SHUTDOWN: parse_clean_shutdown,
    }
    for name, reader in readers.items():
        path = log_dir.files.get(name)
        if path is None:
            continue
        try:
            parsed[name] = reader(read_bytes(path), path=path)
        except (FormatError, ValueError) as exc:
            unreadable.append(name)
            reason = exc.one_line() if isinstance(exc, FormatError) else str(exc)
            position = exc.position if isinstance(exc, FormatError) and exc.position is not None else 0
            findings.append(Finding("checkpoint_malformed", path, position,
                                    f"{name} cannot be read as Kafka reads it: {reason}",
                                    details={"file": name}))
    return LogDirCheckpoints(
        parsed.get(REPLICATION_OFFSET_CHECKPOINT), parsed.get(RECOVERY_POINT_CHECKPOINT),
        parsed.get(LOG_START_OFFSET_CHECKPOINT), parsed.get(CLEANER_OFFSET_CHECKPOINT),
        parsed.get(META_PROPERTIES), parsed.get(CLEAN_SHUTDOWN), tuple(findings), tuple(unreadable),
    )
