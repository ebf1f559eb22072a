"""What every text report promises at any terminal width (issue 20): no line wider than the
terminal, no token (a path, an endpoint, an offset range, a word) cut in two where the terminal
was wide enough to hold it, numbers and plurals written one way. Shared by the report tests and
``tests/cli/test_text_width.py``."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from rich.cells import cell_len
from rich.console import Console

#: Wide enough that nothing a report prints is wrapped: the reference a narrow render is held to.
UNWRAPPED = 1000
_BORDERS = re.compile(r"[─━│┃┏┓┗┛┡┩┣┫┳┻╇╋└┘┌┐├┤┬┴┼]")
#: A count of one with its noun in the plural ("1 batches"); the nouns kreplica counts.
WRONG_SINGULAR = re.compile(
    r"(?<![\d,.\-])\b1 (batches|records|partitions|segments|bytes|brokers|topics|elections|moves|entries|"
    r"sessions|txns|offsets|events|periods|warnings|problems|combinations|changes|configs|replicas|nodes|"
    r"findings|errors|slots)\b")


def render(draw: Callable[[Console], object], width: int, **console) -> str:
    """What ``draw(console)`` prints on a console ``width`` columns wide, without colours."""
    out = io.StringIO()
    draw(Console(file=out, width=width, highlight=False, **{"color_system": None, **console}))
    return out.getvalue()


def tokens(text: str) -> set[str]:
    """The words of ``text`` without the punctuation that ends them (a narrow layout may list
    what a wide one puts in columns), table borders left out, and a payload cut short (``…``) and
    the note naming the columns a narrow table left out too."""
    text = re.sub(r"\(left out at \d+ columns: [^)]*\)", " ", text.replace("\n  ", " "))
    return {w.rstrip(",;:.") for w in _BORDERS.sub(" ", text).split() if "…" not in w}


def assert_readable(narrow: str, wide: str, width: int) -> None:
    """``narrow`` (rendered ``width`` columns wide) fits, and every word of it is a word of
    ``wide`` (the same report unwrapped): nothing was cut inside a token."""
    over = [line for line in narrow.splitlines() if cell_len(line) > width]
    assert over == [], f"lines wider than {width} columns:\n" + "\n".join(over)
    cut = tokens(narrow) - tokens(wide)
    assert cut == set(), f"tokens cut in two at {width} columns: {sorted(cut)}"
    wrong = WRONG_SINGULAR.findall(narrow)
    assert wrong == [], f"a count of one in the plural: {wrong}"
