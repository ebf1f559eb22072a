"""``fleet scan`` on a real standalone Spark cluster: a master and two workers started on this
machine from the pyspark installation (``spark-class``), kreplica shipped to the executors as
the wheel ``pip wheel`` builds, the way the README tells users to (the wheel, a zip, unpacked by
Spark as an archive and put on the executors' ``PYTHONPATH``: Python cannot load a compiled
extension from inside a zip, so ``--py-files`` would leave the executors the pure-Python twins).
The tables equal local mode's row for row, and the executors ran the shipped kreplica with its
compiled twins. The cluster is stopped whatever happens.

The workers start without the test's ``PYTHONPATH``, so the executors find kreplica only where
it was shipped (or, failing that, where the virtual environment installed it: the probe says
which).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import ROOT
from tests.builders.fleet import build_fleet

pq = pytest.importorskip("pyarrow.parquet",
                         reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
pyspark = pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

pytestmark = pytest.mark.cluster

SPARK_HOME = Path(pyspark.__file__).parent
WORKERS = 2
#: How long a master or worker may take to come up on a busy machine.
START_TIMEOUT = 180
TABLES = ("replicas", "segments", "batches", "markers", "findings", "records")
OUT = "viewfs://cluster/tables"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class StandaloneCluster:
    url: str
    base: Path


def _start(daemon: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    """A master or worker JVM in a process group of its own (``spark-class`` execs the JVM, and a
    worker's executors are its children: stopping the group stops them all)."""
    with open(log, "wb") as out:
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *daemon], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)


def _wait_for(log: Path, line: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if line in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            pytest.fail(f"{log.name}: the daemon stopped (exit {process.returncode}):\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"{log.name}: no {line!r} within {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    """The daemon's process group stopped: asked first, then killed."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[StandaloneCluster]:
    """A master and :data:`WORKERS` workers of one core each on 127.0.0.1, stopped at the end."""
    base = tmp_path_factory.mktemp("cluster")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_SUBMIT_ARGS")}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_DIRS=str(base / "local"))
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    daemons: list[subprocess.Popen] = []
    try:
        master_log = base / "master.log"
        daemons.append(_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                               "--webui-port", "0"], master_log, env))
        _wait_for(master_log, "I have been elected leader", daemons[0])
        for i in range(WORKERS):
            log = base / f"worker-{i}.log"
            daemons.append(_start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--cores", "1", "--memory", "1g", "--webui-port", "0",
                                   "--work-dir", str(base / f"work-{i}")], log, env))
            _wait_for(log, "Successfully registered with master", daemons[-1])
        yield StandaloneCluster(url, base)
    finally:
        for daemon in reversed(daemons):
            _stop(daemon)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """kreplica's wheel (``pip wheel --no-deps``, its compiled twins built), as ``kreplica.zip``."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "kreplica", source / "kreplica", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w",
                            str(base / "dist")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (wheel,) = (base / "dist").glob("kreplica-*.whl")
    return Path(shutil.copy(wheel, base / "kreplica.zip"))


def _ship(wheel: Path) -> dict[str, str]:
    """The README's recipe: the wheel unpacked on each executor as ``./kreplica``, put on the
    Python workers' path."""
    return {"spark.archives": f"{wheel}#kreplica", "spark.executorEnv.PYTHONPATH": "kreplica"}


def _conf_args(conf: dict[str, str]) -> list[str]:
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


def _mount(tables: Path) -> dict[str, str]:
    return {"spark.hadoop.fs.viewfs.mounttable.cluster.link./tables": f"file://{tables}",
            "spark.hadoop.fs.viewfs.impl.disable.cache": "true"}


#: The driver where the executors reach it, whatever this machine's name resolves to.
DRIVER_ON_LOOPBACK = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def _scan(*args: str) -> dict:
    result = CliRunner().invoke(app, ["fleet", "scan", *args, "--records", "-f", "ndjson"])
    assert result.exit_code == 1, result.output  # the fleet holds damaged segments
    (obj,) = [json.loads(line) for line in result.stdout.splitlines()]
    return obj


def _rows(out: Path, table: str) -> list[str]:
    """A table's rows as sorted JSON (a ``decimal(20,0)`` Spark wrote for a ``uint64``: its integer)."""
    return sorted(json.dumps(r, sort_keys=True, default=int) for r in pq.read_table(out / table).to_pylist())


def _executor_kreplica(_) -> tuple[str, str, str, str]:
    import kreplica
    from kreplica.formats.log import default_records
    from kreplica.report.schemas import inspect_log

    return (os.getcwd(), kreplica.__file__, default_records.DECODE_IMPLEMENTATION, inspect_log.RENDER_IMPLEMENTATION)


def test_a_scan_on_a_standalone_cluster_writes_the_tables_of_local_mode(cluster, shipped, tmp_path) -> None:
    evidence = tmp_path / "evidence"
    build_fleet(evidence)
    local = _scan(str(evidence), "--output-dir", str(tmp_path / "local"), "--master", "local[2]")
    conf = {**_ship(shipped), **_mount(tmp_path / "tables"), **DRIVER_ON_LOOPBACK}
    on_cluster = _scan(str(evidence), "--output-dir", OUT, "--master", cluster.url, *_conf_args(conf))
    assert on_cluster == {**local, "out": OUT}
    for table in TABLES:
        assert _rows(tmp_path / "tables", table) == _rows(tmp_path / "local", table), table

    from pyspark import cloudpickle

    from kreplica.pipeline.spark.session import spark_session

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the executors have no tests/
    with spark_session(cluster.url, conf=conf) as spark:
        probes = spark.sparkContext.parallelize(range(WORKERS), WORKERS).map(_executor_kreplica).collect()
    for cwd, module, decoder, renderer in probes:
        assert module.startswith(os.path.join(cwd, "kreplica", "kreplica")), f"{module}: not the shipped wheel"
        assert (decoder, renderer) == ("compiled", "compiled")
