"""The findings of each replica's log that bear on a replication command's answer
(:mod:`kreplica.analysis.log.log_findings`), written before the command's own objects.

``epochs``, ``offset-for-epoch``, ``truncate-plan`` and ``diverge`` start their output here, so
each says the damage of the logs it answered from in one way: for programs, the contract's
``finding`` objects (as ``inspect-log`` writes them), replica by replica in the order given;
for people, a short list under a line naming the replica and the count. A replica whose log
has none writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.console import Console

from kreplica.analysis.log.log_findings import log_findings
from kreplica.model.log.partition_log import PartitionLog
from kreplica.report.inspect_log import finding_object
from kreplica.report.numbers import count
from kreplica.report.output import Emitter, OutputFormat, text_console
from kreplica.report.safe_text import escape
from kreplica.report.text_layout import print_wrapped

#: Indent of a finding under its replica's line, and of its wrapped lines.
FINDING_INDENT, FINDING_HANG = 2, 4


def render_log_findings(replicas: Iterable[PartitionLog], console: Console) -> None:
    """Per replica whose log has findings bearing on the answer: a line naming it, its path and
    the counts, then one line per finding."""
    for r in replicas:
        found = log_findings(r)
        if not found:
            continue
        errors = sum(f.is_error for f in found)
        counts = [count(n, noun) for n, noun in ((errors, "error"), (len(found) - errors, "warning")) if n]
        print_wrapped(console, f"[bold]{escape(r.label)}[/]: its log has {' and '.join(counts)} "
                               f"({escape(r.path)})", FINDING_HANG)
        for f in found:
            style = "bold red" if f.is_error else "yellow"
            print_wrapped(console, f"{' ' * FINDING_INDENT}[{style}]{f.severity.upper()} {f.kind}[/] "
                                   f"{escape(f.message)}", FINDING_HANG)


def begin_output(fmt: OutputFormat, replicas: Sequence[PartitionLog]) -> Console | Emitter:
    """Write the replicas' log findings and return where the command's own output goes next:
    the text console, or the emitter (the caller closes it)."""
    if fmt is OutputFormat.text:
        console = text_console()
        render_log_findings(replicas, console)
        return console
    emitter = Emitter(fmt)
    for r in replicas:
        for f in log_findings(r):
            emitter.emit(finding_object(f))
    return emitter


def write_with_log_findings(objs: Iterable[dict], fmt: OutputFormat, render: Callable[[dict, Console], None],
                            replicas: Sequence[PartitionLog], *, after: Sequence[dict] = (),
                            render_after: Callable[[Sequence[dict], Console], None] | None = None) -> None:
    """The replicas' log findings, then the command's objects (``render(obj, console)`` each for
    text), then ``after`` (``render_after(after, console)`` as one block for text, when any)."""
    out = begin_output(fmt, replicas)
    if isinstance(out, Emitter):
        for obj in [*objs, *after]:
            out.emit(obj)
        out.close()
        return
    for obj in objs:
        render(obj, out)
    if after and render_after is not None:
        render_after(after, out)
