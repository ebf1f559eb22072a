"""The text report of ``kreplica inspect-log``: per segment a line per batch (and per record with
``--records``), findings where they occur, and a verdict line, fitted to the terminal's width.

Batch and record lines are built as strings and written a block at a time
(:class:`_TextLines`), with the console's colour codes put in by hand: a segment holds millions
of records, and a rich render per line made ``--records -f text`` some sixty times slower than
ndjson (bench/README.md). Findings, headings and verdicts, a few per segment, go through rich.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.inspect.inspect_log import Event, SegmentStart, SegmentSummary
from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.formats.findings import Finding
from kreplica.formats.log.batch import Record, RecordBatch
from kreplica.report.output.formats import Payload
from kreplica.report.output.payload import encoder
from kreplica.report.schemas import describe
from kreplica.report.schemas.inspect_log import FLUSH_RECORDS
from kreplica.report.text.internal_records import decoded_text
from kreplica.report.text.layout import StyleCodes, cell_width, clip, print_wrapped, wrap_plain
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape, printable

_FLAGS = (("T", "is_transactional"), ("C", "is_control"))
#: The column headings over the batch lines, aligned with :func:`_batch_line`.
_HEADING = f"  {'position':>11}  {'offsets':^21} {'count':<7} {'epoch':<6} {'fmt':<2} {'codec':<6} {'fl':<2} crc"
#: Where a wrapped batch line goes on: under its offsets.
_BATCH_HANG = 15
#: Where a wrapped record line goes on: under its timestamp.
_RECORD_HANG = 8
#: The least room a record's value (or key) gets on its line; a wider terminal gives more.
_MIN_PREVIEW = 8
#: A key takes at most this share of the room a record line leaves for key and value (or, on a
#: narrow terminal, up to :data:`_SHORT_KEY` cells when the value still gets its least).
_KEY_SHARE = 3
_SHORT_KEY = 24
#: The CRC word of a batch line and its style, by ``crc_valid``.
_CRC = {None: ("crc ?", "dim"), True: ("crc ok", ""), False: ("CRC BAD", "bold red")}
_AFTER_BREAK = "(after break)"
#: The cells a byte field of a decoded record shows (user data, non-consumer subscriptions).
_BYTES_PREVIEW = 24


def _batch_line(b: RecordBatch) -> tuple[str, str, str, str]:
    """A batch as a line of text (the columns up to the CRC word), that word's style, and what
    follows it: the producer and the after-break mark, which go on a line of their own when the
    terminal is too narrow for both."""
    flags = "".join(letter for letter, attr in _FLAGS if getattr(b, attr)) or "-"
    crc, style = _CRC[b.crc_valid]
    n = "-" if b.count is None else str(b.count)
    producer = "" if b.producer_id < 0 else f" pid {b.producer_id}/{b.producer_epoch} seq {b.base_sequence}"
    mark = f" {_AFTER_BREAK}" if b.after_break else ""
    return (f"  {b.position:>11,}  {b.base_offset:>10}-{b.last_offset:<10} n={n:<5} "
            f"e={b.partition_leader_epoch:<4} v{b.magic} {describe.compression(b.compression)!s:<6} {flags:<2} "
            f"{crc}"), crc, style, producer + mark


class _Preview:
    """A payload as text for people in at most ``room`` cells (per ``--payload``; utf8 when it is
    ``none``, which shows only whether there is one), safe for a terminal.

    NOTE: values are often kilobytes of which a line shows a few dozen characters; only the bytes
    that can show are encoded and escaped, which keeps ``--records -f text`` near ndjson's speed
    (bench/README.md)."""

    _ENOUGH = {Payload.base64: lambda room: (room // 4 + 1) * 3, Payload.hex: lambda room: room // 2 + 1,
               Payload.utf8: lambda room: 4 * (room + 1)}

    def __init__(self, payload: Payload) -> None:
        self._none = payload is Payload.none
        mode = Payload.utf8 if self._none else payload
        self._encode = encoder(mode)
        #: how many bytes are sure to give more than `room` characters
        self._enough = self._ENOUGH[mode]

    def __call__(self, data: bytes | None, room: int) -> tuple[str, int]:
        """The preview and the cells it takes."""
        if data is None:
            return "null", 4
        if self._none:
            return "…", 1
        enough = self._enough(room)
        text = self._encode(data[:enough] if len(data) > enough else data)
        if not text.isprintable():   # control characters, bidirectional overrides: escaped
            text = printable(text)
        if text.isascii():   # NOTE: nearly always; cell widths are counted only for the rest
            return (text, len(text)) if len(text) <= room else (text[:room - 1] + "…", room)
        text = clip(text, room)
        return text, cell_width(text)


def _record_line(r: Record, preview: _Preview, width: int) -> tuple[str, int]:
    """A record as one line of ``width`` cells where it can be (and the cells it takes): its key
    and value cut to the room the rest of the line leaves."""
    extra = ""
    if r.control_type is not None:
        extra = f" control={describe.control_type(r.control_type)}"
        if r.coordinator_epoch is not None:
            extra += f" coordinator_epoch={r.coordinator_epoch}"
    tail = (f" headers={len(r.headers)}" if r.headers else "") + extra
    head = f"      @{r.offset} ts={r.timestamp} seq={r.sequence} key="
    fixed = len(head) + len(" value=") + len(tail)
    room = width - fixed
    key, key_width = preview(r.key, max(room // _KEY_SHARE, min(room - _MIN_PREVIEW, _SHORT_KEY), _MIN_PREVIEW))
    value, value_width = preview(r.value, max(room - key_width, _MIN_PREVIEW))
    return f"{head}{key} value={value}{tail}", fixed + key_width + value_width


def _decoded_line(d: DecodedRecord, preview: _Preview, width: int) -> tuple[str, int]:
    """An internal topic's record as one line (wrapped when longer than ``width``): its offset,
    timestamp and decoded form, each byte field a preview of :data:`_BYTES_PREVIEW` cells; a
    record that did not decode is shown raw (:func:`_record_line`)."""
    if d.decoded is None:
        return _record_line(d.record, preview, width)
    r = d.record
    text = f"      @{r.offset} ts={r.timestamp} " + decoded_text(d.decoded, lambda b: preview(b, _BYTES_PREVIEW)[0])
    if not text.isprintable():
        text = printable(text)
    return text, cell_width(text)


def verdict_line(s: SegmentSummary) -> str:
    """The verdict of a segment, as console markup."""
    span = "no batches" if s.first_offset is None else f"offsets {s.first_offset}-{s.last_offset}"
    head = f"{count(s.batches, 'batch')}, {count(s.records, 'record')}, {span}, {count(s.file_size, 'byte')}"
    if s.recovery is None:
        rec = "recovery not judged (CRC checks off or read limited)"
    elif s.recovery.truncated_bytes == 0:
        rec = "recovery keeps everything"
    else:
        rec = f"recovery truncates {count(s.recovery.truncated_bytes, 'byte')} at byte {number(s.recovery.valid_bytes)}"
    if s.errors:
        return f"[bold red]DAMAGED[/] {escape(s.path)}: {head}; {count(s.errors, 'problem')}; {rec}"
    if s.findings:
        return f"[yellow]WARN[/] {escape(s.path)}: {head}; {count(s.findings, 'warning')}; {rec}"
    return f"[green]OK[/] {escape(s.path)}: {head}; {rec}"


class _TextLines:
    """Lines written straight to the console's file, a block at a time, in the console's colours;
    :meth:`markup` prints through rich, after what is pending."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = console.width
        self._codes = StyleCodes(console)
        self._lines: list[str] = []

    def fitted(self, text: str, cells: int, hang: int) -> None:
        """A line of plain text that takes ``cells`` cells, wrapped if that is too many."""
        self._lines.extend([text] if cells <= self.width else wrap_plain(text, self.width, hang))
        if len(self._lines) >= FLUSH_RECORDS:
            self.flush()

    def line(self, text: str, hang: int, styled: tuple[tuple[str, str], ...] = (), tail: str = "") -> None:
        """``text`` and its ``tail`` on one line, or the tail whole on the next line under a
        ``hang`` indent, or else wrapped; each ``(word, style)`` of ``styled`` is styled where it
        occurs."""
        width = self.width
        if cell_width(text) + cell_width(tail) <= width:
            lines = [text + tail]
        elif tail and cell_width(text) <= width and hang + cell_width(tail) <= width + 1:
            lines = [text, " " * hang + tail.lstrip()]
        else:
            lines = wrap_plain(text + tail, width, hang)
        for word, style in styled:
            if style:
                styled_word = self._codes.wrap(word, style)
                lines = [ln.replace(word, styled_word, 1) for ln in lines]
        self._lines.extend(lines)
        if len(self._lines) >= FLUSH_RECORDS:
            self.flush()

    def markup(self, text: str, hang: int) -> None:
        self.flush()
        print_wrapped(self.console, text, hang)

    def flush(self) -> None:
        if self._lines:
            self._lines.append("")
            self.console.file.write("\n".join(self._lines))
            self._lines = []


