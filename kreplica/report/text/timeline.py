"""The text report of ``kreplica timeline``: the events as a time-ordered table (or one table per
partition), unclean elections in red, events that leave a partition offline in yellow, then the
data joined per leader epoch, what each unclean election lost, and last the verdict line.

Rendered from the very objects :mod:`kreplica.report.schemas.timeline` builds, so the text can never say
something the JSON does not.

The event table is streamed (:class:`EventTable`): a history of a million transactions has
hundreds of thousands of rows, which a rich ``Table`` holds, measures and lays out all at once
(at 80,000 rows: 109 s and 583 MiB). Rows are written as the walk yields them, a block of
:data:`BLOCK` rows at a time, in the layout of rich's ``box.SIMPLE``; a column widens when a
block needs more room, so the verdict, which needs the whole history, comes last.

The table fits the terminal. When it is wide enough, each event is one row with its evidence
wrapped in the last column (at least :data:`_MIN_EVIDENCE` cells, and as wide as its longest
word); when it is not, the evidence goes on the lines under the row, indented, and so do the
ISR, the epoch and the leader, in that order, as the width requires (``leader 1, epoch 0, isr
1,2,3→1; leader 1 removed [2,3]``), and last the cause: time, position and what always stay on
the row.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple

from rich import box
from rich.console import Console

from kreplica.analysis.timeline.events import BY_SNAPSHOT
from kreplica.report.text.findings import print_findings
from kreplica.report.text.layout import (Column, StyleCodes, Units, cell_width, print_table, print_wrapped,
                                         wrap_plain)
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape, printable

#: Rows gathered before they are written (their widths decide the columns from there on).
BLOCK = 1024
_COLUMNS = ("time (UTC)", "position", "what", "cause / event", "leader", "epoch", "isr", "evidence")
#: A controller event's leader and epoch cells hold the controller and its epoch.
_CONTROLLER_DETAILS = ("", "", "", "", "controller", "controller epoch", "", "")
#: Columns that stay on the row however narrow the terminal: time, position, what; the cause
#: (column :data:`_CAUSE`) too unless even those four are wider than the terminal.
_KEY_COLUMNS = 3
_CAUSE = 3
_GAP = "   "
#: the narrowest the evidence column is folded to; with less room, it goes under the row
_MIN_EVIDENCE = 24
#: where the lines under a row start
DETAIL_INDENT = 4


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
    if t == "config_event":
        return _config_row(obj, when)
    return [when(obj["time"]), pos, "controller", obj["event"], str(obj["controller"] if obj["controller"] is not None
                                                                    else "none"),
            str(obj["controller_epoch"] if obj["controller_epoch"] is not None else "-"), "", ""], "dim"


def _value(v: str | None) -> str:
    return "(unset)" if v is None else repr(v)


def config_entity(obj: dict) -> str:
    """``topic orders``, ``broker 1``, ``cluster default``: what a config event's change is to."""
    if obj["resource"] == "broker" and obj["entity"] == "<default>":
        return "cluster default"
    return f"{obj['resource']} {obj['entity']}"


def _config_row(obj: dict, when=_when) -> tuple[list[str], str]:
    """A config event: what (the entity), ``config``, and in the evidence the key, the values and
    who wrote it; a notable key's row in yellow."""
    who = []
    if obj["writer"] is not None:
        who.append(f"controller {obj['writer']}" if obj["session"] is None else f"broker {obj['writer']}")
    if obj["session"] is not None:
        who.append(f"session {obj['session']}")
    change = f"{obj['key']} {_value(obj['before'])}→{_value(obj['after'])}"
    if who:
        evidence = f"{change}; by {', '.join(who)}"
    elif obj["epoch"] is not None:
        evidence = f"{change}; by the leader of epoch {obj['epoch']}, which the history does not name"
    else:
        evidence = f"{change}; the writer is not in the history"
    return [when(obj["time"]), str(obj["position"]), _safe(config_entity(obj)),
            "config" + (" NOTABLE" if obj["notable"] else ""), "", "", "", _safe(evidence)], \
        ("yellow" if obj["notable"] else "dim")


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cell_width(text))


class _Layout(NamedTuple):
    """How many of the first columns stay on the row, and whether the evidence is a column (else
    it goes, with the columns left off the row, on the lines under it)."""

    columns: int
    evidence_column: bool


