"""Evidence on a file system only Spark can read (``hdfs://``, ``s3a://``, ``gs://``, ``abfs://``,
``viewfs://``...): Spark's own Hadoop connectors list and read the files, so kreplica needs
nothing beyond PySpark and uses whatever connectors and credentials the user's Spark has.

Tasks cannot memory-map such files, and the log-directory readers work on directories, so:

- the driver lists the tree through Hadoop's ``FileSystem`` (not Spark's file listing, which
  hides names starting with ``_`` or ``.``: ``__consumer_offsets-0``, ``.kafka_cleanshutdown``)
  and reads the few files Spark would hide or discovery needs (``meta.properties``);
- a *skeleton* of the tree — every listed file as a sparse file of its listed length, holding
  nothing — lets discovery and the log-directory readers run unchanged, with the files they do
  read (:func:`needs_content`: checkpoints, ``leader-epoch-checkpoint``, ``partition.metadata``,
  producer snapshots, transaction indexes) filled in from what Spark fetches (:func:`fetch`);
- segments up to 128 MiB are fetched one value each and walked from memory; larger ones are read
  in ranges into a sparse file on the executor's disk (:mod:`.remote_ranges`), never held whole.

:class:`Staging` maps every path a reader reports back to the remote URI.
"""

from __future__ import annotations

import dataclasses
import os
import re
from bisect import bisect_left
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from kreplica.formats.mapped import SMALL_FILE_LIMIT, EvidenceError
from kreplica.formats.logdir.naming import FileKind, classify_partition_file
from kreplica.model.logdir.log_dir import LOG_DIR_MARKERS, META_PROPERTIES
from kreplica.pipeline.spark.hadoop_files import hadoop_version, java_failure

#: Levels below ROOT that are listed: broker, log directory, partition directory, its files.
DEPTH = 4
#: What a task fetching segments holds in the JVM at most: a segment read whole (at most
#: :data:`~.remote_ranges.WHOLE_FETCH_LIMIT`, 128 MiB, larger ones are read in ranges) is built
#: from chunks into one array, and the one before it may still be on its way to the Python worker
#: (measured before ranges: two tasks on 1 GiB segments passed in a 6-7 GiB heap, but not always
#: in 7 GiB: humongous arrays fragment it), with room to spare.
TASK_HEAP = 512 << 20
#: Hadoop glob characters: Spark would read a path holding one as a pattern.
_GLOB = set("*?[]{}\\,")
_READ_KINDS = (FileKind.LEADER_EPOCH_CHECKPOINT, FileKind.PARTITION_METADATA, FileKind.SNAPSHOT, FileKind.TXNINDEX)


def is_remote(root: str) -> bool:
    """Whether ``root`` names a file system other than the local one (a URI scheme but ``file``)."""
    scheme = urlparse(root).scheme
    return scheme not in ("", "file") and len(scheme) > 1  # a Windows drive letter is not a scheme


def needs_content(entry: RemoteEntry) -> bool:
    """Whether the log-directory readers read this file (the others are only listed). A file
    they read whole but refuse past :data:`SMALL_FILE_LIMIT` is not fetched either: its sparse
    placeholder of the same size is refused the same way (a transaction index is mapped, so
    read whatever its size)."""
    if entry.is_dir:
        return False
    name = entry.rel.rpartition("/")[2]
    kind = None if name in LOG_DIR_MARKERS else classify_partition_file(name).kind
    if kind is not None and kind not in _READ_KINDS:
        return False
    return entry.size <= SMALL_FILE_LIMIT or kind == FileKind.TXNINDEX


def hidden_from_spark(rel: str) -> bool:
    """Spark's file sources skip a file whose name starts with ``_`` or ``.``."""
    return rel.rpartition("/")[2].startswith(("_", "."))


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """One listed file or directory, by its path relative to ROOT."""

    rel: str
    is_dir: bool
    size: int = 0


