"""``plan-reassign``'s words and options: ``[SOURCE...] ACTION [ARG...]`` split and parsed, the
broker lists and racks, and its inputs loaded: the assignment (a cluster state, or an assignment
JSON with ``--brokers``), the replica sizes (``--sizes``, ``--sizes-from``) and, for ``verify``,
the reassignment that was executed; bad text, a name the source does not mention or a missing
size is a one-line error (exit 2) or a warning on stderr."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from kreplica.cli.options.names import choice_message, closest_choice, require_known
from kreplica.cli.options.sources import load_source
from kreplica.cli.runner import error_line
from kreplica.formats.usage import UsageError
from kreplica.formats.tools.reassignment_json import read_reassignment_json

#: the actions, in the order the help lists them (kreplica.analysis.reassignment.planner.ACTIONS)
ACTIONS = ("generate", "decommission", "add-brokers", "replace-broker", "set-replication-factor", "rebalance",
           "verify")
_BROKER_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
MB = 1_000_000   # --throttle is in MB/s (10^6 bytes)
VERIFY = "verify"
#: options that only some actions act on (verify reads only the reassignment executed; only
#: generate draws Kafka's start index): given to another action, one would be ignored, so it is refused
ACTION_OPTIONS: dict[str, tuple[str, ...]] = {
    "--reassignment-json-file": (VERIFY,),
    "--seed": ("generate",), "--start-index": ("generate",),
    **dict.fromkeys(("--sizes", "--sizes-from", "--max-moves", "--max-bytes", "--phases", "--throttle",
                     "--output-dir", "--overwrite"), tuple(a for a in ACTIONS if a != VERIFY)),
}


def parse_brokers(text: str, option: str) -> list[int]:
    """``1,2,3`` or ranges ``1-6,9``; anything else is a one-line usage error (exit 2)."""
    out: list[int] = []
    for part in text.split(","):
        m = _BROKER_RANGE.match(part)
        if not m:
            raise UsageError(f"expected broker ids like 1,2,3 or 1-6, got {part.strip()!r}", option=option)
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UsageError(f"empty broker range {part.strip()!r}", option=option)
        out.extend(range(lo, hi + 1))
    if len(set(out)) != len(out):
        raise UsageError(f"duplicate broker ids in {text!r}", option=option)
    return out


def parse_racks(text: str) -> dict[int, str]:
    """``1:use1-az1,2:use1-az2``."""
    out: dict[int, str] = {}
    for part in text.split(","):
        broker, sep, rack = part.partition(":")
        if not sep or not broker.strip().isdigit() or not rack.strip():
            raise UsageError(f"expected BROKER:RACK pairs like 1:use1-az1, got {part.strip()!r}", option="--racks")
        out[int(broker)] = rack.strip()
    return out


def split_words(words: list[str]) -> tuple[list[str], str, list[str]]:
    """``[SOURCE...] ACTION [ARG...]``: the first word that is an action splits them. With none,
    the word most like an action (a SOURCE is a path that exists) gets a did-you-mean."""
    import os

    for k, w in enumerate(words):
        if w in ACTIONS:
            return words[:k], w, words[k + 1:]
    for w in words:
        if not os.path.exists(w) and closest_choice(w, ACTIONS) is not None:
            raise UsageError(f"no action: {choice_message(w, ACTIONS)}", option="ACTION")
    raise UsageError(f"no action: expected one of {', '.join(ACTIONS)}", option="ACTION")


def refuse_outside_action(action: str, given: Mapping[str, object]) -> None:
    """An option given (``given``: :func:`~kreplica.cli.options.usage.given_options`) that
    ``action`` does not act on is a one-line usage error (exit 2), not an option ignored."""
    from kreplica.cli.options.usage import shown

    for option, value in given.items():
        applies = ACTION_OPTIONS.get(option, (action,))
        if action not in applies:
            others = [a for a in ACTIONS if a not in applies]
            which = ", ".join(applies) if len(applies) <= len(others) else f"every action but {', '.join(others)}"
            raise UsageError(f"applies to {which}, not {action} (given {shown(option, value)})", option=option)


def _int(text: str, what: str) -> int:
    if not text.strip().isdigit():
        raise UsageError(f"expected a non-negative integer, got {text!r}", option=what)
    return int(text)


def action_args(action: str, args: list[str]) -> dict:
    """The action's own arguments: brokers, OLD=NEW pairs, a replication factor."""
    if action in ("generate", "rebalance", "verify"):
        if args:
            raise UsageError(f"{action} takes no arguments (got {' '.join(args)})", option=action)
        return {}
    if not args:
        raise UsageError("missing argument", option=action)
    if action in ("decommission", "add-brokers"):
        brokers = [b for a in args for b in parse_brokers(a, action)]
        return {"removed" if action == "decommission" else "added": brokers}
    if action == "replace-broker":
        pairs = {}
        for a in args:
            old, sep, new = a.partition("=")
            if not sep:
                raise UsageError(f"expected OLD=NEW, got {a!r}", option=action)
            pairs[_int(old, action)] = _int(new, action)
        return {"replace": pairs}
    if len(args) != 1:
        raise UsageError("expected one replication factor", option=action)
    return {"replication_factor": _int(args[0], action)}


