"""The text report of ``inspect-dir``: the verdict with its counts first, then the partitions,
problems first, and those with nothing to report named in one line when there are many
(a real 151-partition log directory of ``../shared/oracle/wild`` had its two errors at lines 1,310
and 1,352 of 1,381, behind the blocks of the healthy partitions)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.report.text import inspect_dir as text
from tests.builders.replicas import generator


def _dir(root: Path, healthy: int, broken: int = 1) -> Path:
    """A log directory of ``healthy`` clean partitions and ``broken`` with a high watermark past
    their log end (an error)."""
    gen = generator()
    hws = {}
    for n in range(healthy):
        gen.replica(root, 1, [(0, 2, 0, "a")], hw=None, checkpoint=[(0, 0)], topic="orders", partition=n)
        hws[("orders", n)] = 2
    for n in range(broken):
        gen.replica(root, 1, [(0, 2, 0, "b")], hw=None, checkpoint=[(0, 0)], topic="zbroken", partition=n)
        hws[("zbroken", n)] = 9
    (root / "broker-1" / "replication-offset-checkpoint").write_bytes(gen.build_offset_checkpoint(hws))
    return root / "broker-1"


def _text(path: Path) -> list[str]:
    result = CliRunner().invoke(app, ["inspect-dir", str(path), "-f", "text"])
    assert result.exit_code in (0, 1), result.output
    return result.stdout.splitlines()


def test_the_verdict_and_its_counts_come_first_and_problems_before_healthy_partitions(tmp_path: Path) -> None:
    lines = _text(_dir(tmp_path, healthy=text.OK_BLOCKS + 2))
    assert lines[0] == f"PROBLEMS 1 error, 0 warnings in 1 of {text.OK_BLOCKS + 3} partitions"
    first_block = next(i for i, line in enumerate(lines) if line.startswith(("PROBLEMS zbroken", "OK orders")))
    assert lines[first_block].startswith("PROBLEMS zbroken-0")
    # the healthy ones: one line of names, not a block each
    assert not any(line.startswith("OK orders-") for line in lines)
    listed = " ".join(lines[next(i for i, line in enumerate(lines) if line.startswith("OK ")):])
    assert f"{text.OK_BLOCKS + 2} partitions with no error or warning: orders 0-{text.OK_BLOCKS + 1}" in listed


def test_a_few_healthy_partitions_keep_their_blocks(tmp_path: Path) -> None:
    # the counter-case: up to OK_BLOCKS of them are shown block by block
    lines = _text(_dir(tmp_path, healthy=2, broken=0))
    assert lines[0] == "OK no error, no warning in 2 partitions"
    assert [line.split()[1] for line in lines if line.startswith("OK orders-")] == ["orders-0", "orders-1"]
