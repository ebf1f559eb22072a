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

``--small``: where the time of a fleet run on small evidence goes (issue 22), on the
three-replica fixture (``fixtures/scenarios/three-replicas``) and on the scenario fleet of
``tests/pipeline/test_fleet.py`` (every scenario, sample log, damaged log and oracle partition as
one fleet). Each command is a new process (cold: Spark starts), the page cache warm:

  scan / analyze / run   ``fleet scan``, ``fleet analyze`` (small tables: in the driver) and
                         ``fleet run`` (both, one Spark start), with the JVM's class-data-sharing
                         archive in a cache directory of the bench's own, made by a first run
  ... no archive         the same with ``KREPLICA_JVM_ARCHIVE=off``: a first run's cost
  analyze on Spark       ``KREPLICA_FLEET_ANALYZE=spark``: the tables analysed by a Spark job
  single-partition       ``epochs``, ``truncate-plan`` and ``diverge`` of every partition, one
                         process each, as a user without the fleet would run them

For each, the breakdown from Spark's event log: until Spark's application starts (Python's
imports, the JVM, the SparkContext), until the first job, each job (the first one starts the
Python workers), after the last job (the driver's own work and Spark's stop).

An earlier tree is measured with ``PYTHONPATH=<tree> … --small --label base`` (a command it
lacks is reported ``n/a``).

``--break-even``: fleets of growing size (``--sizes``, one segment per replica, 4 replicas each
of 2 partitions on 2 brokers), each scanned and analysed by ``fleet run`` and answered by the
single-partition commands (``inspect-log`` of every replica, then ``epochs``, ``truncate-plan``
and ``diverge`` of every partition): below what size the single-partition commands finish first.

Usage::

    .venv/bin/python bench/bench_fleet.py                      # 4 GiB, local[1] and local[2]
    .venv/bin/python bench/bench_fleet.py --size 512M --runs 1 # quick
    .venv/bin/python bench/bench_fleet.py --small --runs 3     # small evidence, seconds
    .venv/bin/python bench/bench_fleet.py --break-even         # fleet run vs single commands

Results: a table on stdout and ``bench/results/fleet-<UTC date>.json`` (``fleet-small-…``,
``fleet-break-even-…``). The machine's load average is printed and stored beside each figure.
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
CACHE = DATA / "cache"  # the bench's own XDG_CACHE_HOME: the JVM archive a first run made
RESULTS = BENCH / "results"
KREPLICA = shutil.which("kreplica", path=str(Path(sys.executable).parent)) or "kreplica"


