"""Benchmark ``kreplica timeline`` (issue 13, "Scales"): a 1,000,000-transaction ZooKeeper history of
a Kafka cluster, in under a minute with flat memory.

The evidence is written the way ``bench_zookeeper.py`` writes its own (kreplica's writers,
``build_snapshot``, ``build_entry``/``build_txnlog``, logs rolled every 100,000 entries; its
``run_process`` times the commands), but shaped like Kafka's znodes so that every transaction
means something to the timeline: a snapshot holding six registered brokers, a controller and
``--partitions`` partition states; then per ten transactions: four ISR shrinks or expansions by
the leader (plain setData from the leader's session), two controller writes (guarded multis) that
move leadership within the ISR, one that bumps the epoch only, an error txn, a failed multi, and
a session created or closed. Every partition event is classified and written.

Cases, each in a fresh process (min and median of ``--runs``, interleaved), wall and CPU seconds
(user + sys of the process, from ``getrusage``) and peak RSS from ``/usr/bin/time``:

  walk     the analysis alone: ``iter_zookeeper_timeline`` consumed (events counted)
  ndjson   ``kreplica timeline DIR -f ndjson > /dev/null``
  text     ``kreplica timeline DIR -f text > /dev/null`` (the streamed table, ``COLUMNS=160``)

Flat memory: the same cases on a history a tenth as long (``--txns / 10``) must peak at about
the same RSS; both figures are printed. CPU time is the figure to compare on a shared machine
(wall time waits for other processes). ``--tree DIR`` runs another source tree's kreplica (say a
``git worktree`` of an older commit) for before/after figures; ``--label`` names the results file,
``bench/results/timeline-<UTC date>[-label].json``.

Usage::

    python bench/bench_timeline.py                 # 1,000,000 txns (generation ~1 min)
    python bench/bench_timeline.py --txns 100000 --runs 1
    python bench/bench_timeline.py --tree /tmp/kreplica-before --cases walk,ndjson --label before
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

from bench_zookeeper import DATA_DIR, KREPLICA, LOG_ROLL, RESULTS_DIR, SESSION_BASE, T0, run_process  # noqa: E402

BROKERS = 6
CASES = ("walk", "ndjson", "text")
#: the source tree a ``--tree`` walk child imports kreplica from
_TREE_ENV = "KREPLICA_BENCH_TREE"


def _state(leader: int, epoch: int, isr) -> bytes:
    return (b'{"controller_epoch":1,"leader":%d,"version":1,"leader_epoch":%d,"isr":[%s]}'
            % (leader, epoch, b",".join(b"%d" % r for r in isr)))


def generate(out: Path, partitions: int, txns: int) -> Path:
    from kreplica.formats.zookeeper import snapshot as zks
    from kreplica.formats.zookeeper import txnlog as zkl

    d = out / "version-2"
    d.mkdir(parents=True, exist_ok=True)
    topics = max(1, partitions // 100)
    nodes = [zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 3, 0, 0, 0)]
    zxid = 0

    def node(path, data, owner=0, version=0):
        nonlocal zxid
        zxid += 1
        nodes.append(zks.ZNode(path, data, 1, zxid, zxid, T0 + zxid, T0 + zxid, version, 0, 0, owner, zxid))

    for p in ("/brokers", "/brokers/ids", "/brokers/topics", "/admin", "/admin/delete_topics"):
        node(p, None)
    node("/controller_epoch", b"1")
    for b in range(1, BROKERS + 1):
        node(f"/brokers/ids/{b}", b'{"version":5,"host":"h","port":9092}', owner=SESSION_BASE + b)
    node("/controller", b'{"version":2,"brokerid":1}', owner=SESSION_BASE + 1)
    state = {}
    for t in range(topics):
        reps = {p: [(t + p + k) % BROKERS + 1 for k in range(3)] for p in range(100)}
        node(f"/brokers/topics/t{t}", json.dumps({"version": 2, "partitions": {str(p): r for p, r in reps.items()},
                                                   "adding_replicas": {}, "removing_replicas": {}}).encode())
        node(f"/brokers/topics/t{t}/partitions", None)
        for p, r in reps.items():
            node(f"/brokers/topics/t{t}/partitions/{p}", None)
            node(f"/brokers/topics/t{t}/partitions/{p}/state", _state(r[0], 0, r))
            state[(t, p)] = [r[0], 0, list(r), 0, r]         # leader, epoch, isr, version, replicas
    sessions = {SESSION_BASE + b: 18000 for b in range(1, BROKERS + 1)}
    (d / f"snapshot.{zxid:x}").write_bytes(zks.build_snapshot(nodes, sessions=sessions,
                                                              acls={1: [zks.Acl(31, "world", "anyone")]}))
    snap_zxid = zxid
    keys = list(state)
    entries: list[bytes] = []
    first = snap_zxid + 1
    client = SESSION_BASE + 0x1000
    check = zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/controller_epoch", 1), b"")
    for i in range(txns):
        z = snap_zxid + 1 + i
        t = T0 + z * 10
        kind = i % 10
        key = keys[(i * 7919) % len(keys)]
        s = state[key]
        path = f"/brokers/topics/t{key[0]}/partitions/{key[1]}/state"
        if kind <= 5 or kind == 6:
            if kind <= 3:          # the leader shrinks or expands its ISR
                s[2] = [s[0]] if len(s[2]) > 1 else list(s[4])
                session = SESSION_BASE + s[0]
            else:                  # the controller moves leadership within the ISR (or bumps the epoch)
                if kind <= 5 and len(s[2]) > 1:
                    s[0] = s[2][1]
                    s[2] = s[2][1:] + s[2][:1]
                s[1] += 1
                session = SESSION_BASE + 1
            s[3] += 1
            body = zkl.SetDataTxn(path, _state(s[0], s[1], s[2]), s[3])
            if kind <= 3:
                entry = zkl.build_entry(client_id=session, cxid=i, zxid=z, time=t, txn_type=zkl.OP_SET_DATA, body=body)
            else:
                entry = zkl.build_entry(client_id=session, cxid=i, zxid=z, time=t, txn_type=zkl.OP_MULTI,
                                        body=zkl.MultiTxn((check, zkl.SubTxn(zkl.OP_SET_DATA, body, b""))))
        elif kind == 7:
            entry = zkl.build_entry(client_id=SESSION_BASE + 1, cxid=i, zxid=z, time=t, txn_type=zkl.OP_ERROR,
                                    body=zkl.ErrorTxn(-110))
        elif kind == 8:
            entry = zkl.build_entry(client_id=SESSION_BASE + 2, cxid=i, zxid=z, time=t, txn_type=zkl.OP_MULTI,
                                    body=zkl.MultiTxn((zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-103), b""),
                                                       zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-2), b""))))
        elif (i // 10) % 2 == 0:
            client += 1
            entry = zkl.build_entry(client_id=client, cxid=0, zxid=z, time=t, txn_type=zkl.OP_CREATE_SESSION,
                                    body=zkl.CreateSessionTxn(30000))
        else:
            entry = zkl.build_entry(client_id=client, cxid=1, zxid=z, time=t, txn_type=zkl.OP_CLOSE_SESSION,
                                    body=zkl.CloseSessionTxn(()))
        entries.append(entry)
        if len(entries) == LOG_ROLL or i == txns - 1:
            (d / f"log.{first:x}").write_bytes(zkl.build_txnlog(entries))
            first = z + 1
            entries = []
    (out / "manifest.json").write_text(json.dumps({"partitions": partitions, "txns": txns}))
    return d


def child(path: str) -> dict:
    import resource

    tree = os.environ.get(_TREE_ENV)
    if tree:
        sys.path.insert(0, tree)
    from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
    from kreplica.model.zookeeper import find_zk_files

    t0 = time.perf_counter()
    counts: dict[str, int] = {}
    for ev in iter_zookeeper_timeline(find_zk_files([path])):
        name = getattr(ev, "cause", None) or type(ev).__name__
        counts[name] = counts.get(name, 0) + 1
    return {"seconds": time.perf_counter() - t0, "counts": counts,
            "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def _data(partitions: int, txns: int) -> Path:
    out = DATA_DIR / f"timeline-{partitions}-{txns}"
    manifest = out / "manifest.json"
    if not manifest.is_file() or json.loads(manifest.read_text()) != {"partitions": partitions, "txns": txns}:
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        print(f"generating {txns:,} txns over {partitions:,} partitions in {out} ...", file=sys.stderr)
        generate(out, partitions, txns)
        print(f"  done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out / "version-2"


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + sys of the finished child and its waited-for children),
    peak RSS (KiB) and stdout of ``argv``."""
    import resource

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, maxrss, out, _err = run_process(argv)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, maxrss, out


