"""Text laid out for the terminal it goes to, 80 columns or 300.

Prose is wrapped at spaces, each line after the first indented under the first (a hanging
indent), so a finding or a verdict stays one block. A table first wraps its cells between whole
units (words, endpoints, partition names, ``10-14 (1 batch)``), then, if it is still wider
than the terminal, leaves out its least important columns and says which. Nothing is cut inside
a token (a path, an endpoint, an offset range) unless that token alone is wider than the line;
then it is folded, after a ``/`` or ``,`` where there is one.

Widths are terminal cells (:func:`rich.cells.cell_len`), so wide characters count twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from rich.cells import cell_len
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

#: Where a token too long for a line is folded by preference: after one of these.
_FOLD_AFTER = "/,;:=&"
_WORD = re.compile(r"\S+")
#: A word a line never ends with: a number, which belongs with the word after it.
_NUMBER = re.compile(r"[-+]?[0-9](?:[0-9,.]*[0-9])?")
#: How much deeper than its first line a wrapped paragraph's other lines start, by default.
HANG = 2


def cell_width(text: str) -> int:
    """The cells `text` takes on a terminal (one per character for ASCII)."""
    return len(text) if text.isascii() else cell_len(text)


def _fold_point(token: str, room: int) -> int:
    """How many characters of ``token`` (wider than ``room``) go on a line of ``room`` cells:
    up to the last ``/``, ``,``... in the second half of the line, else as many as fit."""
    used, fits = 0, 0
    for i, ch in enumerate(token):
        used += cell_len(ch)
        if used > room:
            break
        fits = i + 1
    fits = max(fits, 1)   # a character wider than the line still goes somewhere
    cut = max(token.rfind(c, 0, fits) for c in _FOLD_AFTER) + 1
    return cut if cut > fits // 2 else fits


def line_spans(plain: str, width: int, hang: int | None = None) -> list[tuple[int, int, int]]:
    """Where ``plain`` (one line of text, its indent included) breaks to fit ``width`` cells:
    ``(start, end, indent)`` per line, ``plain[start:end]`` shown after ``indent`` spaces.

    The first line keeps the text's own indent; the others are indented ``hang`` (default: the
    first line's indent plus :data:`HANG`). Breaks fall between words, never right after a
    number (``157 bytes``, ``1 segment`` stay together); a word wider than a whole line is folded
    (:func:`_fold_point`).
    """
    lead = len(plain) - len(plain.lstrip(" "))
    if hang is None:
        hang = lead + HANG
    hang = min(hang, max(width // 2, 0))
    spans: list[tuple[int, int, int]] = []
    start = end = lead
    last_word = lead   # where the last word on the line starts
    indent = lead
    room = width - lead
    for match in _WORD.finditer(plain, lead):
        word_start, word_end = match.span()
        if cell_width(plain[start:word_end]) <= room:
            end, last_word = word_end, word_start
            continue
        if end > start:   # the line so far, then the word on the next one (with a number before it)
            if last_word > start and _NUMBER.fullmatch(plain, last_word, end):
                spans.append((start, _end_before(plain, last_word), indent))
                start = last_word
            else:
                spans.append((start, end, indent))
                start = word_start
            indent, room = hang, width - hang
        while cell_width(plain[start:word_end]) > room:   # a word wider than a line: folded
            cut = start + _fold_point(plain[start:word_end], room)
            spans.append((start, cut, indent))
            start, indent, room = cut, hang, width - hang
        end, last_word = word_end, word_start
    if end > start or not spans:
        spans.append((start, end, indent))
    return spans


def _end_before(plain: str, at: int) -> int:
    """Where the text before position ``at`` ends, the spaces before ``at`` left out."""
    while at > 0 and plain[at - 1] == " ":
        at -= 1
    return at


def wrap_plain(text: str, width: int, hang: int | None = None) -> list[str]:
    """``text`` (no newlines) as lines of at most ``width`` cells: see :func:`line_spans`."""
    if cell_width(text) <= width:
        return [text]
    return [" " * indent + text[start:end] for start, end, indent in line_spans(text, width, hang)]


def wrap_text(text: Text, width: int, hang: int | None = None) -> list[Text]:
    """:func:`wrap_plain` for styled text: the styles follow the characters."""
    if text.cell_len <= width:
        return [text]
    return [Text(" " * indent) + text[start:end] for start, end, indent in line_spans(text.plain, width, hang)]


def print_wrapped(console: Console, markup: str | Text, hang: int | None = None) -> None:
    """Print one paragraph (console markup, or a :class:`~rich.text.Text`) wrapped to the
    console's width with a hanging indent (:func:`line_spans`)."""
    text = Text.from_markup(markup) if isinstance(markup, str) else markup
    if "\n" in text.plain:
        for part in text.split("\n"):
            print_wrapped(console, part, hang)
        return
    for line in wrap_text(text, console.width, hang):
        console.print(line, soft_wrap=True)