@dataclass(frozen=True, slots=True)
class RemoteTree:
    """A listed fleet: ``uri`` is ROOT as Hadoop qualifies it (no trailing ``/``); ``contents``
    the files the driver read itself (``meta.properties`` and those Spark would hide)."""

    uri: str
    entries: tuple[RemoteEntry, ...]  # kept in order of rel
    contents: Mapping[str, bytes]
    _rels: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(sorted(self.entries, key=lambda e: e.rel)))
        object.__setattr__(self, "_rels", tuple(e.rel for e in self.entries))

    def to_uri(self, rel: str) -> str:
        return f"{self.uri}/{rel}"

    def under(self, uri: str) -> tuple[RemoteEntry, ...]:
        """The entries below a directory of the tree, given by its URI (a range of the sorted
        entries, found by bisection: one lookup per log directory stays cheap in a large tree)."""
        prefix = uri[len(self.uri) + 1:] + "/"
        lo = bisect_left(self._rels, prefix)
        hi = bisect_left(self._rels, prefix[:-1] + chr(ord("/") + 1), lo)
        return self.entries[lo:hi]

    def fetched(self, entries: Iterable[RemoteEntry]) -> list[str]:
        """URIs of the files among ``entries`` that tasks must fetch through Spark."""
        return [self.to_uri(e.rel) for e in entries if needs_content(e) and e.rel not in self.contents]


def list_tree(spark, root: str) -> RemoteTree:
    """ROOT listed through Hadoop's ``FileSystem`` to :data:`DEPTH` levels, on the driver, the
    directories of each level listed concurrently (:data:`LISTING_THREADS`)."""
    from py4j.protocol import Py4JError

    try:
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(root)
        fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        if not fs.exists(path) or not fs.getFileStatus(path).isDirectory():
            raise EvidenceError("no such directory (expected ROOT/<broker>/<logdir>/<topic>-<partition>/)", path=root)
        uri = fs.makeQualified(path).toString().rstrip("/")
        entries: list[RemoteEntry] = []
        contents: dict[str, bytes] = {}
        level = [(path, "")]
        lister = _Lister(jvm, fs)
        with ThreadPoolExecutor(LISTING_THREADS) as pool:
            for depth in range(DEPTH):
                listed = list(pool.map(lambda item: (item[1], lister(item[0], _join(uri, item[1]))), level))
                level = []
                for rel, children in listed:
                    for name, is_dir, size, child_path in children:
                        child = f"{rel}/{name}" if rel else name
                        entry = RemoteEntry(child, is_dir, size)
                        entries.append(entry)
                        if is_dir and depth + 1 < DEPTH:
                            level.append((child_path(), child))
                        elif needs_content(entry) and (hidden_from_spark(child) or name == META_PROPERTIES):
                            contents[child] = _read(jvm, fs, child_path())
    except Py4JError as exc:
        raise java_failure(exc, root, hadoop_version(spark._jvm)) from None
    return RemoteTree(uri, tuple(entries), contents)


#: Directories listed at once: each listing is a few calls into the JVM, which wait on its answer.
LISTING_THREADS = 8
_STATUS = re.compile(r"\{path=(.*?); isDirectory=(true|false)(?:; length=(\d+))?;")


class _Lister:
    """Lists one directory in a few calls into the JVM whatever its size: the entries' statuses
    come back printed in one string (Scala's ``mkString``), checked to be exactly the directory's
    children; where a file system's statuses do not print themselves (``viewfs``), each entry is
    asked in turn. The JVM members are looked up once (each lookup is a call of its own)."""

    def __init__(self, jvm, fs) -> None:
        self.fs = fs
        self.make_seq = jvm.scala.collection.mutable.ArraySeq.make
        self.path = jvm.org.apache.hadoop.fs.Path

    def __call__(self, directory, prefix: str) -> list[tuple]:
        """``(name, is_dir, size, hadoop_path)`` of each entry of ``directory``, whose URI is
        ``prefix`` (the path a callable: making it is a call of its own)."""
        statuses = self.fs.listStatus(directory)
        count = len(statuses)
        if count == 0:
            return []
        printed = _STATUS.findall(str(self.make_seq(statuses).mkString("\n")))
        names = [p[len(prefix) + 1:] for p, _, _ in printed]
        if len(printed) == count and all(p.startswith(prefix + "/") for p, _, _ in printed) and \
                all(name and "/" not in name for name in names):
            return [(name, d == "true", int(n or 0), lambda name=name: self.path(directory, name))
                    for name, (_, d, n) in zip(names, printed)]
        return self.one_by_one(statuses)

    @staticmethod
    def one_by_one(statuses) -> list[tuple]:
        out = []
        for status in statuses:
            child = status.getPath()
            is_dir = status.isDirectory()
            out.append((child.getName(), is_dir, 0 if is_dir else status.getLen(), lambda child=child: child))
        return out


