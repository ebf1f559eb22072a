"""A finding for people, in the one line ``cluster-state``, ``timeline`` and ``zk`` write it:
``error crc_mismatch PATH:POSITION: message``, the severity in red (error) or yellow."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.formats.findings import Finding
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.safe_text import escape


def finding_line(f: Finding) -> str:
    """The finding as one line of console markup."""
    style = "red" if f.is_error else "yellow"
    return f"[{style}]{f.severity}[/{style}] {escape(f.kind)} {escape(f.path)}:{f.position}: {escape(f.message)}"


def print_findings(findings: Iterable[Finding], console: Console) -> None:
    """A blank line, then a line per finding (nothing when there is none)."""
    findings = list(findings)
    if findings:
        console.print()
        for f in findings:
            print_wrapped(console, finding_line(f))
