"""``kreplica truncate-plan``: what each follower would truncate against a chosen leader."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption
from kreplica.cli.options.groups import GroupsOption, check_group_sources, group_paths
from kreplica.cli.options.output_dirs import (
    OUTPUT_DIR_OPTION,
    OVERWRITE_OPTION,
    listing,
    own_files,
    remove_earlier,
    require_writable_dir,
)
from kreplica.cli.options.protocols import AUTO, ProtocolOption
from kreplica.cli.options.replicas import HwOption, PartitionOption, load_replicas
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError

app = typer.Typer()


@app.command("truncate-plan", cls=command(needs={"--overwrite": "--output-dir"}, renamed=("--export",)),
             short_help="Simulate follower truncation against a chosen leader and list what goes.")
@runs_command
def truncate_plan(
    leader: Annotated[str, typer.Option("--leader", metavar="REPLICA", help="The replica that leads.")],
    followers: Annotated[list[str], typer.Option("--follower", metavar="REPLICA",
                                                 help="A follower replica (repeatable).")],
    protocol: ProtocolOption = AUTO,
    partition: PartitionOption = None,
    hw: HwOption = None,
    kafka_version: KafkaVersionOption = None,
    export: Annotated[Optional[Path], typer.Option(
        "--output-dir", metavar="DIR",
        help="Write the discarded records to DIR as ndjson and as a valid segment file, and name the files written "
             "(DIR/FOLLOWER/PARTITION.records.ndjson and DIR/FOLLOWER/PARTITION/OFFSET.log).")]
    = None,
    groups: GroupsOption = None,
    leader_epoch: Annotated[Optional[int], typer.Option(
        "--leader-epoch", metavar="EPOCH",
        help="The epoch the controller elected the leader at, registered at its log end as Kafka's makeLeader "
             "does. Without it a leader whose latest epoch is older than a follower's is modelled at the lowest "
             "epoch a controller could give it (every replica's latest + 1); a leader already at the newest "
             "epoch leads as its files are.")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an earlier --output-dir of the same partition and followers in DIR (its records "
                            "file and segment files; nothing else).")] = False,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Simulate each follower's truncation against the leader (pre-KIP-101 high-watermark truncation,
    KIP-101, KIP-279's iterative exchange, the 2.8+ diverging-epoch fetch, and the out-of-range paths),
    list what it would discard, say whether any of it was committed (below a high watermark recorded on
    any replica) and which other replica still holds identical batches, and name transactions whose
    markers go. --output-dir writes the discarded records so they can be re-produced, and refuses to write
    over an earlier export unless --overwrite.

    The findings of the replicas' logs that bear on the plan (errors, warnings about epochs) come first.

    With the __consumer_offsets partitions of the replicas' log directories (and of --groups SOURCEs), each group's committed
    offset in a partition that a follower truncates is joined with it as a consumer_impact: what the consumer does on its
    next fetch per client generation, and the records it consumed that the log no longer has.

    Exit status: 0 nothing committed is lost, 1 committed data would be lost, a log has error findings or
    a group is known to have consumed lost records, 2 bad usage or unreadable input (a --groups SOURCE
    without __consumer_offsets partitions), 3 internal error.
    """
    from kreplica.analysis.consumers.truncation import analyze_truncations
    from kreplica.analysis.groups.committed import committed_offsets
    from kreplica.analysis.replication.truncation import resolve_protocol
    from kreplica.report.results.replication import TruncationReport

    proto, version = resolve_protocol(protocol, kafka_version)
    check_group_sources(groups)
    if export is not None:
        require_writable_dir(export, OUTPUT_DIR_OPTION)
    replicas = load_replicas([leader, *followers], partition, hw)
    earlier = () if export is None else _earlier_export(export, replicas, overwrite)
    if leader_epoch is not None and leader_epoch < 0:
        raise UsageError(f"{leader_epoch}: a leader epoch is 0 or more", option=LEADER_EPOCH_OPTION)
    found = analyze_truncations(replicas, protocol=proto, kafka_version=version, committed=lambda: committed_offsets(
        group_paths(dict.fromkeys(r.log_dir.path for r in replicas), groups), version), leader_epoch=leader_epoch)
    if leader_epoch is not None:
        _check_leader_epoch(leader_epoch, found.plans, version)
    exported: dict[str, tuple[str, ...]] = {}
    if export is not None:
        from kreplica.report.schemas.salvage import write_truncation_export

        remove_earlier(earlier)
        exported = write_truncation_export(found.plans, export, replicas[0].name)
    return show(TruncationReport(tuple(replicas), found.plans, exported, found.impacts), output_format)


LEADER_EPOCH_OPTION = "--leader-epoch"


def _check_leader_epoch(leader_epoch: int, plans, version) -> None:
    """A given epoch the leader could not have been elected at is refused (exit 2)."""
    from kreplica.model.versions import Feature

    if any(p.elected is not None and p.elected.given for p in plans):
        return
    if not version.has(Feature.LEADER_REGISTERS_EPOCH_AT_LOG_END):
        raise UsageError(f"{leader_epoch}: Kafka {version} registers a new leader's epoch only with its first write "
                         "(KAFKA-7415, from 2.1), so the epoch changes nothing", option=LEADER_EPOCH_OPTION)
    raise UsageError(f"{leader_epoch}: not above every replica's latest epoch, and a controller elects a new leader "
                     "at a newer one (kreplica epochs lists them)", option=LEADER_EPOCH_OPTION)


def _earlier_export(export: Path, replicas, overwrite: bool) -> tuple[Path, ...]:
    """An earlier export of this partition for these followers in ``export``: refused (exit 2,
    naming its files) unless ``overwrite``, which returns its files to remove before writing."""
    from kreplica.report.schemas.salvage import earlier_export_files

    partition = replicas[0].name
    earlier = own_files(earlier_export_files(export, [r.label for r in replicas[1:]], partition), export,
                        OUTPUT_DIR_OPTION)
    if earlier and not overwrite:
        held = listing(str(p.relative_to(export)) for p in earlier)
        raise UsageError(f"holds an earlier export of {partition} ({held}); give {OVERWRITE_OPTION} to replace it",
                          path=str(export), option=OUTPUT_DIR_OPTION)
    return earlier
