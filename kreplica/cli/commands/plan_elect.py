"""``kreplica plan-elect``: the elections a controller would run, before anyone acts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, SourcesArgument, parse_log_dirs
from kreplica.cli.options.groups import GroupsOption, check_group_sources, group_paths
from kreplica.cli.options.sources import POINT_OPTIONS, AtOffsetOption, AtTimeOption, AtZxidOption, ChrootOption
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError

app = typer.Typer()

UNCLEAN_CHOICES = ("yes", "no", "config")
ALL = "all"


def _brokers(values: list[str] | None, option: str) -> tuple[int, ...]:
    """``5``, ``5,6`` or repeated options; anything else is a one-line usage error."""
    out = []
    for raw in values or ():
        for part in raw.split(","):
            part = part.strip()
            if not part:
                continue
            if not part.lstrip("-").isdigit():
                raise UsageError(f"expected a broker id, got {part!r}", option=option)
            out.append(int(part))
    return tuple(dict.fromkeys(out))


@app.command("plan-elect", cls=command(
    exclusive=[POINT_OPTIONS, *(("--sweep", o) for o in ("--fail", "--controlled-shutdown", "--preferred",
                                                         "--unclean-election", "--reassign-complete",
                                                         "--log-dirs"))],
    needs={"--by-rack": "--sweep", "--output-file": "--log-dirs", "--groups": "--log-dirs"},
    renamed=("--emit-election-json", "--shutdown")),
             short_help="Plan the leader elections a controller would run, and what-if scenarios.")
@runs_command
def plan_elect(
    sources: SourcesArgument,
    fail: Annotated[Optional[list[str]], typer.Option(
        "--fail", metavar="BROKER", help="A broker fails hard (repeatable, or comma-separated).")] = None,
    shutdown: Annotated[Optional[list[str]], typer.Option(
        "--controlled-shutdown", metavar="BROKER",
        help="A broker shuts down under control (repeatable, or comma-separated; handled in the order given).")]
    = None,
    preferred: Annotated[Optional[list[str]], typer.Option(
        "--preferred", metavar="all|PARTITIONS",
        help="A preferred-replica election: for the partitions named (topic-p or topic, comma-separated, "
             "repeatable), or 'all' for every partition not led by its preferred replica.")] = None,
    unclean_election: Annotated[Optional[list[str]], typer.Option(
        "--unclean-election", metavar="all|PARTITIONS",
        help="An admin unclean election (kafka-leader-election --election-type unclean, KIP-460, 2.4+): for "
             "the partitions named (topic-p or topic, comma-separated, repeatable), or 'all' for every "
             "partition without a live leader; unclean election is allowed for them whatever the topic "
             "config says.")] = None,
    reassign_complete: Annotated[bool, typer.Option(
        "--reassign-complete", help="The partitions being reassigned finish: their reassignment elections.")]
    = False,
    unclean_allowed: Annotated[str, typer.Option(
        "--unclean-allowed", metavar="yes|no|config",
        help="Allow unclean leader election: yes, no, or config (the topic config, else the broker default, "
             "else the version's default).")] = "config",
    log_dirs: Annotated[Optional[list[str]], typer.Option(
        "--log-dirs", metavar="BROKER=DIR",
        help="A broker's log directory copy (repeatable): rank each elected partition's candidate leaders by "
             "KIP-966 recovery order and the records each choice would lose.")] = None,
    groups: GroupsOption = None,
    emit_election_json: Annotated[Optional[Path], typer.Option(
        "--output-file", metavar="FILE",
        help="Write kafka-leader-election.sh --path-to-json-file input for the best candidates to FILE (needs "
             "--log-dirs).")] = None,
    sweep: Annotated[Optional[int], typer.Option(
        "--sweep", metavar="N", min=1,
        help="Every combination of up to N failed brokers, ranked by the partitions that go offline, "
             "unclean or under min ISR.")] = None,
    by_rack: Annotated[bool, typer.Option("--by-rack", help="With --sweep: fail whole racks, not brokers.")]
    = False,
    at_zxid: AtZxidOption = None,
    at_time: AtTimeOption = None,
    at_offset: AtOffsetOption = None,
    chroot: ChrootOption = None,
    kafka_version: KafkaVersionOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Say which partitions go offline, who leads each, and which elections are unclean, before
    anyone acts. With no scenario it plans what the controller would do now (an election for every
    offline partition); --fail, --controlled-shutdown, --reassign-complete, --preferred and
    --unclean-election add events, applied in that order. The rules are those of the controller
    of --kafka-version: the ZooKeeper controller (1.1-3.9, default 3.9 for ZooKeeper sources),
    the 0.8-1.0 selectors, or KRaft's
    PartitionChangeBuilder with eligible leader replicas (default current Kafka). Each election gives
    the new leader (-1: offline), ISR, leader epoch and znode version or partition epoch, whether it
    is unclean, and the partition's health. With --log-dirs the candidates of each elected partition
    are ranked (KIP-966: last epoch, then log end offset) with the records the other replicas would
    lose under each, committed or not; --output-file writes the stock tool's input. --sweep N
    lists the blast radius of every combination of up to N failed brokers (or racks with --by-rack).

    With the __consumer_offsets partitions of the --log-dirs (and of --groups SOURCEs), each group's
    committed offset in a partition whose election loses records is joined with it as a
    consumer_impact: what the consumer does on its next fetch per client generation, and the records
    it consumed that the log no longer has.

    Exit status: 0 no election leaves a partition offline or elects uncleanly (sweep: no
    combination harms a partition), 1 some do or a group is known to have consumed lost records, 2
    bad usage or unreadable input (an unknown broker or partition, a point before or beyond the
    evidence, --groups without --log-dirs or a --groups SOURCE without __consumer_offsets
    partitions), 3 internal error.
    """
    from kreplica.cli.options.names import require_choice
    from kreplica.cli.options.sources import load_source

    require_choice("--unclean-allowed", unclean_allowed, UNCLEAN_CHOICES)
    failed = _brokers(fail, "--fail")
    stopping = _brokers(shutdown, "--controlled-shutdown")
    dirs = parse_log_dirs(log_dirs)
    check_group_sources(groups)
    state = load_source(sources, at_zxid=at_zxid, at_time=at_time, at_offset=at_offset, chroot=chroot)
    _check_names(state, failed, stopping, dirs, {"--preferred": preferred, "--unclean-election": unclean_election})

    from kreplica.analysis.election.analysis import analyze_elections
    from kreplica.analysis.election.scenarios import Scenario, ScenarioError
    from kreplica.analysis.groups.committed import committed_offsets
    from kreplica.model.log.broker_replicas import BrokerLogDirs
    from kreplica.report.results.election import ElectionPlanReport, SweepReport

    try:
        if sweep is not None:
            from kreplica.analysis.election.sweep import sweep as run_sweep

            return show(SweepReport(run_sweep(state, sweep, by_rack=by_rack, kafka_version=kafka_version,
                                              unclean=unclean_allowed)), output_format)
        scenario = Scenario(failed, stopping, _partitions(state, preferred), reassign_complete, unclean_allowed,
                            _partitions(state, unclean_election))
        analysis = analyze_elections(state, scenario,
                                     kafka_version, log_dirs=BrokerLogDirs(dirs),
                                     committed=lambda version: committed_offsets(group_paths(dirs.values(), groups),
                                                                                 version))
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    if emit_election_json is not None:
        from kreplica.report.schemas.election import write_election_json

        write_election_json(emit_election_json, analysis.rankings)
    return show(ElectionPlanReport(analysis), output_format)


def _partitions(state, values: list[str] | None):
    """``None`` (not asked), ``()`` (``all``), or the partitions named."""
    from kreplica.analysis.election.scenarios import parse_partition_names

    if values is None:
        return None
    return () if [x.strip() for x in values] == [ALL] else parse_partition_names(state, values)


def _check_names(state, failed, stopping, dirs, partitions: dict[str, list[str] | None]) -> None:
    """Brokers and partitions the options name must be in the cluster state (exit 2 otherwise,
    with the names it has)."""
    from kreplica.cli.options.names import cluster_brokers, require_known

    brokers = cluster_brokers(state)
    for option, given in (("--fail", failed), ("--controlled-shutdown", stopping), ("--log-dirs", sorted(dirs))):
        require_known(option, "broker", given, brokers, where="the cluster state")
    topics = [t.name for t in state.topics]
    names = [*topics, *(f"{t.name}-{p.partition}" for t in state.topics for p in t.partitions)]
    for option, values in partitions.items():
        if values is not None and [x.strip() for x in values] != [ALL]:
            wanted = [n for raw in values for n in (x.strip() for x in raw.split(",")) if n]
            require_known(option, "partition or topic", wanted, names, where="the cluster state")
