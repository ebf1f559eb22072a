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

Cases, each in a fresh process (min and median of ``--runs``), peak RSS from ``/usr/bin/time``:

  walk     the analysis alone: ``iter_zookeeper_timeline`` consumed (events counted)
  cli      ``kreplica timeline DIR -f ndjson > /dev/null``

Flat memory: the same cases on a history a tenth as long (``--txns / 10``) must peak at about
the same RSS; both figures are printed.

Usage::

    python bench/bench_timeline.py                 # 1,000,000 txns (generation ~1 min)
    python bench/bench_timeline.py --txns 100000 --runs 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

from bench_zookeeper import DATA_DIR, KREPLICA, LOG_ROLL, SESSION_BASE, T0, run_process  # noqa: E402

BROKERS = 6


def _state(leader: int, epoch: int, isr) -> bytes:
    return (b'{"controller_epoch":1,"leader":%d,"version":1,"leader_epoch":%d,"isr":[%s]}'
            % (leader, epoch, b",".join(b"%d" % r for r in isr)))


def generate(out: Path, partitions: int, txns: int) -> Path:
    from kreplica.formats import zookeeper_snapshot as zks
    from kreplica.formats import zookeeper_txnlog as zkl

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

    from kreplica.analysis.timeline_zookeeper import iter_zookeeper_timeline
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


def _case(case: str, data: Path) -> dict:
    if case == "walk":
        _, maxrss, out, _ = run_process([sys.executable, __file__, "--child", str(data)])
        res = json.loads(out)
        res["maxrss_kib"] = max(res["maxrss_kib"], maxrss)
        return res
    wall, maxrss, _, _ = run_process(["sh", "-c", f'exec "{KREPLICA}" timeline "{data}" -f ndjson > /dev/null'])
    return {"seconds": wall, "maxrss_kib": maxrss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--txns", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    rows = []
    for txns in (args.txns // 10, args.txns):
        data = _data(args.partitions, txns)
        for case in ("walk", "cli"):
            runs = [_case(case, data) for _ in range(args.runs)]
            secs = [r["seconds"] for r in runs]
            rows.append((case, txns, min(secs), statistics.median(secs), max(r["maxrss_kib"] for r in runs) / 1024,
                         runs[0].get("counts")))
    print(f"kreplica timeline benchmark: {args.partitions:,} partitions, {BROKERS} brokers")
    print(f"{'case':<6} {'txns':>10} {'min s':>8} {'median s':>9} {'txns/s':>10} {'peak RSS MiB':>13}")
    for case, txns, mn, med, rss, _counts in rows:
        print(f"{case:<6} {txns:>10,} {mn:>8.2f} {med:>9.2f} {txns / med:>10,.0f} {rss:>13.0f}")
    counts = rows[2][5]
    if counts:
        print("events of the long history: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
