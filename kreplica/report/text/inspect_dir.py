"""The text report of ``inspect-dir``: the verdict with its counts, then a compact block per
partition, problems first (the partitions with nothing to report named in one line when there are
many), each line wrapped to the console's width."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.inspect.inspect_dir import LogDirReport, PartitionReport
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


#: a log directory's partitions with nothing to report are listed by name, not block by block,
#: past this many (a single partition, or a few, keep their blocks)
OK_BLOCKS = 8


def render_text(reports: Iterable[LogDirReport | PartitionReport], console: Console) -> int:
    """The verdict first (errors, warnings and the partitions they affect), then per log directory
    its header and its partitions, problems first, then warnings, then those with nothing to
    report (by name when there are many); each line wrapped to the console's width."""
    groups: list[tuple[LogDirReport | None, list[PartitionReport]]] = []
    for r in reports:
        if isinstance(r, LogDirReport):
            groups.append((r, []))
        else:
            if not groups:
                groups.append((None, []))
            groups[-1][1].append(r)
    parts = [p for _, ps in groups for p in ps]
    every = [f for d, ps in groups for f in ((d.findings if d is not None else ()) + tuple(x for p in ps for x in p.findings))]
    errors = sum(f.is_error for f in every)
    warnings = sum(not f.is_error and not f.is_info for f in every)
    _verdict(console, errors, warnings, parts)
    for d, ps in groups:
        if d is not None:
            who = f"broker {d.broker_id}" if d.broker_id is not None else "broker id unknown"
            shutdown = "clean shutdown marker present" if d.clean_shutdown else "no clean-shutdown marker (unclean)"
            print_wrapped(console, f"[bold]log dir {escape(d.path)}[/] — {who}, {count(d.partitions, 'partition')}, "
                                   f"{shutdown}")
            _findings(console, d.findings)
        ranked = sorted(ps, key=_rank)
        quiet = [p for p in ranked if _rank(p) == 2]
        shown = ranked if len(quiet) <= OK_BLOCKS else [p for p in ranked if _rank(p) < 2]
        for p in shown:
            _partition(console, p)
        if len(shown) < len(ranked):
            print_wrapped(console, f"[green]OK[/] {count(len(quiet), 'partition')} with no error or warning: "
                                   + escape(_names(quiet)) + " (-f json gives each)")
    return errors


def _rank(r: PartitionReport) -> int:
    """0: problems, 1: warnings, 2: nothing to report (notes only)."""
    if r.problems:
        return 0
    return 1 if any(not f.is_info for f in r.findings) else 2


def _verdict(console: Console, errors: int, warnings: int, parts: list[PartitionReport]) -> None:
    hit = sum(_rank(p) < 2 for p in parts)
    if errors:
        head = "[bold red]PROBLEMS[/]"
    elif warnings:
        head = "[yellow]WARN[/]"
    else:
        head = "[green]OK[/]"
    what = (f"{count(errors, 'error')}, {count(warnings, 'warning')}" if errors or warnings
            else "no error, no warning")
    print_wrapped(console, f"{head} {what}" + (f" in {number(hit)} of {count(len(parts), 'partition')}"
                                               if errors or warnings else f" in {count(len(parts), 'partition')}"))


def _names(reports: list[PartitionReport]) -> str:
    """Partition names by topic, consecutive partitions as ranges: ``orders 0-5, __consumer_offsets 0-49``."""
    by_topic: dict[str, list[int]] = {}
    other: list[str] = []
    for r in reports:
        if r.topic is not None and r.partition is not None and r.suffix is None:
            by_topic.setdefault(r.topic, []).append(r.partition)
        else:
            other.append(r.name)
    out = []
    for topic in sorted(by_topic):
        ids = sorted(by_topic[topic])
        runs, start = [], ids[0]
        for a, b in zip(ids, ids[1:] + [None]):
            if b != a + 1:
                runs.append(str(start) if start == a else f"{start}-{a}")
                start = b
        out.append(f"{topic} {','.join(runs)}")
    return "; ".join(out + sorted(other))


def _partition(console: Console, r: PartitionReport) -> None:
    status = "[bold red]PROBLEMS[/]" if r.problems else ("[yellow]WARN[/]" if any(not f.is_info for f in r.findings) else "[green]OK[/]")
    print_wrapped(console, f"{status} [bold]{escape(r.name)}[/] ({escape(r.path)})")
    _findings(console, sorted(r.findings, key=lambda f: (not f.is_error, f.path, f.position)))
    hw = "?" if r.high_watermark is None else r.high_watermark
    rp = "?" if r.recovery_point is None else r.recovery_point
    _line(console, f"offsets: log start {r.log_start_offset}, log end {r.log_end_offset}, high watermark {hw}, "
                   f"recovery point {rp}; {count(len(r.segments), 'segment')}, "
                   f"{count(sum(s.size for s in r.segments), 'byte')}"
                   + (f"; topic id {r.topic_id}" if r.topic_id else ""))
    lineage = ", ".join(f"{e.epoch}@{e.start_offset}" for e in r.lineage) or "none (no v2 batches)"
    ckpt = "absent" if r.epoch_checkpoint is None else (", ".join(f"{e}@{o}" for e, o in r.epoch_checkpoint) or "empty")
    _line(console, f"epochs: batches {lineage}; checkpoint {ckpt}")
    rs = r.restart
    verdict = "refuses to load" if rs.refuses_to_start else _truncates(rs)
    _line(console, f"{rs.shutdown} restart ({rs.kafka_version}): recovers "
                   f"{count(len(rs.recovered_segments), 'segment')}, {verdict}; epoch cache "
                   f"{', '.join(f'{e}@{o}' for e, o in rs.epoch_cache) or 'empty'}")
    if r.open_transactions:
        _line(console, "open transactions: " + ", ".join(f"producer {t.producer_id} from offset {t.first_offset}"
                                                         for t in r.open_transactions))


def _line(console: Console, markup: str) -> None:
    """One line of a partition's block, indented under its heading."""
    print_wrapped(console, f"    {markup}", 6)


def _findings(console: Console, findings) -> None:
    for f in findings:
        style = "bold red" if f.is_error else ("dim" if f.is_info else "yellow")
        _line(console, f"[{style}]{f.severity.upper()} {f.kind}[/] {escape(f.message)}")


def _truncates(rs) -> str:
    """What a restart cuts: the offsets and records first, the bytes after them."""
    if not rs.truncated_bytes:
        return "keeps everything"
    offsets = rs.truncated_offsets
    if offsets is None:
        return f"cuts {count(rs.truncated_bytes, 'byte')} holding no record"
    return (f"truncates offsets {number(offsets[0])}-{number(offsets[1])} ({count(rs.truncated_records, 'record')}, "
            f"{count(rs.truncated_bytes, 'byte')})")
