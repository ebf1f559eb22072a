"""Benchmark: ``kreplica diverge`` over three replicas of a large partition (headers only).

    python bench/bench_diverge.py [--segment bench/data/none-1024MiB/00000000000000000000.log] [--runs 3]

Uses the segment made by bench/generate_segment.py as replica 1; replicas 2 and 3 are
directories whose segment is a symbolic link to the same file (identical logs: the worst case,
every batch compared), so no extra disk is used. Reports GB/s over the bytes of all three
replicas, to compare with the batch-scan figure of bench_inspect_log.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segment", default=str(HERE / "data" / "none-1024MiB" / "00000000000000000000.log"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    segment = Path(args.segment).resolve()
    if not segment.is_file():
        sys.exit(f"{segment} is missing: run python bench/generate_segment.py first")
    root = HERE / "data" / "diverge"
    dirs = []
    for i in (1, 2, 3):
        d = root / f"broker-{i}" / "bench-0"
        d.mkdir(parents=True, exist_ok=True)
        link = d / segment.name
        if not link.exists():
            link.symlink_to(segment)
        dirs.append(str(d))
    kreplica = str(Path(sys.executable).with_name("kreplica"))
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            proc = subprocess.run([kreplica, "diverge", *dirs, "-f", "ndjson"], stdout=devnull)
        times.append(time.perf_counter() - t)
        assert proc.returncode == 0, proc.returncode
    size = 3 * segment.stat().st_size
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"bench": "diverge", "replicas": 3, "bytes": size, "runs_s": [round(t, 2) for t in times],
                      "min_s": round(min(times), 2), "gb_per_s": round(size / min(times) / 1e9, 2),
                      "peak_rss_mib": round(rss, 1)}))


if __name__ == "__main__":
    main()
