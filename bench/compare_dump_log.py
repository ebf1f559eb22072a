"""kreplica against ``kafka-dump-log`` of the newest Kafka, the real tool as its script runs it
(``kafka-run-class.sh``'s JVM options, whole process), on the same segments as ``compare_java.py``
(generated once under ``bench/data/java-compare-<size>/``). The speed anchor of issue 28 §4.

Cases, interleaved (kreplica, kafka-dump-log, ...), ``--runs`` rounds, best wall-clock time of
each, stdout to /dev/null:

  batches   ``kreplica inspect-log --format ndjson``                  vs  ``--files F``
  records   ``kreplica inspect-log --records --payload none ...``     vs  ``--files F --deep-iteration``
  data      ``kreplica inspect-log --records --payload utf8 ...``     vs  ``--deep-iteration --print-data-log``

kafka-dump-log's jars come from Maven Central through ``tests/realkafka/pom.xml`` (cached in
``~/.cache/kreplica/kafka``); needs Java 17 and Maven. Writes
``bench/results/compare_dump_log-<UTC date>[-label].json`` and prints a table.

Usage::

    python bench/compare_dump_log.py --quick            # 64 MiB small and large segments
    python bench/compare_dump_log.py --only small --runs 5
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

from compare_java import (  # noqa: E402
    DATA_DIR, RESULTS_DIR, SEGMENT_NAME, cli_env, code_fingerprint, generate, kreplica_command, loadavg, timed)
from generate_segment import parse_size, size_label  # noqa: E402

from tests.realkafka.jars import java, release  # noqa: E402

VERSION = "4.4.0"
#: kafka-run-class.sh's defaults for a tool: KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS
TOOL_JVM = ("-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
            "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true")
CASES = {
    "batches": (["inspect-log", "--format", "ndjson"], []),
    "records": (["inspect-log", "--records", "--payload", "none", "--format", "ndjson"], ["--deep-iteration"]),
    "data": (["inspect-log", "--records", "--payload", "utf8", "--format", "ndjson"],
             ["--deep-iteration", "--print-data-log"]),
}


def dump_log_command(segment: Path) -> list[str]:
    found = release(VERSION)
    return [java(), *TOOL_JVM, "-Dlog4j2.configurationFile=/dev/null", "-cp", found.classpath(),
            "org.apache.kafka.tools.DumpLogSegments", "--files", str(segment)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="512M")
    ap.add_argument("--quick", action="store_true", help="64 MiB segments instead")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="small,large")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--kreplica", default=None)
    ap.add_argument("--label", default="")
    args = ap.parse_args(argv)
    size = parse_size("64M" if args.quick else args.size)
    ours = kreplica_command(args.kreplica)
    env = cli_env()
    rows = []
    peak_load = loadavg()
    for kind in args.only.split(","):
        segment = DATA_DIR / f"java-compare-{size_label(size)}" / kind / SEGMENT_NAME
        info = generate(kind, size, segment)
        tool = dump_log_command(segment)
        for case in args.cases.split(","):
            kreplica_args, tool_args = CASES[case]
            best_k = best_t = float("inf")
            for _ in range(args.runs):
                seconds, status, _, _ = timed([*ours, *kreplica_args, str(segment)], env)
                assert status in (0, 1), f"kreplica exited {status}"
                best_k = min(best_k, seconds)
                seconds, status, _, _ = timed([*tool, *tool_args])
                assert status == 0, f"kafka-dump-log exited {status}"
                best_t = min(best_t, seconds)
                peak_load = max(peak_load, loadavg())
            rows.append({"kind": kind, "case": case, "bytes": info["bytes"], "batches": info["batches"],
                         "records": info["records"], "kreplica_s": round(best_k, 3),
                         "kafka_dump_log_s": round(best_t, 3), "ratio": round(best_k / best_t, 3)})
            print(f"{kind:6} {case:8} kreplica {best_k:7.2f} s   kafka-dump-log {best_t:7.2f} s   "
                  f"ratio {best_k / best_t:5.2f}", flush=True)
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    out = RESULTS_DIR / f"compare_dump_log-{stamp}{'-' + args.label if args.label else ''}.json"
    out.write_text(json.dumps({"kafka_version": VERSION, "size": size, "runs": args.runs, "peak_load": peak_load,
                               "python": platform.python_version(), "code": code_fingerprint(), "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {out} (peak 1-minute load {peak_load:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
