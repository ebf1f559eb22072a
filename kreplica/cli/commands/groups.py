"""``kreplica groups``: every consumer group as its coordinator would load it from ``__consumer_offsets``."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.options.sources import AtTimeOption, offset_option, time_option
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError
from kreplica.model.versions import DEFAULT_VERSION

app = typer.Typer()

GroupOption = Annotated[Optional[list[str]], typer.Option(
    "--group", "-g", metavar="GROUP", help="Show only this group (repeatable); a name the evidence does not hold "
                                           "is refused with the names it does.")]
AtOffsetOption = Annotated[Optional[str], typer.Option(
    "--at-offset", metavar="OFFSET",
    help="Replay up to this offset of the __consumer_offsets partition (inclusive); needs the replicas of one "
         "partition. Default: the end of the log.")]
RetentionOption = Annotated[Optional[int], typer.Option(
    "--offsets-retention-minutes", metavar="MINUTES", min=1,
    help="The brokers' offsets.retention.minutes (default for --kafka-version: 10080 from 2.0, 1440 before).")]
ExpiryTimeOption = Annotated[Optional[str], typer.Option(
    "--expiry-time", metavar="TIMESTAMP",
    help="Mark the offsets the coordinator's cleanup would remove at this time: epoch milliseconds or ISO-8601. "
         "Default: --at-time, else the newest record replayed in the partition.")]


@app.command("groups", cls=command(exclusive=[("--at-offset", "--at-time")]),
             short_help="Consumer groups and committed offsets as the group coordinator loads them.")
@runs_command
def groups(
    sources: Annotated[list[str], typer.Argument(
        metavar="SOURCE", show_default=False,
        help="Broker log directories (their __consumer_offsets partitions, and their other partitions to check "
             "offsets against), or __consumer_offsets-N directories.")],
    group: GroupOption = None,
    at_offset: AtOffsetOption = None,
    at_time: AtTimeOption = None,
    offsets_retention_minutes: RetentionOption = None,
    expiry_time: ExpiryTimeOption = None,
    kafka_version: KafkaVersionOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Replay each __consumer_offsets partition as the group coordinator of --kafka-version loads it (the
    coordinator of Kafka 0.11-3.x, or the new one of 4.0) to the end of the log or to --at-offset /
    --at-time: every group (classic, consumer, share or streams) with its protocol, generation or epoch,
    assignor, leader, state and members with their assignments (a streams group: its topology and each
    member's tasks), and its committed offsets per topic-partition with leader epoch, metadata and
    commit time; tombstones applied, transactional commits moved or dropped by their markers (those still
    open are listed as pending), and the offsets the coordinator's next cleanup would expire marked, by
    the rules of that version.

    Where several brokers hold replicas of one partition, the one with the highest log end offset answers
    and every difference between them is listed. Committed offsets are checked against the replicas of
    their topic-partitions found in the log directories given: an offset beyond the log end of every
    replica is an error (the records the consumer read are gone), one below the log start a note.

    Records that do not decode, or of a type or version kreplica does not know, are findings naming the
    segment and byte position, and the replay goes on (a broker's loader fails on the first).

    Exit status: 0 nothing wrong, 1 problems found (records that do not decode, offsets beyond the log end,
    damaged segments), 2 bad usage or unreadable input (a SOURCE that is not a log directory or
    __consumer_offsets-N directory, a group the evidence does not hold, a point before or beyond the
    evidence), 3 internal error.
    """
    from kreplica.analysis.groups.state import partition_groups
    from kreplica.cli.options.names import require_known
    from kreplica.cli.options.sources import check_point
    from kreplica.cli.progress import byte_progress
    from kreplica.model.coordinator.expiry import default_retention_minutes
    from kreplica.model.coordinator.fold import load_group_partition
    from kreplica.model.coordinator.replay import ReplayPoint, coordinator_for
    from kreplica.model.coordinator.sources import LogDirFiles, find_group_sources, group_evidence_span
    from kreplica.report.results.groups import GroupsReport

    point = ReplayPoint(offset_option(at_offset), time_option(at_time))
    evaluation = time_option(expiry_time, "--expiry-time")
    version = kafka_version or DEFAULT_VERSION
    require_paths(sources)
    found = find_group_sources(sources)
    if point.at_offset is not None and len(found.replicas) > 1:
        names = ", ".join(f"__consumer_offsets-{n}" for n in found.replicas)
        raise UsageError(f"an offset names a record of one partition, and the sources hold {names}: give the "
                          "replicas of one", option="--at-offset")
    files = LogDirFiles()
    coordinator = coordinator_for(version)
    total = sum(seg.size for replicas in found.replicas.values() for p, _d in replicas for seg in p.segments)
    with byte_progress("groups", total) as advance:
        loaded = [[load_group_partition(p, d, coordinator, point, checkpoints=files.checkpoints(d), advance=advance)
                   for p, d in replicas] for replicas in found.replicas.values()]
    states = [s for replicas in loaded for s in replicas]
    span = group_evidence_span(states)
    check_point(span, "--at-offset", position=point.at_offset)
    check_point(span, "--at-time", time=point.at_time)
    if group:
        require_known("--group", "group", group, {g.group for s in states for g in s.groups},
                      where="the __consumer_offsets partitions given")
    retention = offsets_retention_minutes or default_retention_minutes(version)
    results = tuple(partition_groups(replicas, version, retention_minutes=retention, expiry_time=evaluation,
                                     at_time=point.at_time, groups=group or None,
                                     data=lambda topic, partition: files.data_replicas(found.data.get((topic, partition),
                                                                                                      ())))
                    for replicas in loaded)
    return show(GroupsReport(results, point), output_format)