def render_text(events: Iterable[Event], console: Console, payload: Payload) -> int:
    """Print the events for people: per segment its batches (and records), findings where they
    occur, and a verdict line. Returns the number of error findings."""
    preview = _Preview(payload)
    out = _TextLines(console)
    width = out.width
    errors = 0
    for ev in events:
        kind = type(ev)
        if kind is Record:
            out.fitted(*_record_line(ev, preview, width), _RECORD_HANG)
        elif kind is RecordBatch or isinstance(ev, RecordBatch):
            line, crc, style, tail = _batch_line(ev)
            out.line(line, _BATCH_HANG, ((crc, style), (_AFTER_BREAK, "yellow" if ev.after_break else "")), tail)
        elif isinstance(ev, Record):
            out.fitted(*_record_line(ev, preview, width), _RECORD_HANG)
        elif kind is DecodedRecord:
            out.fitted(*_decoded_line(ev, preview, width), _RECORD_HANG)
        elif isinstance(ev, Finding):
            errors += ev.is_error
            style = "bold red" if ev.is_error else "yellow"
            out.markup(f"  [{style}]{ev.severity.upper()} {ev.kind}[/] at byte {number(ev.position)}: "
                       f"{escape(ev.message)}", 4)
        elif isinstance(ev, SegmentStart):
            base = "unknown base offset" if ev.base_offset is None else f"base offset {ev.base_offset}"
            out.markup(f"[bold]{escape(ev.path)}[/] ({base}, {count(ev.size, 'byte')})", 2)
            out.markup(f"[dim]{_HEADING}[/]", _BATCH_HANG)
        elif isinstance(ev, SegmentSummary):
            out.markup(verdict_line(ev), 2)
    out.flush()
    return errors
