"""Names a user typed that the evidence never mentions, and words outside an enumerated choice.

A filter naming a topic, partition, broker or znode the evidence does not hold would select
nothing and end "OK": a typo read as a clean bill of health. Every option that names something
in the evidence goes through :func:`require_known` (or :func:`unknown_name`), which is a
one-line usage error (exit 2) listing the names that do exist, closest first
(:func:`difflib.get_close_matches`, then the rest in their own order, at most :data:`SHOWN`).
An enumerated argument the command parses itself (an action, a protocol) goes through
:func:`require_choice`, which adds a did-you-mean to the list of choices, as click does for
command and option names. A streamed command (``timeline``) cannot know before its walk whether
a name is there: its analysis holds the output back until every name has appeared, and refuses
the first that never does with :func:`unknown_name` (the names the walk saw, :func:`sorted_names`).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable

from kreplica.formats.usage import UsageError

#: at most this many existing names are listed in a message
SHOWN = 12
#: how alike a name must be to count as close (difflib's default)
CLOSE = 0.6


def closest_first(name: str, known: Iterable[str]) -> list[str]:
    """``known`` (deduplicated, in its order) with the names most like ``name`` moved to the front."""
    ordered = list(dict.fromkeys(known))
    close = difflib.get_close_matches(name, ordered, n=SHOWN, cutoff=CLOSE)
    return close + [k for k in ordered if k not in close]


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f", ... ({len(names)} in all)" if len(names) > SHOWN else "")


def unknown_name(option: str, what: str, name: object, known: Iterable[object], *,
                 where: str = "the evidence") -> UsageError:
    """The usage error for ``name`` (a ``what``: "partition", "broker" ...), which ``where``
    never mentions; ``known`` are the names it does mention (sorted by the caller)."""
    names = closest_first(str(name), (str(k) for k in known))
    shown = repr(name) if isinstance(name, str) else str(name)
    has = f"it has {_listing(names)}" if names else f"it names no {what} at all"
    return UsageError(f"no {what} {shown} in {where} ({has})", option=option)


def require_known(option: str, what: str, given: Iterable[object], known: Collection[object], *,
                  where: str = "the evidence") -> None:
    """Raise :func:`unknown_name` for the first of ``given`` that is not in ``known``."""
    for name in given:
        if name not in known:
            raise unknown_name(option, what, name, sorted_names(known), where=where)


def sorted_names(known: Collection[object]) -> list[object]:
    """Numbers in numeric order, names in text order."""
    return sorted(known, key=lambda k: (0, k, "") if isinstance(k, int) else (1, 0, str(k)))


def require_choice(option: str, value: str, choices: Iterable[str]) -> str:
    """``value`` when it is one of ``choices``; otherwise a usage error listing them, with a
    did-you-mean when one is close."""
    choices = list(choices)
    if value in choices:
        return value
    raise UsageError(choice_message(value, choices), option=option)


def closest_choice(value: str, choices: Iterable[str]) -> str | None:
    """The choice most like ``value``, if one is close."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=CLOSE)
    return close[0] if close else None


def choice_message(value: str, choices: Iterable[str]) -> str:
    """``expected one of a, b, c, got 'x' (did you mean 'b'?)``."""
    choices = list(choices)
    close = closest_choice(value, choices)
    hint = f" (did you mean {close!r}?)" if close is not None else ""
    return f"expected one of {', '.join(choices)}, got {value!r}{hint}"


def cluster_brokers(state) -> set[int]:
    """The brokers a :class:`~kreplica.model.cluster.ClusterState` mentions: registered, or
    named in a partition's replicas or ISR (a broker that is gone still holds its replicas)."""
    known = {b.id for b in state.brokers}
    for t in state.topics:
        for p in t.partitions:
            known.update(p.replicas)
            known.update(p.isr)
    return known
