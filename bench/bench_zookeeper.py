"""Benchmark the ZooKeeper side of kreplica (issue 5, "Speed"): loading a 1,000,000-znode
snapshot, replaying 1,000,000 transactions on it, and ``kreplica zk dump`` end to end, with peak
memory; against ZooKeeper's own SnapshotFormatter on the same file when Java and the ZooKeeper jar
are installed (Debian: ``apt-get install zookeeper``).

The evidence is generated with kreplica's own writers (``formats.zookeeper.snapshot.
build_snapshot``, ``formats.zookeeper.txnlog.build_entry``/``build_txnlog``) into
``bench/data/zookeeper-<N>/version-2/`` (git-ignored), shaped like a Kafka cluster's tree:

  snapshot   ``/``, ``/zookeeper``, ``/zookeeper/quota``, ``/bench``, 1,000 directories
             ``/bench/dNNN`` and leaves under them up to N znodes in all, each leaf holding a
             ~70-byte JSON document like a partition state; 100 sessions own 1,000 ephemerals.
  logs       N transactions from the snapshot's zxid + 1, rolled every 100,000 like ZooKeeper's
             default snapCount: per ten, six setData on existing leaves, a create and the
             delete of that node, a Kafka-controller multi (check + setData), and alternately an
             error txn or a session created and closed.

What is timed (each in a fresh child process, the cases interleaved run by run; min and median
of ``--runs``):

  load         ``load_zk_state([snapshot file])``: read and seal-check the snapshot, build the tree
               and its digest (no logs)
  replay       ``load_zk_state([data dir])``: the same snapshot, then every transaction applied
               (``replay`` = this minus ``load``)
  cli_cs_snap  ``kreplica cluster-state SNAPDIR -f ndjson > /dev/null`` on a directory holding only
               the snapshot (a symlink), whole process
  cli_cs       ``kreplica cluster-state DIR -f ndjson > /dev/null`` (snapshot + every log)
  cli_dump_snap ``kreplica zk dump SNAPSHOT --payload none -f ndjson > /dev/null`` (1M objects)
  cli_dump     ``kreplica zk dump DIR --payload none -f ndjson > /dev/null`` (replay + 1M objects)
  java_snap    ZooKeeper's own loader on the snapshot: ``FileSnap.deserialize`` into a ``DataTree``
               (``zk-java/ZkLoad.java snap``), whole process
  java_db      ZooKeeper's start-up load of the data dir: ``ZKDatabase.loadDataBase`` over
               ``FileTxnSnapLog`` (snapshot, then every logged txn; ``ZkLoad db``), whole process
  java_fmt     ``java -cp zookeeper.jar SnapshotFormatter SNAPSHOT > /dev/null``
  java_base    ``ZkLoad snap`` on an empty directory: the JVM's own start-up and RSS

The Java cases need Java and the jar (Debian: ``apt-get install -y zookeeper``, 3.8.0);
``zk-java/build.sh`` compiles ZkLoad into ``data/zk-java`` on first use. They are skipped
when either is missing. Ratios printed: kreplica / ZooKeeper wall time (min), and memory per
znode (peak RSS / znodes, and peak RSS minus the interpreter's or JVM's baseline / znodes).

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
ZK_JAVA_SRC = BENCH_DIR / "zk-java"
ZK_JAVA_CLASSES = DATA_DIR / "zk-java"
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
    from kreplica.formats.zookeeper import snapshot as zks
    from kreplica.formats.zookeeper import txnlog as zkl

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


def java_ready() -> bool:
    """Java and ZooKeeper's jar present, ZkLoad compiled (on first use, or when its source changed)."""
    if not (shutil.which("java") and shutil.which("javac") and ZK_JAR.is_file()):
        return False
    cls = ZK_JAVA_CLASSES / "ZkLoad.class"
    src = ZK_JAVA_SRC / "ZkLoad.java"
    if not cls.is_file() or cls.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([str(ZK_JAVA_SRC / "build.sh")], check=True,
                       env=dict(os.environ, ZK_JAVA_BENCH_DIR=str(ZK_JAVA_CLASSES), ZK_JAR=str(ZK_JAR)))
    return True


