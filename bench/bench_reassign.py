"""Benchmark: ``plan-reassign``'s planner on the cluster shapes issue 11 measures planners on.

    python bench/bench_reassign.py [--runs 3] [--skip-large]

Layouts are built with Kafka's own placement (tests/builders/reassignment_shapes.py):

* 12 brokers balanced (1,200 partitions, RF 3): rebalance;
* 12 brokers skewed after 6 were added (1,200 partitions on brokers 1-6): add-brokers / rebalance;
* 60 brokers in 5 racks, 6,000 partitions, 12 rack violations, sizes 1 B - 1 GB: rebalance and a
  decommission of two brokers;
* 1,000 brokers in 10 racks, 200,000 partitions: decommission of 20 brokers.

For each: planning time (best of --runs, the planner alone, then the summary), moves, the lower
bound and the ratio, what Kafka's ``--generate`` moves on the same input (seed 0), spreads and rack
violations before and after, disk max/mean. Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kreplica.analysis.reassignment.bounds import summarize_plan  # noqa: E402
from kreplica.analysis.reassignment.planner import plan_reassignment  # noqa: E402
from kreplica.analysis.reassignment.request import build_request  # noqa: E402
from tests.builders import reassignment_shapes as shapes  # noqa: E402


def cases(skip_large: bool):
    yield "12 balanced: rebalance", shapes.balanced(), None, "rebalance", {}
    skewed = shapes.skewed_after_adding()
    yield "12 skewed: add-brokers 7-12", skewed, None, "add-brokers", {"added": ()}
    racked, sizes = shapes.racked_with_violations()
    yield "60/5 racks/6k: rebalance", racked, None, "rebalance", {}
    yield "60/5 racks/6k: rebalance, sizes", racked, sizes, "rebalance", {}
    yield "60/5 racks/6k: decommission 5,17", racked, sizes, "decommission", {"removed": (5, 17)}
    if not skip_large:
        big, _ = shapes.racked_with_violations(n_brokers=1000, n_racks=10, partitions=200_000, violations=0)
        yield "1000/10 racks/200k: decommission 20", big, None, "decommission", {"removed": tuple(range(1, 21))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-large", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, a, sizes, action, kw in cases(args.skip_large):
        request = build_request(a, action, **kw)
        best = None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            plan = plan_reassignment(a, request, sizes)
            elapsed = time.perf_counter() - t0
            best = elapsed if best is None else min(best, elapsed)
        t0 = time.perf_counter()
        s = summarize_plan(a, plan, sizes)
        summary_s = time.perf_counter() - t0
        row = {
            "case": name, "partitions": len(a.partitions), "brokers": len(a.live), "plan_seconds": round(best, 3),
            "summary_seconds": round(summary_s, 3), "moves": s.moves, "lower_bound": s.lower_bound,
            "ratio": round(s.ratio_to_lower_bound, 4) if s.ratio_to_lower_bound is not None else None,
            "kafka_generate_moves": s.kafka_generate_moves,
            "kafka_generate_ratio": round(s.kafka_generate_moves / s.lower_bound, 1) if s.lower_bound else None,
            "leader_changes": s.leader_changes, "leader_change_lower_bound": s.leader_change_lower_bound,
            "replica_spread": [s.before.replica_spread, s.after.replica_spread],
            "leader_spread": [s.before.leader_spread, s.after.leader_spread],
            "rack_violations": [s.before.rack_violations, s.after.rack_violations],
            "disk_max_over_mean": [None if x is None else round(x, 3)
                                   for x in (s.before.disk_max_over_mean, s.after.disk_max_over_mean)],
            "warnings": len(plan.warnings),
        }
        rows.append(row)
        print(f"{name:38} {row['plan_seconds']:7.2f}s  moves {row['moves']:6} / bound {row['lower_bound']:6} "
              f"(x{row['ratio']})  kafka --generate {row['kafka_generate_moves']:7} (x{row['kafka_generate_ratio']} "
              f"of bound)  spread {row['replica_spread']}  leaders {row['leader_spread']}  racks "
              f"{row['rack_violations']}  disk {row['disk_max_over_mean']}", flush=True)
    out = ROOT / "bench" / "results" / f"reassign-{date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"runs": args.runs, "python": sys.version.split()[0], "rows": rows}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
