"""Generate the benchmark segments: realistic v2 batches, uncompressed and a zstd twin.

Each batch holds about 15 records (``--records-per-batch``) of JSON-ish text values of about
1 KiB, keys of 10 bytes and one header per record, so an uncompressed batch is about 16 KiB.
Offsets increase without gaps, the partition leader epoch is bumped a few times
(``--epochs``), and the batches carry idempotent-producer fields (one producer id, base
sequence increasing by the record count), as a real producer's would.

Everything is written with kreplica's own writer
(:func:`kreplica.formats.log.default_records.build_batch` with
:class:`kreplica.formats.log.batch.NewRecord`). The zstd twin holds the same records in the same
batches (same offsets, epochs, timestamps, producer fields), only compressed with
``codecs.ZSTD``; it is therefore smaller than the uncompressed file.

The output is deterministic: the same ``--seed`` gives the same bytes, and a smaller
``--size`` gives a byte-for-byte *prefix* of a larger file (the record stream does not depend
on the target size), which is what the peak-memory comparison of ``bench_inspect_log.py``
relies on. Batches are streamed to disk one at a time; memory does not grow with ``--size``.

Files are written as Kafka names them, so the CLI sees a base offset of 0::

    <out-dir>/none-<size>/00000000000000000000.log
    <out-dir>/zstd-<size>/00000000000000000000.log

Usage::

    /work/venv/bin/python bench/generate_segment.py                 # 1 GiB into bench/data/
    /work/venv/bin/python bench/generate_segment.py --size 128M     # the 128 MiB prefix twin
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from kreplica.formats import codecs
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "data"
DEFAULT_SIZE = 1 << 30
DEFAULT_SEED = 20261122
BASE_TIMESTAMP = 1_763_800_000_000   # 2025-11-22, in ms
PRODUCER_ID = 4242
PRODUCER_EPOCH = 0

_WORDS_SEED_OFFSET = 7919
_ACTIONS = ("view", "click", "add_to_cart", "checkout", "search", "login", "logout", "rate")
_COUNTRIES = ("de", "fr", "us", "gb", "in", "br", "jp", "nl", "es", "it", "pl", "se")


def parse_size(text: str) -> int:
    """``1G``, ``512M``, ``128MiB``, ``4096`` → bytes (binary units)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def size_label(size: int) -> str:
    """The directory label of a target size: ``1024MiB``, ``128MiB``, or bytes."""
    if size % (1 << 20) == 0:
        return f"{size >> 20}MiB"
    return f"{size}B"


def segment_paths(out_dir: Path, size: int) -> dict[str, Path]:
    """Where the uncompressed and zstd segments of ``size`` live under ``out_dir``."""
    label = size_label(size)
    return {codec: out_dir / f"{codec}-{label}" / "00000000000000000000.log" for codec in ("none", "zstd")}


