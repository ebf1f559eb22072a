"""Benchmark ``kreplica fleet scan`` on Spark's local mode (issue 10, "Benchmark").

The fleet is generated under ``bench/data/fleet-<size>/``: ``--brokers`` brokers with two log
directories each and ``--partitions`` partitions per log directory, every replica one segment
copied (not linked) from a segment written by ``generate_segment.py`` (v2 batches of ~15 records
of ~1 KiB, uncompressed, ~16 KiB a batch), so the fleet holds ``--size`` bytes of real batches.

What is timed, whole process, warm page cache, best of ``--runs``:

  startup[N]    ``fleet scan --master local[N]`` of a one-segment fleet: Spark's fixed cost (JVM,
                session, the stages) — subtracted from scan[N] to give throughput
  inspect_log   ``kreplica inspect-log -f ndjson`` over every replica directory, one process:
                the single-core batch-scan speed a fleet scan is compared with
  inspect_log[N] N such processes at once, each on 1/N of the replicas: one core's speed when N
                are busy, the fair yardstick for local[N] on a small machine
  scan[N]       ``fleet scan --master local[N]`` for N in ``--cores``
  viewfs[N]     with ``--viewfs``: the same fleet as remote evidence, ``viewfs://`` mounted over it,
                so Spark's Hadoop connector lists and fetches every file (what ``hdfs://`` or
                ``s3a://`` evidence costs beyond the store's own speed); its driver peak includes
                the JVM that reads the files for the tasks

Each run writes Spark's event log to a temporary folder, from which the seconds of each Spark
job are read: the ``segments`` job is the walking itself, without the JVM's start, the session
and the log-directory job (the figure that start-up noise cannot blur on a small machine).

Peak memory of the driver — the ``kreplica`` Python process and the JVM it starts, without the
Python workers — is sampled from /proc every 50 ms, for the full fleet and for a quarter of
it: it must not grow with the data.

Usage::

    .venv/bin/python bench/bench_fleet.py                      # 4 GiB, local[1] and local[2]
    .venv/bin/python bench/bench_fleet.py --size 512M --runs 1 # quick

Results: a table on stdout and ``bench/results/fleet-<UTC date>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from generate_segment import generate, parse_size, segment_paths, size_label  # noqa: E402

DATA = BENCH / "data"
RESULTS = BENCH / "results"
KREPLICA = shutil.which("kreplica", path=str(Path(sys.executable).parent)) or "kreplica"


def build_fleet(size: int, brokers: int, partitions: int) -> Path:
    """``brokers`` x 2 log dirs x ``partitions`` replicas of one segment each, ``size`` bytes in all."""
    replicas = brokers * 2 * partitions
    per = size // replicas
    root = DATA / f"fleet-{size_label(size)}-{brokers}x2x{partitions}"
    if (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    src = segment_paths(DATA, per)["none"]
    if not src.is_file():
        generate(per, DATA, quiet=True)
    for b in range(1, brokers + 1):
        for d in (1, 2):
            log_dir = root / f"broker-{b}" / f"data{d}"
            for p in range(partitions):
                part = log_dir / f"bench-{(d - 1) * partitions + p}"
                part.mkdir(parents=True)
                shutil.copyfile(src, part / "00000000000000000000.log")
    (root / ".complete").write_text("")
    return root


def _tree_rss(pid: int, skip_workers: bool) -> int:
    """Resident bytes of ``pid`` and its descendants (Python workers left out when asked)."""
    total = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes()
            if skip_workers and b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
                continue
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


def _job_seconds(event_dir: Path) -> dict[str, float]:
    """Seconds of each Spark job of a run, by its description, from Spark's event log."""
    starts, names, out = {}, {}, {}
    for log in event_dir.rglob("events_*"):  # Spark 4: eventlog_v2_<app>/events_<n>_<app>
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            if ev["Event"] == "SparkListenerJobStart":
                starts[ev["Job ID"]] = ev["Submission Time"]
                names[ev["Job ID"]] = (ev.get("Properties") or {}).get("spark.job.description", "?")
            elif ev["Event"] == "SparkListenerJobEnd" and ev["Job ID"] in starts:
                name = names[ev["Job ID"]].removeprefix("kreplica fleet scan: ")
                out[name] = out.get(name, 0.0) + (ev["Completion Time"] - starts[ev["Job ID"]]) / 1000
    return out


