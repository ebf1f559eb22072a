"""Benchmark: ``kreplica inspect-dir`` on a broker log directory of many small partitions.

    python bench/bench_inspect_dir.py [--partitions 1000] [--runs 3]

Generates (once, deterministic, under bench/data/logdir-<N>/) a log directory of N partitions,
each with two small segments of v2 batches, their .index/.timeindex files written as a broker
writes them, a leader-epoch-checkpoint, and the log directory's checkpoints; then times the CLI
(ndjson to /dev/null) and reports partitions per second and peak RSS.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from kreplica.formats.log.batch import NewRecord  # noqa: E402
from kreplica.formats.logdir.leader_epoch_checkpoint import build_leader_epoch_checkpoint  # noqa: E402
from kreplica.formats.logdir.meta_properties import build_meta_properties  # noqa: E402
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint  # noqa: E402
from kreplica.formats.log.default_records import build_batch  # noqa: E402

TS = 1_700_000_000_000


def _fixture_generator():
    spec = importlib.util.spec_from_file_location("fixture_generator", ROOT / "fixtures" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(out: Path, partitions: int) -> None:
    if (out / "meta.properties").is_file():
        return
    gen = _fixture_generator()
    out.mkdir(parents=True, exist_ok=True)
    hws, rps = {}, {}
    value = b"x" * 200
    for p in range(partitions):
        topic, part = f"topic{p // 10}", p % 10
        d = out / f"{topic}-{part}"
        d.mkdir(exist_ok=True)
        offset = 0
        for seg in range(2):
            base = offset
            data = bytearray()
            for b in range(10):
                epoch = 0 if seg == 0 else 1
                data += build_batch([NewRecord(offset + k, TS + offset + k, b"key", value) for k in range(5)],
                                    base_offset=offset, partition_leader_epoch=epoch)
                offset += 5
            (d / f"{base:020d}.log").write_bytes(bytes(data))
        gen.write_indexes(d, interval=4096, preallocate=4096)
        (d / "leader-epoch-checkpoint").write_bytes(build_leader_epoch_checkpoint([(0, 0), (1, 50)]))
        hws[(topic, part)] = offset
        rps[(topic, part)] = offset
    (out / "replication-offset-checkpoint").write_bytes(build_offset_checkpoint(hws))
    (out / "recovery-point-offset-checkpoint").write_bytes(build_offset_checkpoint(rps))
    (out / "meta.properties").write_bytes(build_meta_properties({"version": "0", "broker.id": "1",
                                                                 "cluster.id": "bench"}))
    (out / ".kafka_cleanshutdown").write_bytes(b"")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    data = HERE / "data" / f"logdir-{args.partitions}"
    t0 = time.perf_counter()
    generate(data, args.partitions)
    gen_s = time.perf_counter() - t0
    kreplica = str(Path(sys.executable).with_name("kreplica"))
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            proc = subprocess.run([kreplica, "inspect-dir", str(data), "-f", "ndjson"], stdout=devnull)
        times.append(time.perf_counter() - t)
        assert proc.returncode in (0, 1), proc.returncode
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = {"bench": "inspect-dir", "partitions": args.partitions, "segments": 2 * args.partitions,
              "generate_s": round(gen_s, 2), "runs_s": [round(t, 2) for t in times], "min_s": round(min(times), 2),
              "partitions_per_s": round(args.partitions / min(times), 1), "peak_rss_mib": round(rss, 1)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
