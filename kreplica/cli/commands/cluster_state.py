"""``kreplica cluster-state``: what the controller believed, from ZooKeeper or KRaft evidence."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.options.common import DebugOption, FormatOption
from kreplica.cli.options.sources import (
    POINT_OPTIONS,
    AtOffsetOption,
    AtTimeOption,
    AtZxidOption,
    ChrootOption,
    load_source,
)
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show

app = typer.Typer()


@app.command("cluster-state", cls=command(exclusive=[POINT_OPTIONS]), short_help="The cluster state from a ZooKeeper data directory or KRaft metadata.")
@runs_command
def cluster_state(
    sources: Annotated[list[str], typer.Argument(
        metavar="SOURCE", show_default=False,
        help="A ZooKeeper data directory (or snapshot and log files), or KRaft metadata: a "
             "__cluster_metadata-0 directory, the log directory holding it, or its segments and "
             "*.checkpoint snapshots.")],
    at_zxid: AtZxidOption = None,
    at_time: AtTimeOption = None,
    at_offset: AtOffsetOption = None,
    chroot: ChrootOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Rebuild the cluster state a controller held (cluster id, controller and epoch, brokers alive or
    not, every topic's config and every partition's replicas, leader, leader epoch, ISR and, in
    KRaft, eligible leader replicas and replica directories, pending admin work; in KRaft also the
    rest of the metadata image: features, registered controllers, ACLs, client quotas, SCRAM users
    by name without their secrets, delegation tokens, the next producer id) from a ZooKeeper data directory replayed to --at-zxid/--at-time, or from a KRaft
    metadata log and snapshots replayed to --at-offset/--at-time (Kafka's znodes are read under
    --chroot, or where the tree holds them), and list the partitions in trouble:
    no leader, leader not alive, offline, under-replicated, live ISR empty, under min ISR,
    reassigning, preferred leader not leader. The machine output is one cluster_state object, then
    the findings.

    Exit status: 0 no partition offline or under min ISR, 1 some partition offline or under min ISR
    (or damage found in the evidence), 2 bad usage or unreadable input (--at-offset on ZooKeeper,
    --at-zxid on KRaft, a point before or beyond the evidence), or evidence of no cluster (no Kafka
    znodes, or no broker and no topic), 3 internal error.
    """
    from kreplica.report.results.cluster_state import ClusterStateReport

    state = load_source(sources, at_zxid=at_zxid, at_time=at_time, at_offset=at_offset, chroot=chroot)
    return show(ClusterStateReport(state), output_format)
