"""A class-data-sharing archive of Spark's driver JVM (Java's CDS): the classes Spark loads, kept
parsed and verified in kreplica's cache directory, so the JVM maps them instead of reading ~280
jars; it halves the start of a session (figures in ``bench/README.md``).

Java 17 cannot create the archive as it runs (``-XX:+AutoCreateSharedArchive`` is Java 19): the
first run in a new setting starts its JVM with ``-XX:ArchiveClassesAtExit``, and that JVM writes
the archive as it exits, under a temporary name (that run starts slower, once). A later run finds
it complete (the JVM writes the archive's header last), gives it its name, and from then on every
JVM starts with ``-XX:SharedArchiveFile``. One archive per setting (the Java runtime, the Spark
installation), named by a digest of it; a JVM that cannot use an archive runs without it,
silently. The archive (about 170 MB) lives in ``$XDG_CACHE_HOME/kreplica`` (``~/.cache/kreplica``),
never near the evidence; ``KREPLICA_JVM_ARCHIVE=off`` leaves it alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import uuid
from pathlib import Path

#: Turns the archive off (``off``).
ARCHIVE_ENV = "KREPLICA_JVM_ARCHIVE"
#: The first bytes of a complete dynamic archive (``CDS_DYNAMIC_ARCHIVE_MAGIC``, little-endian:
#: the JVM writes the header, which starts with it, after everything else).
_COMPLETE = (0xF00BABA8).to_bytes(4, "little")
#: A temporary archive no JVM has finished in this long was abandoned (a JVM killed mid-write).
_ABANDONED_SECONDS = 15 * 60
#: JVM logging of the archive's use and creation (the classes it leaves out) kept off.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def cache_dir() -> Path:
    """kreplica's cache directory (XDG's base directory rule)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kreplica"


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.isfile(java) else None


def setting_digest() -> str | None:
    """What an archive is valid for: the Java runtime and the Spark jars (their paths and times)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    parts = [java, str(os.stat(java).st_mtime_ns), pyspark.__version__, str(jars),
             str(jars.stat().st_mtime_ns) if jars.is_dir() else "-"]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _complete(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_COMPLETE)) == _COMPLETE
    except OSError:
        return False


def archive_options() -> str | None:
    """The JVM options for the archive: use it, or create it when none is being created; ``None``
    when off, without a Java, or when the cache directory cannot be written."""
    if os.environ.get(ARCHIVE_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    digest = setting_digest()
    if digest is None:
        return None
    try:
        directory = cache_dir()
        final = directory / f"spark-{digest}.jsa"
        if final.is_file():
            return f"-XX:SharedArchiveFile={final} {_QUIET}"
        directory.mkdir(parents=True, exist_ok=True)
        in_progress = False
        for part in directory.glob(f"spark-{digest}-*.jsa.part"):
            if _complete(part):
                part.replace(final)
                return f"-XX:SharedArchiveFile={final} {_QUIET}"
            if time.time() - part.stat().st_mtime < _ABANDONED_SECONDS:
                in_progress = True
            else:
                part.unlink(missing_ok=True)
        if in_progress:
            return None
        for old in directory.glob("spark-*.jsa*"):  # archives of an earlier Java or Spark
            old.unlink(missing_ok=True)
        part = directory / f"spark-{digest}-{uuid.uuid4().hex[:8]}.jsa.part"
        part.touch()
        return f"-XX:ArchiveClassesAtExit={part} {_QUIET}"
    except OSError:
        return None