def _case(case: str, data: Path, tree: str | None) -> dict:
    if case == "walk":
        _wall, cpu, maxrss, out = _timed([sys.executable, __file__, "--child", str(data)],
                                         {_TREE_ENV: tree} if tree else {})
        res = json.loads(out)
        res["cpu_seconds"] = cpu
        res["maxrss_kib"] = max(res["maxrss_kib"], maxrss)
        return res
    wall, cpu, maxrss, _ = _timed(["sh", "-c", f'exec "{KREPLICA}" timeline "{data}" -f {case} > /dev/null'],
                                  {"COLUMNS": "160", **({"PYTHONPATH": tree} if tree else {})})
    return {"seconds": wall, "cpu_seconds": cpu, "maxrss_kib": maxrss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--txns", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {','.join(CASES)}")
    ap.add_argument("--sizes", default="tenth,full", help="tenth (--txns / 10), full, or both")
    ap.add_argument("--tree", help="run the kreplica of this source tree (PYTHONPATH) instead of this one")
    ap.add_argument("--label", default="", help="suffix of the results file name (e.g. before, after)")
    ap.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    cases = [c for c in args.cases.split(",") if c]
    if set(cases) - set(CASES):
        ap.error(f"unknown case(s): {', '.join(sorted(set(cases) - set(CASES)))}")
    sizes = [{"tenth": args.txns // 10, "full": args.txns}[s] for s in args.sizes.split(",") if s]
    tree = str(Path(args.tree).resolve()) if args.tree else None
    # children run with a bytecode cache, as a normal install has .pyc files
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(DATA_DIR / "pycache"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    dirs = {txns: _data(args.partitions, txns) for txns in sizes}
    for d in dirs.values():   # warm the page cache
        for p in sorted(d.iterdir()):
            with open(p, "rb", buffering=0) as fh:
                while fh.read(1 << 24):
                    pass
    runs: dict[tuple[str, int], list[dict]] = {(c, t): [] for t in sizes for c in cases}
    for i in range(args.runs):          # interleaved: each round runs every case once
        for txns in sizes:
            for case in cases:
                r = _case(case, dirs[txns], tree)
                runs[(case, txns)].append(r)
                print(f"  round {i + 1}: {case} {txns:,} txns: {r['seconds']:.2f} s wall, "
                      f"{r['cpu_seconds']:.2f} s CPU, {r['maxrss_kib'] / 1024:.0f} MiB", file=sys.stderr)
    results: dict[str, dict] = {}
    print(f"kreplica timeline benchmark: {args.partitions:,} partitions, {BROKERS} brokers; "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.1f}" + (f"; tree {tree}" if tree else ""))
    print(f"{'case':<7} {'txns':>10} {'min s':>8} {'median s':>9} {'min CPU s':>10} {'median CPU s':>13} "
          f"{'txns/CPU s':>11} {'peak RSS MiB':>13}")
    for (case, txns), rs in runs.items():
        secs = [r["seconds"] for r in rs]
        cpu = [r["cpu_seconds"] for r in rs]
        row = {"txns": txns, "min_s": min(secs), "median_s": statistics.median(secs), "min_cpu_s": min(cpu),
               "median_cpu_s": statistics.median(cpu), "maxrss_mib": max(r["maxrss_kib"] for r in rs) / 1024,
               "runs": rs}
        results.setdefault(case, {})[str(txns)] = row
        print(f"{case:<7} {txns:>10,} {row['min_s']:>8.2f} {row['median_s']:>9.2f} {row['min_cpu_s']:>10.2f} "
              f"{row['median_cpu_s']:>13.2f} {txns / row['median_cpu_s']:>11,.0f} {row['maxrss_mib']:>13.0f}")
    walk = runs.get(("walk", sizes[-1]))
    if walk and walk[0].get("counts"):
        print("events of the longest history: " + ", ".join(f"{k} {v:,}" for k, v in sorted(walk[0]["counts"].items())))
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc)
    doc = {"date": stamp.isoformat(timespec="seconds"), "python": platform.python_version(),
           "machine": platform.machine(), "cpus": os.cpu_count(), "loadavg": os.getloadavg(),
           "label": args.label, "tree": tree, "partitions": args.partitions, "results": results}
    name = f"timeline-{stamp:%Y-%m-%d}{'-' + args.label if args.label else ''}.json"
    (RESULTS_DIR / name).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"results: {RESULTS_DIR / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