class EventTable:
    """Events as one table, written to ``console`` a block of :data:`BLOCK` rows at a time.

    Feed each event object to :meth:`add`, then call :meth:`close` (which writes the header and
    an empty table when there was no row). The layout is rich's ``box.SIMPLE`` with
    ``pad_edge=False``, fitted to the console's width (module docstring); when a later block
    needs more room than the width leaves, more goes under the rows from there on, under a new
    header. Only styles reach the terminal as escape codes, and only when the console has colours.
    """

    def __init__(self, console: Console, title: str | None = None) -> None:
        self._console = console
        self._title = title
        self._rows: list[tuple[list[str], str]] = []
        self._widths = [len(c) for c in _COLUMNS[:-1]]
        #: the widest word of the evidence so far: an evidence column narrower would cut it
        self._evidence_word = 0
        self._snapshot_source: str | None = None
        self._layout: _Layout | None = None
        self._codes = StyleCodes(console)

    def add(self, obj: dict) -> None:
        cells, style = _row(obj)
        if obj["type"] == "partition_event" and obj["cause"] == "snapshot":
            # the starting state's rows share one source: said on the first, not repeated
            if cells[-1] == self._snapshot_source:
                cells[-1] = ""
            else:
                self._snapshot_source = cells[-1]
        self._rows.append((cells, style))
        if len(self._rows) >= BLOCK:
            self._flush()

    def add_row(self, cells: list[str], style: str) -> None:
        """A row already made by :func:`_row` (a table of rows kept for later)."""
        self._rows.append((cells, style))
        if len(self._rows) >= BLOCK:
            self._flush()

    def close(self) -> None:
        self._flush()
        if self._layout is None:
            self._start(self._fit(), len(_COLUMNS[-1]))
        self._console.file.write("\n")

    def _lead(self, columns: int) -> int:
        """The cells the first ``columns`` columns take, the edge and the gaps after each included."""
        return 1 + sum(self._widths[:columns]) + len(_GAP) * columns

    def _fit(self) -> _Layout:
        """The widest layout the console's width holds with the columns as wide as they are now."""
        width = self._console.width
        if self._lead(len(_COLUMNS) - 1) + max(_MIN_EVIDENCE, self._evidence_word) < width:
            return _Layout(len(_COLUMNS) - 1, True)
        shown = len(_COLUMNS) - 1
        while shown > _KEY_COLUMNS and self._lead(shown) - len(_GAP) > width:
            shown -= 1
        return _Layout(shown, False)

    def _start(self, layout: _Layout, evidence_width: int) -> None:
        """Write the title (the first time), the header and the rule of ``layout``."""
        widths = self._widths[:layout.columns]
        names = _COLUMNS[:layout.columns]
        header = " " + _GAP.join(_pad(c, w) for c, w in zip(names, widths))
        rule = self._lead(layout.columns) - len(_GAP) - 1
        if layout.evidence_column:
            header += _GAP + _COLUMNS[-1]
            rule += len(_GAP) + max(evidence_width, len(_COLUMNS[-1]))
        else:
            header = header.rstrip()
            rule = min(rule, self._console.width - 1)
        title = ""
        if self._title is not None and self._layout is None:
            title = printable(self._title) + "\n"
        self._console.file.write(f"{title}\n{header}\n {'─' * rule}\n")
        self._layout = layout

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
            widest = max(map(len if narrow[i] else cell_width, columns[i]))
            if widest > w:
                widths[i] = widest
        words = " ".join(columns[-1]).split()
        self._evidence_word = max(self._evidence_word, max(map(len if narrow[-1] else cell_width, words), default=0))
        fit = self._fit()
        if self._layout is None or fit.columns < self._layout.columns or fit.evidence_column < self._layout.evidence_column:
            room = self._console.width - self._lead(fit.columns) - 1
            self._start(fit, min(max(map(cell_width, columns[-1])), max(room, _MIN_EVIDENCE)))
        layout = self._layout
        out: list[str] = []
        if layout.evidence_column:
            self._evidence_rows(rows, all(narrow), out)
        else:
            self._detail_rows(rows, layout.columns, out)
        out.append("")
        self._console.file.write("\n".join(out))

    def _styled(self, line: str, style: str) -> str:
        return self._codes.wrap(line, style) if style else line

    def _evidence_rows(self, rows: list[tuple[list[str], str]], every_row_narrow: bool, out: list[str]) -> None:
        """Rows with the evidence in the last column, wrapped there."""
        widths = self._widths
        lead = self._lead(len(widths))
        room = max(self._console.width - lead - 1, _MIN_EVIDENCE)
        layout = (" " + _GAP.join(f"{{:<{w}}}" for w in widths) + _GAP + "{}").format
        indent = "\n" + " " * lead
        for cells, style in rows:
            evidence = cells[-1]
            if cell_width(evidence) > room:
                evidence = indent.join(wrap_plain(evidence, room, 0))
            if every_row_narrow or "".join(cells).replace("→", "").isascii():
                line = layout(*cells[:-1], evidence)
            else:
                line = " " + _GAP.join(_pad(c, w) for c, w in zip(cells, widths)) + _GAP + evidence
            out.append(self._styled(line.rstrip(), style))

    def _detail_rows(self, rows: list[tuple[list[str], str]], shown: int, out: list[str]) -> None:
        """Rows of the first ``shown`` columns, each followed by the lines of what is left off it:
        the cause (bare), the other columns by name, then the evidence."""
        widths = self._widths[:shown]
        width = self._console.width
        for cells, style in rows:
            line = (" " + _GAP.join(_pad(c, w) for c, w in zip(cells[:shown], widths))).rstrip()
            lines = [line] if cell_width(line) <= width else wrap_plain(line, width, DETAIL_INDENT)
            out.extend(self._styled(ln, style) for ln in lines)
            names = _CONTROLLER_DETAILS if cells[2] == "controller" else _COLUMNS
            cause = cells[_CAUSE] if shown <= _CAUSE else ""
            details = ", ".join(f"{names[i]} {cells[i]}" for i in range(max(shown, _CAUSE + 1), len(_COLUMNS) - 1)
                                if cells[i])
            text = "; ".join(part for part in (cause, details, cells[-1]) if part)
            if text:
                out.extend(self._styled(ln, style)
                           for ln in wrap_plain(" " * DETAIL_INDENT + text, width, DETAIL_INDENT + 2))


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
            since = "since after" if p["since_after"] else "from"
            print_wrapped(console, f"[yellow]offline[/yellow] {escape(p['partition'])} {since} {p['from']} "
                                   f"({_when(p['from_time'])}) {until}")
    epochs = [o for o in objs if o["type"] == "epoch_evidence"]
    if epochs:
        zombie = {(z["partition"], z["epoch"]) for z in zombies}
        rows, styles = [], []
        for o in epochs:
            held = Units(tuple(f"{h['broker']}:{h['start_offset']}-{h['end_offset'] - 1}" for h in o["replicas"]), " ")
            offsets = "-" if o["start_offset"] is None else f"{o['start_offset']}-{o['end_offset'] - 1}"
            styles.append("bold red" if (o["partition"], o["epoch"]) in zombie else ("dim" if not o["replicas"] else ""))
            rows.append([escape(o["partition"]), str(o["epoch"]),
                         "not recorded" if not o["in_metadata"] else ("none" if o["leader"] == -1 else str(o["leader"])),
                         str(o["position"] if o["position"] is not None else "-"), offsets, held])
        print_table(console, [Column("partition"), Column("epoch", 5), Column("leader", 4, wrap=True),
                              Column("granted at", 2, wrap=True), Column("offsets", 3), Column("held by", 6)],
                    rows, styles, box=box.SIMPLE, title="leader epochs and the data they wrote",
                    title_justify="left", pad_edge=False)
    for o in objs:
        if o["type"] == "election_loss":
            style = "red" if o["lost_offsets"] else "green"
            lost_count = "unknown offsets" if o["lost_offsets"] is None else count(o["lost_offsets"], "offset")
            below = "" if o["below_high_watermark"] is None else \
                f", {number(o['below_high_watermark'])} below the old high watermark"
            print_wrapped(console, f"[{style}]unclean election[/{style}] {escape(o['partition'])} at {o['position']} "
                                   f"(epoch {o['leader_epoch']}, {o['old_leader']}→{o['new_leader']}): {lost_count} lost"
                                   f"{below}. {escape(o['note'])}")
    impact = [o for o in objs if o["type"] == "consumer_impact"]
    if impact:
        from kreplica.report.text.consumer_impact import render_consumer_impacts

        render_consumer_impacts(impact, console)
    for z in zombies:
        print_wrapped(console, f"[red]zombie epoch[/red] {escape(z['partition'])} epoch {z['epoch']} held by "
                               f"{', '.join(str(b) for b in z['replicas'])} but the metadata never granted it to a "
                               "leader")
    for c in summary.get("notable_config_changes", ()):
        who = ("" if c["writer"] is None and c["session"] is None else
               " by " + (f"session {c['session']}" if c["session"] is not None else f"controller {c['writer']}"))
        print_wrapped(console, f"[yellow]config[/yellow] {escape(config_entity(c))} {escape(c['key'])} "
                               f"{escape(_value(c['before']))}→{escape(_value(c['after']))} at {c['position']} "
                               f"({_when(c['time'])}){who}")
    print_findings(findings, console)
    if summary.get("resolution") == BY_SNAPSHOT:
        print_wrapped(console, "[yellow]note[/yellow] no transaction log in SOURCE: the history goes from snapshot to "
                               "snapshot, each change at the zxid that last wrote it; changes in between are not seen "
                               "and a registration that is gone is placed at the snapshot that lacks it")
    # the verdict says what the exit status says: an error finding (damage) is a problem too
    problems = bool(unclean or offline or zombies or lost or any(f.is_error for f in findings))
    verdict = "[red]PROBLEMS[/red]" if problems else "[green]OK[/green]"
    ev = summary["events"]
    print_wrapped(console, f"{verdict} {summary['source_kind']} history {summary['start']} .. {summary['end']}: "
                           f"{count(ev['partition'], 'partition event')}, {count(ev['broker'], 'broker event')}, "
                           f"{count(ev['controller'], 'controller event')}"
                           + (f", {count(ev['config'], 'config change')}" if ev.get("config") else "") + "; "
                           f"{count(len(unclean), 'unclean election')}, {count(len(offline), 'offline period')}")