def topic_list(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [t.strip() for v in values for t in v.split(",") if t.strip()]


def load_assignment(sources: list[str], assignment_file: Optional[Path], brokers: list[int] | None,
                    racks: dict[int, str], at_zxid: str | None, at_time: str | None, at_offset: str | None,
                    chroot: str | None):
    """Where replicas are: from ``--assignment`` (the brokers named in it taken as live when no
    ``--brokers``, with a note) or from the cluster state of SOURCE (its error findings warned)."""
    from kreplica.model.cluster.assignment import assignment_from_cluster_state, assignment_from_entries

    if assignment_file is not None:
        if sources:
            raise UsageError("give either SOURCE or --assignment, not both", option="--assignment")
        entries = read_reassignment_json(assignment_file)
        if brokers is None:
            brokers = sorted({b for e in entries for b in e.replicas})
            error_line(f"kreplica: note: no --brokers: the brokers in {assignment_file} are taken as live "
                       f"({','.join(map(str, brokers))})")
        return assignment_from_entries(entries, brokers, racks, source=str(assignment_file))
    if not sources:
        raise UsageError("no SOURCE: give a ZooKeeper or KRaft SOURCE, or --assignment FILE with --brokers",
                          option="SOURCE")
    state = load_source(sources, at_zxid=at_zxid, at_time=at_time, at_offset=at_offset, chroot=chroot)
    for f in state.findings:
        if f.is_error:
            error_line(f"kreplica: warning: {f.path}: {f.kind}: {f.message}")
    return assignment_from_cluster_state(state)


def check_names(assignment, action: str, action_args: dict, topics: list[str] | None,
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


def replica_sizes(assignment, sizes_file: Optional[Path], sizes_from: Optional[str]):
    """Each partition's size from ``--sizes`` or ``--sizes-from`` (``None``: neither given); the
    partitions without one are warned of and count as 0 bytes."""
    if sizes_file is None and sizes_from is None:
        return None
    from kreplica.model.logdir.replica_sizes import sizes_from_describe, sizes_from_log_dirs

    if sizes_file is not None:
        from kreplica.formats.tools.log_dirs_describe import read_log_dirs_describe

        replicas, dir_errors = read_log_dirs_describe(sizes_file)
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


def executed_replicas(reassignment_file: Optional[Path]) -> dict[tuple[str, int], tuple[int, ...]] | None:
    """verify: the replica lists of the reassignment file that was executed, if one is given."""
    if reassignment_file is None:
        return None
    return {(e.topic, e.partition): e.replicas for e in read_reassignment_json(reassignment_file)}
