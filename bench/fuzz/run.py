"""Fuzz every kreplica reader: ``python bench/fuzz/run.py --budget SECONDS [--reader NAME ...]``.

Runs outside the unit tests. Each reader (``targets.READERS``; ``segment-v2@python`` and
``kraft@python`` are the same readers on the pure record decoder, ``KREPLICA_DECODE=python``)
is fuzzed in turn, in one child process at a time, for its share of the budget. The child uses
atheris (libFuzzer's coverage-guided loop, with this directory's structure-aware mutators as
its custom mutator half the time) when it is installed, else a plain mutation loop with the
same mutators.

What counts, per reader:

* crash: an exception that is not a ``FormatError`` subclass, or any exception at all out of
  a reader documented never to raise (``walker``); distinct classes are told apart by the
  exception type and the innermost kreplica frame, and the first input of each is saved;
* hang: one input taking more than ``--timeout`` seconds (``SIGALRM``; libFuzzer's own
  ``-timeout`` backs it up for hangs inside C code);
* memory: the tracemalloc peak of one input, and the process's peak RSS (``ru_maxrss``); an
  input whose traced peak exceeds ``64 MiB + 64 x its size`` is reported as out of proportion.
  The peak includes what was live when the input started, so ``live_traced_bytes`` (the most
  live at any input's start) is reported too: if it grows with the run, a reader keeps memory
  from one input to the next (a leak), and the inputs flagged past it are its symptoms.

The results go to ``bench/results/fuzz-<date>.json`` and a table to stdout. Crash, hang and
memory reproducers go to ``--work`` (default ``/tmp/kreplica-fuzz``), never into the repository.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import targets  # noqa: E402

REPO = HERE.parents[1]
RESULTS = REPO / "bench" / "results"
MAX_LEN = 128 * 1024
MEMORY_ALLOWANCE = 64 << 20
MEMORY_RATIO = 64


def reader_names() -> list[str]:
    names = []
    for name in targets.READERS:
        names.append(name)
        if name in targets.DECODER_READERS:
            names.append(name + "@python")
    return names


# -- the child: one reader, one process ---------------------------------------------------------


class Hang(BaseException):
    """Raised by SIGALRM inside an input that runs too long (a BaseException, so no ``except
    Exception`` in the reader can swallow it)."""


class Child:
    def __init__(self, reader: str, budget: float, timeout: float, work: Path, stats_path: Path, seed: int):
        self.name = reader
        base = reader.split("@")[0]
        self.reader = targets.READERS[base]
        self.budget = budget
        self.timeout = timeout
        self.work = work
        self.stats_path = stats_path
        self.rng = random.Random(seed)
        self.started = time.monotonic()
        self.last_write = 0.0
        self.stats = {"reader": reader, "inputs": 0, "format_errors": 0, "items": 0, "crashes": {},
                      "hangs": {}, "memory": {}, "peak_traced_bytes": 0, "peak_traced_input_bytes": 0,
                      "max_input_seconds": 0.0, "engine": None, "decoder": None, "seeds": 0,
                      "baseline_rss_kib": 0, "ru_maxrss_kib": 0}
        self.seeds: list[bytes] = []

    # reproducers and classes

    def _save(self, kind: str, key: str, data: bytes) -> str:
        d = self.work / kind / self.name.replace("@", "_")
        d.mkdir(parents=True, exist_ok=True)
        p = d / (hashlib.sha1(key.encode()).hexdigest()[:12] + ".bin")
        if not p.exists():
            p.write_bytes(data)
        return str(p)

    @staticmethod
    def _where(exc: BaseException) -> str:
        frames = traceback.extract_tb(exc.__traceback__)
        ours = [f for f in frames if "/kreplica/" in f.filename]
        f = (ours or frames or [None])[-1]
        if f is None:
            return "?"
        return f"{f.filename.split('/kreplica/')[-1]}:{f.lineno} ({f.name})"

    def _record(self, table: str, exc: BaseException, data: bytes, seconds: float | None = None) -> None:
        key = f"{type(exc).__name__} at {self._where(exc)}"
        entry = self.stats[table].get(key)
        if entry is None:
            entry = self.stats[table][key] = {
                "count": 0, "type": type(exc).__name__, "where": self._where(exc),
                "message": str(exc)[:300], "reproducer": self._save(table, key, data), "input_bytes": len(data)}
            if seconds is not None:
                entry["seconds"] = round(seconds, 2)
        entry["count"] += 1
        self.flush(force=True)

    def flush(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_write < 2.0:
            return
        self.last_write = now
        self.stats["ru_maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.stats["elapsed"] = round(now - self.started, 1)
        tmp = self.stats_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.stats))
        os.replace(tmp, self.stats_path)

    # one input

    def one(self, data: bytes) -> None:
        import tracemalloc
        from kreplica.formats.errors import FormatError

        self.stats["inputs"] += 1
        tracemalloc.reset_peak()
        live = tracemalloc.get_traced_memory()[0]
        if live > self.stats.get("live_traced_bytes", 0):
            self.stats["live_traced_bytes"] = live
        t0 = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            self.stats["items"] += self.reader.run(data)
        except Hang as exc:
            self._record("hangs", exc, data, time.monotonic() - t0)
        except FormatError as exc:
            if self.reader.walker:
                self._record("crashes", exc, data)
            else:
                self.stats["format_errors"] += 1
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - everything else is what we are looking for
            self._record("crashes", exc, data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.monotonic() - t0
        if seconds > self.stats["max_input_seconds"]:
            self.stats["max_input_seconds"] = round(seconds, 3)
        peak = tracemalloc.get_traced_memory()[1]
        if peak > self.stats["peak_traced_bytes"]:
            self.stats["peak_traced_bytes"] = peak
            self.stats["peak_traced_input_bytes"] = len(data)
        if peak > MEMORY_ALLOWANCE + MEMORY_RATIO * len(data):
            exc = MemoryError(f"{peak} bytes traced for a {len(data)}-byte input")
            key = f"peak >= {1 << (peak.bit_length() - 21)} MiB"
            entry = self.stats["memory"].setdefault(
                key, {"count": 0, "peak_traced_bytes": peak, "input_bytes": len(data),
                      "reproducer": self._save("memory", key, data)})
            entry["count"] += 1
            del exc
        self.flush()

    # engines

    def load_seeds(self) -> None:
        self.seeds = [s for s in self.reader.seeds() if s] or [b"\x00"]
        self.stats["seeds"] = len(self.seeds)

    def run_random(self) -> None:
        import mutators
        self.stats["engine"] = "random"
        for s in self.seeds:
            self.one(s)
        deadline = self.started + self.budget
        while time.monotonic() < deadline:
            data = mutators.mutate(self.reader.family, self.rng.choice(self.seeds), self.rng, MAX_LEN)
            self.one(data)
        self.flush(force=True)

    def run_atheris(self, atheris) -> None:
        import mutators
        self.stats["engine"] = f"atheris {getattr(atheris, '__version__', '')}".strip()
        corpus = self.work / "corpus" / self.name.replace("@", "_")
        corpus.mkdir(parents=True, exist_ok=True)
        for s in self.seeds:
            (corpus / ("seed-" + hashlib.sha1(s).hexdigest()[:12])).write_bytes(s[:MAX_LEN])
        artifacts = self.work / "artifacts" / self.name.replace("@", "_")
        artifacts.mkdir(parents=True, exist_ok=True)
        rng = self.rng
        family = self.reader.family
        seeds = self.seeds

        def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
            rng.seed(seed)
            r = rng.random()
            if r < 0.4:
                return atheris.Mutate(data, max_size)
            base = data if r < 0.9 or not seeds else rng.choice(seeds)
            return mutators.mutate(family, base, rng, max(max_size, MAX_LEN))

        def test_one(data: bytes) -> None:
            self.one(data)

        remaining = max(1, int(self.budget - (time.monotonic() - self.started)))
        argv = [sys.argv[0], f"-max_total_time={remaining}", f"-timeout={int(self.timeout * 3)}",
                f"-max_len={MAX_LEN}", "-rss_limit_mb=4096", "-malloc_limit_mb=4096", "-print_final_stats=1",
                f"-artifact_prefix={artifacts}/", f"-seed={rng.randrange(1, 1 << 30)}", str(corpus)]
        atheris.Setup(argv, test_one, custom_mutator=custom_mutator)
        atheris.Fuzz()

    def main(self, engine: str) -> None:
        import tracemalloc

        def on_alarm(signum, frame):
            raise Hang(f"one input ran past {self.timeout} s")

        signal.signal(signal.SIGALRM, on_alarm)
        atheris = None
        if engine in ("auto", "atheris"):
            try:
                import atheris  # type: ignore
            except ImportError:
                if engine == "atheris":
                    raise
        if atheris is not None:
            with atheris.instrument_imports(include=["kreplica"]):
                import kreplica.analysis.inspect.inspect_log  # noqa: F401
                import kreplica.formats  # noqa: F401
                for mod in ("log.offset_index", "log.time_index", "log.txn_index", "log.producer_snapshot",
                            "logdir.offset_checkpoint", "logdir.leader_epoch_checkpoint", "logdir.partition_metadata",
                            "logdir.meta_properties", "logdir.clean_shutdown", "kraft.quorum_state",
                            "zookeeper.snapshot", "zookeeper.txnlog", "kraft.records"):
                    __import__(f"kreplica.formats.{mod}")
        from kreplica.formats.log import default_records
        self.stats["decoder"] = default_records.DECODE_IMPLEMENTATION
        self.load_seeds()
        import mutators
        mutators.bombs()  # built before measuring, so their construction is not an input's memory
        self.stats["baseline_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        import atexit
        atexit.register(self.flush, True)
        if atheris is not None:
            self.run_atheris(atheris)
        else:
            self.run_random()


# -- the parent: budgets, restarts, the report --------------------------------------------------


def merge(total: dict, part: dict) -> None:
    for k in ("inputs", "format_errors", "items", "seeds"):
        total[k] = total.get(k, 0) + part.get(k, 0) if k != "seeds" else part.get(k, 0)
    for k in ("peak_traced_bytes", "ru_maxrss_kib", "max_input_seconds", "baseline_rss_kib", "live_traced_bytes"):
        if part.get(k, 0) > total.get(k, 0):
            total[k] = part[k]
            if k == "peak_traced_bytes":
                total["peak_traced_input_bytes"] = part.get("peak_traced_input_bytes", 0)
    for table in ("crashes", "hangs", "memory"):
        for key, entry in part.get(table, {}).items():
            have = total.setdefault(table, {}).get(key)
            if have is None:
                total[table][key] = dict(entry)
            else:
                have["count"] += entry["count"]
    total["engine"] = part.get("engine") or total.get("engine")
    total["decoder"] = part.get("decoder") or total.get("decoder")


def run_reader(name: str, budget: float, args) -> dict:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    total: dict = {"reader": name, "inputs": 0, "crashes": {}, "hangs": {}, "memory": {}, "restarts": 0,
                   "killed": []}
    deadline = time.monotonic() + budget
    env = dict(os.environ)
    if name.endswith("@python"):
        env["KREPLICA_DECODE"] = "python"
    else:
        env.pop("KREPLICA_DECODE", None)
    while True:
        left = deadline - time.monotonic()
        if left < 3:
            break
        stats_path = work / f"stats-{name.replace('@', '_')}-{total['restarts']}.json"
        stats_path.unlink(missing_ok=True)
        cmd = [sys.executable, str(HERE / "run.py"), "--child", name, "--budget", str(int(left)),
               "--timeout", str(args.timeout), "--work", str(work), "--stats", str(stats_path),
               "--engine", args.engine, "--seed", str(args.seed + total["restarts"])]
        log = work / f"child-{name.replace('@', '_')}.log"
        with open(log, "ab") as out:
            try:
                rc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=left + 60).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        part = json.loads(stats_path.read_text()) if stats_path.exists() else {}
        merge(total, part)
        if rc == 0 or rc == "timeout":
            break
        # libFuzzer stopped the child: an uncaught hang in C code, an RSS limit, or a crash of
        # the interpreter; the tail of its log says which. Record it and go on.
        tail = log.read_text(errors="replace").splitlines()[-40:]
        why = next((ln for ln in tail if "ERROR: libFuzzer" in ln or "==ERROR" in ln), f"exit {rc}")
        total["killed"].append(why.strip()[:200])
        if not part.get("inputs"):
            total["setup_error"] = "\n".join(tail[-6:])
            break
        if "timeout" in why:
            total["hangs"].setdefault(f"libFuzzer timeout ({why.strip()[:80]})", {"count": 0})["count"] += 1
        elif "out-of-memory" in why or "malloc" in why:
            total["memory"].setdefault(f"libFuzzer {why.strip()[:80]}", {"count": 0})["count"] += 1
        else:
            total["crashes"].setdefault(f"child died: {why.strip()[:80]}", {"count": 0})["count"] += 1
        total["restarts"] += 1
    total["budget_seconds"] = round(budget)
    return total


def table(results: list[dict]) -> str:
    rows = [("reader", "engine", "decoder", "inputs", "crashes", "hangs", "mem>cap", "peak traced MiB",
             "live MiB", "peak RSS MiB", "slowest s")]
    for r in results:
        rows.append((r["reader"], (r.get("engine") or "-").split()[0], r.get("decoder") or "-",
                     f"{r['inputs']:,}", str(sum(e["count"] for e in r["crashes"].values())),
                     str(sum(e["count"] for e in r["hangs"].values())),
                     str(sum(e["count"] for e in r["memory"].values())),
                     f"{r.get('peak_traced_bytes', 0) / 2**20:.1f}", f"{r.get('live_traced_bytes', 0) / 2**20:.1f}",
                     f"{r.get('ru_maxrss_kib', 0) / 1024:.0f}",
                     f"{r.get('max_input_seconds', 0):.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = "\n".join(lines)
    for r in results:
        for table_name in ("crashes", "hangs", "memory"):
            for key, e in r[table_name].items():
                out += f"\n{r['reader']}: {table_name[:-1] if table_name != 'memory' else 'memory'} x{e['count']}: " \
                       f"{key} {e.get('message', '')[:120]} {e.get('reproducer', '')}"
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=600, help="seconds in all, shared by the readers")
    p.add_argument("--reader", action="append", help="a reader (repeatable); default all. "
                   f"Known: {', '.join(reader_names())}")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds one input may take (a hang beyond)")
    p.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    p.add_argument("--work", default="/tmp/kreplica-fuzz", help="corpora, reproducers, child logs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", help="results file (default bench/results/fuzz-<date>.json)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--stats", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        Child(args.child, args.budget, args.timeout, Path(args.work), Path(args.stats), args.seed).main(args.engine)
        return 0
    names = []
    for item in args.reader or reader_names():
        names += [n for n in item.split(",") if n]
    unknown = [n for n in names if n.split("@")[0] not in targets.READERS]
    if unknown:
        p.error(f"unknown reader(s): {', '.join(unknown)}; known: {', '.join(reader_names())}")
    weights = {n: targets.READERS[n.split("@")[0]].weight for n in names}
    scale = args.budget / sum(weights.values())
    results = []
    started = time.time()
    for n in names:
        share = weights[n] * scale
        print(f"fuzzing {n} for {share:.0f} s", file=sys.stderr, flush=True)
        results.append(run_reader(n, share, args))
    doc = {"date": _dt.date.today().isoformat(), "budget_seconds": args.budget,
           "wall_seconds": round(time.time() - started), "timeout_seconds": args.timeout,
           "max_input_bytes": MAX_LEN, "python": sys.version.split()[0],
           "memory_rule": f"traced peak > {MEMORY_ALLOWANCE >> 20} MiB + {MEMORY_RATIO} x input size",
           "readers": results}
    out = Path(args.out) if args.out else RESULTS / f"fuzz-{doc['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(results))
    print(f"\nresults: {out}", file=sys.stderr)
    bad = sum(len(r["crashes"]) + len(r["hangs"]) + len(r["memory"]) for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
