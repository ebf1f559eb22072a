"""The Spark session a fleet job runs in: embedded local mode by default, a cluster by URL.

Spark needs a Java runtime (17 for Spark 4); without one, ``fleet`` stops with a usage error
(exit 2) before PySpark is imported, and the other commands never import PySpark at all.
Executors run the same Python as the driver in local mode; on a cluster kreplica must be
installed on (or shipped to) the executors — the README gives a ``spark-submit`` recipe.

Spark's own output stays off stderr unless asked for (:class:`SparkLog`): the JVM starts with the
log4j2 configuration shipped beside this module, and :mod:`.jvm_output` catches the rest.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from importlib import resources

from kreplica.formats.errors import FormatError
from kreplica.formats.mapped import EvidenceError
from kreplica.pipeline.spark.jvm_archive import archive_options
from kreplica.pipeline.spark.jvm_output import JVM_OUTPUT

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


#: The log4j levels ``--spark-log`` takes (those of Spark's ``SparkContext.setLogLevel``).
SPARK_LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")

#: The log4j2 configuration the driver JVM starts with (package data, beside this module).
LOG4J2_CONFIGURATION = "log4j2.properties"

_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


@dataclass(frozen=True, slots=True)
class SparkLog:
    """How much of Spark's own output a run shows on stderr: nothing by default (its log, the
    JVM's warnings, the Python workers' stderr; kreplica says what went wrong in one line), its
    warnings with ``--debug``, the log at ``--spark-log LEVEL`` (and the rest) when asked."""

    level: str = "OFF"

    @classmethod
    def choose(cls, spark_log: str | None, debug: bool) -> SparkLog:
        return cls(spark_log.upper() if spark_log else "WARN" if debug else "OFF")

    @property
    def shown(self) -> bool:
        return self.level != "OFF"


def driver_java_options(conf: Mapping[str, str], log: SparkLog, configuration: str, *,
                        light_driver: bool, archive: str | None = None) -> str | None:
    """``spark.driver.extraJavaOptions`` for a JVM kreplica starts: the log4j2 configuration and
    level, the class-data-sharing ``archive``'s options (:mod:`.jvm_archive`), then
    :data:`LIGHT_DRIVER_JVM` when ``light_driver`` and the user set no Java options, then the
    user's own (``--conf``), which win where they say the same. ``None`` when
    ``PYSPARK_SUBMIT_ARGS`` sets them: the user's environment is in charge."""
    if _JAVA_OPTIONS in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return None
    quoted = configuration.replace("\\", "\\\\").replace('"', '\\"')
    options = [f'"-Dlog4j2.configurationFile={quoted}"', f"-Dkreplica.spark.log={log.level}"]
    if archive:
        options.append(archive)
    user = conf.get(_JAVA_OPTIONS)
    if user:
        options.append(user)
    elif light_driver:
        options.append(LIGHT_DRIVER_JVM)
    return " ".join(options)


