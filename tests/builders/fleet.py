"""A fleet built from the fixtures: every scenario's brokers, the fixture logs and damaged logs on a
broker 7, two logs spliced, and (where ``../shared/oracle`` is present) the Kafka-written
oracle partitions on a broker 8, as ``ROOT/<broker>/<logdir>/<topic>-0/``."""

from __future__ import annotations

import shutil
from pathlib import Path

from kreplica.formats.logdir.meta_properties import build_meta_properties
from kreplica.formats.logdir.offset_checkpoint import build_offset_checkpoint, parse_offset_checkpoint
from tests.conftest import FIXTURES, ORACLE as SHARED_ORACLE


ORACLE = SHARED_ORACLE / "kafka-java"
OFFSET_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint")


def place(src_log_dir: Path, src_name: str, dst_log_dir: Path, topic: str, broker: int | None = None) -> None:
    """Copy partition ``src_name`` as ``<topic>-0`` with its log directory's files, keys renamed;
    ``broker`` writes a ``meta.properties`` where the source has none."""
    dst_log_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src_log_dir / src_name, dst_log_dir / f"{topic}-0")
    old_topic, _, old_partition = src_name.rpartition("-")
    for name in OFFSET_CHECKPOINTS:
        if (src_log_dir / name).is_file():
            entries = parse_offset_checkpoint((src_log_dir / name).read_bytes(), path=name)
            renamed = {(topic, 0): v for (t, p), v in entries.items() if (t, p) == (old_topic, int(old_partition))}
            (dst_log_dir / name).write_bytes(build_offset_checkpoint(renamed))
    for name in ("meta.properties", ".kafka_cleanshutdown"):
        if (src_log_dir / name).is_file():
            shutil.copy(src_log_dir / name, dst_log_dir / name)
    if broker is not None and not (dst_log_dir / "meta.properties").is_file():
        (dst_log_dir / "meta.properties").write_bytes(build_meta_properties({"version": "0", "broker.id": str(broker)}))


def build_fleet(root: Path) -> dict[str, list[Path]]:
    """The fleet; returns each topic's replica directories in broker order."""
    topics: dict[str, list[Path]] = {}
    for scenario in sorted(p for p in (FIXTURES / "scenarios").iterdir() if p.is_dir()):
        for broker in sorted(scenario.glob("broker-*")):
            dst = root / broker.name / scenario.name
            place(broker, "orders-0", dst, scenario.name)
            topics.setdefault(scenario.name, []).append(dst / f"{scenario.name}-0")
    for source in ("logs", "damaged"):
        for part in sorted(p for p in (FIXTURES / source).iterdir() if p.is_dir()):
            topic = f"{source}.{part.name.rpartition('-')[0]}"
            dst = root / "broker-7" / f"data-{source}"
            place(FIXTURES / source, part.name, dst, topic, broker=7)
            topics[topic] = [dst / f"{topic}-0"]
    # two logs spliced: the last segment holds the offsets of the one before it (checks across segments)
    spliced = root / "broker-7" / "data-spliced"
    place(FIXTURES / "logs", "orders-0", spliced, "damaged.spliced", broker=7)
    shutil.copyfile(spliced / "damaged.spliced-0" / "00000000000000000017.log",
                    spliced / "damaged.spliced-0" / "00000000000000000038.log")
    topics["damaged.spliced"] = [spliced / "damaged.spliced-0"]
    if ORACLE.is_dir():
        for case in sorted(p for p in ORACLE.iterdir() if p.is_dir()):
            (part,) = [p for p in case.iterdir() if p.is_dir()]
            topic = f"oracle.{case.name}"
            dst = root / "8" / f"data-{case.name}"
            place(case, part.name, dst, topic, broker=8)
            topics[topic] = [dst / f"{topic}-0"]
    return topics