def snapshot_only_dir(data: Path, snapshot: Path) -> Path:
    """``<data>-snaponly/version-2/`` holding only a symlink to the snapshot (no logs)."""
    d = data.parent.with_name(data.parent.name + "-snaponly") / "version-2"
    d.mkdir(parents=True, exist_ok=True)
    link = d / snapshot.name
    if not link.is_symlink():
        link.symlink_to(snapshot)
    return d.parent


def run_case(case: str, data: Path, snapshot: Path) -> dict:
    if case in ("baseline", "load", "replay"):
        target = snapshot if case == "load" else data
        _, maxrss, out, _ = run_process([sys.executable, __file__, "--child", case, str(target)])
        res = json.loads(out)
        res["maxrss_kib"] = max(res["maxrss_kib"], maxrss)
        return res
    java_cp = f"{ZK_JAVA_CLASSES}:{ZK_JAR}"
    commands = {
        "cli_cs_snap": f'exec "{KREPLICA}" cluster-state "{snapshot_only_dir(data, snapshot)}" -f ndjson > /dev/null',
        "cli_cs": f'exec "{KREPLICA}" cluster-state "{data.parent}" -f ndjson > /dev/null',
        "cli_dump_snap": f'exec "{KREPLICA}" zk dump "{snapshot}" --payload none -f ndjson > /dev/null',
        "cli_dump": f'exec "{KREPLICA}" zk dump "{data}" --payload none -f ndjson > /dev/null',
        "java_snap": f'exec java -cp "{java_cp}" ZkLoad snap "{data}" 2>/dev/null',
        "java_db": f'exec java -cp "{java_cp}" ZkLoad db "{data.parent}" 2>/dev/null',
        "java_base": f'exec java -cp "{java_cp}" ZkLoad snap "{ZK_JAVA_CLASSES / "empty"}" 2>/dev/null',
        "java_fmt": f'exec java -cp "{ZK_JAR}" org.apache.zookeeper.server.SnapshotFormatter '
                    f'"{snapshot}" > /dev/null 2>/dev/null',
    }
    (ZK_JAVA_CLASSES / "empty").mkdir(parents=True, exist_ok=True)
    t0 = os.times()
    wall, maxrss, out, _ = run_process(["sh", "-c", commands[case]])
    t1 = os.times()
    res = {"seconds": wall, "cpu_seconds": (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system),
           "maxrss_kib": maxrss}
    if case.startswith("java_") and case != "java_fmt":
        res["java"] = json.loads(out.strip().splitlines()[-1])
    return res


