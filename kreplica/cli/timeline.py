"""``kreplica timeline``: every leader, leader-epoch and ISR change with its cause, from ZooKeeper
or KRaft evidence, optionally joined with replica data."""

from __future__ import annotations

import itertools
import re
from typing import Annotated, Optional

import typer

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.options import (
    DebugOption,
    FormatOption,
    GroupsOption,
    SourcesArgument,
    parse_log_dirs,
    require_paths,
)
from kreplica.cli.runner import runs_command
from kreplica.cli.sources import ChrootOption, check_point, chroot_option, time_option, unreadable
from kreplica.formats.errors import FormatError
from kreplica.report.output import Emitter, OutputFormat, resolve_format, text_console

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
        raise FormatError(f"expected a zxid or offset (0xb6, 182) or a time (epoch ms, ISO-8601), got {text!r}",
                          field=option) from None
    return None, time_option(text, option)


def _partitions(values: list[str] | None) -> frozenset[str] | None:
    if not values:
        return None
    for v in values:
        if not _PARTITION.match(v):
            raise FormatError(f"expected TOPIC-PARTITION such as orders-0, got {v!r}", field="--partition")
    return frozenset(values)


@app.command("timeline", short_help="Every leader, epoch and ISR change with its cause, from ZooKeeper or KRaft.")
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
    expired), and controller changes, each with its position (zxid or metadata offset) and time.
    With --log-dirs the leader epochs are joined with the replicas' data. A ZooKeeper data directory
    without transaction logs is replayed from snapshot to snapshot (a coarser history: changes
    between two snapshots are not seen). The last object is a timeline_summary (its resolution,
    unclean elections, offline periods, epochs without data, zombie epochs).

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
    from kreplica.analysis.timeline.events import (
        PartitionEvent,
        TimelineEnd,
        TimelineSummary,
        involved_brokers,
        matches,
    )
    from kreplica.cli.group_evidence import (
        check_group_sources,
        committed_offsets,
        loses_consumed_records,
        timeline_objects,
    )
    from kreplica.cli.names import HeldUntilNamed
    from kreplica.model.cluster import NO_LEADER
    from kreplica.formats.findings import Finding
    from kreplica.report.inspect_log import finding_object
    from kreplica.report.timeline import event_to_dict, evidence_to_dicts, summary_to_dict

    from_pos, from_time = point_option(from_, "--from")
    to_pos, to_time = point_option(to, "--to")
    wanted = _partitions(partition)
    brokers = frozenset(broker) if broker else None
    dirs = parse_log_dirs(log_dirs)
    root = chroot_option(chroot)
    fmt = resolve_format(output_format)
    require_paths(sources)
    if groups and not dirs:
        raise FormatError("needs --log-dirs (the records an election loses are read from the replicas' files)",
                          field="--groups")
    check_group_sources(groups or ())
    try:
        items, kind = _walk(sources, (from_pos, from_time), (to_pos, to_time), root)
        items = _refuse_empty(items, kind)
        data = _scan(dirs)
    except OSError as exc:
        raise unreadable(exc) from exc

    summary = TimelineSummary()
    findings: list[Finding] = []
    joined: dict[str, list] = {}
    end = None
    selecting = wanted is not None or brokers is not None
    # nothing is printed until every partition and broker named has appeared in the history
    watch = HeldUntilNamed({"--partition": ("partition", wanted or ()), "--broker": ("broker", brokers or ())})
    if fmt is OutputFormat.text:
        from kreplica.report.timeline_text import TextReport

        console = text_console()
        emitter = None
        report = TextReport(console, per_partition=per_partition)
        out = report.event
    else:
        emitter = Emitter(fmt)
        out = emitter.emit_plain     # the timeline's objects hold no float
    for item in items:
        if isinstance(item, Finding):
            findings.append(item)
            if emitter is not None:
                watch.put(emitter.emit, finding_object(item))
            continue
        if isinstance(item, TimelineEnd):
            end = item
            continue
        if watch.holding:
            if isinstance(item, PartitionEvent):
                watch.see("--partition", (item.name,))
            watch.see("--broker", involved_brokers(item) - {NO_LEADER, None})
        if selecting and not matches(item, wanted, brokers):
            continue
        summary.feed(item)
        watch.put(out, event_to_dict(item, kind))
        if data:
            name = getattr(item, "name", None)
            if name is not None and name in data:
                joined.setdefault(name, []).append(item)
    watch.finish()
    evidence, replicas = _join(joined, data)
    objs: list[dict] = []
    for pe in evidence:
        for obj in evidence_to_dicts(pe, kind):
            if emitter is not None:
                emitter.emit_plain(obj)
            else:
                objs.append(obj)
    lost = any(pe.losses for pe in evidence)    # the group evidence is read only when it can matter
    impact = timeline_objects(evidence, replicas, committed_offsets(dirs.values(), groups or ())) if lost else []
    if emitter is not None:
        for obj in impact:
            emitter.emit(obj)
    else:
        objs += impact
    summary_obj = summary_to_dict(end, summary, evidence)
    if emitter is not None:
        emitter.emit_plain(summary_obj)
        emitter.close()
    else:
        report.finish(objs, summary_obj, findings)
    damaged = any(f.is_error for f in findings)
    return ExitCode.PROBLEMS if (summary.has_problems or damaged or any(pe.has_problems for pe in evidence)
                                 or loses_consumed_records(impact)) else ExitCode.OK


