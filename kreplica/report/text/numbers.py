"""Numbers in text for people, written one way everywhere: quantities with thousands separators
(``16,659 batches``, ``1,333 bytes``, ``at byte 1,670``) and nouns that agree with them
(``1 batch``, ``2 batches``).

Identifiers stay as Kafka and ZooKeeper print them, without separators: offsets, epochs, broker
and producer ids, zxids, versions. A reader copies those into the next command (``--offsets
20:40``, ``--at-zxid 0x17``); a count or a size is only read. Machine output never comes here.
"""

from __future__ import annotations

_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")
_VOWELS = frozenset("aeiou")


def number(n: int) -> str:
    """``n`` with thousands separators: ``16659`` → ``16,659``."""
    return f"{n:,}"


def plural(noun: str) -> str:
    """The English plural of a regular noun: ``batch`` → ``batches``, ``entry`` → ``entries``,
    ``segment`` → ``segments``. Give irregular plurals to :func:`count` yourself."""
    if noun.endswith(_SIBILANT_ENDINGS):
        return noun + "es"
    if len(noun) > 1 and noun[-1] == "y" and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


def count(n: int, noun: str, plural_form: str | None = None) -> str:
    """``n`` things, agreeing: ``count(1, "batch")`` → ``1 batch``, ``count(16659, "batch")`` →
    ``16,659 batches``. ``noun`` may be several words (``"open session"``): the last one agrees."""
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {plural_form if plural_form is not None else plural(noun)}"


#: the units of a duration, largest first, in milliseconds
_DURATION_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000))


def duration(ms: int) -> str:
    """A duration in its two largest units, rounded down: ``1769999`` → ``29m 29s``,
    ``900000`` → ``15m``, ``93784000`` → ``1d 2h``; below a second in milliseconds (``850ms``).
    A negative one (a timestamp after the evidence time) keeps its sign."""
    if ms < 0:
        return "-" + duration(-ms)
    if ms < 1000:
        return f"{ms}ms"
    parts = []
    for unit, size in _DURATION_UNITS:
        n, ms = divmod(ms, size)
        if n or parts:
            parts.append((n, unit))
        if len(parts) == 2:
            break
    return " ".join(f"{n}{unit}" for n, unit in parts if n)