def _join(uri: str, rel: str) -> str:
    return f"{uri}/{rel}" if rel else uri


def _read(jvm, fs, path) -> bytes:
    stream = fs.open(path)
    try:
        return bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


def refuse_globs(uris: Iterable[str]) -> None:
    """Spark reads a path holding a glob character as a pattern, and a list of paths as one
    comma-separated string: refuse such a path rather than misread it."""
    for uri in uris:
        if _GLOB & set(uri):
            raise EvidenceError("holds a glob character (one of * ? [ ] { } \\ ,), which Spark would read as a "
                                "pattern: rename it, or mount the store and give the mount path", path=uri)


def fetch(sc, uris: list[str], tasks: int):
    """An RDD of ``(uri, content)``, each file read whole by Spark's Hadoop connector and handed
    to the Python task as raw bytes (``SparkContext.binaryFiles``: not pickled, so the JVM holds
    about one copy of the file a task is passing on); files are packed into about ``tasks``
    tasks of even size. ``uris`` have been through :func:`refuse_globs`."""
    return sc.binaryFiles(",".join(uris), minPartitions=tasks)


class Staging:
    """A local directory standing for ROOT: the skeleton of (part of) the tree, and the maps
    between its paths and the remote URIs."""

    def __init__(self, base: str, tree: RemoteTree) -> None:
        self.base = base.rstrip("/")
        self.tree = tree

    def local(self, uri: str) -> str:
        return self.base + uri[len(self.tree.uri):]

    def build(self, entries: Iterable[RemoteEntry], *, placeholders_for_content: bool = False) -> None:
        """Directories and sparse placeholders; files the driver read get their content, and
        (unless ``placeholders_for_content``) files left to fetch are left absent until
        :meth:`put` writes them."""
        for e in entries:
            path = Path(self.base, e.rel)
            if e.is_dir:
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if e.rel in self.tree.contents:
                path.write_bytes(self.tree.contents[e.rel])
            elif placeholders_for_content or not needs_content(e):
                with open(path, "wb") as fh:
                    fh.truncate(e.size)

    def put(self, uri: str, content: bytes) -> None:
        """A fetched file's content, at its place in the skeleton."""
        Path(self.local(uri)).write_bytes(content)

    def check_complete(self, entries: Iterable[RemoteEntry]) -> None:
        """Every file the readers read is in place (Spark returned a row for each)."""
        for e in entries:
            if needs_content(e) and not os.path.exists(os.path.join(self.base, e.rel)):
                raise EvidenceError("Spark returned no content for this file", path=self.tree.to_uri(e.rel))

    def relabel(self, value):
        """``value`` with every staged path in it (strings, nested in tuples, lists, dicts and
        dataclasses) replaced by its remote URI."""
        if isinstance(value, str):
            return value.replace(self.base, self.tree.uri) if self.base in value else value
        if isinstance(value, tuple):
            items = [self.relabel(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, list):
            return [self.relabel(v) for v in value]
        if isinstance(value, dict):
            return {k: self.relabel(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.replace(value, **{f.name: self.relabel(getattr(value, f.name))
                                                 for f in dataclasses.fields(value) if f.init})
        return value
