"""``kreplica timeline``: every leader, leader-epoch and ISR change with its cause, from ZooKeeper
or KRaft evidence, optionally joined with replica data."""

from __future__ import annotations

import re
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, SourcesArgument, parse_log_dirs, require_paths
from kreplica.cli.options.groups import GroupsOption, check_group_sources, group_paths
from kreplica.cli.options.sources import ChrootOption, chroot_option, time_option, unreadable
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError

app = typer.Typer()

_PARTITION = re.compile(r"^(.+)-(\d+)$")
#: a plain integer with at least this many digits is epoch milliseconds (1973 on), not a position
_MS_DIGITS = 12


def point_option(text: str | None, option: str) -> tuple[int | None, int | None]:
    """``(position, time)`` from ``--from``/``--to``: ``0x…`` hex or a decimal under 12 digits is a
    zxid (ZooKeeper) or offset (KRaft); a 12-digit-or-longer integer is epoch milliseconds and
    anything else must be ISO-8601 (UTC when no offset is given). Bad text exits 2."""
    if text is None:
        return None, None
    t = text.strip().lower()
    try:
        if t.startswith("0x"):
            return int(t, 16), None
        if t.isdigit() and len(t) < _MS_DIGITS:
            return int(t), None
    except ValueError:
        raise UsageError(f"expected a zxid or offset (0xb6, 182) or a time (epoch ms, ISO-8601), got {text!r}",
                          option=option) from None
    return None, time_option(text, option)


def _partitions(values: list[str] | None) -> frozenset[str] | None:
    if not values:
        return None
    for v in values:
        if not _PARTITION.match(v):
            raise UsageError(f"expected TOPIC-PARTITION such as orders-0, got {v!r}", option="--partition")
    return frozenset(values)


def _text_only(per_partition: bool, requested) -> None:
    """``--per-partition`` shapes the text tables only: with machine output it would be ignored, so
    it is refused (the format as the seam resolves it: ndjson when stdout is not a terminal)."""
    from kreplica.report.output.formats import OutputFormat, resolve_format

    chosen = resolve_format(requested)
    if per_partition and chosen is not OutputFormat.text:
        raise UsageError(f"applies to text output, not --format {chosen.value} (give -f text)", option="--per-partition")


@app.command("timeline", cls=command(needs={"--groups": "--log-dirs"}),
             short_help="Every leader, epoch and ISR change with its cause, from ZooKeeper or KRaft.")
