"""Benchmark ``kreplica inspect-log``: batch scan with CRC and full record decode, library and
CLI, against kafka-python's reader on the same files, with peak memory.

What is timed (each on the uncompressed segment and on its zstd twin, page cache warm, every
run in a fresh child process so that peak memory is per run; min and median of ``--runs``):

  lib_scan          iterate ``formats.segment.iter_segment`` over an mmap, CRC-32C checked,
                    counting batches                                        (GB/s of file)
  lib_scan_nocrc    the same with ``verify_crc=False`` (what the CRC costs)  (GB/s)
  floor_crc         a bare ``struct`` walk + ``crc32c`` per batch over the mmap: the ceiling a
                    pure-Python walker can reach on this machine             (GB/s)
  lib_decode        for every batch from ``iter_segment``, iterate
                    ``formats.default_records.iter_records``                 (M records/s, MB/s)
  cli_scan          ``kreplica inspect-log FILE --format ndjson > /dev/null`` (GB/s, wall clock,
                    interpreter start-up included)
  cli_decode_none   ``kreplica inspect-log --records --payload none --format ndjson FILE``
  cli_decode_b64    the same with ``--payload base64`` (the oracle's format)
  kp_scan           kafka-python ``MemoryRecords`` over the file bytes: batches + ``validate_crc``
  kp_decode         kafka-python: batches + ``validate_crc`` + every record
  cli_startup       ``kreplica --version`` (the fixed cost inside every cli_* figure)
  cli_startup_nocache  the same when no bytecode is cached (PYTHONDONTWRITEBYTECODE=1, as set on
                    the project's machines: every start compiles all of kreplica from source)

CLI runs use a bytecode cache under bench/data/pycache (PYTHONPYCACHEPREFIX), as a normal
installation has .pyc files; only cli_startup_nocache runs without one.

Peak memory: ``maxrss`` is the process's peak resident set (``/usr/bin/time -f %M``, else the
largest ``VmHWM`` sampled), which *includes* file pages mapped through the mmap (kreplica maps
the segment, so pages it has touched count although they are page cache that the kernel can
drop at will); ``anon`` is the peak of ``RssAnon`` and ``file`` the peak of ``RssFile`` from
``/proc/<pid>/status``, sampled every 10 ms: ``anon`` is the heap, i.e. the memory the process
really allocates. ``lib_scan``, ``cli_scan`` and ``cli_decode_b64`` also run on the 128 MiB prefix
file (``--small-size``) to show whether memory grows with file size.

Every row also records the CPU seconds of the run (less disturbed than wall time when other work
shares the 2 CPUs), the 1-minute load average when the case started, and a fingerprint of the
kreplica sources (the tree changes under concurrent edits; compare only equal fingerprints).

kafka-python is not a kreplica dependency. Install it (and ``zstandard``, which it needs for
zstd batches; ``crc32c`` is already there) with::

    /work/venv/bin/pip install kafka-python zstandard

Without it the kp_* rows are skipped with a note.

Usage::

    /work/venv/bin/python bench/generate_segment.py            # once: ~3 min for 1 GiB
    /work/venv/bin/python bench/generate_segment.py --size 128M
    /work/venv/bin/python bench/bench_inspect_log.py           # ~4 min on the 2-core box
    /work/venv/bin/python bench/bench_inspect_log.py --runs 1 --only lib_scan,lib_decode

Results: a table on stdout and ``bench/results/inspect_log-<UTC date>.json``.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from generate_segment import DEFAULT_OUT, parse_size, segment_paths, size_label  # noqa: E402

KREPLICA = shutil.which("kreplica", path=str(Path(sys.executable).parent)) or "kreplica"
RESULTS_DIR = BENCH_DIR / "results"

LIB_CASES = ("lib_scan", "lib_scan_nocrc", "floor_crc", "lib_decode", "kp_scan", "kp_decode")
CLI_CASES = ("cli_scan", "cli_decode_none", "cli_decode_b64")
STARTUP_CASES = ("cli_startup", "cli_startup_nocache")
ALL_CASES = LIB_CASES + CLI_CASES + STARTUP_CASES
# what runs on the small file too (peak memory against file size)
SMALL_CASES = ("lib_scan", "cli_scan", "cli_decode_b64")


# -- child side: one timed loop, result as JSON on stdout --------------------------------------


def _map(path: str):
    f = open(path, "rb")
    return f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def child_lib_scan(path: str, verify_crc: bool = True) -> dict:
    from kreplica.formats.log.batch import RecordBatch
    from kreplica.formats.log.segment import iter_segment

    f, mm = _map(path)
    t0, c0 = time.perf_counter(), time.process_time()
    batches = bad = other = 0
    for ev in iter_segment(mm, path=path, verify_crc=verify_crc):
        if type(ev) is RecordBatch:
            batches += 1
            if ev.crc_valid is False:
                bad += 1
        else:
            other += 1
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": elapsed, "cpu_seconds": cpu, "bytes": len(mm), "batches": batches, "crc_bad": bad,
            "other_events": other}


def child_floor_crc(path: str) -> dict:
    import struct

    from kreplica.formats.checksums import crc32c

    f, mm = _map(path)
    mv = memoryview(mm)
    head = struct.Struct(">qiibI").unpack_from
    t0, c0 = time.perf_counter(), time.process_time()
    pos, end, batches, bad = 0, len(mm), 0, 0
    while end - pos > 17:
        _, size, _, _, crc = head(mm, pos)
        stop = pos + 12 + size
        if crc32c(mv[pos + 21:stop]) != crc:
            bad += 1
        pos = stop
        batches += 1
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    mv.release()
    return {"seconds": elapsed, "cpu_seconds": cpu, "bytes": end, "batches": batches, "crc_bad": bad}


def child_lib_decode(path: str) -> dict:
    from kreplica.formats.log.batch import RecordBatch
    from kreplica.formats.log.default_records import iter_records
    from kreplica.formats.log.segment import iter_segment

    f, mm = _map(path)
    t0, c0 = time.perf_counter(), time.process_time()
    batches = records = value_bytes = 0
    for ev in iter_segment(mm, path=path):
        if type(ev) is RecordBatch:
            batches += 1
            for r in iter_records(mm, ev):
                records += 1
                value_bytes += len(r.value)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": elapsed, "cpu_seconds": cpu, "bytes": len(mm), "batches": batches, "records": records,
            "value_bytes": value_bytes}


def child_kp(path: str, decode: bool) -> dict:
    try:
        import kafka
        from kafka.codec import has_zstd
        from kafka.record.memory_records import MemoryRecords
    except ImportError as exc:
        return {"skipped": f"kafka-python not installed ({exc}); pip install kafka-python zstandard"}
    with open(path, "rb") as fh:
        data = fh.read()  # "over the file bytes", as in specs/peers-and-users.md Appendix A
    t0, c0 = time.perf_counter(), time.process_time()
    batches = records = value_bytes = bad = 0
    try:
        for batch in MemoryRecords(data):
            batches += 1
            if not batch.validate_crc():
                bad += 1
            if decode:
                for r in batch:
                    records += 1
                    value_bytes += len(r.value)
    except Exception as exc:  # e.g. zstd without the zstandard package
        hint = "" if has_zstd() else " (zstandard not installed: pip install zstandard)"
        return {"skipped": f"kafka-python {kafka.__version__} failed: {type(exc).__name__}: {exc}{hint}"}
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": elapsed, "cpu_seconds": cpu, "bytes": len(data), "batches": batches, "crc_bad": bad,
           "kafka_python": kafka.__version__}
    if decode:
        out.update(records=records, value_bytes=value_bytes)
    return out


CHILD = {
    "lib_scan": lambda p: child_lib_scan(p, True),
    "lib_scan_nocrc": lambda p: child_lib_scan(p, False),
    "floor_crc": child_floor_crc,
    "lib_decode": child_lib_decode,
    "kp_scan": lambda p: child_kp(p, False),
    "kp_decode": lambda p: child_kp(p, True),
}


# -- parent side: run children, watch memory ---------------------------------------------------


TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
_MAXRSS_TAG = "KBENCH_MAXRSS_KIB="


class MemoryWatch(threading.Thread):
    """Samples VmHWM / RssAnon / RssFile of a process from /proc every ``interval`` seconds.

    With ``follow_child`` the process watched is the first child of ``pid`` (the command that
    ``/usr/bin/time`` runs)."""

    def __init__(self, pid: int, *, follow_child: bool = False, interval: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.pid, self.follow, self.interval = pid, follow_child, interval
        self.peak_anon = self.peak_file = self.hwm = 0
        self.done = threading.Event()

    def _find_target(self) -> int | None:
        if not self.follow:
            return self.pid
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as fh:
                kids = fh.read().split()
        except OSError:
            return None
        return int(kids[0]) if kids else None

    def run(self) -> None:
        target = None
        while not self.done.is_set():
            if target is None:
                target = self._find_target()
            if target is not None:
                try:
                    with open(f"/proc/{target}/status") as fh:
                        for line in fh:
                            if line.startswith("RssAnon:"):
                                self.peak_anon = max(self.peak_anon, int(line.split()[1]))
                            elif line.startswith("RssFile:"):
                                self.peak_file = max(self.peak_file, int(line.split()[1]))
                            elif line.startswith("VmHWM:"):
                                self.hwm = max(self.hwm, int(line.split()[1]))
                except (OSError, ValueError):
                    if not self.follow:
                        return
            self.done.wait(self.interval)


def cli_env(bytecode_cache: bool) -> dict:
    """The environment of a CLI run. With ``bytecode_cache`` compiled modules are cached under
    bench/data/pycache (as in any normal installation, where .pyc files exist); without it, and
    with PYTHONDONTWRITEBYTECODE=1 as on the project's machines, every start compiles kreplica."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(DEFAULT_OUT / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def run_process(argv: list[str], *, capture: bool, env: dict | None = None) -> dict:
    """Run ``argv`` with stdout to a pipe (``capture``) or /dev/null; wall time and memory.

    Peak RSS comes from ``/usr/bin/time -f %M`` when it exists (the rusage of a child forked by
    this big parent would start at the parent's own high-water mark), else from VmHWM samples."""
    full = [TIME_BIN, "-f", _MAXRSS_TAG + "%M"] + argv if TIME_BIN else argv
    t0, c0 = time.perf_counter(), time.process_time()
    proc = subprocess.Popen(full, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    watch = MemoryWatch(proc.pid, follow_child=TIME_BIN is not None)
    watch.start()
    out = proc.stdout.read() if capture else b""
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    watch.done.set()
    watch.join()
    maxrss = watch.hwm
    if TIME_BIN:
        lines = err.rstrip().splitlines()
        if lines and lines[-1].startswith(_MAXRSS_TAG):
            maxrss = int(lines[-1][len(_MAXRSS_TAG):])
            err = "\n".join(lines[:-1])
    return {"wall": wall, "rc": proc.returncode, "stdout": out, "stderr": err,
            "maxrss_kib": maxrss, "anon_kib": watch.peak_anon, "file_kib": watch.peak_file,
            "cpu": usage.ru_utime + usage.ru_stime}


def run_case(case: str, path: str) -> dict:
    """One run of ``case`` on ``path`` in a fresh process."""
    if case in CHILD:
        r = run_process([sys.executable, __file__, "--child", case, path], capture=True)
        if r["rc"] != 0:
            raise RuntimeError(f"{case} failed: {r['stderr'][-2000:]}")
        res = json.loads(r["stdout"])
        res.update(maxrss_kib=r["maxrss_kib"], anon_kib=r["anon_kib"], file_kib=r["file_kib"])
        return res
    if case.startswith("cli_startup"):
        argv = [KREPLICA, "--version"]
    else:
        argv = [KREPLICA, "inspect-log", path, "--format", "ndjson"]
        if case == "cli_decode_none":
            argv += ["--records", "--payload", "none"]
        elif case == "cli_decode_b64":
            argv += ["--records", "--payload", "base64"]
    r = run_process(argv, capture=False, env=cli_env(case != "cli_startup_nocache"))
    if r["rc"] != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {r['rc']}: {r['stderr'][-2000:]}")
    return {"seconds": r["wall"], "cpu_seconds": r["cpu"], "bytes": 0 if case.startswith("cli_startup") else os.path.getsize(path),
            "maxrss_kib": r["maxrss_kib"], "anon_kib": r["anon_kib"], "file_kib": r["file_kib"],
            "argv": " ".join(argv[:1] + [Path(a).name if a == path else a for a in argv[1:]])}


def code_fingerprint() -> str:
    """A short hash of the kreplica sources this run imports (the tree changes under concurrent
    edits; a figure is only comparable with another of the same fingerprint)."""
    import hashlib

    import kreplica

    root = Path(kreplica.__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def warm(path: str) -> None:
    """Read the file once so every run sees a warm page cache."""
    with open(path, "rb", buffering=0) as fh:
        while fh.read(1 << 24):
            pass


def summarise(case: str, runs: list[dict], records_hint: int | None) -> dict:
    if "skipped" in runs[0]:
        return {"skipped": runs[0]["skipped"]}
    secs = [r["seconds"] for r in runs]
    best, med = min(secs), statistics.median(secs)
    size = runs[0]["bytes"]
    out = {"runs": len(runs), "seconds_min": round(best, 4), "seconds_median": round(med, 4),
           "bytes": size,
           "maxrss_mib_max": round(max(r["maxrss_kib"] for r in runs) / 1024, 1),
           "anon_mib_max": round(max(r["anon_kib"] for r in runs) / 1024, 1),
           "file_mib_max": round(max(r["file_kib"] for r in runs) / 1024, 1)}
    if size:
        out["gb_per_s_best"] = round(size / best / 1e9, 3)
        out["gb_per_s_median"] = round(size / med / 1e9, 3)
    recs = runs[0].get("records") or (records_hint if case.startswith(("cli_decode", "kp_decode", "lib_decode")) else None)
    if recs:
        out["records"] = recs
        out["m_records_per_s_best"] = round(recs / best / 1e6, 3)
        out["m_records_per_s_median"] = round(recs / med / 1e6, 3)
    for key in ("batches", "crc_bad", "value_bytes", "kafka_python", "argv"):
        if key in runs[0]:
            out[key] = runs[0][key]
    if "cpu_seconds" in runs[0]:
        cpu = [r["cpu_seconds"] for r in runs]
        out["cpu_seconds_min"] = round(min(cpu), 4)
        out["cpu_seconds_median"] = round(statistics.median(cpu), 4)
        if size:
            out["gb_per_cpu_s_best"] = round(size / min(cpu) / 1e9, 3)
        if recs:
            out["m_records_per_cpu_s_best"] = round(recs / min(cpu) / 1e6, 3)
    return out


def environment() -> dict:
    from kreplica import __version__ as kv
    from kreplica.formats import checksums

    cpu = "unknown"
    flags = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name") and cpu == "unknown":
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = line
    except OSError:
        pass
    versions = {}
    for mod in ("cramjam", "crc32c", "kafka", "zstandard"):
        try:
            m = __import__(mod)
            versions[mod] = getattr(m, "__version__", "?")
        except ImportError:
            versions[mod] = None
    try:
        from importlib.metadata import version
        versions["crc32c"] = version("crc32c")
    except Exception:
        pass
    return {
        "nproc": os.cpu_count(), "cpu_model": cpu, "cpu_sse4_2": " sse4_2" in flags,
        "python": platform.python_version(), "platform": platform.platform(),
        "kreplica": kv, "crc32c_hardware": checksums.CRC32C_HARDWARE,
        "crc_implementation": checksums.CRC_IMPLEMENTATION, "packages": versions,
        "mem_total_mib": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20,
        # both are set on the project's machines and change CLI figures (see bench/README.md)
        "env": {k: os.environ.get(k) for k in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")},
    }


def fmt_row(name: str, codec: str, s: dict) -> str:
    if "skipped" in s:
        return f"| {name} | {codec} | skipped: {s['skipped']} | | | | | | |"
    gbs = f"{s['gb_per_s_best']:.3f} / {s['gb_per_s_median']:.3f}" if "gb_per_s_best" in s else "-"
    mrs = (f"{s['m_records_per_s_best']:.3f} / {s['m_records_per_s_median']:.3f}"
           if "m_records_per_s_best" in s else "-")
    cpu = f"{s['cpu_seconds_min']:.2f}" if "cpu_seconds_min" in s else "-"
    return (f"| {name} | {codec} | {s['seconds_min']:.2f} / {s['seconds_median']:.2f} | {cpu} | {gbs} | {mrs} | "
            f"{s['maxrss_mib_max']:.0f} | {s['anon_mib_max']:.0f} | {s['load_before']:.1f} |")


TABLE_HEAD = ("| case | file | wall s (min / med) | CPU s (min) | GB/s (best / med) | M rec/s (best / med) | "
              "peak RSS MiB | peak anon MiB | load |\n|---|---|---|---|---|---|---|---|---|")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark kreplica inspect-log (see module docstring).")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--data-dir", default=str(DEFAULT_OUT))
    ap.add_argument("--size", default="1G", help="size of the main segment pair (as generated)")
    ap.add_argument("--small-size", default="128M", help="size of the prefix pair for the memory check "
                                                         "('0' to skip)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated cases (default: all): " + ",".join(ALL_CASES))
    ap.add_argument("--codecs", default="none,zstd")
    ap.add_argument("--out", default=None, help="JSON results path (default bench/results/inspect_log-<date>.json)")
    args = ap.parse_args(argv)

    if args.child:
        case, path = args.child
        print(json.dumps(CHILD[case](path)))
        return 0

    data_dir = Path(args.data_dir)
    size = parse_size(args.size)
    small = parse_size(args.small_size)
    cases = [c for c in args.only.split(",") if c] or list(ALL_CASES)
    unknown = set(cases) - set(ALL_CASES)
    if unknown:
        ap.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    codecs_wanted = [c for c in args.codecs.split(",") if c]
    sets = [(size, segment_paths(data_dir, size))]
    if small:
        sets.append((small, segment_paths(data_dir, small)))
    for sz, paths in sets:
        missing = [str(p) for c, p in paths.items() if c in codecs_wanted and not p.exists()]
        if missing:
            print(f"missing {', '.join(missing)}: run bench/generate_segment.py --size {size_label(sz)} "
                  f"--out-dir {data_dir}", file=sys.stderr)
            return 2

    env = environment()
    print(f"# kreplica inspect-log benchmark  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    start_code = code_fingerprint()
    print(f"# {env['nproc']} CPU  {env['cpu_model']}  Python {env['python']}  "
          f"crc32c hardware={env['crc32c_hardware']}  runs={args.runs}  kreplica sources {start_code}  "
          f"PYTHONUNBUFFERED={env['env']['PYTHONUNBUFFERED']}")
    print("# load = 1-minute load average before the case; above ~1 other work shares the CPUs and wall")
    print("# times suffer (CPU s is less affected). Peak RSS includes mapped file pages; anon is the heap.")
    print(TABLE_HEAD)
    results: dict = {"environment": env, "runs": args.runs, "files": {}, "results": [],
                     "code_fingerprint_at_start": start_code}
    rows = []
    for sz, paths in sets:
        label = size_label(sz)
        manifest_path = data_dir / f"manifest-{label}.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        records_hint = manifest.get("records")
        for codec in codecs_wanted:
            path = str(paths[codec])
            results["files"][f"{codec}-{label}"] = {"path": path, "size": os.path.getsize(path),
                                                   "records": records_hint, "batches": manifest.get("batches")}
            todo = [c for c in cases if c not in STARTUP_CASES and (sz == size or c in SMALL_CASES)]
            warm(path)
            if any(c in CLI_CASES for c in todo):
                run_process([KREPLICA, "--version"], capture=False, env=cli_env(True))  # compile once
            for case in todo:
                load = os.getloadavg()[0]
                code = code_fingerprint()
                runs = [run_case(case, path) for _ in range(args.runs)]
                s = summarise(case, runs, records_hint)
                s.update(case=case, file=f"{codec}-{label}", codec=codec, load_before=round(load, 2),
                         load_after=round(os.getloadavg()[0], 2), code=code)
                if code_fingerprint() != code:
                    s["code_changed_during_case"] = True
                    print(f"# WARNING: kreplica sources changed while {case} ran", flush=True)
                results["results"].append(s)
                row = fmt_row(case, f"{codec}-{label}", s)
                rows.append(row)
                print(row, flush=True)
    for case in (c for c in STARTUP_CASES if c in cases):
        load = os.getloadavg()[0]
        run_case(case, "")  # fills the bytecode cache
        runs = [run_case(case, "") for _ in range(max(args.runs, 5))]
        s = summarise(case, runs, None)
        s.update(case=case, file="-", codec="-", load_before=round(load, 2),
                 load_after=round(os.getloadavg()[0], 2), code=code_fingerprint())
        results["results"].append(s)
        rows.append(fmt_row(case, "-", s))
        print(rows[-1])
    print()
    print(TABLE_HEAD)
    print("\n".join(rows))
    out = Path(args.out) if args.out else RESULTS_DIR / f"inspect_log-{datetime.now(timezone.utc):%Y-%m-%d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    results["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    results["code_fingerprints"] = sorted({r.get("code", start_code) for r in results["results"]})
    if len(results["code_fingerprints"]) > 1:
        print("# WARNING: kreplica sources changed during the benchmark; figures mix code versions")
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