JAVA_CASES = ("java_base", "java_snap", "java_db", "java_fmt")
#: (kreplica case, ZooKeeper case, what is compared)
RATIOS = (
    ("cli_cs_snap", "java_snap", "cluster-state on the snapshot vs ZooKeeper's snapshot load (whole process)"),
    ("load", "java_snap", "library load_zk_state(snapshot) vs ZooKeeper's snapshot load (whole process)"),
    ("cli_cs", "java_db", "cluster-state on the data dir vs ZKDatabase.loadDataBase (whole process)"),
    ("replay", "java_db", "library load_zk_state(data dir) vs ZKDatabase.loadDataBase (whole process)"),
    ("cli_dump_snap", "java_fmt", "zk dump SNAPSHOT --payload none vs SnapshotFormatter SNAPSHOT"),
    ("cli_dump", "java_fmt", "zk dump DIR (+1M txns) --payload none vs SnapshotFormatter SNAPSHOT"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--txns", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=None, help="default: bench/data/zookeeper-<nodes>")
    ap.add_argument("--only", default="", help="comma-separated cases (baseline,load,replay,cli_cs_snap,cli_cs,"
                                                "cli_dump_snap,cli_dump,java_base,java_snap,java_db,java_fmt)")
    ap.add_argument("--label", default="", help="suffix of the results file name (e.g. before, after)")
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
    # children run with a bytecode cache, as a normal install has .pyc files
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(DATA_DIR / "pycache"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    cases = ["baseline", "load", "replay", "cli_cs_snap", "cli_cs", "cli_dump_snap", "cli_dump"]
    if java_ready():
        cases += list(JAVA_CASES)
    if args.only:
        cases = [c for c in cases if c in args.only.split(",")]
    for p in sorted(data.iterdir()):   # warm page cache
        with open(p, "rb", buffering=0) as fh:
            while fh.read(1 << 24):
                pass
    runs: dict[str, list[dict]] = {c: [] for c in cases}
    for i in range(args.runs):          # interleaved: each round runs every case once
        for case in cases:
            if case in ("baseline", "java_base") and i:
                continue
            runs[case].append(run_case(case, data, snapshot))
            print(f"  round {i + 1}: {case} {runs[case][-1]['seconds']:.2f} s", file=sys.stderr)
    results: dict[str, dict] = {}
    for case in cases:
        secs = [r["seconds"] for r in runs[case]]
        cpu = [r.get("cpu_seconds", 0.0) for r in runs[case]]
        results[case] = {"min_s": min(secs), "median_s": statistics.median(secs), "min_cpu_s": min(cpu),
                         "maxrss_mib": max(r["maxrss_kib"] for r in runs[case]) / 1024, "runs": runs[case]}
    if "load" in results and "replay" in results:
        load, replay = results["load"]["median_s"], results["replay"]["median_s"]
        results["replay_only"] = {"median_s": replay - load, "txns_per_s": args.txns / max(replay - load, 1e-9)}
    base = results.get("baseline", {}).get("maxrss_mib", 0.0)
    jbase = results.get("java_base", {}).get("maxrss_mib", 0.0)

    print(f"kreplica ZooKeeper benchmark: {args.nodes:,} znodes, {args.txns:,} txns; "
          f"snapshot {manifest['bytes'][manifest['snapshot']] / 2**20:.0f} MiB; "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'case':<14} {'min s':>8} {'median s':>9} {'CPU s':>7} {'peak RSS MiB':>13} {'B/znode':>8} "
          f"{'B/znode -base':>14}")
    for case in cases:
        r = results[case]
        b0 = jbase if case.startswith("java_") else base
        per = r["maxrss_mib"] * 2**20 / args.nodes
        net = (r["maxrss_mib"] - b0) * 2**20 / args.nodes
        r["bytes_per_znode"], r["bytes_per_znode_minus_baseline"] = per, net
        print(f"{case:<14} {r['min_s']:>8.2f} {r['median_s']:>9.2f} {r['min_cpu_s']:>7.2f} {r['maxrss_mib']:>13.0f} "
              f"{per:>8.0f} {net:>14.0f}")
    if "replay_only" in results:
        ro = results["replay_only"]
        print(f"replay alone: {ro['median_s']:.2f} s, {ro['txns_per_s']:,.0f} txns/s")
    ratios = []
    for ours, theirs, what in RATIOS:
        if ours in results and theirs in results:
            a, b = results[ours], results[theirs]
            row = {"kreplica": ours, "zookeeper": theirs, "what": what,
                   "time_ratio_min": a["min_s"] / b["min_s"], "time_ratio_median": a["median_s"] / b["median_s"],
                   "rss_ratio": a["maxrss_mib"] / b["maxrss_mib"]}
            ratios.append(row)
            print(f"{ours} / {theirs}: {row['time_ratio_min']:.2f}x time (min; median "
                  f"{row['time_ratio_median']:.2f}x), {row['rss_ratio']:.2f}x peak RSS  -- {what}")
    results["ratios"] = ratios

    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = datetime.now(timezone.utc)
    doc = {"date": stamp.isoformat(timespec="seconds"), "python": platform.python_version(),
           "machine": platform.machine(), "cpus": os.cpu_count(), "loadavg": os.getloadavg(),
           "label": args.label, "manifest": manifest, "results": results}
    (RESULTS_DIR / f"zookeeper-{stamp:%Y-%m-%d}{'-' + args.label if args.label else ''}.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
