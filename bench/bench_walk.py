"""Benchmark: the four callers of the segment walk, on two trees, interleaved (issue 27 §2).

    python bench/bench_walk.py --tree before=/tmp/old --tree after=. [--rounds 4] [--runs 2]

Each case runs in a fresh child process (``python -c`` or ``python -m kreplica``, the tree first
on ``PYTHONPATH``), and its CPU seconds (user + system, from ``wait4``) are read; a round runs
every case on every tree in turn, so both trees see the same load, and each cell is the minimum
over all rounds and runs: the machine is shared and CPU time is the figure that load disturbs
least. The data is what ``generate_segment.py --size 256M`` and ``bench_groups.py`` write:

* ``inspect_scan`` / ``inspect_scan_zstd``: ``inspect-log --format ndjson`` over the 256 MiB
  segment and its zstd twin (:mod:`kreplica.analysis.inspect.inspect_log`);
* ``inspect_none``: the same with ``--records --payload none``;
* ``partition_log``: :func:`~kreplica.model.log.partition_log.read_partition_log` of a partition
  directory holding the 256 MiB segment (the walk behind ``diverge``, ``epochs``, ``inspect-dir``);
* ``fleet_segments``: the fleet scan's stage 2 task
  (:func:`~kreplica.pipeline.scan.segments.scan_segments`) on the same segment, Parquet rows and
  all, without Spark around it (Spark's start varies by more than the walk takes);
* ``groups``: ``groups DIR -f ndjson`` over ``bench_groups.py``'s 256 MiB ``__consumer_offsets-0``
  (:mod:`kreplica.model.coordinator.fold`).

``--java`` adds, once a round, Kafka's own reader on the 256 MiB segment
(``../shared/bench/kafka-java/scan.sh shallow+crc``, whole JVM process, JIT and GC threads
included) as the yardstick for ``inspect_scan``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

_PARTITION_LOG = """
import sys
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
log_dir = scan_log_dir(sys.argv[1])
for p in log_dir.partitions:
    log = read_partition_log(p, log_dir)
    print(len(log.batches), log.log_end_offset)
"""

_FLEET_SEGMENTS = """
import sys, tempfile
from kreplica.model.logdir.log_dir import SegmentFiles
from kreplica.pipeline.scan.segments import scan_segments
from kreplica.pipeline.scan.work import Stretch
import os
path = sys.argv[1]
stretch = Stretch((0, "d", "t", 0), SegmentFiles(0, path), os.path.getsize(path))
with tempfile.TemporaryDirectory() as out:
    for walk in scan_segments(out, False, False, 0, [stretch]):
        print(walk.totals)
"""


def _cases(data: Path, groups_dir: Path, log_dir: Path) -> dict[str, list[str]]:
    seg = str(data / "none-256MiB" / "00000000000000000000.log")
    zstd = str(data / "zstd-256MiB" / "00000000000000000000.log")
    return {
        "inspect_scan": ["-m", "kreplica", "inspect-log", "--format", "ndjson", seg],
        "inspect_scan_zstd": ["-m", "kreplica", "inspect-log", "--format", "ndjson", zstd],
        "inspect_none": ["-m", "kreplica", "inspect-log", "--records", "--payload", "none", "--format", "ndjson", seg],
        "partition_log": ["-c", _PARTITION_LOG, str(log_dir)],
        "fleet_segments": ["-c", _FLEET_SEGMENTS, seg],
        "groups": ["-m", "kreplica", "groups", str(groups_dir), "-f", "ndjson"],
    }


def _cpu(tree: Path, argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(HERE / "data" / "pycache" / tree.name))
    return _cpu_of([sys.executable, *argv], env)


def _cpu_of(argv: list[str], env: dict) -> float:
    """CPU seconds (user + system) of the process ``argv`` and its children, output discarded."""
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[:3]} failed")
    return usage.ru_utime + usage.ru_stime


def _partition_dir(data: Path) -> Path:
    """A log directory with one partition holding the 256 MiB segment (hard-linked)."""
    root = data / "walk-logdir"
    part = root / "bench-0"
    if not part.exists():
        part.mkdir(parents=True)
        os.link(data / "none-256MiB" / "00000000000000000000.log", part / "00000000000000000000.log")
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", action="append", required=True, help="LABEL=PATH, a tree to put on PYTHONPATH")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=2, help="runs of a case per tree in a round")
    ap.add_argument("--only", default="", help="comma-separated cases")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--groups", type=Path, default=Path(tempfile.gettempdir()) / "kreplica-bench-groups" / "256MiB",
                    help="bench_groups.py's 256 MiB log directory")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--java", type=Path, default=None, nargs="?", const=HERE.parent.parent / "shared" / "bench" /
                    "kafka-java" / "scan.sh", help="also time Kafka's reader (scan.sh shallow+crc) once a round")
    args = ap.parse_args()
    trees = {label: Path(path).resolve() for label, path in (t.split("=", 1) for t in args.tree)}
    cases = _cases(args.data, args.groups, _partition_dir(args.data))
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only.split(",")}
    best: dict[tuple[str, str], float] = {}
    loads = []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for case, argv in cases.items():
            for label, tree in trees.items():
                for _ in range(args.runs):
                    cpu = _cpu(tree, argv)
                    best[case, label] = min(best.get((case, label), cpu), cpu)
        if args.java is not None:
            seg = cases["inspect_scan"][-1]
            cpu = _cpu_of(["bash", str(args.java), "shallow+crc", seg], os.environ)
            best["java_scan", "java"] = min(best.get(("java_scan", "java"), cpu), cpu)
        print(f"round {r + 1}: load {loads[-1]:.1f}", file=sys.stderr, flush=True)
    result = {"bench": "walk", "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds,
              "runs": args.runs, "load": [round(x, 2) for x in loads],
              "cpu_s": {case: {label: round(best[case, label], 3) for label in trees} for case in cases}}
    if ("java_scan", "java") in best:
        result["cpu_s"]["java_scan"] = {"java": round(best["java_scan", "java"], 3)}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    print("| case | " + " | ".join(f"{label} CPU s" for label in trees) + " |")
    print("| --- |" + " ---: |" * len(trees))
    for case in cases:
        print(f"| {case} | " + " | ".join(f"{best[case, label]:.2f}" for label in trees) + " |")
    if ("java_scan", "java") in best:
        print(f"| java_scan (Kafka's reader) | {best['java_scan', 'java']:.2f} |")


if __name__ == "__main__":
    main()