class RecordStream:
    """The deterministic stream of records: record ``i`` depends only on the seed and ``i``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        words_rng = random.Random(seed + _WORDS_SEED_OFFSET)
        letters = "abcdefghijklmnopqrstuvwxyz"
        # a Zipf-ish vocabulary: short common words, longer rare ones
        self.words = ["".join(words_rng.choice(letters) for _ in range(words_rng.randint(2, 10)))
                      for _ in range(4000)]
        self.weights = [1.0 / (rank + 1) ** 0.9 for rank in range(len(self.words))]
        self.offset = 0
        self.timestamp = BASE_TIMESTAMP

    def next_record(self) -> NewRecord:
        rng = self.rng
        offset = self.offset
        self.offset += 1
        self.timestamp += rng.randint(0, 3)
        user = rng.randint(0, 99_999)
        target = rng.randint(800, 1250)
        doc = {
            "event_id": f"{rng.getrandbits(128):032x}",
            "offset": offset,
            "ts": self.timestamp,
            "user": f"user-{user:05d}",
            "session": f"{rng.getrandbits(64):016x}",
            "action": rng.choice(_ACTIONS),
            "country": rng.choice(_COUNTRIES),
            "price_cents": rng.randint(0, 500_000),
            "items": [rng.randint(1, 1_000_000) for _ in range(rng.randint(1, 6))],
            "text": "",
        }
        head = json.dumps(doc, separators=(",", ":"))
        room = max(target - len(head), 16)
        words = rng.choices(self.words, self.weights, k=room // 5 + 8)
        text = " ".join(words)[:room]
        doc["text"] = text
        value = json.dumps(doc, separators=(",", ":")).encode()
        key = f"user-{user:05d}".encode()                       # 10 bytes
        headers = (("trace_id", f"{rng.getrandbits(64):016x}".encode()),)
        return NewRecord(offset, self.timestamp, key, value, headers)


def generate(size: int, out_dir: Path, *, seed: int = DEFAULT_SEED, records_per_batch: int = 15,
             epochs: int = 5, quiet: bool = False) -> dict:
    """Write both segments of about ``size`` bytes (the uncompressed one stops at the first
    batch boundary at or past ``size``); returns a description of what was written."""
    paths = segment_paths(out_dir, size)
    for p in paths.values():
        p.parent.mkdir(parents=True, exist_ok=True)
    # epochs bump at fixed *byte* positions of a 1 GiB file, so a prefix file shares them
    epoch_step = DEFAULT_SIZE // max(epochs, 1)
    stream = RecordStream(seed)
    tmp = {codec: p.with_suffix(".log.tmp") for codec, p in paths.items()}
    written = {"none": 0, "zstd": 0}
    batches = records = 0
    sequence = 0
    started = time.perf_counter()
    next_report = 64 << 20
    with open(tmp["none"], "wb", buffering=1 << 20) as plain, open(tmp["zstd"], "wb", buffering=1 << 20) as packed:
        while written["none"] < size:
            epoch = min(written["none"] // epoch_step, max(epochs, 1) - 1)
            recs = [stream.next_record() for _ in range(records_per_batch)]
            base_offset = recs[0].offset
            common = dict(base_offset=base_offset, partition_leader_epoch=epoch, producer_id=PRODUCER_ID,
                          producer_epoch=PRODUCER_EPOCH, base_sequence=sequence)
            raw = build_batch(recs, compression=codecs.NONE, **common)
            zst = build_batch(recs, compression=codecs.ZSTD, **common)
            plain.write(raw)
            packed.write(zst)
            written["none"] += len(raw)
            written["zstd"] += len(zst)
            sequence = (sequence + records_per_batch) & 0x7FFFFFFF
            batches += 1
            records += records_per_batch
            if not quiet and written["none"] >= next_report:
                rate = written["none"] / (time.perf_counter() - started) / 1e6
                print(f"  {written['none'] >> 20} MiB, {batches} batches ({rate:.0f} MB/s)", file=sys.stderr)
                next_report += 64 << 20
    for codec, p in paths.items():
        os.replace(tmp[codec], p)
    info = {
        "seed": seed, "target_size": size, "batches": batches, "records": records,
        "records_per_batch": records_per_batch, "epochs": epochs,
        "files": {codec: {"path": str(p), "size": written[codec]} for codec, p in paths.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    (paths["none"].parent.parent / f"manifest-{size_label(size)}.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default=str(DEFAULT_SIZE), type=str,
                    help="target size of the uncompressed segment (e.g. 1G, 512M, 128M; default 1G)")
    ap.add_argument("--out-dir", default=str(DEFAULT_OUT), help="output directory (default bench/data/)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--records-per-batch", type=int, default=15)
    ap.add_argument("--epochs", type=int, default=5, help="number of distinct leader epochs (default 5)")
    ap.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    size = parse_size(args.size)
    out_dir = Path(args.out_dir)
    paths = segment_paths(out_dir, size)
    manifest = out_dir / f"manifest-{size_label(size)}.json"
    if not args.force and all(p.exists() for p in paths.values()) and manifest.exists():
        print(f"exists: {', '.join(str(p) for p in paths.values())} (use --force to regenerate)")
        return 0
    info = generate(size, out_dir, seed=args.seed, records_per_batch=args.records_per_batch,
                    epochs=args.epochs, quiet=args.quiet)
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
