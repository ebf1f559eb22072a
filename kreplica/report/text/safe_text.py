"""Evidence shown to people, made safe for a terminal.

Keys, values, header keys, topic names, znode paths and file names come from the evidence and
may hold anything: an escape sequence in a record key must not recolour, retitle or rewrite the
on-call engineer's terminal. Text output passes every such string through :func:`escape`:
control characters (C0, DEL, C1) and the invisible bidirectional overrides are shown as
``\\xNN``/``\\uNNNN`` escapes, then rich's markup brackets are escaped. A file name that is not
valid UTF-8 holds lone surrogates (Python's ``surrogateescape``: byte 0xff is U+DCFF); each is
shown as the byte it stands for, ``\\xff``, so the name prints (and never fails to encode)
whatever the terminal's encoding. Machine formats keep the exact bytes (per ``--payload``) and
never come here.
"""

from __future__ import annotations

_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_SURROGATES = range(0xD800, 0xE000)  # 0xDC80-0xDCFF: the bytes 0x80-0xFF of an undecodable name
_TABLE = ({c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _BIDI}
          | {c: f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"\\u{c:04x}" for c in _SURROGATES})


def printable(text: object) -> str:
    """``text`` with every control character and bidirectional override written as an escape."""
    return str(text).translate(_TABLE)


def escape(text: object) -> str:
    """:func:`printable`, then rich's markup escape (rich is imported on use: machine output
    never loads it)."""
    from rich.markup import escape as rich_escape

    return rich_escape(printable(text))
