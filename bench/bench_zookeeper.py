"""Benchmark the ZooKeeper side of kreplica (issue 5, "Speed"): loading a 1,000,000-znode
snapshot, replaying 1,000,000 transactions on it, and ``kreplica zk dump`` end to end, with peak
memory; against ZooKeeper's own SnapshotFormatter on the same file when Java and the ZooKeeper jar
are installed (Debian: ``apt-get install zookeeper``).

The evidence is generated with kreplica's own writers (``formats.zookeeper_snapshot.
build_snapshot``, ``formats.zookeeper_txnlog.build_entry``/``build_txnlog``) into
``bench/data/zookeeper-<N>/version-2/`` (git-ignored), shaped like a Kafka cluster's tree:

  snapshot   ``/``, ``/zookeeper``, ``/zookeeper/quota``, ``/bench``, 1,000 directories
             ``/bench/dNNN`` and leaves under them up to N znodes in all, each leaf holding a
             ~70-byte JSON document like a partition state; 100 sessions own 1,000 ephemerals.
  logs       N transactions from the snapshot's zxid + 1, rolled every 100,000 like ZooKeeper's
             default snapCount: per ten, six setData on existing leaves, a create and the
             delete of that node, a Kafka-controller multi (check + setData), and alternately an
             error txn or a session created and closed.

What is timed (each in a fresh child process; min and median of ``--runs``):

  load       ``load_zk_state([snapshot file])``: read and seal-check the snapshot, build the tree
             and its digest (no logs)
  replay     ``load_zk_state([data dir])``: the same snapshot, then every transaction applied
             (``replay`` = this minus ``load``)
  cli_dump   ``kreplica zk dump DIR --payload none -f ndjson > /dev/null`` (replay + 1M objects)
  java_fmt   ``java -cp zookeeper.jar SnapshotFormatter SNAPSHOT > /dev/null`` (skipped when
             Java or the jar is missing)

Peak memory is the child's ``ru_maxrss`` (``/usr/bin/time -f %M`` for commands), which includes
mapped file pages of the snapshot and logs; ``baseline`` is an interpreter that has imported
kreplica, so ``maxrss - baseline`` is what the tree costs.

Usage::

    /work/venv/bin/python bench/bench_zookeeper.py                 # generate once (~1 min), then run
    /work/venv/bin/python bench/bench_zookeeper.py --nodes 100000 --txns 100000 --runs 1

Results: a table on stdout and ``bench/results/zookeeper-<UTC date>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / "data"
RESULTS_DIR = BENCH_DIR / "results"
KREPLICA = shutil.which("kreplica", path=str(Path(sys.executable).parent)) or "kreplica"
ZK_JAR = Path("/usr/share/java/zookeeper.jar")
TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
_MAXRSS_TAG = "KBENCH_MAXRSS_KIB="

DIRS = 1000
SESSIONS = 100
EPHEMERALS = 1000
LOG_ROLL = 100_000
T0 = 1_700_000_000_000
SESSION_BASE = 0x100000000000000


# -- generation ---------------------------------------------------------------------------------


def _state(i: int, version: int = 1) -> bytes:
    return (b'{"controller_epoch":7,"leader":%d,"version":1,"leader_epoch":%d,"isr":[%d,%d,%d]}'
            % (i % 6, version, i % 6, (i + 1) % 6, (i + 2) % 6))


def generate(out: Path, nodes: int, txns: int) -> Path:
    """Write ``out/version-2/snapshot.<zxid>`` (``nodes`` znodes) and logs of ``txns`` entries."""
    from kreplica.formats import zookeeper_snapshot as zks
    from kreplica.formats import zookeeper_txnlog as zkl

    d = out / "version-2"
    d.mkdir(parents=True, exist_ok=True)
    leaves = nodes - 4 - DIRS
    if leaves < DIRS:
        raise SystemExit(f"--nodes must be at least {5 + 2 * DIRS}")
    per_dir = [leaves // DIRS + (1 if k < leaves % DIRS else 0) for k in range(DIRS)]
    zxid = 0

    def node(path, data, czxid, *, owner=0, cversion=0, pzxid=None):
        return zks.ZNode(path, data, 1, czxid, czxid, T0 + czxid, T0 + czxid, 0, cversion, 0, owner,
                         czxid if pzxid is None else pzxid)

    # pre-order with parents first; czxids in creation order, the last child's czxid as pzxid
    def tree():
        nonlocal zxid
        total = nodes - 3
        yield zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, 2, 0, 0, total)
        yield node("/bench", b"", 1, cversion=DIRS, pzxid=total)
        zxid = 1
        leaf = 0
        for k in range(DIRS):
            dir_zxid = zxid + 1
            zxid = dir_zxid + per_dir[k]
            yield node(f"/bench/d{k:03d}", b"", dir_zxid, cversion=per_dir[k], pzxid=zxid)
            for j in range(per_dir[k]):
                owner = SESSION_BASE + leaf % SESSIONS if leaf < EPHEMERALS else 0
                yield node(f"/bench/d{k:03d}/n{j:04d}", _state(leaf), dir_zxid + 1 + j, owner=owner)
                leaf += 1
        yield zks.ZNode("/zookeeper", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        yield zks.ZNode("/zookeeper/quota", b"", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    sessions = {SESSION_BASE + s: 30000 for s in range(SESSIONS)}
    snap = zks.build_snapshot(tree(), sessions=sessions, acls={1: [zks.Acl(31, "world", "anyone")]})
    snap_zxid = zxid
    (d / f"snapshot.{snap_zxid:x}").write_bytes(snap)
    del snap

    open_acl = (zks.Acl(31, "world", "anyone"),)
    leaf_paths = [(k, j) for k in range(DIRS) for j in range(per_dir[k])]
    entries: list[bytes] = []
    first = snap_zxid + 1
    client = SESSION_BASE + SESSIONS
    for i in range(txns):
        z = snap_zxid + 1 + i
        t = T0 + snap_zxid + i
        kind = i % 10
        k, j = leaf_paths[(i * 7919) % len(leaf_paths)]
        path = f"/bench/d{k:03d}/n{j:04d}"
        if kind <= 5:
            entry = zkl.build_entry(client_id=SESSION_BASE, cxid=i, zxid=z, time=t, txn_type=zkl.OP_SET_DATA,
                                    body=zkl.SetDataTxn(path, _state(i, i // 10 + 2), i // 10 + 2))
        elif kind == 6:
            entry = zkl.build_entry(client_id=SESSION_BASE, cxid=i, zxid=z, time=t, txn_type=zkl.OP_CREATE,
                                    body=zkl.CreateTxn(f"/bench/d{k:03d}/x{i}", b"{}", open_acl, False, -1))
        elif kind == 7:
            k6, _ = leaf_paths[((i - 1) * 7919) % len(leaf_paths)]
            entry = zkl.build_entry(client_id=SESSION_BASE, cxid=i, zxid=z, time=t, txn_type=zkl.OP_DELETE,
                                    body=zkl.DeleteTxn(f"/bench/d{k6:03d}/x{i - 1}"))
        elif kind == 8:
            multi = zkl.MultiTxn((zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/bench", 1), b""),
                                  zkl.SubTxn(zkl.OP_SET_DATA, zkl.SetDataTxn(path, _state(i, 99), 99), b"")))
            entry = zkl.build_entry(client_id=SESSION_BASE, cxid=i, zxid=z, time=t, txn_type=zkl.OP_MULTI,
                                    body=multi)
        elif (i // 10) % 2 == 0:
            entry = zkl.build_entry(client_id=SESSION_BASE, cxid=i, zxid=z, time=t, txn_type=zkl.OP_ERROR,
                                    body=zkl.ErrorTxn(-110))
        elif (i // 20) % 2 == 0:
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
    manifest = {"nodes": nodes, "txns": txns, "snapshot": f"snapshot.{snap_zxid:x}", "snapshot_zxid": snap_zxid,
                "last_zxid": snap_zxid + txns,
                "bytes": {p.name: p.stat().st_size for p in sorted(d.iterdir())}}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return d


# -- child side: one timed call, result as JSON on stdout ------------------------------------------


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(case: str, path: str) -> dict:
    import kreplica.model.zookeeper as zt

    if case == "baseline":
        return {"seconds": 0.0, "maxrss_kib": _rss_kib()}
    t0, c0 = time.perf_counter(), time.process_time()
    state = zt.load_zk_state([path])
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seconds": elapsed, "cpu_seconds": cpu, "nodes": len(state.nodes), "applied": state.applied,
            "zxid": state.zxid, "findings": len(state.findings), "maxrss_kib": _rss_kib()}


# -- parent side --------------------------------------------------------------------------------


def run_process(argv: list[str]) -> tuple[float, int, str, str]:
    """Wall time, peak RSS (KiB, via /usr/bin/time when present), stdout and stderr of ``argv``."""
    full = [TIME_BIN, "-f", _MAXRSS_TAG + "%M"] + argv if TIME_BIN else argv
    t0 = time.perf_counter()
    proc = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    err = proc.stderr
    maxrss = 0
    lines = err.rstrip().splitlines()
    if lines and lines[-1].startswith(_MAXRSS_TAG):
        maxrss = int(lines[-1][len(_MAXRSS_TAG):])
        err = "\n".join(lines[:-1])
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err[-2000:]}")
    return wall, maxrss, proc.stdout, err


def run_case(case: str, data: Path, snapshot: Path) -> dict:
    if case in ("baseline", "load", "replay"):
        target = snapshot if case == "load" else data
        _, maxrss, out, _ = run_process([sys.executable, __file__, "--child", case, str(target)])
        res = json.loads(out)
        res["maxrss_kib"] = max(res["maxrss_kib"], maxrss)
        return res
    if case == "cli_dump":
        argv = ["sh", "-c", f'exec "{KREPLICA}" zk dump "{data}" --payload none -f ndjson > /dev/null']
    else:  # java_fmt
        argv = ["sh", "-c", f'exec java -cp "{ZK_JAR}" org.apache.zookeeper.server.SnapshotFormatter '
                            f'"{snapshot}" > /dev/null 2>/dev/null']
    wall, maxrss, _, _ = run_process(argv)
    return {"seconds": wall, "maxrss_kib": maxrss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--txns", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=None, help="default: bench/data/zookeeper-<nodes>")
    ap.add_argument("--only", default="", help="comma-separated cases (baseline,load,replay,cli_dump,java_fmt)")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return

    out = args.data or DATA_DIR / f"zookeeper-{args.nodes}"
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else None
    if manifest is None or manifest["nodes"] != args.nodes or manifest["txns"] != args.txns:
        if out.exists():
            shutil.rmtree(out)
        t0 = time.perf_counter()
        print(f"generating {args.nodes:,} znodes and {args.txns:,} txns in {out} ...", file=sys.stderr)
        generate(out, args.nodes, args.txns)
        print(f"  done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        manifest = json.loads(manifest_path.read_text())
    data = out / "version-2"
    snapshot = data / manifest["snapshot"]

    cases = ["baseline", "load", "replay", "cli_dump"]
    if shutil.which("java") and ZK_JAR.is_file():
        cases.append("java_fmt")
    if args.only:
        cases = [c for c in cases if c in args.only.split(",")]
    for p in sorted(data.iterdir()):   # warm page cache
        with open(p, "rb", buffering=0) as fh:
            while fh.read(1 << 24):
                pass
    results: dict[str, dict] = {}
    for case in cases:
        runs = [run_case(case, data, snapshot) for _ in range(1 if case == "baseline" else args.runs)]
        secs = [r["seconds"] for r in runs]
        results[case] = {"min_s": min(secs), "median_s": statistics.median(secs),
                         "maxrss_mib": max(r["maxrss_kib"] for r in runs) / 1024, "runs": runs}
    if "load" in results and "replay" in results:
        load, replay = results["load"]["median_s"], results["replay"]["median_s"]
        results["replay_only"] = {"median_s": replay - load, "txns_per_s": args.txns / max(replay - load, 1e-9)}
    base = results.get("baseline", {}).get("maxrss_mib", 0.0)

    print(f"kreplica ZooKeeper benchmark: {args.nodes:,} znodes, {args.txns:,} txns; "
          f"snapshot {manifest['bytes'][manifest['snapshot']] / 2**20:.0f} MiB; "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"{'case':<12} {'min s':>8} {'median s':>9} {'peak RSS MiB':>13} {'minus baseline':>15}")
    for case in cases:
        r = results[case]
        extra = "" if case in ("baseline", "java_fmt") else f"{r['maxrss_mib'] - base:>15.0f}"
        print(f"{case:<12} {r['min_s']:>8.2f} {r['median_s']:>9.2f} {r['maxrss_mib']:>13.0f} {extra}")
    if "replay_only" in results:
        ro = results["replay_only"]
        print(f"replay alone: {ro['median_s']:.2f} s, {ro['txns_per_s']:,.0f} txns/s")
    if "load" in results:
        print(f"tree memory: {(results['load']['maxrss_mib'] - base) * 2**20 / args.nodes:.0f} bytes per znode "
              "(peak RSS minus baseline, mapped snapshot pages included)")

    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc)
    doc = {"date": stamp.isoformat(timespec="seconds"), "python": platform.python_version(),
           "machine": platform.machine(), "cpus": os.cpu_count(), "manifest": manifest, "results": results}
    (RESULTS_DIR / f"zookeeper-{stamp:%Y-%m-%d}.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
