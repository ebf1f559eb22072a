"""The text report of ``inspect-dir``: a compact block per partition, problems first, each line
wrapped to the console's width."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.inspect.inspect_dir import LogDirReport, PartitionReport
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


def render_text(reports: Iterable[LogDirReport | PartitionReport], console: Console) -> int:
    """A compact per-partition report, problems first, each line wrapped to the console's width."""
    errors = 0
    for r in reports:
        errors += sum(f.is_error for f in r.findings)
        if isinstance(r, LogDirReport):
            who = f"broker {r.broker_id}" if r.broker_id is not None else "broker id unknown"
            shutdown = "clean shutdown marker present" if r.clean_shutdown else "no clean-shutdown marker (unclean)"
            print_wrapped(console, f"[bold]log dir {escape(r.path)}[/] — {who}, {count(r.partitions, 'partition')}, "
                                   f"{shutdown}")
            _findings(console, r.findings)
            continue
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
    return errors


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
