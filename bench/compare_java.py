"""kreplica against Kafka's own Java reader, whole process, on the same segments (issue 9's targets).

Generates (once, reused afterwards) segments of ``--size`` bytes under ``bench/data/java-compare-<size>/``,
each named as Kafka names a first segment (``00000000000000000000.log``):

  small    v2 batches as a producer with the default ``batch.size=16384`` writes them: 15 records of
           ~1 KiB JSON-ish values, a 10-byte key and one 16-byte header (about 16 KiB a batch)
  large    the same records, ~1,000 to a batch (about 1 MiB a batch, ``batch.size=1048576``)
  gzip, snappy, lz4, zstd
           the ``small`` batches compressed with each codec (Kafka's framing, kreplica's writer)
  one      a single ``small`` batch: the start-up case

Records come from ``generate_segment.RecordStream`` (seeded). To keep generation I/O-bound, a pool of
template batches is built with ``default_records.build_batch`` and written round-robin with the base
offset patched in place (the base offset lies outside the CRC, as on a broker), so offsets are
contiguous and every batch's CRC is valid. Template batches carry no producer id, so repeated
timestamps and sequences mean nothing to any check.

Then, for every file, interleaved (kreplica, Java, kreplica, Java, ...), ``--runs`` rounds (default 3),
best wall-clock time of each, whole process, stdout to /dev/null:

  scan      ``kreplica inspect-log --format ndjson FILE``        vs  ``scan.sh shallow+crc FILE``
  none      ``kreplica inspect-log --records --payload none ...`` vs  ``scan.sh deep+crc FILE``
  base64    ``kreplica inspect-log --records --payload base64 ...`` vs ``scan.sh deep+crc FILE``
  startup   the ``scan`` pair on the one-batch file

The targets (issue 9): scan ratio <= 1.0 on every file, none <= 1.5, base64 <= 2.0, start-up < 0.15 s.
Prints a table of seconds and ratios, writes ``bench/results/compare_java-<UTC date>[-label].json``.
The table also gives the best CPU seconds (user+sys) of each side and the highest 1-minute load
average seen: the machine is shared, and CPU time is less disturbed by other work than wall time
(Java's CPU time includes its JIT and GC threads).

kreplica runs as the ``kreplica`` script beside this interpreter (``--kreplica`` overrides it, e.g.
``--kreplica 'env PYTHONPATH=/tmp/old python -m kreplica'`` for a before/after), with a bytecode
cache under ``bench/data/pycache`` as a normal installation has. ``scan.sh`` (``../shared/bench/
kafka-java``) builds itself on first use; it needs Java 17.

Usage::

    python bench/compare_java.py                 # 512 MiB files: ~1 min to generate, ~10 min to run
    python bench/compare_java.py --quick         # 64 MiB files
    python bench/compare_java.py --only small,zstd --cases scan,none --runs 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import resource
import shlex
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from generate_segment import RecordStream, parse_size, size_label  # noqa: E402

from kreplica.formats import codecs  # noqa: E402
from kreplica.formats.log.default_records import build_batch  # noqa: E402

DATA_DIR = BENCH_DIR / "data"
RESULTS_DIR = BENCH_DIR / "results"
SCAN_SH = ROOT.parent / "shared" / "bench" / "kafka-java" / "scan.sh"
SEED = 20261122
SEGMENT_NAME = "00000000000000000000.log"

#: kind -> (records per batch, codec)
KINDS = {
    "small": (15, codecs.NONE),
    "large": (1000, codecs.NONE),
    "gzip": (15, codecs.GZIP),
    "snappy": (15, codecs.SNAPPY),
    "lz4": (15, codecs.LZ4),
    "zstd": (15, codecs.ZSTD),
}
#: distinct template batches per kind (records per template pool ~ 1,000-4,000)
TEMPLATES = {"small": 64, "large": 4}

#: case -> (kreplica arguments, Java mode, target ratio or seconds)
CASES = {
    "scan": (["inspect-log", "--format", "ndjson"], "shallow+crc", 1.0),
    "none": (["inspect-log", "--records", "--payload", "none", "--format", "ndjson"], "deep+crc", 1.5),
    "base64": (["inspect-log", "--records", "--payload", "base64", "--format", "ndjson"], "deep+crc", 2.0),
}
STARTUP_TARGET_S = 0.15


def _templates(kind: str, stream: RecordStream) -> list[bytes]:
    per_batch, codec = KINDS[kind]
    out = []
    for _ in range(TEMPLATES.get(kind, 64)):
        recs = [stream.next_record() for _ in range(per_batch)]
        # offsets from 0 in every template: the base offset is patched when written
        base = recs[0].offset
        recs = [r._replace(offset=r.offset - base) for r in recs]
        out.append(build_batch(recs, base_offset=0, compression=codec))
    return out


def generate(kind: str, size: int, path: Path) -> dict:
    """Write ``path`` (about ``size`` bytes; ``kind`` "one" is a single small batch)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = json.loads(meta.read_text())
        if info.get("size_target") == size and info.get("bytes") == path.stat().st_size:
            return info
    t0 = time.perf_counter()
    stream = RecordStream(SEED)
    templates = _templates("small" if kind == "one" else kind, stream)
    if kind == "one":
        templates = templates[:1]
    per_batch = KINDS["small" if kind == "one" else kind][0]
    # "uncompressed bytes" decides when to stop, so every codec file holds the same batches
    plain_sizes = ([len(b) for b in _templates("small", RecordStream(SEED))]
                   if kind in ("gzip", "snappy", "lz4", "zstd") else [len(b) for b in templates])
    tmp = path.with_suffix(".tmp")
    written = plain = batches = offset = 0
    with open(tmp, "wb", buffering=1 << 22) as f:
        while plain < size or batches == 0:
            i = batches % len(templates)
            batch = bytearray(templates[i])
            struct.pack_into(">q", batch, 0, offset)  # baseOffset: outside the CRC
            f.write(batch)
            written += len(batch)
            plain += plain_sizes[i]
            offset += per_batch
            batches += 1
            if kind == "one":
                break
    os.replace(tmp, path)
    info = {"kind": kind, "size_target": size, "bytes": written, "batches": batches, "records": offset,
            "seconds": round(time.perf_counter() - t0, 1)}
    meta.write_text(json.dumps(info) + "\n")
    return info


