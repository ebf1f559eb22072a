"""Peak RSS of whole ``kreplica`` processes on the size extremes of issue 14.

1. ``batch-20M``: one uncompressed v2 batch declaring 20,000,000 records (9-12 bytes each,
   ~220 MiB), every record real; ``kreplica inspect-log --records --payload none`` must decode
   it as a stream.
2. ``sparse-10GiB``: a 10 GiB sparse segment (``truncate``) with 64 MiB of real ~16 KiB
   batches at the start and at the end and a hole between them; ``inspect-log`` and
   ``inspect-dir`` (on a partition directory holding it) must scan it in flat memory.

Files are built in ``--dir`` (default ``/tmp/kreplica-bench-memory``; never in the
repository) and kept for reruns; ``--clean`` removes them. Each command runs under
``/usr/bin/time -f "%M %U %S"`` (peak RSS in KiB, user and system CPU seconds) with stdout to
``/dev/null``; CPU time is the figure to compare, wall time depends on the machine's load.
Results go to ``bench/results/memory-<date>.json`` and a table to stdout.

    python bench/bench_memory.py               # both cases
    python bench/bench_memory.py --case batch-20M
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from kreplica.formats.log import default_records  # noqa: E402
from kreplica.formats.varint import build_unsigned_varint as _varint  # noqa: E402
import crc32c as _crc32c  # noqa: E402  (the hardware CRC-32C package kreplica uses)

TS = 1_700_000_000_000
GiB = 1 << 30
MiB = 1 << 20


def build_20m_batch(path: Path, count: int = 20_000_000) -> None:
    """One v2 batch of ``count`` records: null key, 1-byte value, no headers; offset deltas
    0..count-1, timestamp delta 0. Written in chunks, so building it stays small (~30 s)."""
    tail = b"\x01\x02v\x00"  # key length -1, value length 1, b"v", no headers

    def record(delta: int) -> bytes:
        body = b"\x00\x00" + _varint(2 * delta) + tail  # attributes, timestamp delta, offset delta ...
        return _varint(2 * len(body)) + body

    header_tail = struct.pack(">hiqqqhii", 0, count - 1, TS, TS, -1, -1, -1, count)
    crc_value = _crc32c.crc32c(header_tail)
    size = 0
    chunks = []
    step = 1 << 20
    for lo in range(0, count, step):
        chunk = b"".join([record(d) for d in range(lo, min(count, lo + step))])
        crc_value = _crc32c.crc32c(chunk, crc_value)
        size += len(chunk)
        chunks.append(chunk)
    length = 4 + 1 + 4 + len(header_tail) + size
    with open(path, "wb") as f:
        f.write(struct.pack(">qiib", 0, length, 0, 2) + struct.pack(">I", crc_value) + header_tail)
        for chunk in chunks:
            f.write(chunk)


def _batches(first_offset: int, total_bytes: int) -> bytes:
    from kreplica.formats.log.batch import NewRecord
    value = bytes(range(256)) * 4
    out = bytearray()
    offset = first_offset
    while len(out) < total_bytes:
        recs = [NewRecord(offset + i, TS + offset + i, b"key-%06d" % i, value, ()) for i in range(15)]
        out += default_records.build_batch(recs, base_offset=offset)
        offset += 15
    return bytes(out)


def build_sparse(path: Path, size: int = 10 * GiB, edge: int = 64 * MiB) -> None:
    """``size`` bytes: ``edge`` bytes of batches, a hole, ``edge`` bytes of batches at the end."""
    head = _batches(0, edge)
    tail = _batches(10_000_000, edge)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size - len(tail))
        f.seek(size - len(tail))
        f.write(tail)


def peak_rss(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, float, float, int]:
    """(peak RSS KiB, wall seconds, CPU seconds, exit code) of ``cmd`` under /usr/bin/time,
    with ``env`` added to the environment."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    seconds = time.monotonic() - t0
    kib, user, system = p.stderr.strip().splitlines()[-1].split()
    return int(kib), seconds, float(user) + float(system), p.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=("batch-20M", "sparse-10GiB"))
    ap.add_argument("--dir", default="/tmp/kreplica-bench-memory")
    ap.add_argument("--clean", action="store_true", help="remove the generated files afterwards")
    ap.add_argument("--out", help="results file (default bench/results/memory-<date>.json)")
    args = ap.parse_args()
    cases = args.case or ["batch-20M", "sparse-10GiB"]
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    kreplica = [sys.executable, "-m", "kreplica"]
    rows = []
    runs = []  # (case, command label, file, kreplica arguments[, environment])
    if "batch-20M" in cases:
        seg = work / "batch20m-0" / "00000000000000000000.log"
        if not seg.exists():
            seg.parent.mkdir(exist_ok=True)
            print("building the 20M-record batch ...", file=sys.stderr, flush=True)
            build_20m_batch(seg)
        records = ["inspect-log", "--records", "--payload", "none", "--format", "ndjson", str(seg)]
        runs += [("batch-20M", "inspect-log --records --payload none", seg, records),
                 ("batch-20M", "the same, KREPLICA_DECODE=python", seg, records, {"KREPLICA_DECODE": "python"}),
                 ("batch-20M", "inspect-log", seg, ["inspect-log", "--format", "ndjson", str(seg)]),
                 ("batch-20M", "inspect-log --no-verify-crc", seg,
                  ["inspect-log", "--no-verify-crc", "--format", "ndjson", str(seg)])]
    if "sparse-10GiB" in cases:
        seg = work / "sparse10g-0" / "00000000000000000000.log"
        if not seg.exists():
            seg.parent.mkdir(exist_ok=True)
            print("building the 10 GiB sparse segment ...", file=sys.stderr, flush=True)
            build_sparse(seg)
        runs += [("sparse-10GiB", "inspect-log", seg, ["inspect-log", "--format", "ndjson", str(seg)]),
                 ("sparse-10GiB", "inspect-dir", seg, ["inspect-dir", "--format", "ndjson", str(seg.parent)])]
    for case, label, seg, cmd, *env in runs:
        kib, s, cpu, rc = peak_rss([*kreplica, *cmd], *env)
        rows.append({"case": case, "command": label, "file_bytes": seg.stat().st_size,
                     "allocated_bytes": seg.stat().st_blocks * 512, "peak_rss_kib": kib,
                     "seconds": round(s, 1), "cpu_seconds": round(cpu, 1), "exit": rc})
    if args.clean:
        shutil.rmtree(work, ignore_errors=True)
    doc = {"date": _dt.date.today().isoformat(), "machine": platform.platform(), "cpus": os.cpu_count(),
           "python": sys.version.split()[0], "decoder": default_records.DECODE_IMPLEMENTATION, "rows": rows}
    out = Path(args.out) if args.out else REPO / "bench" / "results" / f"memory-{doc['date']}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{'case':<14} {'command':<40} {'file':>10} {'peak RSS':>10} {'CPU s':>8} {'wall s':>8} exit")
    for r in rows:
        print(f"{r['case']:<14} {r['command']:<40} {r['file_bytes'] / GiB:>8.2f}Gi {r['peak_rss_kib'] / 1024:>8.0f}Mi "
              f"{r['cpu_seconds']:>8.1f} {r['seconds']:>8.1f} {r['exit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