@contextmanager
def spark_session(master: str | None = None, *, app_name: str = "kreplica fleet", light_driver: bool = False,
                  task_heap: int | None = None, conf: Mapping[str, str] | None = None, log: SparkLog = SparkLog()):
    """A Spark session for one command, stopped when it ends. ``master`` ``None`` keeps the one
    ``spark-submit`` was given, else :data:`DEFAULT_MASTER`; ``light_driver`` starts the JVM with
    :data:`LIGHT_DRIVER_JVM` (unless the user set driver Java options); ``task_heap``, the bytes a
    running task holds in the JVM, sizes the heap in local mode (:func:`local_heap`) unless the
    user set ``spark.driver.memory``; ``conf`` is Spark configuration given on the command line
    (``--conf``), which wins over the defaults here; ``log`` is how much of Spark's output
    reaches stderr (:class:`SparkLog`, :mod:`.jvm_output`). Spark's console progress bar is off:
    the commands show their own. Yields a :class:`FleetSpark` (Spark's context; its SQL session
    made when first used).

    Ctrl-C raises :class:`KeyboardInterrupt` wherever the driver is (PySpark's own handler would
    call the JVM from inside the call it interrupts, and print tracebacks), Spark is stopped, and
    a job that fails because of it fails as the interruption; during Spark's start it waits for
    the start to end (:class:`_Interrupts`). py4j's report of the interrupted call is dropped
    unless Spark's output is shown."""
    require_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    settings: dict[str, str] = {}
    launched_here = "PYSPARK_GATEWAY_PORT" not in os.environ  # not by spark-submit
    if master is not None or launched_here:
        settings["spark.master"] = master or DEFAULT_MASTER
    conf = dict(conf or {})
    resolved = master or DEFAULT_MASTER
    if task_heap and launched_here and local_cores(resolved) and "spark.driver.memory" not in conf and \
            "spark.driver.memory" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        settings["spark.driver.memory"] = local_heap(resolved, task_heap)
    settings.update({"spark.app.name": app_name, "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                     "spark.python.worker.reuse": "true"})
    with ExitStack() as stack:
        if launched_here:
            configuration = stack.enter_context(resources.as_file(resources.files(__package__) / LOG4J2_CONFIGURATION))
            archive = archive_options() if _starts_jvm() else None
            options = driver_java_options(conf, log, str(configuration), light_driver=light_driver, archive=archive)
            if options is not None:
                conf[_JAVA_OPTIONS] = options
        settings.update(conf)
        if not log.shown:
            stack.enter_context(_py4j_logs_dropped())
        interrupts = stack.enter_context(_interrupts())
        spark = _start(settings, launched_here, log)
        interrupts.install(deferred=False)  # over PySpark's, which its context put in while starting
        try:
            if interrupts.fired:  # Ctrl-C while Spark started
                raise KeyboardInterrupt
            yield spark
        except Exception as exc:
            if interrupts.fired:  # the job failed because Ctrl-C stopped its workers
                raise KeyboardInterrupt from None
            failure = task_failure(exc) or jvm_failure(exc)
            if failure is None:
                raise
            raise failure from None
        finally:
            _stop(spark)


def _start(settings: Mapping[str, str], launched_here: bool, log: SparkLog) -> FleetSpark:
    """Spark's context, its JVM's output caught while it starts (:mod:`.jvm_output`) when kreplica
    starts the JVM; a start cut short (Ctrl-C) stops what it began."""
    from pyspark import SparkConf, SparkContext

    JVM_OUTPUT.show = log.shown
    starts_jvm = launched_here and _starts_jvm()
    try:
        with JVM_OUTPUT.launching() if starts_jvm else nullcontext():
            context = SparkContext.getOrCreate(SparkConf().setAll(settings.items()))
    except BaseException:
        _stop(SparkContext._active_spark_context)
        raise
    context.setLogLevel(log.level)
    return FleetSpark(context)


class FleetSpark:
    """What a fleet command runs on: Spark's context at once, and Spark SQL's session only when
    first asked for (``spark.read``, ``spark.createDataFrame``, ... any other attribute of a
    ``SparkSession``). The fleet's jobs run on the context alone, and making the session takes
    about 2 s of Spark's start here (``bench/README.md``)."""

    def __init__(self, context) -> None:
        self.sparkContext = context
        self._session = None

    @property
    def _jvm(self):
        return self.sparkContext._jvm

    def stop(self) -> None:
        self.sparkContext.stop()

    def __getattr__(self, name: str):
        if self._session is None:
            from pyspark.sql import SparkSession

            self._session = SparkSession.builder.getOrCreate()  # on the running context, with its settings
        return getattr(self._session, name)


def _starts_jvm() -> bool:
    """Whether the next session starts a JVM: PySpark keeps one per process (a later session
    reuses it, its options and its output pipe)."""
    from pyspark import SparkContext

    return getattr(SparkContext, "_gateway", None) is None


def _stop(spark) -> None:
    """Stop a session or context; a JVM already gone is no news (the error that matters is raised)."""
    if spark is None:
        return
    from py4j.protocol import Py4JError

    try:
        spark.stop()
    except (Py4JError, OSError):
        pass


class _Interrupts:
    """Ctrl-C during a session: a plain :class:`KeyboardInterrupt`, remembered. While Spark
    starts it is only remembered (``deferred``), and raised once the session exists: a start cut
    short leaves PySpark's JVM running with no one to stop it."""

    fired = False

    def __init__(self) -> None:
        self.deferred = True

    def handle(self, signum, frame) -> None:
        self.fired = True
        if not self.deferred:
            raise KeyboardInterrupt

    def install(self, *, deferred: bool) -> None:
        self.deferred = deferred
        if threading.current_thread() is threading.main_thread():  # the only thread Python lets set it
            signal.signal(signal.SIGINT, self.handle)


@contextmanager
def _interrupts() -> Iterator[_Interrupts]:
    """:class:`_Interrupts`, deferred until the session has started, for the session's life;
    the previous handler restored after."""
    state = _Interrupts()
    previous = signal.getsignal(signal.SIGINT)
    state.install(deferred=True)
    try:
        yield state
    finally:
        if previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)


@contextmanager
def _py4j_logs_dropped() -> Iterator[None]:
    """py4j reports a call Ctrl-C interrupted with ``logging.exception`` on the root logger,
    which prints a traceback to stderr; a handler that drops records keeps it off."""
    root, handler = logging.getLogger(), logging.NullHandler()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


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
        return EvidenceError("Spark's JVM stopped during the job (java.lang.OutOfMemoryError in its log, shown with "
                             "--spark-log ERROR, means the tasks need more memory: --conf spark.driver.memory=16g in "
                             "local mode, spark.executor.memory on a cluster; remote segments take about 3 times "
                             "their size each in the JVM)")
    return None


def task_failure(exc: Exception) -> EvidenceError | None:
    """A job that failed because a task's reader refused an input (an unreadable or special
    file, say), as the one-line error the single-partition commands give; ``None`` for any
    other failure."""
    names = _error_names()
    found = [message for name, message in _TASK_ERROR.findall(str(exc)) if name in names]
    return EvidenceError(found[-1].strip()) if found else None
