"""Benchmark of ``plan-elect --sweep``: the issue-12 target is a 100-broker, 100,000-partition
cluster with N = 2 in under a minute.

    python bench/bench_election_sweep.py [BROKERS] [PARTITIONS] [N]

Builds a ZooKeeper-kind cluster state in memory (replication factor 3, replicas placed
round-robin with a shift as AdminUtils does, every replica in the ISR, min.insync.replicas 2,
five racks) and times :func:`kreplica.analysis.election.sweep.sweep`. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kreplica.analysis.election.sweep import sweep  # noqa: E402
from kreplica.model.cluster import Broker, ClusterState, Controller, Health, PartitionState, Pending, Topic  # noqa: E402


def build(brokers: int, partitions: int) -> ClusterState:
    bs = tuple(Broker(id=b, alive=True, rack=f"rack-{b % 5}", endpoints=(), broker_epoch=b) for b in range(brokers))
    per_topic = 1000
    topics = []
    for t in range(partitions // per_topic):
        parts = []
        for p in range(per_topic):
            first = (t * 7 + p) % brokers
            shift = 1 + (p // brokers) % (brokers - 1)
            replicas = (first, (first + shift) % brokers, (first + 2 * shift) % brokers)
            if len(set(replicas)) < 3:
                replicas = (first, (first + 1) % brokers, (first + 2) % brokers)
            parts.append(PartitionState(p, replicas, (), (), replicas[0], 0, replicas, 1, 0, 0))
        topics.append(Topic(f"topic-{t}", None, {"min.insync.replicas": "2"}, tuple(parts)))
    return ClusterState("zookeeper", "bench", {"zxid": 1}, None, Controller(0, 1), bs, tuple(topics), {}, Pending(),
                        Health())


def main() -> None:
    brokers, partitions, n = (int(x) for x in (sys.argv[1:] + ["100", "100000", "2"][len(sys.argv) - 1:]))
    state = build(brokers, partitions)
    start = time.perf_counter()
    result = sweep(state, n)
    elapsed = time.perf_counter() - start
    print(json.dumps({"brokers": brokers, "partitions": partitions, "n": n, "combinations": result.combinations,
                      "harmful": len(result.results), "seconds": round(elapsed, 2)}))


if __name__ == "__main__":
    main()
