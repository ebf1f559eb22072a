"""Which ZooKeeper files a SOURCE holds, and the txn log entries they carry, in zxid order.

Sources (apache/zookeeper ``release-3.8.0-1``): ``server/persistence/FileTxnLog.java``
(``getLogFiles``, ``FileTxnIterator``), ``FileSnap.java`` and ``Util.java`` (file names:
``snapshot.<hex zxid>[.gz|.snappy]``, ``log.<hex zxid>``); ``../shared/specs/zookeeper-formats.md``
§1, §3.9.

A SOURCE is a data directory (``version-2/`` looked into when present), any directory holding
snapshot and log files, or explicit files. Log files are mapped read-only one at a time
(:func:`~kreplica.formats.mapped.open_buffer`) and walked by
:func:`~kreplica.formats.zookeeper.txnlog.iter_txnlog`; nothing is kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import open_buffer, open_regular, refuse_special

VERSION_DIR = "version-2"


@dataclass(frozen=True, slots=True)
class ZkFile:
    """A snapshot or log file found in the evidence, with the zxid its name carries."""

    path: str
    kind: str          # "snapshot" | "log"
    zxid: int
    compression: str = zks.COMPRESSION_NONE


@dataclass(frozen=True, slots=True)
class ZkFiles:
    """The snapshot and log files of a SOURCE, each sorted by zxid."""

    snapshots: tuple[ZkFile, ...]
    logs: tuple[ZkFile, ...]
    source: str = ""


def _classify(path: str) -> ZkFile | None:
    name = os.path.basename(path)
    snap = zks.parse_snapshot_name(name)
    if snap is not None:
        return ZkFile(path, "snapshot", snap[0], snap[1])
    zxid = zkl.parse_log_name(name)
    if zxid is not None:
        return ZkFile(path, "log", zxid)
    return None


def _sniff(path: str) -> ZkFile:
    """An explicit file with a foreign name: recognised by its magic (zxid from its content)."""
    fd = open_regular(path)   # a pipe or device given as SOURCE is refused, never read
    try:
        head = os.read(fd, 8)
    finally:
        os.close(fd)
    if head[:4] == b"ZKSN":
        return ZkFile(path, "snapshot", -1)
    if head[:4] == b"ZKLG":
        return ZkFile(path, "log", -1)
    if head[:2] == zks.GZIP_MAGIC:
        return ZkFile(path, "snapshot", -1, zks.COMPRESSION_GZ)
    if head[:8] == zks.SNAPPY_MAGIC:
        return ZkFile(path, "snapshot", -1, zks.COMPRESSION_SNAPPY)
    raise FormatError("not a ZooKeeper snapshot or transaction log (unknown name and magic)",
                      path=path, position=0, field="magic")


def find_zk_files(sources: Iterable[str | os.PathLike]) -> ZkFiles:
    """The snapshots and logs in SOURCE: data directories (``version-2/`` looked into when
    present), any directory holding ``snapshot.*``/``log.*`` files, or explicit files.

    In directories, only names of the shapes ZooKeeper writes are taken (``snapshot.<hex>``,
    ``snapshot.<hex>.gz|.snappy``, ``log.<hex>``); everything else (``myid``, ``*.tmp``, tool
    outputs) is ignored. Explicit files with other names are recognised by their magic.
    """
    snaps: dict[str, ZkFile] = {}
    logs: dict[str, ZkFile] = {}
    names = []
    for src in sources:
        s = os.fspath(src)
        names.append(s)
        if os.path.isdir(s):
            dirs = [s]
            sub = os.path.join(s, VERSION_DIR)
            if os.path.isdir(sub):
                dirs.append(sub)
            for d in dirs:
                for name in sorted(os.listdir(d)):
                    full = os.path.join(d, name)
                    if not os.path.isfile(full):
                        continue
                    f = _classify(full)
                    if f is not None:
                        (snaps if f.kind == "snapshot" else logs)[full] = f
        elif os.path.isfile(s):
            f = _classify(s) or _sniff(s)
            (snaps if f.kind == "snapshot" else logs)[s] = f
        else:
            refuse_special(s)
            raise FormatError("no such file or directory", path=s)
    return ZkFiles(tuple(sorted(snaps.values(), key=lambda f: (f.zxid, f.path))),
                   tuple(sorted(logs.values(), key=lambda f: (f.zxid, f.path))),
                   ", ".join(names))


def log_files_for(logs: Iterable[ZkFile], snap_zxid: int) -> list[ZkFile]:
    """``FileTxnLog.getLogFiles``: the newest log starting at or before ``snap_zxid``, and every
    later one (the txns just after a fuzzy snapshot usually sit at the end of the older log)."""
    ordered = sorted(logs, key=lambda f: f.zxid)
    start = 0
    for i, f in enumerate(ordered):
        if f.zxid <= snap_zxid:
            start = i
    return ordered[start:]


def iter_log_entries(logs: Iterable[ZkFile]) -> Iterator[zkl.TxnEntry | Finding]:
    """Every entry of ``logs`` in file order, each followed by its findings, as
    ``FileTxnIterator`` chains files (streamed: one file mapped at a time, nothing kept)."""
    for f in logs:
        with open_buffer(f.path) as buf:
            if not buf:
                continue   # a crash before the header was written; ZooKeeper 3.9+ deletes it
            with closing(_walk_log(f, buf)) as items:
                for item in items:
                    if isinstance(item, (zkl.TxnEntry, Finding)):
                        yield item


def _walk_log(f: ZkFile, buf) -> Iterator[zkl.TxnLogHeader | zkl.TxnEntry | Finding | zkl.TxnLogEnd]:
    """:func:`~kreplica.formats.zookeeper.txnlog.iter_txnlog` over one mapped log; a file with a
    foreign header becomes a ``zk_invalid_txn`` finding and ends the walk of that file."""
    walk = zkl.iter_txnlog(buf, path=f.path)
    try:
        yield from walk
    except FormatError as exc:
        yield Finding("zk_invalid_txn", f.path, exc.position or 0,
                      f"not a readable txn log ({exc.one_line()}); skipped")
    finally:
        walk.close()   # releases its views of the map before the map is closed


def iter_zk_log(sources: Iterable[str | os.PathLike]) -> Iterator[
        zkl.TxnLogHeader | zkl.TxnEntry | Finding | zkl.TxnLogEnd]:
    """Every log file of SOURCE in zxid order, each as :func:`~kreplica.formats.
    zookeeper.txnlog.iter_txnlog` walks it (header, entries with their findings, end), for
    ``zk log``. A file with a foreign header gives a ``zk_invalid_txn`` finding and is skipped;
    an empty file gives just its end."""
    for f in find_zk_files(sources).logs:
        with open_buffer(f.path) as buf:
            if not buf:
                yield zkl.TxnLogEnd(f.path, 0, 0, 0, zkl.STOP_END_OF_FILE, 0, None, None)
                continue
            yield from _walk_log(f, buf)
