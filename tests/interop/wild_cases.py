"""The real broker and ZooKeeper data directories of ``../shared/oracle/wild/`` (what independent
code established about their bytes is in its README.md; each repository's SOURCE.json lists its
commit states, log directories and ZooKeeper data directories), and running a command on them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import ORACLE, oracle_dir

WILD = ORACLE / "wild"

#: finding kinds the wild README shows false on every file of the corpus: every segment walks
#: cleanly (CRC valid, no torn or zero-filled tail), and no snapshot's digest disagrees
FALSE_KINDS = frozenset({"crc_mismatch", "truncated_tail", "trailing_zeros", "invalid_length", "zk_digest_mismatch"})


@dataclass(frozen=True)
class WildDir:
    """One data directory of one commit state: ``kind`` is ``kraft`` or ``zookeeper`` for a Kafka
    log directory (by the broker's mode), ``zk-data`` for a ZooKeeper data directory."""

    repo: str
    commit: str
    path: Path
    kind: str

    @property
    def id(self) -> str:
        return f"{self.repo}/{self.commit}/{self.path.relative_to(WILD / self.repo / self.commit)}"


def wild_dir(*parts: str) -> Path:
    """A directory of the corpus (skips outside CI when ``../shared`` is absent)."""
    return oracle_dir("wild", *parts)


def wild_dirs() -> list[WildDir]:
    """Every log directory and ZooKeeper data directory SOURCE.json lists, in repository order
    (empty when the corpus is absent: the tests then skip through :func:`wild_dir`)."""
    out = []
    for source in sorted(WILD.glob("*/SOURCE.json")) if WILD.is_dir() else []:
        doc = json.loads(source.read_text())
        repo = source.parent.name
        for commit in doc["commits"]:
            base = source.parent / commit["folder"]
            for d in commit["kafka_log_dirs"]:
                out.append(WildDir(repo, commit["folder"], base / d["path"],
                                   "kraft" if d["mode"] == "KRaft" else "zookeeper"))
            for d in commit["zookeeper_dirs"]:
                out.append(WildDir(repo, commit["folder"], base / d["path"], "zk-data"))
    return out


@dataclass(frozen=True)
class Ran:
    exit_code: int
    objects: list[dict]
    stdout: str
    stderr: str

    def of_type(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o.get("type") == kind]

    @property
    def finding_kinds(self) -> set[str]:
        return {o["kind"] for o in self.of_type("finding")}


def run(*args: object, fmt: str = "ndjson") -> Ran:
    """``kreplica ARGS -f FMT`` in this process; stdout parsed as ndjson when it is that."""
    result = CliRunner().invoke(app, [*(str(a) for a in args), "-f", fmt])
    objects = [json.loads(line) for line in result.stdout.splitlines()] if fmt == "ndjson" else []
    return Ran(result.exit_code, objects, result.stdout, result.stderr)