# -- tables --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Units:
    """A cell of several parts (partition names, endpoints, ``0-9 (2 batches)`` and ``ckpt 0``),
    joined by ``sep`` while they fit the column and put on separate lines when they do not: a part
    is never split."""

    parts: tuple[str | Text, ...]
    sep: str = ", "
    #: what the cell shows when there are no parts
    empty: str = "-"


Cell = Union[str, Text, Units]


@dataclass(frozen=True)
class Column:
    """A column of a table laid out by :func:`fit_table`.

    ``priority``: when the table is too wide for the terminal, the columns with the lowest
    priority are left out first (the rightmost of equals first); the first column is never left
    out. ``wrap``: a text cell may break between its words (a :class:`Units` cell always may break
    between its parts).
    """

    header: str
    priority: int = 0
    wrap: bool = False
    justify: str = "left"
    style: str | None = None


@dataclass(frozen=True)
class FittedTable:
    """A table that fits the console (a rich table, under its title when it has one), and the
    headers of the columns it left out."""

    table: RenderableType
    hidden: tuple[str, ...] = field(default=())


def _as_text(cell: str | Text) -> Text:
    return Text.from_markup(cell) if isinstance(cell, str) else cell


def _units(cell: Cell, wrap: bool) -> tuple[list[Text], str]:
    """A cell as the pieces it may break between, and what joins them on one line."""
    if isinstance(cell, Units):
        parts = [_as_text(p) for p in cell.parts] or [_as_text(cell.empty)]
        return parts, cell.sep
    text = _as_text(cell)
    plain = text.plain
    if wrap and " " not in plain.strip() and "/" in plain.rstrip("/"):
        # a path breaks after its slashes, never inside a directory's name
        cuts = [0, *(m.end() for m in re.finditer("/", plain) if m.end() < len(plain)), len(plain)]
        return [text[a:b] for a, b in zip(cuts, cuts[1:])], ""
    if not wrap or " " not in plain.strip():
        return [text], ""
    return [text[m.start():m.end()] for m in _WORD.finditer(plain)], " "


def _joined(parts: list[Text], sep: str) -> Text:
    return Text(sep).join(parts) if len(parts) > 1 else parts[0]


def _cells(text: Text) -> int:
    """The width of ``text``: of its widest line."""
    return max(cell_width(line) for line in text.plain.split("\n"))


def _natural(parts: list[Text], sep: str) -> int:
    return _cells(_joined(parts, sep))


def _least(parts: list[Text]) -> int:
    return max(_cells(p) for p in parts)


def _lay_out(parts: list[Text], sep: str, width: int) -> Text:
    """The parts joined by ``sep`` into lines of at most ``width`` cells (``sep`` at a line end is
    dropped but for its non-blank mark: ``a,`` then ``b``)."""
    lines: list[Text] = []
    line: Text | None = None
    mark = sep.rstrip()
    for part in parts:
        if line is not None and line.cell_len + cell_len(sep) + part.cell_len <= width:
            line = line + Text(sep) + part
            continue
        if line is not None:
            lines.append(line + Text(mark) if mark else line)
        line = part
    lines.append(line if line is not None else Text(""))
    return Text("\n").join(lines)