def kreplica_command(spec: str | None) -> list[str]:
    if spec:
        return shlex.split(spec)
    script = Path(sys.executable).with_name("kreplica")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kreplica"]


def cli_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(DATA_DIR / "pycache")
    return env


def timed(argv: list[str], env: dict | None = None) -> tuple[float, int, str, float]:
    """Wall seconds, exit status, stdout (Java only) and CPU seconds (user+sys) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE if argv[0] == str(SCAN_SH) else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env)
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    text = (proc.stdout or b"").decode(errors="replace") if argv[0] == str(SCAN_SH) else ""
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}\n")
    return seconds, proc.returncode, text, cpu


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return -1.0


def code_fingerprint() -> str:
    h = hashlib.sha256()
    for p in sorted((ROOT / "kreplica").rglob("*")):
        if p.suffix in (".py", ".c") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(ROOT)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:12]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="512M", help="target size of each segment (default 512M)")
    ap.add_argument("--quick", action="store_true", help="64 MiB segments instead")
    ap.add_argument("--runs", type=int, default=3, help="interleaved rounds; the best is kept (default 3)")
    ap.add_argument("--only", default=",".join(KINDS), help="comma-separated kinds (default: all)")
    ap.add_argument("--cases", default="scan,none,base64,startup", help="comma-separated cases")
    ap.add_argument("--kreplica", default=None, help="the kreplica command (default: the script beside python)")
    ap.add_argument("--label", default="", help="suffix of the results file name")
    ap.add_argument("--generate-only", action="store_true")
    args = ap.parse_args(argv)
    size = parse_size("64M" if args.quick else args.size)
    kinds = [k for k in args.only.split(",") if k]
    cases = [c for c in args.cases.split(",") if c]
    out_dir = DATA_DIR / f"java-compare-{size_label(size)}"
    files = {}
    for kind in kinds + (["one"] if "startup" in cases else []):
        path = out_dir / kind / SEGMENT_NAME
        info = generate(kind, size, path)
        files[kind] = (path, info)
        print(f"{kind:7s} {info['bytes']:>12,d} bytes {info['batches']:>9,d} batches "
              f"{info['records']:>10,d} records  {path}", file=sys.stderr)
    if args.generate_only:
        return 0
    if not SCAN_SH.exists():
        print(f"{SCAN_SH} is missing: the Java reader lives in ../shared/bench/kafka-java", file=sys.stderr)
        return 2
    kre = kreplica_command(args.kreplica)
    env = cli_env()
    pairs = []  # (kind, case, kreplica argv, java argv, target)
    for kind in kinds:
        path = str(files[kind][0])
        for case in cases:
            if case == "startup":
                continue
            kargs, mode, target = CASES[case]
            pairs.append((kind, case, kre + kargs + [path], [str(SCAN_SH), mode, path], target))
    if "startup" in cases:
        path = str(files["one"][0])
        pairs.append(("one", "startup", kre + CASES["scan"][0] + [path], [str(SCAN_SH), "shallow+crc", path],
                      STARTUP_TARGET_S))
    # warm the page cache and the bytecode cache, and build scan.sh if needed
    for kind, (path, _) in files.items():
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    timed(kre + ["--version"], env)
    timed([str(SCAN_SH), "shallow", str(files[kinds[0] if kinds else "one"][0])])
    results = {(k, c): {"kreplica": [], "java": [], "kreplica_cpu": [], "java_cpu": [], "load": []}
               for k, c, *_ in pairs}
    java_counts = {}
    for rnd in range(args.runs):
        for kind, case, kargv, jargv, _ in pairs:
            row = results[(kind, case)]
            row["load"].append(loadavg())
            s, rc, _, cpu = timed(kargv, env)
            row["kreplica"].append(s)
            row["kreplica_cpu"].append(cpu)
            row["kreplica_rc"] = rc
            s, rc, text, cpu = timed(jargv)
            row["java"].append(s)
            row["java_cpu"].append(cpu)
            m = re.search(r"batches=(\d+) records=(\d+)", text)
            if m:
                java_counts[kind] = (int(m.group(1)), int(m.group(2)))
            print(f"round {rnd + 1}/{args.runs} {kind:7s} {case:8s} kreplica {row['kreplica'][-1]:7.3f} s  "
                  f"java {s:7.3f} s", file=sys.stderr)
    rows = []
    print()
    print("| file | case | bytes | kreplica s | Java s | ratio | target | met | kreplica CPU s | Java CPU s | load |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    for kind, case, kargv, jargv, target in pairs:
        row = results[(kind, case)]
        kbest, jbest = min(row["kreplica"]), min(row["java"])
        ratio = kbest / jbest
        if case == "startup":
            met, target_text = kbest < target, f"< {target} s"
        else:
            met, target_text = ratio <= target, f"<= {target}"
        size_bytes = files[kind][1]["bytes"]
        print(f"| {kind} | {case} | {size_bytes:,d} | {kbest:.3f} | {jbest:.3f} | {ratio:.2f} | {target_text} | "
              f"{'yes' if met else 'no'} | {min(row['kreplica_cpu']):.2f} | {min(row['java_cpu']):.2f} | "
              f"{max(row['load']):.1f} |")
        rows.append({"file": kind, "case": case, "bytes": size_bytes, "batches": files[kind][1]["batches"],
                     "records": files[kind][1]["records"], "kreplica_s": row["kreplica"], "java_s": row["java"],
                     "kreplica_cpu_s": row["kreplica_cpu"], "java_cpu_s": row["java_cpu"], "kreplica_best": kbest, "java_best": jbest, "ratio": ratio, "target": target, "met": met,
                     "kreplica_exit": row.get("kreplica_rc"), "load": row["load"],
                     "java_counts": java_counts.get(kind), "kreplica_argv": kargv, "java_argv": jargv})
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    out = RESULTS_DIR / f"compare_java-{stamp}{'-' + args.label if args.label else ''}.json"
    doc = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "size": size, "runs": args.runs,
           "machine": {"platform": platform.platform(), "python": platform.python_version(),
                       "cpus": os.cpu_count(), "java": shutil.which("java")},
           "kreplica": kre, "code_fingerprint": code_fingerprint(), "rows": rows}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nwritten: {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
