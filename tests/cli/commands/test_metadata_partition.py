"""``--partition __cluster_metadata-0`` with a KRaft node's metadata directory: the replica
commands read the metadata log as the partition directory it is, as when it is named itself
(fixtures/real-kafka: controllers 1 and 2 after the active controller was killed)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import RECORDED

EVIDENCE = RECORDED / "controller-failover-kraft-4.4.0" / "after-failover" / "evidence"
NODES = [str(EVIDENCE / f"node-{n}" / "metadata") for n in (1, 2)]


def run(*args: str):
    return CliRunner().invoke(app, [*args, "-f", "ndjson"])


def test_diverge_reads_the_metadata_log_named_by_partition() -> None:
    by_name = run("diverge", *NODES, "--partition", "__cluster_metadata-0")
    direct = run("diverge", *[f"{n}/__cluster_metadata-0" for n in NODES])
    assert by_name.exit_code in (0, 1) and by_name.exit_code == direct.exit_code, by_name.output
    (found,) = [json.loads(line) for line in by_name.stdout.splitlines()]
    assert found["type"] == "divergence" and found["partition"] == "__cluster_metadata-0"
    assert by_name.stdout == direct.stdout


def test_a_partition_the_metadata_directory_does_not_hold_is_still_refused() -> None:
    refused = run("diverge", *NODES, "--partition", "orders-0")
    assert refused.exit_code == 2 and "orders-0" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
