"""How kreplica sets up Spark for a fleet job, without starting it: cores and heap in local mode,
and the failures of a job turned into the one-line errors a user can act on."""

from __future__ import annotations

import os

import pytest

from kreplica.formats.mapped import EvidenceError
from kreplica.pipeline.spark.session import jvm_failure, local_cores, local_heap


@pytest.mark.parametrize("master, cores", [
    ("local", 1), ("local[3]", 3), ("local[4,2]", 4), ("local[*]", os.cpu_count()), ("local[*, 3]", os.cpu_count()),
    ("spark://host:7077", None), ("yarn", None), ("k8s://https://api:6443", None), ("local-cluster[2,1,1024]", None),
])
def test_cores_of_a_master(master: str, cores: int | None) -> None:
    assert local_cores(master) == cores


def test_the_local_heap_is_a_gib_and_the_tasks_share_capped_by_the_machine() -> None:
    assert local_heap("local[2]", 1 << 30) == "3072m"
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert local_heap("local[4096]", 4 << 30) == f"{machine * 3 // 4 >> 20}m"


def test_a_jvm_that_ran_out_of_memory_says_what_to_raise() -> None:
    pytest.importorskip("py4j", reason="PySpark's bridge to the JVM (the fleet extra)")
    failure = jvm_failure(RuntimeError("Job aborted ... java.lang.OutOfMemoryError: Java heap space"))
    assert isinstance(failure, EvidenceError) and "spark.driver.memory" in str(failure)
    assert isinstance(jvm_failure(ConnectionRefusedError(111, "Connection refused")), EvidenceError)
    assert jvm_failure(ValueError("a bug of ours")) is None


def test_conf_takes_key_equals_value_and_refuses_anything_else(tmp_path) -> None:
    pytest.importorskip("pyspark", reason="fleet parses its options once the fleet extra is there")
    from typer.testing import CliRunner

    from kreplica.cli.commands.fleet import _conf
    from kreplica.cli.main import app

    assert _conf(["spark.driver.memory=8g", "spark.hadoop.fs.s3a.endpoint=http://h:9000/?a=b"]) == {
        "spark.driver.memory": "8g", "spark.hadoop.fs.s3a.endpoint": "http://h:9000/?a=b"}
    result = CliRunner().invoke(app, ["fleet", "scan", str(tmp_path), "--output-dir", str(tmp_path / "o"), "--conf", "x"])
    assert result.exit_code == 2 and result.stderr == "kreplica: error: --conf: expected KEY=VALUE, got 'x'\n"


@pytest.mark.parametrize("spark_log, debug, level", [
    (None, False, "OFF"), (None, True, "WARN"), ("info", False, "INFO"), ("error", True, "ERROR"), ("OFF", True, "OFF"),
])
def test_sparks_own_output_shows_only_when_asked(spark_log, debug, level) -> None:
    from kreplica.pipeline.spark.session import SparkLog

    log = SparkLog.choose(spark_log, debug)
    assert log.level == level and log.shown == (level != "OFF")


def test_the_driver_jvm_gets_the_shipped_log4j2_configuration_and_the_users_options_last(monkeypatch) -> None:
    from importlib import resources

    from kreplica.pipeline.spark.session import LIGHT_DRIVER_JVM, LOG4J2_CONFIGURATION, SparkLog, driver_java_options

    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    shipped = resources.files("kreplica.pipeline.spark") / LOG4J2_CONFIGURATION
    assert shipped.is_file() and "${sys:kreplica.spark.log:-OFF}" in shipped.read_text()
    quiet = SparkLog.choose(None, False)
    assert driver_java_options({}, quiet, "/p/log4j2.properties", light_driver=True) == \
        f'"-Dlog4j2.configurationFile=/p/log4j2.properties" -Dkreplica.spark.log=OFF {LIGHT_DRIVER_JVM}'
    # the user's options replace the light driver's and come last, so where they say the same they win
    user = {"spark.driver.extraJavaOptions": "-Dkreplica.spark.log=INFO -Xss4m"}
    assert driver_java_options(user, quiet, '/a "b"/x', light_driver=True) == \
        '"-Dlog4j2.configurationFile=/a \\"b\\"/x" -Dkreplica.spark.log=OFF -Dkreplica.spark.log=INFO -Xss4m'
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.extraJavaOptions=-Xss4m pyspark-shell")
    assert driver_java_options({}, quiet, "/p", light_driver=True) is None
