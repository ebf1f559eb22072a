"""The parts of reading remote evidence that need no Spark: which files the readers read, the
skeleton standing for the tree, paths mapped back to URIs, and task failures turned into the
one-line errors of the single-partition commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.mapped import EvidenceError
from kreplica.model.logdir.log_dir import SegmentFiles
from kreplica.pipeline.evidence.layout import FleetLogDir
from kreplica.pipeline.evidence.remote import RemoteEntry, RemoteTree, Staging, is_remote, needs_content, refuse_globs
from kreplica.pipeline.spark.session import task_failure

URI = "hdfs://nn:8020/incident/fleet"
TREE = RemoteTree(URI, (
    RemoteEntry("broker-1", True),
    RemoteEntry("broker-1/data", True),
    RemoteEntry("broker-1/data/.kafka_cleanshutdown", False, 2),
    RemoteEntry("broker-1/data/meta.properties", False, 30),
    RemoteEntry("broker-1/data/replication-offset-checkpoint", False, 20),
    RemoteEntry("broker-1/data/__consumer_offsets-0", True),
    RemoteEntry("broker-1/data/__consumer_offsets-0/00000000000000000000.log", False, 1 << 30),
    RemoteEntry("broker-1/data/__consumer_offsets-0/00000000000000000000.index", False, 10 << 20),
    RemoteEntry("broker-1/data/__consumer_offsets-0/00000000000000000000.txnindex", False, 0),
    RemoteEntry("broker-1/data/__consumer_offsets-0/00000000000000000000.snapshot", False, 50),
    RemoteEntry("broker-1/data/__consumer_offsets-0/leader-epoch-checkpoint", False, 12),
), {"broker-1/data/.kafka_cleanshutdown": b"{}", "broker-1/data/meta.properties": b"broker.id=1\n"})


@pytest.mark.parametrize("root, remote", [
    ("hdfs://nn/x", True), ("s3a://bucket/x", True), ("viewfs://c/x", True), ("gs://b/x", True),
    ("/data/fleet", False), ("file:///data/fleet", False), ("relative/fleet", False), ("C:/fleet", False),
])
def test_which_roots_are_read_through_spark(root: str, remote: bool) -> None:
    assert is_remote(root) is remote


def test_the_readers_read_checkpoints_snapshots_and_txn_indexes_but_not_segments_or_offset_indexes() -> None:
    read = {e.rel.rpartition("/")[2] for e in TREE.entries if needs_content(e)}
    assert read == {".kafka_cleanshutdown", "meta.properties", "replication-offset-checkpoint",
                    "00000000000000000000.txnindex", "00000000000000000000.snapshot", "leader-epoch-checkpoint"}


def test_tasks_fetch_only_what_the_driver_did_not_read() -> None:
    assert TREE.fetched(TREE.under(f"{URI}/broker-1/data")) == [
        f"{URI}/broker-1/data/__consumer_offsets-0/00000000000000000000.snapshot",
        f"{URI}/broker-1/data/__consumer_offsets-0/00000000000000000000.txnindex",
        f"{URI}/broker-1/data/__consumer_offsets-0/leader-epoch-checkpoint",
        f"{URI}/broker-1/data/replication-offset-checkpoint",
    ]


def test_the_entries_under_a_directory_are_its_own_not_a_namesake_s() -> None:
    tree = RemoteTree(URI, (
        RemoteEntry("b/data2/x", False, 1), RemoteEntry("b/data", True), RemoteEntry("b/data/t-0/1.log", False, 2),
        RemoteEntry("b/data-old/y", False, 3), RemoteEntry("b/data/z", False, 4), RemoteEntry("b/dat", True),
    ), {})
    assert [e.rel for e in tree.under(f"{URI}/b/data")] == ["b/data/t-0/1.log", "b/data/z"]
    assert [e.rel for e in tree.under(f"{URI}/b")] == ["b/dat", "b/data", "b/data-old/y", "b/data/t-0/1.log",
                                                       "b/data/z", "b/data2/x"]
    assert tree.under(f"{URI}/b/none") == ()


def test_the_skeleton_has_every_file_at_its_length_and_holds_only_what_was_read(tmp_path: Path) -> None:
    staging = Staging(str(tmp_path), TREE)
    staging.build(TREE.entries)
    partition = tmp_path / "broker-1/data/__consumer_offsets-0"
    segment = partition / "00000000000000000000.log"
    assert segment.stat().st_size == 1 << 30 and segment.stat().st_blocks == 0  # sparse: nothing written
    assert (tmp_path / "broker-1/data/meta.properties").read_bytes() == b"broker.id=1\n"
    assert not (partition / "leader-epoch-checkpoint").exists()  # left for the fetched content
    needed = list(TREE.entries)
    with pytest.raises(EvidenceError, match=f"^{URI}/broker-1/data/__consumer_offsets-0/0+.snapshot: Spark returned"):
        staging.check_complete(needed)
    for uri in TREE.fetched(TREE.entries):
        staging.put(uri, b"0\n0\n")
    staging.check_complete(needed)
    assert (partition / "leader-epoch-checkpoint").read_bytes() == b"0\n0\n"


def test_paths_in_rows_and_results_are_given_as_uris(tmp_path: Path) -> None:
    staging = Staging(str(tmp_path) + "/", TREE)
    local = staging.local(f"{URI}/broker-1/data")
    assert local == f"{tmp_path}/broker-1/data"
    files = SegmentFiles(0, f"{local}/t-0/0.log", None, f"{local}/t-0/0.timeindex")
    row = {"path": f"{local}/t-0/0.log", "message": f"{local}/t-0/0.log: byte 7: bad", "n": 3,
           "leftovers": [{"path": f"{local}/x.swap", "kind": "swap"}], "key": (1, local, "t", 0)}
    assert staging.relabel(row) == {
        "path": f"{URI}/broker-1/data/t-0/0.log", "message": f"{URI}/broker-1/data/t-0/0.log: byte 7: bad", "n": 3,
        "leftovers": [{"path": f"{URI}/broker-1/data/x.swap", "kind": "swap"}], "key": (1, f"{URI}/broker-1/data", "t", 0)}
    assert staging.relabel(files) == SegmentFiles(0, f"{URI}/broker-1/data/t-0/0.log", None,
                                                  f"{URI}/broker-1/data/t-0/0.timeindex")
    assert staging.relabel(FleetLogDir(1, "folder name", local)).path == f"{URI}/broker-1/data"


def test_a_path_spark_would_read_as_a_glob_is_refused() -> None:
    refuse_globs([f"{URI}/broker-1/data/t-0/0.log"])
    with pytest.raises(EvidenceError, match=r"^hdfs://nn:8020/incident/fleet/b\[1\]/x.log: holds a glob character"):
        refuse_globs([f"{URI}/b[1]/x.log"])


# The shape of a job failure as PySpark raises it on the driver (trimmed from a real one).
JOB_FAILURE = """An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 2.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 2.0 (TID 117) (192.0.2.2 executor driver): org.apache.spark.api.python.PythonException: \
Traceback (most recent call last):
  File "/work/main/kreplica/pipeline/remote.py", line 180, in check_complete
    raise EvidenceError("Spark returned no content for this file", path=self.tree.to_uri(e.rel))
