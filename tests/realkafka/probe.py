"""The consumer probe (``ConsumerProbe.java``) run against a live cluster: what a consumer of one
client generation does when it resumes a group's committed offset, by ``auto.offset.reset``.

Each probe is a JVM of its own on ``jars.clients(version)``: the clients alone (2.2 to 4.4), not the
release the brokers run. Its answer is the probe's JSON line with the consumer internals' own
log lines about resets and truncations (``log``) and what they add up to (``reset``: the client
logged a reset by ``auto.offset.reset``; ``truncation_detected``: KIP-320's validation did).
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

from tests.realkafka.jars import Release, clients, java

PROBE_TIMEOUT_S = 120
#: The client generations kreplica tells apart (``kreplica.analysis.consumers.impact``
#: ``CLIENT_GENERATIONS``): before KIP-320 (2.3), 2.3 – 2.5 (before KAFKA-9840/10113, 2.6), and
#: 2.6+ (the release's own clients), each by one kafka-clients version.
PRE_VALIDATION, VALIDATION_BEFORE_2_6 = "2.2.2", "2.5.1"
RESETS = ("earliest", "latest", "none")
#: Kafka 4 brokers refuse the protocol versions of clients before 2.1 (KIP-896).
OLDEST_CLIENT_FOR_4X = (2, 1)
# what the consumer internals log about where the position went (Fetcher 2.x, SubscriptionState,
# FetchCollector 3.5+): kept from the probe's stderr
_TELLING = ("Resetting offset", "out of range", "Truncation detected", "Seeking to", "resetting offset")


def generations(release: Release) -> list[str]:
    """The client versions probed against ``release``: one of each generation it accepts."""
    found = [PRE_VALIDATION, VALIDATION_BEFORE_2_6, release.version]
    if release.major >= 4:
        found = [v for v in found if tuple(map(int, v.split(".")[:2])) >= OLDEST_CLIENT_FOR_4X]
    return found


def probe(version: str, bootstrap: str, group: str, topic: str, partition: int, reset: str,
          join: str = "assign") -> dict:
    """One consumer of kafka-clients ``version`` of ``group`` on ``topic``-``partition``."""
    found = clients(version)
    command = [java(), "-Xmx128m", "-cp", found.classpath(found.classes),
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.consumer=info",
               "ConsumerProbe", f"bootstrap={bootstrap}", f"group={group}", f"topic={topic}",
               f"partition={partition}", f"reset={reset}", f"join={join}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the consumer probe of kafka-clients {version} failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout)[-500:]}")
    answer = json.loads(lines[-1])
    log = [line.split("] ", 1)[-1] for line in done.stderr.splitlines() if any(t in line for t in _TELLING)]
    answer["log"] = log
    answer["reset"] = any("Resetting offset" in line for line in log)
    answer["truncation_detected"] = any("Truncation detected" in line for line in log)
    return answer


def probe_all(versions: list[str], bootstrap: str, groups: list[str], topic: str, partition: int = 0,
              workers: int = 3) -> list[dict]:
    """Every group × version × ``auto.offset.reset``: each probe assigns the partition (no
    group membership, so probes of one group do not rebalance each other)."""
    jobs = [(v, g, r) for g in groups for v in versions for r in RESETS]
    for version in versions:
        clients(version)  # resolve and compile once, not in parallel
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: probe(job[0], bootstrap, job[1], topic, partition, job[2]), jobs))