def fit_table(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]],
              styles: Sequence[str | None] = (), **options) -> FittedTable:
    """A :class:`rich.table.Table` (``options`` as for it) of ``rows`` that fits the console's
    width: cells wrapped between whole units where the columns allow, then the lowest-priority
    columns left out (:class:`Column`). ``styles`` are the rows' styles. A ``title`` is a line of
    its own above the table, at the left and wrapped to the width, as a heading.

    Every line of every cell is laid out here, so rich only draws the table; a unit is cut only
    when it alone is wider than what the terminal leaves its column (the first column and one
    other are never left out).
    """
    from rich.console import Group
    from rich.table import Table

    title = options.pop("title", None)
    options.pop("title_justify", None)

    cells = [[_units(cell, col.wrap) for cell, col in zip(row, columns)] for row in rows]
    headers = [_units(col.header, True) for col in columns]
    natural = [max([_natural(*headers[i])] + [_natural(*row[i]) for row in cells]) for i in range(len(columns))]
    least = [max([_least(headers[i][0])] + [_least(row[i][0]) for row in cells]) for i in range(len(columns))]

    def chrome(n: int) -> int:
        probe = Table(**options)
        for _ in range(n):
            probe.add_column(width=1)
        return console.measure(probe).maximum - n

    shown = list(range(len(columns)))
    while True:
        room = console.width - chrome(len(shown))
        # a table of row names alone says nothing: the last other column stays, folded if need be
        if sum(least[i] for i in shown) <= room or len(shown) <= min(2, len(columns)):
            break
        drop = min(shown[1:], key=lambda i: (columns[i].priority, -i))
        shown.remove(drop)
    widths = {i: natural[i] for i in shown}
    excess = sum(widths.values()) - room
    while excess > 0:   # narrow the widest column that can still give room, a cell at a time
        i = max((i for i in shown if widths[i] > least[i]), key=lambda i: widths[i], default=None)
        if i is None:   # columns at their least, wider than the terminal even so: the widest is folded
            j = max(shown, key=lambda k: widths[k])
            widths[j] = max(room - sum(widths[k] for k in shown if k != j), 1)
            break
        widths[i] -= 1
        excess -= 1
    table = Table(**options)
    for i in shown:
        col, w = columns[i], widths[i]
        table.add_column(_lay_out(*headers[i], w) if len(headers[i][0]) > 1 else headers[i][0][0], justify=col.justify,
                         style=col.style, width=w, no_wrap=w >= least[i], overflow="fold")
    for n, row in enumerate(cells):
        table.add_row(*[_lay_out(*row[i], widths[i]) if len(row[i][0]) > 1 else row[i][0][0] for i in shown],
                      style=styles[n] if n < len(styles) else None)
    hidden = tuple(columns[i].header for i in range(len(columns)) if i not in shown)
    if title is None:
        return FittedTable(table, hidden)
    heading = Text.from_markup(title, style="table.title") if isinstance(title, str) else title
    return FittedTable(Group(*wrap_text(heading, console.width), table), hidden)


def print_table(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]],
                styles: Sequence[str | None] = (), **options) -> None:
    """Print :func:`fit_table`'s table, then which columns it left out, if any."""
    fitted = fit_table(console, columns, rows, styles, **options)
    console.print(fitted.table)
    if fitted.hidden:
        print_wrapped(console, Text(f"(left out at {console.width} columns: {', '.join(fitted.hidden)}; "
                                    "a wider terminal or -f json shows them)", style="dim"))


# -- streamed lines ------------------------------------------------------------------------------


def clip(text: str, room: int) -> str:
    """``text`` cut to ``room`` cells, its last cell an ellipsis when anything was left out: for
    a look at a payload, which the machine formats carry whole."""
    if cell_width(text) <= room:
        return text
    if text.isascii():
        return text[:max(room - 1, 0)] + "…"
    out, used = [], 0
    for ch in text:
        used += cell_len(ch)
        if used > room - 1:
            break
        out.append(ch)
    return "".join(out) + "…"


class StyleCodes:
    """The escape codes a console writes around text in a style (empty without colours), for
    lines written straight to ``console.file``: a report of millions of lines cannot afford a
    rich render per line."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._codes: dict[str, tuple[str, str]] = {}

    def __call__(self, style: str) -> tuple[str, str]:
        codes = self._codes.get(style)
        if codes is None:
            with self._console.capture() as capture:
                self._console.print(Text("\0", style=style), end="")
            before, _, after = capture.get().partition("\0")
            codes = self._codes[style] = (before, after)
        return codes

    def wrap(self, text: str, style: str) -> str:
        """``text`` between the codes of ``style``."""
        before, after = self(style)
        return before + text + after
