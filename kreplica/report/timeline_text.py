"""The text report of ``kreplica timeline``: the events as a time-ordered table (or one table per
partition), unclean elections in red, events that leave a partition offline in yellow, then the
data joined per leader epoch, what each unclean election lost, and last the verdict line.

Rendered from the very objects :mod:`kreplica.report.timeline` builds, so the text can never say
something the JSON does not.

The event table is streamed (:class:`EventTable`): a history of a million transactions has
hundreds of thousands of rows, which a rich ``Table`` holds, measures and lays out all at once
(at 80,000 rows: 109 s and 583 MiB). Rows are written as the walk yields them, a block of
:data:`BLOCK` rows at a time, in the layout of rich's ``box.SIMPLE``; a column widens when a
block needs more room, so the verdict, which needs the whole history, comes last.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kreplica.analysis.timeline.events import BY_SNAPSHOT
from kreplica.report.safe_text import escape, printable

#: Rows gathered before they are written (their widths decide the columns from there on).
BLOCK = 1024
_COLUMNS = ("time (UTC)", "position", "what", "cause / event", "leader", "epoch", "isr", "evidence")
_GAP = "   "
#: the narrowest the evidence column is folded to, however wide the columns before it
_MIN_EVIDENCE = 24


class _When:
    """``ms`` as UTC text to the millisecond; the seconds part is formatted once per second (a
    long history has many events in each)."""

    def __init__(self) -> None:
        self._second: int | None = None
        self._text = ""

    def __call__(self, ms: int | None) -> str:
        if ms is None:
            return "-"
        second, milli = divmod(ms, 1000)
        if second != self._second:
            try:
                self._text = datetime.fromtimestamp(second, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
            except (OverflowError, OSError, ValueError):   # beyond what a datetime holds: the number
                return str(ms)
            self._second = second
        return f"{self._text}.{milli:03d}"


_when = _When()


def _leader(s: dict | None) -> str:
    return "-" if s is None else ("none" if s["leader"] == -1 else str(s["leader"]))


def _isr(s: dict | None) -> str:
    return "-" if s is None else (",".join(map(str, s["isr"])) or "[]")


def _arrow(before: str, after: str) -> str:
    return after if before == after or before == "-" else f"{before}→{after}"


def _safe(text: str) -> str:
    """:func:`printable`, skipped for text that has nothing to escape (``isprintable`` is false
    for every control character and bidirectional override it would escape)."""
    return text if text.isprintable() else printable(text)


def _row(obj: dict, when=_when) -> tuple[list[str], str]:
    """The cells of one event (text made safe for a terminal, no markup) and its style."""
    t = obj["type"]
    pos = str(obj["position"])
    if t == "partition_event":
        b, a = obj["before"], obj["after"]
        epoch = "-" if a is None else str(a["leader_epoch"])
        what = obj["cause"] + (f" ({obj['by']})" if obj["by"] and obj["cause"].startswith("isr_") else "")
        if obj["offline"]:
            what += " OFFLINE"
        style = "bold red" if obj["unclean"] else ("yellow" if obj["offline"] else "")
        return [when(obj["time"]), pos, _safe(obj["partition"]), what, _arrow(_leader(b), _leader(a)), epoch,
                _arrow(_isr(b), _isr(a)), _safe(obj["evidence"])], style
    if t == "broker_event":
        return [when(obj["time"]), pos, f"broker {obj['broker']}", obj["event"], "", "", "",
                f"broker epoch {obj['broker_epoch']}" if obj["broker_epoch"] is not None else ""], "dim"
    return [when(obj["time"]), pos, "controller", obj["event"], str(obj["controller"] if obj["controller"] is not None
                                                                    else "none"),
            str(obj["controller_epoch"] if obj["controller_epoch"] is not None else "-"), "", ""], "dim"


def _width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _fold(text: str, room: int, indent: str) -> str:
    """``text`` folded into lines of at most ``room`` characters at spaces (a word longer than
    that is cut), each line after the first on a new line starting with ``indent``: rich's
    ``overflow="fold"`` for text of one cell per character."""
    lines = []
    while len(text) > room:
        cut = text.rfind(" ", 0, room + 1)
        if cut <= 0:
            lines.append(text[:room])
            text = text[room:]
        else:
            lines.append(text[:cut])
            text = text[cut + 1:]
    lines.append(text)
    return indent.join(lines)


def _fold_cells(text: str, room: int, indent: str) -> str:
    """:func:`_fold` for text with wide characters: cut by terminal cells, a character at a time
    (words are not kept whole)."""
    lines, line, used = [], [], 0
    for ch in text:
        w = cell_len(ch)
        if used + w > room and line:
            lines.append("".join(line))
            line, used = [], 0
        line.append(ch)
        used += w
    lines.append("".join(line))
    return indent.join(lines)


class EventTable:
    """Events as one table, written to ``console`` a block of :data:`BLOCK` rows at a time.

    Feed each event object to :meth:`add`, then call :meth:`close` (which writes the header and
    an empty table when there was no row). The layout is rich's ``box.SIMPLE`` with
    ``pad_edge=False``; the evidence column is folded at the console's width. Only styles reach
    the terminal as escape codes, and only when the console has colours.
    """

    def __init__(self, console: Console, title: str | None = None) -> None:
        self._console = console
        self._title = title
        self._rows: list[tuple[list[str], str]] = []
        self._widths = [len(c) for c in _COLUMNS[:-1]]
        self._started = False
        self._styles: dict[str, tuple[str, str]] = {}

    def add(self, obj: dict) -> None:
        self._rows.append(_row(obj))
        if len(self._rows) >= BLOCK:
            self._flush()

    def add_row(self, cells: list[str], style: str) -> None:
        """A row already made by :func:`_row` (a table of rows kept for later)."""
        self._rows.append((cells, style))
        if len(self._rows) >= BLOCK:
            self._flush()

    def close(self) -> None:
        self._flush()
        if not self._started:
            self._start(len(_COLUMNS[-1]))
        self._console.file.write("\n")

    def _style(self, style: str) -> tuple[str, str]:
        """The escape codes around a styled text, as the console would write them."""
        codes = self._styles.get(style)
        if codes is None:
            with self._console.capture() as capture:
                self._console.print(Text("\0", style=style), end="")
            before, _, after = capture.get().partition("\0")
            codes = self._styles[style] = (before, after)
        return codes

    def _start(self, evidence_width: int) -> None:
        widths = self._widths
        header = " " + _GAP.join(_pad(c, w) for c, w in zip(_COLUMNS, widths)) + _GAP + _COLUMNS[-1]
        rule = " " + "─" * (sum(widths) + len(_GAP) * len(widths) + max(evidence_width, len(_COLUMNS[-1])))
        title = ""
        if self._title is not None:
            title = printable(self._title) + "\n"
        self._console.file.write(f"{title}\n{header}\n{rule}\n")
        self._started = True

    def _flush(self) -> None:
        # NOTE: once per BLOCK rows, for every event of the history (bench/bench_timeline.py): the
        # widths are measured per column, and a row of ASCII text and arrows (nearly all) is laid
        # out by one str.format; others are padded by terminal cells
        rows = self._rows
        if not rows:
            return
        self._rows = []
        widths = self._widths
        columns = list(zip(*(cells for cells, _style in rows)))
        narrow = ["".join(column).replace("→", "").isascii() for column in columns]   # one cell per character
        for i, w in enumerate(widths):
            widest = max(map(len if narrow[i] else _width, columns[i]))
            if widest > w:
                widths[i] = widest
        every_row_narrow = all(narrow)
        lead = sum(widths) + len(_GAP) * len(widths) + 1
        room = max(self._console.width - lead - 1, _MIN_EVIDENCE)
        if not self._started:
            self._start(min(max(map(_width, columns[-1])), room))
        layout = (" " + _GAP.join(f"{{:<{w}}}" for w in widths) + _GAP + "{}").format
        indent = "\n" + " " * lead
        out = []
        for cells, style in rows:
            evidence = cells[-1]
            if every_row_narrow or "".join(cells).replace("→", "").isascii():
                line = layout(*cells) if len(evidence) <= room else layout(*cells[:-1], _fold(evidence, room, indent))
            else:
                line = (" " + _GAP.join(_pad(c, w) for c, w in zip(cells, widths)) + _GAP
                        + (evidence if _width(evidence) <= room else _fold_cells(evidence, room, indent)))
            line = line.rstrip()
            if style:
                before, after = self._style(style)
                line = before + line + after
            out.append(line)
        out.append("")
        self._console.file.write("\n".join(out))


class TextReport:
    """The text report, fed event by event: :meth:`event` with each event object as the walk
    yields it, then :meth:`finish` with the joined-data objects, the summary and the findings.

    One time-ordered table is streamed (memory stays flat however long the history); with
    ``per_partition`` the rows (not the events) are kept, grouped, until :meth:`finish`.
    """

    def __init__(self, console: Console, *, per_partition: bool) -> None:
        self._console = console
        self._table = None if per_partition else EventTable(console)
        self._partitions: dict[str, list] = {}
        self._others: list = []

    def event(self, obj: dict) -> None:
        if self._table is not None:
            self._table.add(obj)
            return
        cells, style = _row(obj)
        # kept as one string (cells hold no NUL: it is escaped), a third of a list's memory
        kept = ("\0".join(cells), style)
        if obj["type"] == "partition_event":
            self._partitions.setdefault(obj["partition"], []).append(kept)
        else:
            self._others.append(kept)

    def finish(self, objs: list[dict], summary: dict, findings) -> None:
        """Close the tables, then the offline periods, the data joined per epoch, the losses,
        the zombie epochs, the findings and, last, the verdict line."""
        if self._table is not None:
            self._table.close()
        else:
            for title, rows in [*sorted(self._partitions.items()), ("brokers and controller", self._others)]:
                if not rows:
                    continue
                table = EventTable(self._console, title)
                for cells, style in rows:
                    table.add_row(cells.split("\0"), style)
                table.close()
        _render_end(objs, summary, findings, self._console)


def render_text(objs: list[dict], summary: dict, findings, console: Console, *, per_partition: bool) -> None:
    """The whole text report of a list of objects (events, then joined data): see
    :class:`TextReport`, which the command feeds as the walk goes."""
    report = TextReport(console, per_partition=per_partition)
    for o in objs:
        if o["type"].endswith("_event"):
            report.event(o)
    report.finish(objs, summary, findings)


def _render_end(objs: list[dict], summary: dict, findings, console: Console) -> None:
    unclean, offline = summary["unclean_elections"], summary["offline_periods"]
    zombies = summary["zombie_epochs"]
    lost = [o for o in objs if o["type"] == "election_loss" and o["lost_offsets"]]
    if offline:
        console.print()
        for p in offline:
            until = f"until {p['to']} ({_when(p['to_time'])})" if p["to"] is not None else "until the end of the history"
            console.print(f"[yellow]offline[/yellow] {escape(p['partition'])} from {p['from']} "
                          f"({_when(p['from_time'])}) {until}")
    epochs = [o for o in objs if o["type"] == "epoch_evidence"]
    if epochs:
        table = Table(box=box.SIMPLE, title="leader epochs and the data they wrote", title_justify="left",
                      pad_edge=False)
        for col in ("partition", "epoch", "leader", "granted at", "offsets", "held by"):
            table.add_column(col, no_wrap=col != "held by")
        zombie = {(z["partition"], z["epoch"]) for z in zombies}
        for o in epochs:
            held = " ".join(f"{h['broker']}:{h['start_offset']}-{h['end_offset'] - 1}" for h in o["replicas"]) or "-"
            offsets = "-" if o["start_offset"] is None else f"{o['start_offset']}-{o['end_offset'] - 1}"
            style = "bold red" if (o["partition"], o["epoch"]) in zombie else ("dim" if not o["replicas"] else "")
            table.add_row(escape(o["partition"]), str(o["epoch"]),
                          "not recorded" if not o["in_metadata"] else ("none" if o["leader"] == -1 else str(o["leader"])),
                          str(o["position"] if o["position"] is not None else "-"), offsets, held, style=style)
        console.print(table)
    for o in objs:
        if o["type"] == "election_loss":
            style = "red" if o["lost_offsets"] else "green"
            count = "unknown" if o["lost_offsets"] is None else str(o["lost_offsets"])
            below = "" if o["below_high_watermark"] is None else f", {o['below_high_watermark']} below the old high watermark"
            console.print(f"[{style}]unclean election[/{style}] {escape(o['partition'])} at {o['position']} "
                          f"(epoch {o['leader_epoch']}, {o['old_leader']}→{o['new_leader']}): {count} offsets lost"
                          f"{below}. {escape(o['note'])}")
    for z in zombies:
        console.print(f"[red]zombie epoch[/red] {escape(z['partition'])} epoch {z['epoch']} held by "
                      f"{', '.join(str(b) for b in z['replicas'])} but the metadata never granted it to a leader")
    if findings:
        console.print()
        for f in findings:
            style = "red" if f.is_error else "yellow"
            console.print(f"[{style}]{f.severity}[/{style}] {escape(f.kind)} {escape(f.path)}:{f.position}: "
                          f"{escape(f.message)}")
    if summary.get("resolution") == BY_SNAPSHOT:
        console.print("[yellow]note[/yellow] no transaction log in SOURCE: the history goes from snapshot to "
                      "snapshot, each change at the zxid that last wrote it; changes in between are not seen "
                      "and a registration that is gone is placed at the snapshot that lacks it")
    # the verdict says what the exit status says: an error finding (damage) is a problem too
    problems = bool(unclean or offline or zombies or lost or any(f.is_error for f in findings))
    verdict = "[red]PROBLEMS[/red]" if problems else "[green]OK[/green]"
    ev = summary["events"]
    console.print(f"{verdict} {summary['source_kind']} history {summary['start']} .. {summary['end']}: "
                  f"{ev['partition']} partition, {ev['broker']} broker, {ev['controller']} controller events; "
                  f"{len(unclean)} unclean elections, {len(offline)} offline periods")
