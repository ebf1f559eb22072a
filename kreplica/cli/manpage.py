"""Man pages (roff) generated from the commands' own ``--help`` data.

``python -m kreplica.cli.manpage man/`` rewrites ``man/kreplica.1`` and one
``man/kreplica-<command>.1`` per command; ``tests/cli/test_manpages.py`` regenerates them and
fails when the committed pages differ, so the pages cannot drift from ``--help``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
import typer.core

from kreplica import __version__
from kreplica.cli.main import app

DATE = "2026"
SEE_ALSO_EXTRA = ("kafka-dump-log.sh(1)",)


def _roff(text: str) -> str:
    out = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in out.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]


def _summary(cmd) -> str:
    """The one-line summary of a command: its ``short_help``, else its first sentence."""
    text = cmd.short_help or (_paragraphs(cmd.help or "") or [""])[0].split(". ")[0]
    text = text.rstrip(".")
    return text[:1].lower() + text[1:]


def _option_lines(cmd, ctx) -> list[str]:
    lines: list[str] = []
    for param in cmd.get_params(ctx):
        if param.param_type_name == "argument":
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines.append(".TP")
        lines.append(f"\\fB{_roff(names)}\\fR")
        lines.append(_roff(" ".join(help_text.split())) if help_text else "")
    return lines


def _argument_lines(cmd) -> list[str]:
    lines: list[str] = []
    for param in cmd.params:
        if param.param_type_name == "argument":
            lines.append(".TP")
            lines.append(f"\\fI{_roff((param.metavar or param.name.upper()))}\\fR")
            lines.append(_roff(" ".join((getattr(param, "help", "") or "").split())))
    return lines


def command_page(name: str, cmd, root) -> str:
    """The roff page of ``kreplica <name>`` (``name`` may be ``"group sub"`` for a nested command)."""
    ctx = cmd.context_class(cmd, info_name=f"kreplica {name}", parent=root.context_class(root, info_name="kreplica"))
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    paras = _paragraphs(cmd.help or "")
    page = name.replace(" ", "-")
    lines = [
        f'.TH "KREPLICA\\-{page.upper()}" 1 "{DATE}" "kreplica {__version__}" "kreplica manual"',
        ".SH NAME",
        f"kreplica\\-{_roff(page)} \\- {_roff(_summary(cmd))}",
        ".SH SYNOPSIS",
        f"\\fBkreplica {_roff(name)}\\fR {_roff(usage)}",
        ".SH DESCRIPTION",
    ]
    for p in paras:
        lines += [".PP", _roff(p)]
    lines += [".SH ARGUMENTS", *_argument_lines(cmd), ".SH OPTIONS", *_option_lines(cmd, ctx)]
    lines += [".SH EXIT STATUS", ".TP", "0", "the run completed and found nothing wrong", ".TP", "1",
              "the run completed and found problems in the evidence", ".TP", "2",
              "bad usage, or unreadable or unrecognised input (one line on stderr names the file and byte position)",
              ".TP", "3", "an internal error (\\fB\\-\\-debug\\fR shows the traceback)"]
    lines += [".SH SEE ALSO", ", ".join(["\\fBkreplica\\fR(1)", *SEE_ALSO_EXTRA])]
    return "\n".join(lines) + "\n"


def _commands(root, ctx) -> list[tuple[str, object]]:
    """``(name, command)`` for every page: a nested group (``kreplica zk``) is descended into and
    each of its commands named ``"zk dump"`` (page ``kreplica-zk-dump.1``)."""
    out = []
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        if isinstance(cmd, typer.core.TyperGroup):
            sub_ctx = cmd.context_class(cmd, info_name=name, parent=ctx)
            out += [(f"{name} {sub}", cmd.get_command(sub_ctx, sub)) for sub in cmd.list_commands(sub_ctx)]
        else:
            out.append((name, cmd))
    return out


def main_page(root) -> str:
    """The roff page of ``kreplica`` itself, listing every command."""
    ctx = root.context_class(root, info_name="kreplica")
    lines = [
        f'.TH "KREPLICA" 1 "{DATE}" "kreplica {__version__}" "kreplica manual"',
        ".SH NAME", "kreplica \\- offline forensics for Apache Kafka replication",
        ".SH SYNOPSIS", "\\fBkreplica\\fR [\\fB\\-\\-version\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] ...",
        ".SH DESCRIPTION",
    ]
    for p in _paragraphs(root.help or ""):
        lines += [".PP", _roff(p)]
    lines += [".SH COMMANDS"]
    commands = _commands(root, ctx)
    for name, cmd in commands:
        lines += [".TP", f"\\fBkreplica\\-{_roff(name.replace(' ', '-'))}\\fR(1)", _roff(_summary(cmd))]
    lines += [".SH OPTIONS", *_option_lines(root, ctx)]
    lines += [".SH OUTPUT",
              ".PP",
              _roff("Every command writes data only to stdout: text on a terminal, ndjson otherwise (--format "
                    "text|json|ndjson|msgpack). Diagnostics and progress go to stderr."),
              ".SH EXIT STATUS", ".PP", "0 nothing wrong; 1 problems found in the evidence; 2 bad usage or "
              "unreadable input; 3 internal error.",
              ".SH SEE ALSO",
              ", ".join(f"\\fBkreplica\\-{_roff(n.replace(' ', '-'))}\\fR(1)" for n, _ in commands)]
    return "\n".join(lines) + "\n"


def render_all() -> dict[str, str]:
    """File name → page text for every page."""
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="kreplica")
    pages = {"kreplica.1": main_page(root)}
    for name, cmd in _commands(root, ctx):
        pages[f"kreplica-{name.replace(' ', '-')}.1"] = command_page(name, cmd, root)
    return pages


def write_all(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for file_name, text in render_all().items():
        (directory / file_name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "man"))
