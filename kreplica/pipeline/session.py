"""The Spark session a fleet job runs in: embedded local mode by default, a cluster by URL.

Spark needs a Java runtime (17 for Spark 4); without one, ``fleet`` stops with a usage error
(exit 2) before PySpark is imported, and the other commands never import PySpark at all.
Executors run the same Python as the driver in local mode; on a cluster kreplica must be
installed on (or shipped to) the executors — the README gives a ``spark-submit`` recipe.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from contextlib import contextmanager

from kreplica.formats.errors import FormatError
from kreplica.formats.mapped import EvidenceError

DEFAULT_MASTER = "local[*]"


def require_java() -> None:
    """Exit 2 (as bad usage) when no Java runtime is found, naming what is needed."""
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and os.access(os.path.join(home, "bin", "java"), os.X_OK)):
        raise EvidenceError("fleet runs on Apache Spark, which needs Java 17: no java on PATH and no JAVA_HOME "
                            "(install a JDK 17, e.g. apt-get install openjdk-17-jre-headless)")


#: For a job whose work runs in Python tasks (``fleet scan``): the driver JVM only schedules and
#: passes small results, so it starts faster without the optimising compiler, and the serial
#: collector keeps its heap small. Applied only when kreplica starts the JVM itself.
LIGHT_DRIVER_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def local_cores(master: str) -> int | None:
    """How many tasks a ``local`` master runs at once; ``None`` for a cluster."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if m is None:
        return None
    if m[1] == "*":
        return os.cpu_count() or 1
    return int(m[1]) if m[1] else 1


def local_heap(master: str, per_task: int) -> str:
    """``spark.driver.memory`` for local mode when each running task holds ``per_task`` bytes
    in the JVM: 1 GiB and that per core, at most three quarters of the machine's memory."""
    cores = local_cores(master) or 1
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{min((1 << 30) + cores * per_task, total * 3 // 4) >> 20}m"


@contextmanager
def spark_session(master: str | None = None, *, app_name: str = "kreplica fleet", light_driver: bool = False,
                  task_heap: int | None = None, conf: Mapping[str, str] | None = None):
    """A Spark session for one command, stopped when it ends. ``master`` ``None`` keeps the one
    ``spark-submit`` was given, else :data:`DEFAULT_MASTER`; ``light_driver`` starts the JVM with
    :data:`LIGHT_DRIVER_JVM` (unless the user set driver Java options); ``task_heap``, the bytes a
    running task holds in the JVM, sizes the heap in local mode (:func:`local_heap`) unless the
    user set ``spark.driver.memory``; ``conf`` is Spark configuration given on the command line
    (``--conf``), which wins over the defaults here."""
    require_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    launched_here = "PYSPARK_GATEWAY_PORT" not in os.environ  # not by spark-submit
    if master is not None:
        builder = builder.master(master)
    elif launched_here:
        builder = builder.master(DEFAULT_MASTER)
    conf = dict(conf or {})
    if light_driver and launched_here and "spark.driver.extraJavaOptions" not in conf and \
            "spark.driver.extraJavaOptions" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.config("spark.driver.extraJavaOptions", LIGHT_DRIVER_JVM)
    resolved = master or DEFAULT_MASTER
    if task_heap and launched_here and local_cores(resolved) and "spark.driver.memory" not in conf and \
            "spark.driver.memory" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.config("spark.driver.memory", local_heap(resolved, task_heap))
    spark = (builder.appName(app_name)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "true" if sys.stderr.isatty() else "false")
             .config("spark.sql.shuffle.partitions", "16")
             .config("spark.python.worker.reuse", "true"))
    for key, value in conf.items():
        spark = spark.config(key, value)
    spark = spark.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    except Exception as exc:
        failure = task_failure(exc) or jvm_failure(exc)
        if failure is None:
            raise
        raise failure from None
    finally:
        from py4j.protocol import Py4JError

        try:
            spark.stop()
        except (Py4JError, OSError):  # the JVM is gone already; the error that matters is above
            pass


#: A line of a task's Python traceback naming a kreplica exception and its message.
_TASK_ERROR = re.compile(r"^\s*kreplica\.formats\.[\w.]+\.(\w+): (.+)$", re.MULTILINE)


def _error_names(cls: type = FormatError) -> set[str]:
    return {cls.__name__}.union(*(_error_names(sub) for sub in cls.__subclasses__()))


def jvm_failure(exc: Exception) -> EvidenceError | None:
    """A job that failed because Spark's JVM ran out of memory or went away, with what to do."""
    from py4j.protocol import Py4JNetworkError

    text = str(exc)
    if "OutOfMemoryError" in text or isinstance(exc, (Py4JNetworkError, ConnectionError)) or \
            "Answer from Java side is empty" in text or "SparkContext was shut down" in text:
        return EvidenceError("Spark's JVM stopped during the job (java.lang.OutOfMemoryError in its log above means "
                             "the tasks need more memory: --conf spark.driver.memory=16g in local mode, "
                             "spark.executor.memory on a cluster; remote segments take about 3 times their size "
                             "each in the JVM)")
    return None


def task_failure(exc: Exception) -> EvidenceError | None:
    """A job that failed because a task's reader refused an input (an unreadable or special
    file, say), as the one-line error the single-partition commands give; ``None`` for any
    other failure."""
    names = _error_names()
    found = [message for name, message in _TASK_ERROR.findall(str(exc)) if name in names]
    return EvidenceError(found[-1].strip()) if found else None