def build_fleet(size: int, brokers: int, partitions: int, data: Path = DATA, *, link: bool = False) -> Path:
    """``brokers`` x 2 log dirs x ``partitions`` replicas of one segment each, ``size`` bytes in
    all, under ``data`` (``--data``: a large fleet goes to a scratch disk, removed after). With
    ``link`` the replicas are hard links of one segment: every one is read for real, from one
    copy in the page cache (a 16 GiB fleet on a machine with less free memory or disk)."""
    replicas = brokers * 2 * partitions
    per = size // replicas
    root = data / f"fleet-{size_label(size)}-{brokers}x2x{partitions}{'-linked' if link else ''}"
    if (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    src = segment_paths(data, per)["none"]
    if not src.is_file():
        generate(per, data, quiet=True)
    for b in range(1, brokers + 1):
        for d in (1, 2):
            log_dir = root / f"broker-{b}" / f"data{d}"
            for p in range(partitions):
                part = log_dir / f"bench-{(d - 1) * partitions + p}"
                part.mkdir(parents=True)
                (os.link if link else shutil.copyfile)(src, part / "00000000000000000000.log")
    (root / ".complete").write_text("")
    return root


def clean(data: Path, keep: bool) -> None:
    """The fleets and segments generated under ``--data`` removed (not ``bench/data``'s)."""
    if keep or data.resolve() == DATA.resolve():
        return
    for generated in (*data.glob("fleet-*"), *data.glob("none-*"), *data.glob("zstd-*")):
        shutil.rmtree(generated, ignore_errors=True)


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


def _events(event_dir: Path) -> dict:
    """Spark's event log of a run: when the application started and ended, and each job's
    description, submission, completion (epoch ms) and tasks."""
    out: dict = {"app_start": None, "app_end": None, "jobs": []}
    starts = {}
    for log in event_dir.rglob("events_*"):  # Spark 4: eventlog_v2_<app>/events_<n>_<app>
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            kind = ev["Event"]
            if kind == "SparkListenerApplicationStart":
                out["app_start"] = ev["Timestamp"]
            elif kind == "SparkListenerApplicationEnd":
                out["app_end"] = ev["Timestamp"]
            elif kind == "SparkListenerJobStart":
                starts[ev["Job ID"]] = (ev["Submission Time"],
                                        (ev.get("Properties") or {}).get("spark.job.description", "?"),
                                        sum(stage["Number of Tasks"] for stage in ev["Stage Infos"]))
            elif kind == "SparkListenerJobEnd" and ev["Job ID"] in starts:
                submitted, name, tasks = starts[ev["Job ID"]]
                out["jobs"].append((name.removeprefix("kreplica "), submitted, ev["Completion Time"], tasks))
    out["jobs"].sort(key=lambda job: job[1])
    return out


def _job_seconds(events: dict) -> dict[str, float]:
    """Seconds of each Spark job of a run, by its description."""
    out: dict[str, float] = {}
    for name, submitted, completed, _ in events["jobs"]:
        name = name.removeprefix("fleet scan: ")
        out[name] = out.get(name, 0.0) + (completed - submitted) / 1000
    return out


def _spark_env(event_dir: Path) -> dict[str, str]:
    """Spark's event log into ``event_dir``; the JVM archive from the bench's own cache."""
    return {"PYSPARK_SUBMIT_ARGS": "--conf spark.eventLog.enabled=true --conf spark.eventLog.compress=false "
                                   f"--conf spark.eventLog.dir=file://{event_dir} pyspark-shell",
            "XDG_CACHE_HOME": str(CACHE)}


def run_process(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, dict, float, float]:
    """Wall seconds, the driver's peak RSS, Spark's events, and the run's start and end (epoch s)."""
    peak = 0
    events = Path(tempfile.mkdtemp(prefix="kreplica-fleet-events-"))
    env = {**os.environ, **_spark_env(events), **(env or {})}
    begun = time.time()
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
    found = _events(events)
    shutil.rmtree(events, ignore_errors=True)
    return elapsed, peak, found, begun, begun + elapsed


def timed(argv: list[str]) -> tuple[float, int, dict[str, float]]:
    """Wall seconds, the driver's peak RSS and the seconds of each Spark job of one run."""
    elapsed, peak, events, _, _ = run_process(argv)
    return elapsed, peak, _job_seconds(events)


def scan_argv(root: Path, cores: int | None, viewfs: bool = False) -> list[str]:
    out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
    source = ["viewfs://bench/fleet", "--conf", f"spark.hadoop.fs.viewfs.mounttable.bench.link./fleet=file://{root}"] \
        if viewfs else [str(root)]
    argv = [KREPLICA, "fleet", "scan", *source, "--output-dir", str(out), "-f", "ndjson"]
    return argv + (["--master", f"local[{cores}]"] if cores else [])


def best(argv_fn, runs: int) -> tuple[float, int, dict[str, float], float]:
    """The fastest of ``runs`` runs, the highest peak of all, the fastest of each Spark job, and
    the machine's load when the case began."""
    results = []
    at = load()
    for _ in range(runs):
        argv = argv_fn()
        results.append(timed(argv))
        if "--output-dir" in argv:
            shutil.rmtree(Path(argv[argv.index("--output-dir") + 1]).parent, ignore_errors=True)
    jobs = {name: min(r[2][name] for r in results if name in r[2]) for name in results[0][2]}
    return min(r[0] for r in results), max(r[1] for r in results), jobs, at


def _report_viewfs(root: Path, data_bytes: int, rows: dict) -> int:
    """``--only-viewfs``: the segments job and driver peak, mapped and fetched, side by side."""
    print(f"fleet: {root} ({data_bytes / 2**30:.2f} GiB)")
    report = {}
    for name, (secs, peak, jobs, at) in rows.items():
        seg = jobs.get("segments")
        print(f"{name:<12}{secs:>8.2f} s  segments job {seg:.2f} s ({data_bytes / seg / 1e9:.2f} GB/s)  "
              f"driver peak {peak / 2**20:.0f} MiB  load {at}")
        report[name] = {"seconds": secs, "spark_jobs_seconds": jobs, "driver_peak_mib": peak / 2**20, "load": at}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"fleet-viewfs-{datetime.now(timezone.utc).strftime('%Y-%m-%d')}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(), "fleet_bytes": data_bytes,
                               "results": report}, indent=2) + "\n")
    print(f"written {out}")
    return 0


