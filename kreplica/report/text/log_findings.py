"""The findings of each replica's log that bear on a replication command's answer
(:mod:`kreplica.analysis.log.log_findings`), for people: the text ``epochs``,
``offset-for-epoch``, ``truncate-plan`` and ``diverge`` begin with (their machine output begins
with the same findings as ``finding`` objects, :mod:`kreplica.report.results.replication`).
Per replica whose log has any, a line naming it and the counts, then a short line per finding;
a replica whose log has none writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.log.log_findings import log_findings
from kreplica.model.log.partition_log import PartitionLog
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.numbers import count
from kreplica.report.text.safe_text import escape

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