def timed(argv: list[str]) -> tuple[float, int, dict[str, float]]:
    """Wall seconds, the driver's peak RSS and the seconds of each Spark job of one run."""
    peak = 0
    events = Path(tempfile.mkdtemp(prefix="kreplica-fleet-events-"))
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": f"--conf spark.eventLog.enabled=true --conf spark.eventLog.compress=false --conf spark.eventLog.dir="
                                                f"file://{events} pyspark-shell"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid, skip_workers=True))
            time.sleep(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    code = proc.wait()
    elapsed = time.perf_counter() - start
    done.set()
    t.join()
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    jobs = _job_seconds(events)
    shutil.rmtree(events, ignore_errors=True)
    return elapsed, peak, jobs


def scan_argv(root: Path, cores: int | None, viewfs: bool = False) -> list[str]:
    out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
    source = ["viewfs://bench/fleet", "--conf", f"spark.hadoop.fs.viewfs.mounttable.bench.link./fleet=file://{root}"] \
        if viewfs else [str(root)]
    argv = [KREPLICA, "fleet", "scan", *source, "--out", str(out), "-f", "ndjson"]
    return argv + (["--master", f"local[{cores}]"] if cores else [])


def best(argv_fn, runs: int) -> tuple[float, int, dict[str, float]]:
    """The fastest of ``runs`` runs, the fastest of each Spark job, and the highest peak of all."""
    results = []
    for _ in range(runs):
        argv = argv_fn()
        results.append(timed(argv))
        if "--out" in argv:
            shutil.rmtree(Path(argv[argv.index("--out") + 1]).parent, ignore_errors=True)
    jobs = {name: min(r[2][name] for r in results if name in r[2]) for name in results[0][2]}
    return min(r[0] for r in results), max(r[1] for r in results), jobs


def _report_viewfs(root: Path, data_bytes: int, rows: dict) -> int:
    """``--only-viewfs``: the segments job and driver peak, mapped and fetched, side by side."""
    print(f"fleet: {root} ({data_bytes / 2**30:.2f} GiB)")
    report = {}
    for name, (secs, peak, jobs) in rows.items():
        seg = jobs.get("segments")
        print(f"{name:<12}{secs:>8.2f} s  segments job {seg:.2f} s ({data_bytes / seg / 1e9:.2f} GB/s)  "
              f"driver peak {peak / 2**20:.0f} MiB")
        report[name] = {"seconds": secs, "spark_jobs_seconds": jobs, "driver_peak_mib": peak / 2**20}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"fleet-viewfs-{datetime.now(timezone.utc).strftime('%Y-%m-%d')}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(), "fleet_bytes": data_bytes,
                               "results": report}, indent=2) + "\n")
    print(f"written {out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="4G")
    ap.add_argument("--brokers", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=4, help="partitions per log directory")
    ap.add_argument("--cores", default="1,2")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--viewfs", action="store_true", help="also scan the fleet as remote evidence (viewfs://)")
    ap.add_argument("--only-viewfs", action="store_true", help="scan[N] and viewfs[N] only")
    args = ap.parse_args()
    size = parse_size(args.size)
    root = build_fleet(size, args.brokers, args.partitions)
    quarter = build_fleet(size // 4, args.brokers, max(args.partitions // 4, 1))
    tiny = build_fleet(1 << 20, 1, 1)
    data_bytes = sum(f.stat().st_size for f in root.rglob("*.log"))
    replicas = sorted(str(p.parent) for p in root.rglob("*.log"))
    cores = [int(c) for c in args.cores.split(",")]
    rows = {}
    if args.only_viewfs:
        for n in cores:
            rows[f"scan[{n}]"] = best(lambda n=n: scan_argv(root, n), args.runs)
            rows[f"viewfs[{n}]"] = best(lambda n=n: scan_argv(root.resolve(), n, viewfs=True), args.runs)
        return _report_viewfs(root, data_bytes, rows)
    for n in cores:
        rows[f"startup[{n}]"] = best(lambda n=n: scan_argv(tiny, n), args.runs)
    rows["inspect_log"] = best(lambda: [KREPLICA, "inspect-log", "-f", "ndjson", *replicas], args.runs)
    for n in (c for c in cores if c > 1):
        # n inspect-log processes at once, each on its share of the replicas: what one core of this
        # machine gives when n are busy (memory bandwidth and page cache are shared too)
        shares = [" ".join(replicas[i::n]) for i in range(n)]
        script = " & ".join(f"{KREPLICA} inspect-log -f ndjson {share} > /dev/null" for share in shares) + "; wait"
        rows[f"inspect_log[{n}]"] = best(lambda script=script: ["sh", "-c", script], args.runs)
    for n in cores:
        rows[f"scan[{n}]"] = best(lambda n=n: scan_argv(root, n), args.runs)
        if args.viewfs:
            rows[f"viewfs[{n}]"] = best(lambda n=n: scan_argv(root.resolve(), n, viewfs=True), args.runs)
    rows[f"scan[{cores[-1]}] quarter fleet"] = best(lambda: scan_argv(quarter, cores[-1]), 1)
    print(f"fleet: {root} ({data_bytes / 2**30:.2f} GiB, {len(replicas)} replicas); machine: {os.cpu_count()} cores")
    print(f"{'case':<24}{'seconds':>9}{'GB/s':>8}{'GB/s w/o startup':>18}{'segments job s':>16}"
          f"{'driver peak MiB':>17}")
    report = {}
    for name, (secs, peak, jobs) in rows.items():
        n_bytes = data_bytes // 4 if "quarter" in name else 1 << 20 if name.startswith("startup") else data_bytes
        gbs = n_bytes / secs / 1e9
        net = None
        if name.startswith("scan"):
            # start-up varies run to run; when a scan took no longer than it, throughput is unknown
            fixed = rows[f"startup[{name[5:name.index(']')]}]"][0]
            net = n_bytes / (secs - fixed) / 1e9 if secs > fixed * 1.05 else None
        seg = jobs.get("segments")
        print(f"{name:<24}{secs:>9.2f}{gbs:>8.2f}{(f'{net:.2f}' if net else '-'):>18}"
              f"{(f'{seg:.2f}' if seg else '-'):>16}{peak / 2**20:>17.0f}")
        report[name] = {"seconds": secs, "gb_per_s": gbs, "gb_per_s_without_startup": net,
                        "spark_jobs_seconds": jobs, "driver_peak_mib": peak / 2**20}
    for n in cores:
        scan = report[f"scan[{n}]"]
        net = scan["gb_per_s_without_startup"]
        inspect = report["inspect_log"]["gb_per_s"]
        if f"inspect_log[{n}]" in report:
            inspect_n = report[f"inspect_log[{n}]"]["gb_per_s"] / n
            print(f"inspect-log per core with {n} processes at once: {inspect_n / inspect:.2f} of one alone")
            seg = scan["spark_jobs_seconds"].get("segments")
            if seg:
                ratio = data_bytes / seg / 1e9 / n / inspect_n
                print(f"fleet scan per core (local[{n}], the segments job) / inspect-log per core with {n} "
                      f"at once: {ratio:.2f}")
                report[f"per_core_ratio_segments_job_vs_{n}_processes[{n}]"] = ratio
        if net:
            ratio = net / n / inspect
            print(f"fleet scan per core (local[{n}], whole run less start-up[{n}]) / inspect-log batch scan: "
                  f"{ratio:.2f} (target >= 0.80)")
            report[f"per_core_ratio[{n}]"] = ratio
        seg = scan["spark_jobs_seconds"].get("segments")
        if seg:
            ratio = data_bytes / seg / 1e9 / n / inspect
            print(f"fleet scan per core (local[{n}], the segments job) / inspect-log batch scan: {ratio:.2f}")
            report[f"per_core_ratio_segments_job[{n}]"] = ratio
    full, part = report[f"scan[{cores[-1]}]"], report[f"scan[{cores[-1]}] quarter fleet"]
    print(f"driver peak: {full['driver_peak_mib']:.0f} MiB for the fleet, {part['driver_peak_mib']:.0f} MiB "
          "for a quarter of it")
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    out = RESULTS / f"fleet-{stamp}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(), "fleet_bytes": data_bytes,
                               "replicas": len(replicas), "results": report}, indent=2) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
