"""``kreplica plan-reassign``: offline, deterministic, minimal-movement reassignment plans."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Optional

import typer

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.names import choice_message, closest_choice, require_known
from kreplica.cli.options import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.runner import error_line, runs_command
from kreplica.cli.sources import AtOffsetOption, AtTimeOption, AtZxidOption, ChrootOption, load_source
from kreplica.formats.errors import FormatError
from kreplica.report.output import resolve_format

app = typer.Typer()

#: the actions, in the order the help lists them (kreplica.analysis.reassignment.planner.ACTIONS)
ACTIONS = ("generate", "decommission", "add-brokers", "replace-broker", "set-replication-factor", "rebalance",
           "verify")
_BROKER_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
MB = 1_000_000   # --throttle is in MB/s (10^6 bytes)


def parse_brokers(text: str, option: str) -> list[int]:
    """``1,2,3`` or ranges ``1-6,9``; anything else is a one-line usage error (exit 2)."""
    out: list[int] = []
    for part in text.split(","):
        m = _BROKER_RANGE.match(part)
        if not m:
            raise FormatError(f"expected broker ids like 1,2,3 or 1-6, got {part.strip()!r}", field=option)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise FormatError(f"empty broker range {part.strip()!r}", field=option)
        out.extend(range(lo, hi + 1))
    if len(set(out)) != len(out):
        raise FormatError(f"duplicate broker ids in {text!r}", field=option)
    return out


def parse_racks(text: str) -> dict[int, str]:
    """``1:use1-az1,2:use1-az2``."""
    out: dict[int, str] = {}
    for part in text.split(","):
        broker, sep, rack = part.partition(":")
        if not sep or not broker.strip().isdigit() or not rack.strip():
            raise FormatError(f"expected BROKER:RACK pairs like 1:use1-az1, got {part.strip()!r}", field="--racks")
        out[int(broker)] = rack.strip()
    return out


def _split_words(words: list[str]) -> tuple[list[str], str, list[str]]:
    """``[SOURCE...] ACTION [ARG...]``: the first word that is an action splits them. With none,
    the word most like an action (a SOURCE is a path that exists) gets a did-you-mean."""
    import os

    for k, w in enumerate(words):
        if w in ACTIONS:
            return words[:k], w, words[k + 1:]
    for w in words:
        if not os.path.exists(w) and closest_choice(w, ACTIONS) is not None:
            raise FormatError(f"no action: {choice_message(w, ACTIONS)}", field="ACTION")
    raise FormatError(f"no action: expected one of {', '.join(ACTIONS)}", field="ACTION")


def _int(text: str, what: str) -> int:
    if not text.strip().isdigit():
        raise FormatError(f"expected a non-negative integer, got {text!r}", field=what)
    return int(text)


def _action_args(action: str, args: list[str]) -> dict:
    """The action's own arguments: brokers, OLD=NEW pairs, a replication factor."""
    if action in ("generate", "rebalance", "verify"):
        if args:
            raise FormatError(f"{action} takes no arguments (got {' '.join(args)})", field=action)
        return {}
    if not args:
        raise FormatError("missing argument", field=action)
    if action in ("decommission", "add-brokers"):
        brokers = [b for a in args for b in parse_brokers(a, action)]
        return {"removed" if action == "decommission" else "added": brokers}
    if action == "replace-broker":
        pairs = {}
        for a in args:
            old, sep, new = a.partition("=")
            if not sep:
                raise FormatError(f"expected OLD=NEW, got {a!r}", field=action)
            pairs[_int(old, action)] = _int(new, action)
        return {"replace": pairs}
    if len(args) != 1:
        raise FormatError("expected one replication factor", field=action)
    return {"replication_factor": _int(args[0], action)}