def _walk(sources: list[str], start: tuple[int | None, int | None], stop: tuple[int | None, int | None],
          chroot: str | None):
    """The event stream of SOURCE (ZooKeeper or KRaft, detected) and its kind; ``start`` and
    ``stop`` are ``(position, time)`` from ``--from``/``--to``, refused outside the evidence."""
    from kreplica.model.cluster import detect_source_kind, find_kraft_files
    from kreplica.model.cluster.span import kraft_span, zookeeper_span

    kind, resolved = detect_source_kind(sources)
    (from_pos, from_time), (to_pos, to_time) = start, stop
    asked = any(v is not None for v in (*start, *stop))
    if kind == "zookeeper":
        from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
        from kreplica.model.zookeeper import find_zk_files

        files = find_zk_files(resolved)
        if asked:
            _check_window(zookeeper_span(files), start, stop)
        return iter_zookeeper_timeline(files, from_zxid=from_pos, from_time=from_time, to_zxid=to_pos,
                                       to_time=to_time, chroot=chroot), kind
    if chroot is not None:
        raise FormatError("applies to ZooKeeper; this SOURCE is KRaft metadata", field="--chroot")
    from kreplica.analysis.timeline.kraft import iter_kraft_timeline

    files = find_kraft_files(resolved)
    if asked:
        _check_window(kraft_span(files), start, stop)
    return iter_kraft_timeline(files, from_offset=from_pos, from_time=from_time,
                               to_offset=to_pos, to_time=to_time), kind


def _check_window(span, start: tuple[int | None, int | None], stop: tuple[int | None, int | None]) -> None:
    for option, (position, time) in (("--from", start), ("--to", stop)):
        check_point(span, option, position=position, time=time)


def _refuse_empty(items, kind: str):
    """``items`` unchanged, once it has yielded its first event; a history that ends without any
    (no Kafka znode or metadata record at all) is exit 2 rather than an "OK" about nothing. Only
    findings come before the first event, so little is held back."""
    from kreplica.analysis.timeline.events import TimelineEnd
    from kreplica.formats.findings import Finding

    held = []
    for item in items:
        held.append(item)
        if isinstance(item, TimelineEnd):
            if kind == "zookeeper":
                where = (f"the ZooKeeper tree holds no Kafka znodes (/brokers/ids or /brokers/topics at / or "
                         f"under a chroot) from {item.start:#x} to {item.end:#x}")
            elif item.end is None or item.end < 0:
                where = "the metadata files hold no record at all"
            else:
                where = f"the metadata holds no broker, topic or controller record from {item.start} to {item.end}"
            reason = "; ".join(f"{f.kind}: {f.message}" for f in held if isinstance(f, Finding) and f.is_error)
            raise FormatError(f"no Kafka metadata in this history: {where}" + (f" ({reason})" if reason else ""),
                              path=item.source or None)
        if not isinstance(item, Finding):
            break
    return itertools.chain(held, items)


def _scan(dirs: dict[int, str]) -> dict[str, dict]:
    """``{partition name: {broker: (PartitionDir, LogDir)}}`` of the log directories given."""
    from kreplica.model.logdir.log_dir import scan_log_dir

    out: dict[str, dict] = {}
    for broker, path in sorted(dirs.items()):
        log_dir = scan_log_dir(path)
        for pdir in log_dir.partitions:
            if pdir.key is not None:
                out.setdefault(pdir.name, {})[broker] = (pdir, log_dir)
    return out


def _join(joined: dict[str, list], data: dict[str, dict]) -> tuple[list, dict[str, dict]]:
    """Each selected partition with replica data, read once per replica and joined with its
    events; and those replicas (partition name -> broker -> its log) for consumer impact."""
    from kreplica.analysis.timeline.evidence import join_partition
    from kreplica.model.log.partition_log import read_partition_log

    out = []
    read: dict[str, dict] = {}
    for name in sorted(joined):
        replicas = read[name] = {b: read_partition_log(pdir, log_dir, label=f"broker-{b}")
                                 for b, (pdir, log_dir) in sorted(data[name].items())}
        pe = join_partition(joined[name], replicas)
        if pe is not None:
            out.append(pe)
    return out, read
