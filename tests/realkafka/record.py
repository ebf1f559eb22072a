"""Record the real-cluster corpus: ``python -m tests.realkafka.record`` runs every scenario on
every release and mode it is recorded for, into ``fixtures/real-kafka/<scenario>-<mode>-<version>/``
(``--scenario``, ``--kafka-version`` and ``--mode`` pick fewer). Needs Java and Maven; takes a
few minutes a recording. A recording that fails leaves nothing behind in the corpus."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from tests.realkafka.jars import release
from tests.realkafka.scenarios import SCENARIOS, run

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real-kafka"
# what the corpus holds: each scenario on current Kafka (KRaft) and on 3.9, the last release with
# both modes, in each; the leader killed under acks=1 also on the older generations that still
# start on Java 17 (2.8, 3.0: ZooKeeper mode), for the rules that changed across versions
RECORDED = [(scenario, mode, version) for scenario in SCENARIOS
            for mode, version in (("kraft", "4.4.0"), ("kraft", "3.9.2"), ("zookeeper", "3.9.2"))]
RECORDED += [("leader-killed-acks1", "zookeeper", version) for version in ("3.0.2", "2.8.2")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.realkafka.record", description=__doc__)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    parser.add_argument("--kafka-version", action="append")
    parser.add_argument("--mode", choices=("kraft", "zookeeper"), action="append")
    parser.add_argument("--out", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
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
        lines.append(f"| `{name}-{mode}-{version}` | Kafka {version}, {_MODES[mode]}: {SCENARIOS[name].summary} |")
    return "\n".join(lines) + "\n"


_MODES = {"kraft": "KRaft (3 controllers, 3 brokers)", "zookeeper": "ZooKeeper mode (ZooKeeper and 3 brokers)"}


def write_readme(corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "README.md").write_text(readme())


if __name__ == "__main__":
    sys.exit(main())