# -- small evidence: where the seconds go (--small) --------------------------------------------

ROOT = BENCH.parent
THREE_REPLICAS = ROOT / "fixtures" / "scenarios" / "three-replicas"
ARCHIVE_OFF = {"KREPLICA_JVM_ARCHIVE": "off"}


def load() -> float:
    return round(os.getloadavg()[0], 2)


def scenario_fleet() -> Path:
    """The fleet of ``tests/pipeline/test_fleet.py``: every scenario, sample and damaged log (and
    the oracle's partitions, when ``../shared/oracle`` is there), built once under ``bench/data``."""
    root = DATA / "scenario-fleet"
    if not (root / ".complete").is_file():
        shutil.rmtree(root, ignore_errors=True)
        sys.path.insert(0, str(ROOT))
        from tests.pipeline.test_fleet import build_fleet as build_scenarios

        build_scenarios(root / "evidence")
        (root / ".complete").write_text("")
    return root / "evidence"


def partitions_of(root: Path) -> list[list[Path]]:
    """Each partition's replica directories (same directory name on several brokers)."""
    by_name: dict[str, list[Path]] = {}
    for log in sorted(root.rglob("*.log")):
        if log.parent not in by_name.setdefault(log.parent.name, []):
            by_name[log.parent.name].append(log.parent)
    return list(by_name.values())


def single_partition_argvs(root: Path) -> list[list[str]]:
    """``epochs``, ``truncate-plan`` and ``diverge`` of every partition (the first replica as the
    leader): what ``fleet analyze`` answers, one command at a time."""
    argvs = []
    for replicas in partitions_of(root):
        paths = [str(p) for p in replicas]
        argvs.append([KREPLICA, "epochs", "-f", "ndjson", *paths])
        if len(paths) > 1:
            followers = [arg for p in paths[1:] for arg in ("--follower", p)]
            argvs.append([KREPLICA, "truncate-plan", "-f", "ndjson", "--leader", paths[0], *followers])
            argvs.append([KREPLICA, "diverge", "-f", "ndjson", *paths])
    return argvs


def _breakdown(events: dict, begun: float, ended: float) -> dict[str, float]:
    """Where a run's seconds went: until Spark's application started, until its first job, each
    job, between jobs, after the last; nothing for a run without Spark."""
    if events["app_start"] is None:
        return {}
    app = events["app_start"] / 1000
    out = {"start: Python, JVM, SparkContext": app - begun}
    jobs = events["jobs"]
    if not jobs:
        return {**out, "after the start": ended - app}
    out["until the first job"] = jobs[0][1] / 1000 - app
    for i, (name, submitted, completed, tasks) in enumerate(jobs):
        out[f"job {i} {name} ({tasks} tasks)"] = (completed - submitted) / 1000
    out["between jobs"] = sum(max(b[1] - a[2], 0) for a, b in zip(jobs, jobs[1:])) / 1000
    out["after the last job: driver, stop"] = ended - jobs[-1][2] / 1000
    return out


