"""The Spark session a fleet job runs in: embedded local mode by default, a cluster by URL.

Spark needs a Java runtime (17 for Spark 4); without one, ``fleet`` stops with a usage error
(exit 2) before PySpark is imported, and the other commands never import PySpark at all.
Executors run the same Python as the driver in local mode; on a cluster kreplica must be
installed on (or shipped to) the executors — the README gives a ``spark-submit`` recipe.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import contextmanager

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


@contextmanager
def spark_session(master: str | None = None, *, app_name: str = "kreplica fleet", light_driver: bool = False):
    """A Spark session for one command, stopped when it ends. ``master`` ``None`` keeps the one
    ``spark-submit`` was given, else :data:`DEFAULT_MASTER`; ``light_driver`` starts the JVM with
    :data:`LIGHT_DRIVER_JVM` (unless the user set driver Java options)."""
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
    if light_driver and launched_here and "spark.driver.extraJavaOptions" not in os.environ.get(
            "PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.config("spark.driver.extraJavaOptions", LIGHT_DRIVER_JVM)
    spark = (builder.appName(app_name)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "true" if sys.stderr.isatty() else "false")
             .config("spark.sql.shuffle.partitions", "16")
             .config("spark.python.worker.reuse", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield spark
    finally:
        spark.stop()