@runs_command
def timeline(
    sources: SourcesArgument,
    partition: Annotated[Optional[list[str]], typer.Option(
        "--partition", "-p", metavar="TOPIC-P",
        help="Only this partition's events (broker and controller events stay). Repeatable.")] = None,
    broker: Annotated[Optional[list[int]], typer.Option(
        "--broker", "-b", metavar="B",
        help="Only events involving this broker: as leader, in the ISR or the replicas, its own registration, "
             "or as controller. Repeatable.")] = None,
    from_: Annotated[Optional[str], typer.Option(
        "--from", metavar="TIME|ZXID",
        help="Start here: the state at this point becomes the 'snapshot' events. A zxid or offset (0xb6, 182) "
             "or a time (epoch ms with 12+ digits, or ISO-8601, UTC by default). Default: the oldest snapshot "
             "(the empty tree when the ZooKeeper logs begin before it with the ensemble's first transaction, "
             "zxid 0x1 or 0x100000001), or the start of a KRaft log that begins at offset 0.")] = None,
    to: Annotated[Optional[str], typer.Option(
        "--to", metavar="TIME|ZXID", help="Stop after this zxid, offset or time (inclusive). Default: the end.")] = None,
    log_dirs: Annotated[Optional[list[str]], typer.Option(
        "--log-dirs", metavar="BROKER=DIR",
        help="A broker's log directory: join each partition's leader epochs with the offsets they wrote "
             "there (epoch_evidence), report epochs no replica holds, zombie epochs the metadata never "
             "granted, and what each unclean election lost. Repeatable.")] = None,
    groups: GroupsOption = None,
    per_partition: Annotated[bool, typer.Option(
        "--per-partition", help="Text output: one table per partition instead of one time-ordered table.")] = False,
    chroot: ChrootOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Tell what happened, in order: from a ZooKeeper snapshot and its transaction logs (or a KRaft
    metadata log), every change of a partition's leader, leader epoch or ISR as a partition_event
    with the cause the evidence shows (created, leader_election, unclean_leader_election,
    isr_shrink or isr_expand by the leader or the controller, controlled_shutdown, reassignment,
    preferred_election, deleted; snapshot for the state the history starts from; unknown where the
    evidence cannot tell), broker registrations and their end (session closed by the broker, or
    expired), controller changes, and config changes of topics, brokers and the cluster default
    (config_event: key, value before and after; who: the active controller that wrote the KRaft
    record, which carries no principal, or the ZooKeeper session of the write;
    min.insync.replicas and unclean.leader.election.enable changes are notable), each with its
    position (zxid or metadata offset) and time.
    With --log-dirs the leader epochs are joined with the replicas' data. A ZooKeeper data directory
    without transaction logs is replayed from snapshot to snapshot (a coarser history: changes
    between two snapshots are not seen). The last object is a timeline_summary (its resolution,
    unclean elections, notable config changes, offline periods, epochs without data, zombie epochs).

    With the __consumer_offsets partitions of the --log-dirs (and of --groups SOURCEs), each group's
    committed offset in a partition an unclean election lost records of is joined with it as a
    consumer_impact: what the consumer does on its next fetch per client generation, and the records
    it consumed that the log no longer has.

    Exit status: 0 nothing wrong, 1 an unclean election, an offline period, a zombie epoch, data
    lost, damage found in the evidence, or a group known to have consumed lost records, 2 bad usage
    or unreadable input (--from or --to before or beyond the evidence, a --partition or --broker it
    never mentions, --groups without --log-dirs or a --groups SOURCE without __consumer_offsets
    partitions), or a history with no Kafka metadata in it, 3 internal error.
    """
    from kreplica.analysis.groups.committed import committed_offsets
    from kreplica.analysis.timeline.analysis import TimelineAnalysis, iter_timeline
    from kreplica.cli.options.names import sorted_names, unknown_name
    from kreplica.cli.options.sources import refuse_empty_history, timeline_evidence
    from kreplica.cli.progress import position_progress
    from kreplica.model.log.broker_replicas import BrokerLogDirs
    from kreplica.report.results.timeline import TimelineReport

    _text_only(per_partition, output_format)
    start, stop = point_option(from_, "--from"), point_option(to, "--to")
    wanted = _partitions(partition)
    dirs = parse_log_dirs(log_dirs)
    root = chroot_option(chroot)
    require_paths(sources)
    check_group_sources(groups)
    try:
        kind, files = timeline_evidence(sources, start, stop, root)
        walk = refuse_empty_history(iter_timeline(kind, files, start, stop, chroot=root), kind)
        replicas = BrokerLogDirs(dirs).partitions()
    except OSError as exc:
        raise unreadable(exc) from exc
    with position_progress("timeline", _evidence_bytes(files), lambda: _positions(kind, files)) as reached:
        if reached is not None:
            walk = _reporting(walk, reached)
        # nothing is printed until every partition and broker named has appeared in the history
        analysis = TimelineAnalysis(walk, partitions=wanted, brokers=frozenset(broker) if broker else None,
                                    replicas=replicas,
                                    committed=lambda: committed_offsets(group_paths(dirs.values(), groups)),
                                    unknown=lambda what, name, seen: unknown_name(f"--{what}", what, name,
                                                                                  sorted_names(seen)))
        return show(TimelineReport(analysis, kind, per_partition=per_partition), output_format)


def _evidence_bytes(files) -> int:
    """The bytes of a history's files (ZooKeeper snapshots and logs, KRaft snapshots and segments)."""
    import os

    paths = ([f.path for f in (*files.snapshots, *files.logs)] if hasattr(files, "logs")
             else [p for *_, p in files.snapshots] + [p for _, p in files.segments])
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))


def _positions(kind: str, files) -> tuple[int | None, int | None]:
    from kreplica.model.cluster.span import kraft_span, zookeeper_span

    span = zookeeper_span(files) if kind == "zookeeper" else kraft_span(files)
    return span.first_position, span.last_position


def _reporting(walk, reached):
    """``walk`` unchanged, telling ``reached`` the position of each event it passes on."""
    for item in walk:
        position = getattr(item, "position", None)
        if isinstance(position, int):
            reached(position)
        yield item
