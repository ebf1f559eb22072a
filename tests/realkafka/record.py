"""Record the real-cluster corpus: ``python -m tests.realkafka.record`` runs every scenario on
every release and mode it is recorded for, into ``fixtures/real-kafka/<scenario>-<mode>-<version>/``
(``--scenario``, ``--kafka-version`` and ``--mode`` pick fewer). Needs Java and Maven; takes a
few minutes a recording. A recording that fails leaves nothing behind in the corpus.

``--redump`` starts no cluster: it remakes each committed recording's ``<point>/dump-log/`` from
its evidence with the release named in its ``recording.json`` (the same picks apply)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.realkafka.jars import release, release_jars
from tests.realkafka.recording import dump_logs
from tests.realkafka.scenarios import SCENARIOS, run

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real-kafka"
# what the corpus holds: each scenario on current Kafka (KRaft) and on 3.9, the last release with
# both modes, in each; the leader killed under acks=1 also on the older generations that still
# start on Java 17 (2.8, 3.0: ZooKeeper mode), for the rules that changed across versions
RECORDED = [(scenario, mode, version) for scenario in SCENARIOS if scenario not in ("consumer-after-unclean", "elr-min-isr")
            for mode, version in (("kraft", "4.4.0"), ("kraft", "3.9.2"), ("zookeeper", "3.9.2"))]
RECORDED += [("leader-killed-acks1", "zookeeper", version) for version in ("3.0.2", "2.8.2")]
# eligible leader replicas are Kafka 4's (KIP-966)
RECORDED += [("elr-min-isr", "kraft", "4.4.0")]
# consumers of each client generation after an unclean election: KRaft on current Kafka and on 3.9
RECORDED += [("consumer-after-unclean", "kraft", version) for version in ("4.4.0", "3.9.2")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.realkafka.record", description=__doc__)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--kafka-version", action="append")
    parser.add_argument("--mode", choices=("kraft", "zookeeper"), action="append")
    parser.add_argument("--out", type=Path, default=CORPUS)
    parser.add_argument("--redump", action="store_true",
                        help="remake the recordings' dump-log/ from their evidence; no cluster is run")
    args = parser.parse_args(argv)
    if args.redump:
        return redump(args.out, args.scenario, args.mode, args.kafka_version)
    chosen = [(s, m, v) for s, m, v in RECORDED
              if (not args.scenario or s in args.scenario) and (not args.mode or m in args.mode)
              and (not args.kafka_version or v in args.kafka_version)]
    for name, mode, version in chosen:
        target = args.out / f"{name}-{mode}-{version}"
        with tempfile.TemporaryDirectory(prefix="kreplica-real-kafka-") as work:
            staged = Path(work) / "recording"
            run(SCENARIOS[name], release(version), mode, Path(work) / "cluster", staged)
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(staged, target)
        print(f"recorded {target}", file=sys.stderr)
    write_readme(args.out)
    return 0


def redump(corpus: Path, scenarios: list[str] | None = None, modes: list[str] | None = None,
           versions: list[str] | None = None, workers: int = 2) -> int:
    """Each committed recording's ``<point>/dump-log/`` made again from its evidence (``dump_logs``
    with the recording's release and topics), a point's whole directory replaced only once its
    dumps are all written."""
    jobs = []
    for described in sorted(corpus.glob("*/recording.json")):
        recording = json.loads(described.read_text())
        if ((scenarios and recording["scenario"] not in scenarios) or (modes and recording["mode"] not in modes)
                or (versions and recording["kafka_version"] not in versions)):
            continue
        found = release_jars(recording["kafka_version"])
        jobs += [(described.parent / point, found, recording["topics"]) for point in recording["points"]]

    def one(job) -> Path:
        directory, found, topics = job
        staged = directory / "dump-log.new"
        shutil.rmtree(staged, ignore_errors=True)
        dump_logs(directory, found, topics, into=staged)
        shutil.rmtree(directory / "dump-log", ignore_errors=True)
        staged.rename(directory / "dump-log")
        return directory

    with ThreadPoolExecutor(max_workers=workers) as pool:  # each dump is a JVM of its own
        for directory in pool.map(one, jobs):
            print(f"redumped {directory}", file=sys.stderr)
    return 0


def readme() -> str:
    """The corpus's README: what each recording holds and the command that remakes it."""
    lines = ["# Real-cluster corpus", "",
             "Incidents caused on real Kafka clusters (127.0.0.1, jars from Maven Central) by",
             "`tests/realkafka/scenarios.py`, each recorded with the evidence a responder would copy, Kafka's",
             "own account at each point and the script's log (layout: `tests/realkafka/recording.py`).",
             "Remade by `python -m tests.realkafka.record` (Java and Maven needed; a few minutes a",
             "recording); judged by `tests/interop/test_real_kafka.py`.", "",
             "| recording | what happened |", "| --- | --- |"]
    for name, mode, version in RECORDED:
        scenario = SCENARIOS[name]
        cluster = _MODES[mode].format(controllers=scenario.kraft_controllers, brokers=scenario.brokers)
        lines.append(f"| `{name}-{mode}-{version}` | Kafka {version}, {cluster}: {scenario.summary} |")
    return "\n".join(lines) + "\n"


_MODES = {"kraft": "KRaft ({controllers} controllers, {brokers} brokers)",
          "zookeeper": "ZooKeeper mode (ZooKeeper and {brokers} brokers)"}


def write_readme(corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "README.md").write_text(readme())


if __name__ == "__main__":
    sys.exit(main())
