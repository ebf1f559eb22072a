"""Files on any file system Spark reaches (``hdfs://``, ``s3a://``, ``gs://``, ``abfs://``,
``viewfs://``..., and local paths), handled from the driver through the JVM's Hadoop
``FileSystem``: the connectors and credentials are the user's Spark's, nothing of kreplica's.

Only the driver can do this (a Python task has no JVM to call); it does the few operations a
fleet command needs around its Spark jobs: checking and creating an output directory, moving a
written table into place, marking it complete, reading a few bytes of a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import contextmanager
from urllib.parse import urlparse

from kreplica.formats.mapped import EvidenceError


def join_uri(base: str, *names: str) -> str:
    """``base`` and the names below it, for a local path or a URI alike (``pathlib`` would fold
    ``viewfs://fleet`` into ``viewfs:/fleet``)."""
    return "/".join((base.rstrip("/"), *names)) if "://" in base else os.path.join(base, *names)


class LocalFiles:
    """The questions :class:`HadoopFiles` answers, for a local path."""

    @staticmethod
    def is_dir(path: str) -> bool:
        return os.path.isdir(path)

    @staticmethod
    def is_file(path: str) -> bool:
        return os.path.isfile(path)


class HadoopFiles:
    """Hadoop ``FileSystem`` operations on URIs, from the driver of ``spark``. A Hadoop failure
    is an :class:`EvidenceError` naming the URI (exit 2), as for remote evidence."""

    def __init__(self, spark) -> None:
        self._jvm = spark._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _path(self, uri: str):
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self._conf), path

    @contextmanager
    def _failures(self, uri: str):
        from py4j.protocol import Py4JError

        try:
            yield
        except Py4JError as exc:
            raise java_failure(exc, uri) from None

    def _ask(self, uri: str, question: Callable):
        with self._failures(uri):
            fs, path = self._path(uri)
            return question(fs, path)

    def exists(self, uri: str) -> bool:
        return self._ask(uri, lambda fs, path: bool(fs.exists(path)))

    def is_dir(self, uri: str) -> bool:
        return self._ask(uri, lambda fs, path: bool(fs.exists(path) and fs.getFileStatus(path).isDirectory()))

    def is_file(self, uri: str) -> bool:
        return self._ask(uri, lambda fs, path: bool(fs.exists(path) and fs.getFileStatus(path).isFile()))

    def is_empty_dir(self, uri: str) -> bool:
        return self._ask(uri, lambda fs, path: bool(fs.getFileStatus(path).isDirectory()
                                                     and len(fs.listStatus(path)) == 0))

    def mkdirs(self, uri: str) -> None:
        if not self._ask(uri, lambda fs, path: bool(fs.mkdirs(path))):
            raise EvidenceError("cannot be created", path=uri)

    def rename(self, uri: str, target: str) -> None:
        """``uri`` moved to ``target``, which must not exist (Hadoop would move it inside)."""
        def move(fs, path):
            return bool(fs.rename(path, self._jvm.org.apache.hadoop.fs.Path(target)))
        if not self._ask(uri, move):
            raise EvidenceError(f"cannot be moved to {target}", path=uri)

    def touch(self, uri: str) -> None:
        """An empty file at ``uri`` (written over if there is one)."""
        self._ask(uri, lambda fs, path: fs.create(path, True).close())

    def delete(self, uri: str) -> None:
        """``uri`` and everything below it."""
        self._ask(uri, lambda fs, path: fs.delete(path, True))

    def read(self, uri: str, position: int, length: int) -> bytes:
        """``length`` bytes of the file ``uri`` from byte ``position`` (Hadoop's positioned
        read; the bytes cross from the JVM as one value, so keep ``length`` small)."""
        def read(fs, path):
            stream = fs.open(path)
            try:
                stream.seek(position)
                return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream, length))
            finally:
                stream.close()
        return self._ask(uri, read)


#: The Hadoop module holding the connector for a scheme, where Hadoop ships one.
_CONNECTORS = {"s3a": "hadoop-aws", "abfs": "hadoop-azure", "abfss": "hadoop-azure", "wasb": "hadoop-azure",
               "wasbs": "hadoop-azure", "oss": "hadoop-aliyun", "cos": "hadoop-cos"}


def java_failure(exc: Exception, uri: str, hadoop_version: str | None = None) -> EvidenceError:
    """A Hadoop exception as a one-line error naming the URI (exit 2); for a scheme without its
    connector, the ``--conf`` that adds it (``hadoop_version``: the Hadoop that Spark carries)."""
    java = getattr(exc, "java_exception", None)
    reason = java.toString() if java is not None else str(exc).splitlines()[0]
    if any(sign in reason for sign in ("UnsupportedFileSystemException", "No FileSystem for scheme",
                                       "ClassNotFoundException")):
        module = _CONNECTORS.get(urlparse(uri).scheme)
        package = f"org.apache.hadoop:{module}:{hadoop_version or '<the Hadoop version of your Spark>'}" \
            if module else None
        reason += (" (Spark reads this scheme only with its connector on the classpath"
                   + (f", e.g. --conf spark.jars.packages={package})" if package else ")"))
    return EvidenceError(reason, path=uri)


def hadoop_version(jvm) -> str | None:
    try:
        return str(jvm.org.apache.hadoop.util.VersionInfo.getVersion())
    except Exception:  # noqa: BLE001 - only a hint in an error message
        return None