def warm_archive() -> None:
    """The JVM archive in :data:`CACHE`: a first run writes it as its JVM exits; the next
    names it."""
    env = {"XDG_CACHE_HOME": str(CACHE)}
    for _ in range(2):
        if list((CACHE / "kreplica").glob("spark-*.jsa")):
            return
        out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
        subprocess.run([KREPLICA, "fleet", "scan", str(THREE_REPLICAS), "--output-dir", str(out), "-f", "ndjson"],
                       env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(out.parent, ignore_errors=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not any(
                p.read_bytes()[:4] == (0xF00BABA8).to_bytes(4, "little")
                for p in (CACHE / "kreplica").glob("spark-*.jsa.part")):
            time.sleep(1)
        time.sleep(2)


def small_cases(root: Path) -> dict[str, tuple[list[str], dict]]:
    """The commands of ``--small`` on one fleet (argv, extra environment); ``TABLES`` stands for
    a scan's output directory (made fresh each run), ``SCANNED`` for a finished scan's."""
    return {
        "scan": ([KREPLICA, "fleet", "scan", str(root), "--output-dir", "TABLES", "-f", "ndjson"], {}),
        "analyze": ([KREPLICA, "fleet", "analyze", "SCANNED", "-f", "ndjson"], {}),
        "run": ([KREPLICA, "fleet", "run", str(root), "--output-dir", "TABLES", "-f", "ndjson"], {}),
        "scan, no archive": ([KREPLICA, "fleet", "scan", str(root), "--output-dir", "TABLES", "-f", "ndjson"], ARCHIVE_OFF),
        "run, no archive": ([KREPLICA, "fleet", "run", str(root), "--output-dir", "TABLES", "-f", "ndjson"], ARCHIVE_OFF),
        "analyze on Spark": ([KREPLICA, "fleet", "analyze", "SCANNED", "-f", "ndjson"],
                             {"KREPLICA_FLEET_ANALYZE": "spark"}),
    }


def bench_small(runs: int) -> int:
    warm_archive()
    report = {}
    for label, root in (("three-replica fixture", THREE_REPLICAS), ("scenario fleet", scenario_fleet())):
        scanned = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
        subprocess.run([KREPLICA, "fleet", "scan", str(root), "--output-dir", str(scanned), "-f", "ndjson"],
                       env={**os.environ, "XDG_CACHE_HOME": str(CACHE)}, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        print(f"{label}: {root} ({len(partitions_of(root))} partitions, "
              f"{sum(f.stat().st_size for f in root.rglob('*') if f.is_file()):,} bytes)")
        fleet_report = {}
        for case, (argv, env) in small_cases(root).items():
            results = []
            for _ in range(runs):
                out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
                args = [str(out) if a == "TABLES" else str(scanned) if a == "SCANNED" else a for a in argv]
                at = load()
                try:
                    secs, peak, events, begun, ended = run_process(args, env)
                except SystemExit as exc:  # an older kreplica (PYTHONPATH) without this command
                    print(f"  {case:<22}   n/a  ({exc})")
                    break
                finally:
                    shutil.rmtree(out.parent, ignore_errors=True)
                results.append((secs, at, peak, _breakdown(events, begun, ended)))
            if not results:
                continue
            secs, at, peak, parts = min(results)
            print(f"  {case:<22}{secs:7.2f} s  (load {at}, best of {runs}; driver peak {peak / 2**20:.0f} MiB)")
            for part, value in parts.items():
                print(f"      {part:<44}{value:6.2f} s")
            fleet_report[case] = {"seconds": secs, "load": at, "driver_peak_mib": peak / 2**20, "breakdown": parts,
                                  "all_runs": [r[0] for r in results]}
        argvs = single_partition_argvs(root)
        at = load()
        start = time.perf_counter()
        for argv in argvs:
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        secs = time.perf_counter() - start
        print(f"  {'single-partition':<22}{secs:7.2f} s  (load {at}; {len(argvs)} commands)")
        fleet_report["single-partition commands"] = {"seconds": secs, "load": at, "commands": len(argvs)}
        shutil.rmtree(scanned.parent, ignore_errors=True)
        report[label] = fleet_report
    return _write_report("fleet-small", report)


def bench_break_even(sizes: list[int], runs: int, data: Path, keep: bool) -> int:
    """``fleet run`` against the single-partition commands on fleets of growing size (2 brokers x
    2 log directories, one partition each: 2 partitions of 2 replicas)."""
    warm_archive()
    report = {}
    print(f"{'fleet':<12}{'fleet run s':>12}{'single s':>10}{'load':>6}  (single: epochs, truncate-plan and "
          "diverge of each partition)")
    for size in sizes:
        root = build_fleet(size, 2, 1, data)
        fleet = []
        for _ in range(runs):
            out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-")) / "tables"
            at = load()
            fleet.append((run_process([KREPLICA, "fleet", "run", str(root), "--output-dir", str(out), "-f", "ndjson"])[0],
                          at))
            shutil.rmtree(out.parent, ignore_errors=True)
        single = []
        for _ in range(runs):
            at = load()
            start = time.perf_counter()
            for argv in single_partition_argvs(root):
                subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            single.append((time.perf_counter() - start, at))
        (fleet_s, fleet_load), (single_s, single_load) = min(fleet), min(single)
        print(f"{size_label(size):<12}{fleet_s:>12.2f}{single_s:>10.2f}{max(fleet_load, single_load):>6}")
        report[size_label(size)] = {"bytes": size, "fleet_run_seconds": fleet_s, "fleet_load": fleet_load,
                                    "single_partition_seconds": single_s, "single_load": single_load}
        clean(data, keep)
    return _write_report("fleet-break-even", report)


def bench_memory(sizes: list[int], cores: int, data: Path, keep: bool) -> int:
    """``fleet scan`` and ``fleet analyze`` (on Spark) of fleets of growing size: the driver's peak
    (JVM and Python, not the workers) must not follow the data."""
    warm_archive()
    report = {}
    print(f"{'fleet':<8}{'scan s':>8}{'segments job s':>16}{'scan peak MiB':>15}{'analyze s':>11}"
          f"{'analyze peak MiB':>18}{'load':>6}")
    for size in sizes:
        root = build_fleet(size, 4, max(size // (1 << 30), 1), data, link=True)  # 128 MiB segments from 1 GiB up
        out = Path(tempfile.mkdtemp(prefix="kreplica-fleet-bench-", dir=data)) / "tables"
        at = load()
        scan_s, scan_peak, events, _, _ = run_process(
            [KREPLICA, "fleet", "scan", str(root), "--output-dir", str(out), "--master", f"local[{cores}]", "-f", "ndjson"])
        analyze_s, analyze_peak, _, _, _ = run_process(
            [KREPLICA, "fleet", "analyze", str(out), "--master", f"local[{cores}]", "-f", "ndjson"],
            {"KREPLICA_FLEET_ANALYZE": "spark"})
        seg = _job_seconds(events).get("segments", 0.0)
        print(f"{size_label(size):<8}{scan_s:>8.2f}{seg:>16.2f}{scan_peak / 2**20:>15.0f}{analyze_s:>11.2f}"
              f"{analyze_peak / 2**20:>18.0f}{at:>6}")
        report[size_label(size)] = {"bytes": size, "scan_seconds": scan_s, "segments_job_seconds": seg,
                                    "scan_driver_peak_mib": scan_peak / 2**20, "analyze_seconds": analyze_s,
                                    "analyze_driver_peak_mib": analyze_peak / 2**20, "load": at}
        shutil.rmtree(out.parent, ignore_errors=True)
        clean(data, keep)
    return _write_report("fleet-memory", report)


LABEL = ""  # --label: a suffix for the results file (a tree measured for comparison, say)


def _write_report(name: str, report: dict) -> int:
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{name}-{datetime.now(timezone.utc).strftime('%Y-%m-%d')}{LABEL}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(), "results": report},
                              indent=2) + "\n")
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
    ap.add_argument("--small", action="store_true", help="small evidence: where a fleet run's seconds go")
    ap.add_argument("--break-even", action="store_true", help="fleet run against the single-partition commands")
    ap.add_argument("--memory", action="store_true", help="the driver's peak as the fleet grows (--sizes)")
    ap.add_argument("--sizes", default="16M,256M,1G,4G", help="--break-even, --memory: the fleets' sizes")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="where fleets are generated (a scratch disk for large ones: removed after unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep fleets generated outside bench/data")
    ap.add_argument("--label", default="", help="results file suffix, e.g. base for an earlier tree (PYTHONPATH)")
    args = ap.parse_args()
    global LABEL
    LABEL = f"-{args.label}" if args.label else ""
    if args.small:
        return bench_small(args.runs)
    if args.break_even:
        return bench_break_even([parse_size(x) for x in args.sizes.split(",")], args.runs, args.data, args.keep)
    if args.memory:
        return bench_memory([parse_size(x) for x in args.sizes.split(",")], int(args.cores.split(",")[-1]),
                            args.data, args.keep)
    warm_archive()
    size = parse_size(args.size)
    root = build_fleet(size, args.brokers, args.partitions, args.data)
    quarter = build_fleet(size // 4, args.brokers, max(args.partitions // 4, 1), args.data)
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
          f"{'driver peak MiB':>17}{'load':>6}")
    report = {}
    for name, (secs, peak, jobs, at) in rows.items():
        n_bytes = data_bytes // 4 if "quarter" in name else 1 << 20 if name.startswith("startup") else data_bytes
        gbs = n_bytes / secs / 1e9
        net = None
        if name.startswith("scan"):
            # start-up varies run to run; when a scan took no longer than it, throughput is unknown
            fixed = rows[f"startup[{name[5:name.index(']')]}]"][0]
            net = n_bytes / (secs - fixed) / 1e9 if secs > fixed * 1.05 else None
        seg = jobs.get("segments")
        print(f"{name:<24}{secs:>9.2f}{gbs:>8.2f}{(f'{net:.2f}' if net else '-'):>18}"
              f"{(f'{seg:.2f}' if seg else '-'):>16}{peak / 2**20:>17.0f}{at:>6}")
        report[name] = {"seconds": secs, "gb_per_s": gbs, "gb_per_s_without_startup": net,
                        "spark_jobs_seconds": jobs, "driver_peak_mib": peak / 2**20, "load": at}
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
            print(f"fleet scan per core (local[{n}], the segments job) / inspect-log batch scan: {ratio:.2f} "
                  "(target >= 0.90)")
            report[f"per_core_ratio_segments_job[{n}]"] = ratio
    one, most = report.get("scan[1]"), report[f"scan[{cores[-1]}]"]
    if one and cores[-1] > 1 and one["spark_jobs_seconds"].get("segments") and most["spark_jobs_seconds"].get("segments"):
        speedup = one["spark_jobs_seconds"]["segments"] / most["spark_jobs_seconds"]["segments"]
        print(f"segments job, local[{cores[-1]}] against local[1]: {speedup:.2f}x (target >= 1.7x on 2 cores)")
        report[f"speedup_segments_job[{cores[-1]}]"] = speedup
    full, part = report[f"scan[{cores[-1]}]"], report[f"scan[{cores[-1]}] quarter fleet"]
    print(f"driver peak: {full['driver_peak_mib']:.0f} MiB for the fleet, {part['driver_peak_mib']:.0f} MiB "
          "for a quarter of it")
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    out = RESULTS / f"fleet-{stamp}{LABEL}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(), "fleet_bytes": data_bytes,
                               "replicas": len(replicas), "results": report}, indent=2) + "\n")
    print(f"written {out}")
    clean(args.data, args.keep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
