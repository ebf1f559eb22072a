"""Benchmark: ``kreplica groups`` on a large ``__consumer_offsets`` partition.

    python bench/bench_groups.py [--sizes 256,1024] [--runs 3] [--out $TMPDIR/kreplica-bench-groups]

Writes, outside the repository (``$TMPDIR`` by default), one broker log directory per size
holding ``__consumer_offsets-0`` as a busy group coordinator writes it: 100 MiB segments
(``offsets.topic.segment.bytes``), uncompressed (``offsets.topic.compression.codec`` none), each
batch one coordinator append holding the offset commits (``OffsetCommitValue`` v3, key v1) of 1 to
8 groups for every partition they consume, 2,000 groups over 200 topics of 12 partitions
(31,000 distinct group-partitions; realistic names: a 30-odd character group and topic each, a
~110-byte record); about one batch in 80 a classic ``GroupMetadataValue`` (v3, members with their
``consumer`` subscriptions and assignments) of a rebalancing group, one in 130 the tombstones the
offset cleanup writes for an expired group. A pool of template batches is written round-robin
with base offset and timestamps patched and the CRC recomputed, so the file is written in seconds
and every batch is valid. Then it times ``python -m kreplica groups DIR -f ndjson`` (whole process,
start-up included, output to /dev/null) and reads its peak RSS, best of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fixtures.generate import consumer_member, group_metadata, offset_commit  # noqa: E402
from kreplica.formats.checksums import crc32c  # noqa: E402
from kreplica.formats.log.batch import NewRecord  # noqa: E402
from kreplica.formats.log.default_records import ATTRIBUTES_OFFSET, CRC_OFFSET, build_batch  # noqa: E402
from kreplica.formats.logdir.naming import segment_file_name  # noqa: E402

MIB = 1 << 20
SEGMENT_BYTES = 100 * MIB
TS = 1_700_000_000_000
GROUPS = 2_000
TOPICS = 200
PARTITIONS = 12
TOPICS_PER_GROUP = (1, 3)
TEMPLATES = 512
#: the header fields a copy of a template gets anew (record deltas stay)
_BASE_OFFSET = struct.Struct(">q")
_TIMESTAMPS = struct.Struct(">qq")
_TIMESTAMPS_AT = struct.calcsize(">qiibIhi")      # BaseTimestamp, then MaxTimestamp


def _names(rng: random.Random) -> tuple[list[str], list[str]]:
    domains = ("payments", "orders", "inventory", "shipping", "billing", "identity", "search", "pricing")
    topics = [f"prod.{domains[t % 8]}.{rng.choice(('events', 'commands', 'changelog'))}.v{t % 5 + 1}-{t:03d}"
              for t in range(TOPICS)]
    groups = [f"{domains[g % 8]}-{rng.choice(('settlement', 'projection', 'indexer', 'notifier'))}-consumer-{g:04d}"
              for g in range(GROUPS)]
    return groups, topics


def templates(rng: random.Random) -> list[bytes]:
    """The pool of batches the file is made of (module docstring)."""
    groups, topics = _names(rng)
    subscribed = {g: rng.sample(topics, rng.randint(*TOPICS_PER_GROUP)) for g in groups}
    pool = []
    for n in range(TEMPLATES):
        if n % 97 == 13:      # a rebalance: the group's metadata
            g = rng.choice(groups)
            members = [consumer_member(f"{g}-{m}-{rng.getrandbits(64):016x}", subscribed[g],
                                       {t: list(range(m, PARTITIONS, 3)) for t in subscribed[g]}) for m in range(3)]
            records = [group_metadata(g, members, generation=rng.randint(1, 500), current_state_timestamp=TS)]
        elif n % 131 == 29:   # the offset cleanup: tombstones of an expired group
            g = rng.choice(groups)
            records = [offset_commit(g, t, p) for t in subscribed[g] for p in range(PARTITIONS)]
        else:                 # one append of the coordinator: commits of a few groups
            records = []
            for g in rng.sample(groups, rng.randint(1, 8)):
                records += [offset_commit(g, t, p, rng.randrange(10**9), leader_epoch=rng.randint(0, 30),
                                          commit_timestamp=TS + n) for t in subscribed[g] for p in range(PARTITIONS)]
        pool.append(build_batch([NewRecord(i, TS + i, k, v) for i, (k, v) in enumerate(records)], base_offset=0,
                                partition_leader_epoch=7))
    return pool


def write_partition(root: Path, size: int, seed: int = 7) -> Path:
    """A log directory with ``__consumer_offsets-0`` of about ``size`` bytes (module docstring)."""
    partition = root / "__consumer_offsets-0"
    marker = root / "complete"
    if marker.is_file():
        return root
    partition.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    pool = templates(rng)
    order = [rng.randrange(len(pool)) for _ in range(4096)]
    offset, written, k = 0, 0, 0
    out, segment_size = None, SEGMENT_BYTES
    while written < size:
        if segment_size >= SEGMENT_BYTES:
            if out is not None:
                out.close()
            out = open(partition / segment_file_name(offset), "wb")
            segment_size = 0
        template = pool[order[k % len(order)]]
        k += 1
        batch = bytearray(template)
        count = int.from_bytes(batch[57:61], "big")
        _BASE_OFFSET.pack_into(batch, 0, offset)
        now = TS + offset
        last_delta = int.from_bytes(batch[23:27], "big")
        _TIMESTAMPS.pack_into(batch, _TIMESTAMPS_AT, now, now + last_delta)
        struct.pack_into(">I", batch, CRC_OFFSET, crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
        out.write(batch)
        offset += count
        written += len(batch)
        segment_size += len(batch)
    out.close()
    marker.write_text(json.dumps({"bytes": written, "records": offset}))
    return root


def measure(log_dir: Path, runs: int) -> dict:
    """Best wall time and peak RSS of ``kreplica groups`` over ``runs`` runs, each its own process."""
    times, rss = [], []
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)")
    for _ in range(runs):
        line = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "kreplica", "groups", str(log_dir),
                               "-f", "ndjson"], capture_output=True, text=True, check=True).stdout.split()
        assert line[2] in ("0", "1"), line
        times.append(float(line[0]))
        rss.append(int(line[1]) / 1024)
    return {"runs_s": [round(t, 2) for t in times], "min_s": round(min(times), 2), "peak_rss_mib": round(max(rss), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024", help="partition sizes in MiB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "kreplica-bench-groups"))
    args = ap.parse_args()
    from kreplica.formats.log.key_fold import FOLD_IMPLEMENTATION

    for mib in (int(s) for s in args.sizes.split(",")):
        t = time.perf_counter()
        log_dir = write_partition(Path(args.out) / f"{mib}MiB", mib * MIB)
        made = json.loads((log_dir / "complete").read_text())
        written = time.perf_counter() - t
        result = measure(log_dir, args.runs)
        print(json.dumps({"bench": "groups", "size_mib": mib, **made, "generated_s": round(written, 1),
                          "fold": FOLD_IMPLEMENTATION, **result,
                          "records_per_s": round(made["records"] / result["min_s"])}), flush=True)


if __name__ == "__main__":
    main()
