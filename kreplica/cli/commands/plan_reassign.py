"""``kreplica plan-reassign``: offline, deterministic, minimal-movement reassignment plans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.options.reassignment import (
    MB,
    action_args,
    check_names,
    executed_replicas,
    load_assignment,
    parse_brokers,
    parse_racks,
    refuse_outside_action,
    replica_sizes,
    split_words,
    topic_list,
)
from kreplica.cli.options.sources import POINT_OPTIONS, AtOffsetOption, AtTimeOption, AtZxidOption, ChrootOption
from kreplica.cli.options.usage import command, given_options
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError

app = typer.Typer()


@app.command("plan-reassign", cls=command(
    exclusive=[POINT_OPTIONS, ("--sizes", "--sizes-from"), ("--seed", "--start-index"),
               *(("--assignment", o) for o in (*POINT_OPTIONS, "--chroot"))],
    needs={"--overwrite": "--output-dir", "--max-bytes": ("--sizes", "--sizes-from")}),
             short_help="Plan replica reassignments offline: minimal moves, racks, balance, "
                                         "Kafka's JSON.")
@runs_command
def plan_reassign(
    ctx: typer.Context,
    words: Annotated[list[str], typer.Argument(
        metavar="[SOURCE...] ACTION [ARG...]", show_default=False,
        help="SOURCE: what cluster-state reads (ZooKeeper data directory, KRaft metadata). ACTION: generate, "
             "decommission BROKER..., add-brokers BROKER..., replace-broker OLD=NEW..., "
             "set-replication-factor N, rebalance, verify.")],
    assignment_file: Annotated[Optional[Path], typer.Option(
        "--assignment", metavar="FILE",
        help="Plan from a version-1 assignment JSON (what kafka-reassign-partitions.sh prints) instead of a "
             "SOURCE; give the live brokers with --brokers.")] = None,
    brokers: Annotated[Optional[str], typer.Option(
        "--brokers", metavar="LIST",
        help="The live brokers replicas may go to, e.g. 1,2,3 or 1-12 (default: the source's live brokers; "
             "brokers being removed are left out, brokers being added are added).")] = None,
    racks: Annotated[Optional[str], typer.Option(
        "--racks", metavar="B:RACK,...", help="Racks of brokers, e.g. 1:use1-az1,2:use1-az2 (adds to or overrides "
                                              "the source's).")] = None,
    disable_rack_aware: Annotated[bool, typer.Option(
        "--disable-rack-aware", help="Ignore racks (as kafka-reassign-partitions.sh --disable-rack-aware).")] = False,
    topics: Annotated[Optional[list[str]], typer.Option(
        "--topics", metavar="T[,T...]",
        help="Topics for generate and set-replication-factor (repeatable or comma-separated; default: all).")]
    = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", help="generate: seed of the random start index and shift Kafka draws per topic; "
                                    "the same seed gives the same plan.")] = 0,
    start_index: Annotated[Optional[int], typer.Option(
        "--start-index", metavar="N", min=0,
        help="generate: a fixed start index for every topic (Kafka's fixedStartIndex: start and shift both N).")]
    = None,
    sizes_file: Annotated[Optional[Path], typer.Option(
        "--sizes", metavar="FILE", help="Replica sizes: the JSON kafka-log-dirs.sh --describe prints.")] = None,
    sizes_from: Annotated[Optional[str], typer.Option(
        "--sizes-from", metavar="ROOT",
        help="Replica sizes summed from copied log directories, laid out as fleet scan takes them "
             "(ROOT/<broker>/<logdir>/<topic>-<partition>/).")] = None,
    max_moves: Annotated[Optional[int], typer.Option(
        "--max-moves", metavar="N", min=1, help="At most N replica moves per phase.")] = None,
    max_bytes: Annotated[Optional[int], typer.Option(
        "--max-bytes", metavar="BYTES", min=1, help="At most this many bytes moved per phase (needs sizes).")] = None,
    phases: Annotated[Optional[int], typer.Option(
        "--phases", metavar="N", min=1, help="Split the plan into N phases of even size.")] = None,
    output_dir: Annotated[Optional[Path], typer.Option(
        "--output-dir", metavar="DIR",
        help="Write proposal.json, rollback.json and phase-N.json (Kafka's reassignment JSON) to DIR, which must "
             "be empty or new.")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite",
        help="Write into a --output-dir that is not empty, removing an earlier plan's proposal.json, rollback.json "
             "and phase-N.json first (nothing else).")] = False,
    reassignment_file: Annotated[Optional[Path], typer.Option(
        "--reassignment-json-file", metavar="FILE",
        help="verify: the reassignment that was executed; each of its partitions is judged.")] = None,
    throttle: Annotated[Optional[float], typer.Option(
        "--throttle", metavar="MB/s", min=0,
        help="Show the throttle configs kafka-reassign-partitions.sh --throttle would set at this rate "
             "(10^6 bytes/s; that tool's --throttle is in bytes/s, and the value to give it is printed with "
             "each phase) and each phase's least duration.")] = None,
    at_zxid: AtZxidOption = None,
    at_time: AtTimeOption = None,
    at_offset: AtOffsetOption = None,
    chroot: ChrootOption = None,
    kafka_version: KafkaVersionOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Plan a partition reassignment from evidence alone (a ZooKeeper or KRaft cluster state, or an
    assignment JSON with --brokers), deterministically and with the fewest moves: every replica that
    can stay stays, each move says why, no new rack violation is made (rebalance removes existing ones
    where racks allow), and replica, preferred-leader and byte counts are balanced. generate is Kafka's
    own AdminUtils placement, reproducible with --seed. verify reports in-flight reassignments (adding
    and removing replicas, catch-up per the ISR, throttles still set).

    Output: move, leader_change and transitions objects (the controller's steps per partition for
    --kafka-version: ZooKeeper up to 2.3, KIP-455, or KRaft), throttle objects with --throttle, then
    one plan summary (moves and bytes per broker, the lower bound and the plan's ratio to it, spreads
    and rack violations before and after, disk max/mean, what Kafka's --generate would move).
    --output-dir writes proposal.json, rollback.json and phase-N.json for kafka-reassign-partitions.sh
    --execute, and names each file written; with --throttle, each phase says the --throttle (bytes/s)
    to give that tool. A --output-dir that is not empty is refused unless --overwrite.

    Exit status: 0 the plan reaches its goals (verify: nothing in flight, no throttle left), 1 a goal
    could not be reached (a rack violation or imbalance a constraint forced; verify: a reassignment in
    progress or different from the file, or throttles left), 2 bad usage or unreadable input (unknown
    broker or topic, replication factor above the broker count, malformed JSON, a point before or
    beyond the evidence), 3 internal error.
    """
    from kreplica.analysis.reassignment import plan as analysis
    from kreplica.analysis.reassignment.placement import PlacementError
    from kreplica.analysis.reassignment.planner import PlanError
    from kreplica.report.results.reassignment import ReassignmentReport

    sources, action, args = split_words(words)
    arguments = action_args(action, args)
    refuse_outside_action(action, given_options(ctx))
    earlier: tuple[Path, ...] = ()
    if output_dir is not None and action != analysis.VERIFY:
        from kreplica.cli.options.reassignment_files import earlier_plan_files

        earlier = earlier_plan_files(output_dir, overwrite)
    broker_list = parse_brokers(brokers, "--brokers") if brokers is not None else None
    rack_map = parse_racks(racks) if racks is not None else {}
    for option, path in (("--assignment", assignment_file), ("--sizes", sizes_file), ("--sizes-from", sizes_from),
                         ("--reassignment-json-file", reassignment_file)):
        if path is not None:
            require_paths([str(path)], option)
    assignment = load_assignment(sources, assignment_file, broker_list, rack_map, at_zxid, at_time, at_offset, chroot)
    check_names(assignment, action, arguments, topic_list(topics), broker_list, rack_map)
    sizes = executed = None
    if action == analysis.VERIFY:
        executed = executed_replicas(reassignment_file)
    else:
        sizes = replica_sizes(assignment, sizes_file, sizes_from)
    try:
        outcome = analysis.plan_reassign(
            assignment, action, sizes=sizes, executed=executed, kafka_version=kafka_version, max_moves=max_moves,
            max_bytes=max_bytes, phases=phases, throttle_rate=round(throttle * MB) if throttle is not None else None,
            brokers=broker_list, racks=rack_map, rack_aware=not disable_rack_aware, topics=topic_list(topics),
            seed=seed, start_index=start_index, **arguments)
    except (PlanError, PlacementError) as exc:
        raise UsageError(str(exc), option=action) from None
    files: list[str] = []
    phase_files: dict[int, str] = {}
    if output_dir is not None and isinstance(outcome, analysis.PlannedReassignment):
        from kreplica.cli.options.reassignment_files import write_plan_files

        files, phase_files = write_plan_files(output_dir, outcome, earlier)
    return show(ReassignmentReport(outcome, tuple(files), phase_files), output_format)
