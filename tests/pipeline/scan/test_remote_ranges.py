"""A remote segment larger than Spark's 2 GiB for one value is read in ranges (issue 22): a sparse
segment of over 4 GiB given as ``viewfs://`` is scanned with a JVM heap of a fraction of its
size and a peak resident memory of the whole run (driver, JVM, Python workers) well below it, and
the tables are row for row those of a scan of the same file mapped from its local path.

The segment holds batches at its start, after a hole of gigabytes (across a range boundary), and
at its very end (in the last range, shorter than the others, which the driver reads), so the
walk resynchronises after the hole and every kind of range is read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch
from kreplica.formats.logdir.meta_properties import build_meta_properties

pq = pytest.importorskip("pyarrow.parquet",
                         reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
pytest.importorskip("pyspark", reason="the fleet pipeline runs on PySpark (the fleet extra)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime and none is on PATH (CI installs Java 17)", allow_module_level=True)

GiB = 1 << 30
SIZE = 4 * GiB + 54_321          # not a whole number of ranges: the last one is shorter
MIDDLE = 3 * GiB - 777           # batches from here run across a range boundary
TABLES = ("replicas", "segments", "batches", "markers", "findings", "records")
MOUNT = "viewfs://ranges/fleet"
#: The JVM heap of the remote scan: a fifth of the segment (a segment fetched whole took about
#: three times its size).
HEAP = "768m"
#: The whole run's peak resident memory must stay below half the segment.
PEAK_LIMIT = 2 * GiB


def _batches(first_offset: int, count: int) -> bytes:
    return b"".join(build_batch([NewRecord(first_offset + 2 * i + j, 1_700_000_000_000 + i, b"k", bytes(100) + b"v%d" % i)
                                 for j in range(2)], base_offset=first_offset + 2 * i, partition_leader_epoch=1)
                    for i in range(count))


def _fleet(root: Path) -> Path:
    log_dir = root / "broker-1" / "data"
    (log_dir / "t-0").mkdir(parents=True)
    (log_dir / "meta.properties").write_bytes(build_meta_properties({"version": "0", "broker.id": "1"}))
    (log_dir / "t-0" / "leader-epoch-checkpoint").write_bytes(b"0\n1\n1 0\n")
    segment = log_dir / "t-0" / "00000000000000000000.log"
    end = _batches(400, 50)
    with open(segment, "wb") as fh:
        fh.write(_batches(0, 100))
        fh.seek(MIDDLE)
        fh.write(_batches(200, 100))
        fh.seek(SIZE - len(end))
        fh.write(end)
    assert segment.stat().st_size == SIZE and segment.stat().st_blocks * 512 < (1 << 20)  # sparse
    return root


class _PeakMemory:
    """The largest total resident memory of a process and all its descendants, sampled."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._done = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def _tree(pid: int) -> list[int]:
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as fh:
                        ppid = int(fh.read().rpartition(")")[2].split()[1])
                except OSError:
                    continue
                children.setdefault(ppid, []).append(int(entry))
        tree, todo = [], [pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += children.get(p, [])
        return tree

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            return 0

    def _sample(self) -> None:
        while not self._done.wait(0.2):
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree(self.pid)))

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


def _scan(*args: str) -> tuple[dict, int]:
    """``fleet scan`` in a process of its own; its output object and the run's peak memory."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, "-m", "kreplica", "fleet", "scan", *args, "--records",
                                "-f", "ndjson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    memory = _PeakMemory(process.pid)
    out, err = process.communicate()
    peak = memory.stop()
    assert process.returncode == 1, err.decode()  # the hole is damage
    (obj,) = [json.loads(line) for line in out.splitlines()]
    return obj, peak


def _rows(out: Path, table: str, local_root: Path | None = None) -> list[str]:
    rows = (json.dumps(r, sort_keys=True, default=int) for r in pq.read_table(out / table).to_pylist())
    return sorted(row.replace(str(local_root), MOUNT) if local_root else row for row in rows)


def test_a_segment_of_gigabytes_is_read_in_ranges_with_bounded_memory(tmp_path) -> None:
    evidence = _fleet(tmp_path / "evidence")
    mapped, _ = _scan(str(evidence), "--output-dir", str(tmp_path / "mapped"), "--master", "local[2]")
    ranged, peak = _scan(MOUNT, "--output-dir", str(tmp_path / "ranged"), "--master", "local[2]",
                         "--conf", f"spark.hadoop.fs.viewfs.mounttable.ranges.link./fleet=file://{evidence}",
                         "--conf", "spark.hadoop.fs.viewfs.impl.disable.cache=true",
                         "--conf", f"spark.driver.memory={HEAP}")
    assert ranged == {**mapped, "out": str(tmp_path / "ranged")}
    assert mapped["bytes"] == SIZE and mapped["batches"] == 250
    for table in TABLES:
        assert _rows(tmp_path / "ranged", table) == _rows(tmp_path / "mapped", table, evidence), table
    kinds = {r["kind"] for r in pq.read_table(tmp_path / "ranged" / "findings").to_pylist()}
    assert {"invalid_length", "resynchronised"} <= kinds
    assert peak < PEAK_LIMIT, f"peak resident memory {peak >> 20} MiB for a {SIZE >> 20} MiB segment"