def _topics(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [t.strip() for v in values for t in v.split(",") if t.strip()]


def _load(sources: list[str], assignment_file: Optional[Path], brokers: list[int] | None,
          racks: dict[int, str], at_zxid: str | None, at_time: str | None, at_offset: str | None,
          chroot: str | None):
    from kreplica.model.cluster.assignment import assignment_from_cluster_state, assignment_from_entries

    if assignment_file is not None:
        if sources:
            raise FormatError("give either SOURCE or --assignment, not both", field="--assignment")
        entries = _read_reassignment_json(assignment_file)
        if brokers is None:
            brokers = sorted({b for e in entries for b in e.replicas})
            error_line(f"kreplica: note: no --brokers: the brokers in {assignment_file} are taken as live "
                       f"({','.join(map(str, brokers))})")
        return assignment_from_entries(entries, brokers, racks, source=str(assignment_file))
    if not sources:
        raise FormatError("no SOURCE: give a ZooKeeper or KRaft SOURCE, or --assignment FILE with --brokers",
                          field="SOURCE")
    state = load_source(sources, at_zxid=at_zxid, at_time=at_time, at_offset=at_offset, chroot=chroot)
    for f in state.findings:
        if f.is_error:
            error_line(f"kreplica: warning: {f.path}: {f.kind}: {f.message}")
    return assignment_from_cluster_state(state)


def _check_names(assignment, action: str, action_args: dict, topics: list[str] | None,
                 broker_list: list[int] | None, rack_map: dict[int, str]) -> None:
    """The brokers to remove or replace, the topics and the brokers given racks must be ones the
    source (or the plan itself: --brokers, brokers added or replacing) mentions (exit 2)."""
    where = "the assignment" if assignment.source_kind == "assignment" else "the source"
    known = set(assignment.live) | set(assignment.racks) | {b for p in assignment.partitions for b in p.replicas}
    require_known(action, "broker", [*action_args.get("removed", ()), *action_args.get("replace", {})], known,
                  where=where)
    require_known("--topics", "topic", topics or (), assignment.topics, where=where)
    planned = known | set(broker_list or ()) | set(action_args.get("added", ())) \
        | set(action_args.get("replace", {}).values())
    require_known("--racks", "broker", rack_map, planned, where=where)


def _sizes(assignment, sizes_file: Optional[Path], sizes_from: Optional[str]):
    if sizes_file is None and sizes_from is None:
        return None
    if sizes_file is not None and sizes_from is not None:
        raise FormatError("give either --sizes or --sizes-from, not both", field="--sizes")
    from kreplica.model.logdir.replica_sizes import sizes_from_describe, sizes_from_log_dirs

    if sizes_file is not None:
        from kreplica.formats.tools.log_dirs_describe import parse_log_dirs_describe
        from kreplica.formats.mapped import open_buffer

        with open_buffer(sizes_file) as buf:
            replicas, dir_errors = parse_log_dirs_describe(bytes(buf), path=str(sizes_file))
        for e in dir_errors:
            error_line(f"kreplica: warning: {sizes_file}: broker {e.broker} log dir {e.log_dir}: {e.error}")
        sizes = sizes_from_describe(replicas, source=str(sizes_file))
    else:
        from kreplica.pipeline.evidence.layout import discover

        sizes = sizes_from_log_dirs(((d.broker, d.path) for d in discover(sizes_from)), source=sizes_from)
    per_partition = sizes.partition_sizes()
    missing = [p.name for p in assignment.partitions if p.key not in per_partition]
    if missing:
        error_line(f"kreplica: warning: {len(missing)} partition(s) have no size in {sizes.source} "
                   f"(first: {', '.join(missing[:3])}); they count as 0 bytes")
    return per_partition


@app.command("plan-reassign", short_help="Plan replica reassignments offline: minimal moves, racks, balance, "
                                         "Kafka's JSON.")
@runs_command
def plan_reassign(
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
    from kreplica.report import reassignment as report

    sources, action, args = _split_words(words)
    fmt = resolve_format(output_format)
    action_args = _action_args(action, args)
    earlier: tuple[Path, ...] = ()
    if output_dir is not None and action != analysis.VERIFY:
        from kreplica.cli.reassignment_files import earlier_plan_files

        earlier = earlier_plan_files(output_dir, overwrite)
    broker_list = parse_brokers(brokers, "--brokers") if brokers is not None else None
    rack_map = parse_racks(racks) if racks is not None else {}
    for option, path in (("--assignment", assignment_file), ("--sizes", sizes_file), ("--sizes-from", sizes_from),
                         ("--reassignment-json-file", reassignment_file)):
        if path is not None:
            require_paths([str(path)], option)
    assignment = _load(sources, assignment_file, broker_list, rack_map, at_zxid, at_time, at_offset, chroot)
    _check_names(assignment, action, action_args, _topics(topics), broker_list, rack_map)
    sizes = executed = None
    if action == analysis.VERIFY:
        executed = _executed(reassignment_file)
    else:
        sizes = _sizes(assignment, sizes_file, sizes_from)
        if max_bytes is not None and sizes is None:
            raise FormatError("--max-bytes needs replica sizes (--sizes or --sizes-from)", field="--max-bytes")
    try:
        outcome = analysis.plan_reassign(
            assignment, action, sizes=sizes, executed=executed, kafka_version=kafka_version, max_moves=max_moves,
            max_bytes=max_bytes, phases=phases, throttle_rate=round(throttle * MB) if throttle is not None else None,
            brokers=broker_list, racks=rack_map, rack_aware=not disable_rack_aware, topics=_topics(topics), seed=seed,
            start_index=start_index, **action_args)
    except (PlanError, PlacementError) as exc:
        raise FormatError(str(exc), field=action) from None
    files: list[str] = []
    phase_files: dict[int, str] = {}
    if output_dir is not None and isinstance(outcome, analysis.PlannedReassignment):
        from kreplica.cli.reassignment_files import write_plan_files

        files, phase_files = write_plan_files(output_dir, outcome, earlier)
    report.write_outcome(outcome, fmt, files=files, phase_files=phase_files)
    return ExitCode.PROBLEMS if outcome.has_problems else ExitCode.OK


def _executed(reassignment_file: Optional[Path]) -> dict[tuple[str, int], tuple[int, ...]] | None:
    """verify: the replica lists of the reassignment file that was executed, if one is given."""
    if reassignment_file is None:
        return None
    return {(e.topic, e.partition): e.replicas for e in _read_reassignment_json(reassignment_file)}


def _read_reassignment_json(path: Path) -> tuple:
    """The entries of a version-1 reassignment JSON file (``FormatError`` naming the byte)."""
    from kreplica.formats.mapped import open_buffer
    from kreplica.formats.tools.reassignment_json import parse_reassignment_json

    with open_buffer(path) as buf:
        return parse_reassignment_json(bytes(buf), path=str(path))