kreplica.formats.mapped.EvidenceError: viewfs://fleet/ev/broker-1/d/leader-epoch-checkpoint: Spark returned no content \
for this file
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:642)
"""


def test_a_task_refusing_an_input_is_the_one_line_error_of_the_input() -> None:
    failure = task_failure(RuntimeError(JOB_FAILURE.replace("\\t", "\t")))
    assert isinstance(failure, EvidenceError)
    assert str(failure) == ("viewfs://fleet/ev/broker-1/d/leader-epoch-checkpoint: Spark returned no content "
                            "for this file")
    assert task_failure(RuntimeError(JOB_FAILURE.replace("kreplica.formats.mapped.EvidenceError",
                                                         "ZeroDivisionError"))) is None
    assert task_failure(RuntimeError("kreplica.formats.mapped.NotAnError: x")) is None


def test_a_file_too_big_to_read_is_not_fetched_but_stands_at_its_size(tmp_path: Path) -> None:
    from kreplica.formats.mapped import SMALL_FILE_LIMIT
    from kreplica.model.logdir.log_dir import read_checkpoints, scan_log_dir

    big = RemoteEntry("b/data/replication-offset-checkpoint", False, SMALL_FILE_LIMIT + 1)
    assert not needs_content(big)  # the readers refuse it unread, so Spark need not fetch it
    assert needs_content(RemoteEntry("b/data/t-0/00000000000000000000.txnindex", False, SMALL_FILE_LIMIT + 1))
    tree = RemoteTree(URI, (RemoteEntry("b", True), RemoteEntry("b/data", True), big), {})
    assert tree.fetched(tree.entries) == []
    staging = Staging(str(tmp_path), tree)
    staging.build(tree.entries)
    staging.check_complete(tree.entries)
    (finding,) = read_checkpoints(scan_log_dir(tmp_path / "b" / "data")).findings
    assert staging.relabel(finding.path) == f"{URI}/b/data/replication-offset-checkpoint"
    assert f"is {SMALL_FILE_LIMIT + 1} bytes, more than a file of this kind can hold" in finding.message


def test_a_missing_connector_is_named_with_the_package_that_adds_it() -> None:
    from kreplica.pipeline.spark.hadoop_files import java_failure

    missing = RuntimeError('java.lang.RuntimeException: java.lang.ClassNotFoundException: Class '
                           'org.apache.hadoop.fs.s3a.S3AFileSystem not found\n\tat ...')
    assert str(java_failure(missing, "s3a://bucket/fleet", "3.4.1")) == (
        "s3a://bucket/fleet: java.lang.RuntimeException: java.lang.ClassNotFoundException: Class "
        "org.apache.hadoop.fs.s3a.S3AFileSystem not found (Spark reads this scheme only with its connector on the "
        "classpath, e.g. --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1)")
    assert str(java_failure(missing, "gs://b/f")).endswith("(Spark reads this scheme only with its connector "
                                                           "on the classpath)")
    assert "connector" not in str(java_failure(RuntimeError("java.io.IOException: permission denied"), "hdfs://n/f"))
