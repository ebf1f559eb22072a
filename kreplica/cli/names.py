"""Names a user typed that the evidence never mentions, and words outside an enumerated choice.

A filter naming a topic, partition, broker or znode the evidence does not hold would select
nothing and end "OK": a typo read as a clean bill of health. Every option that names something
in the evidence goes through :func:`require_known` (or :func:`unknown_name`), which is a
one-line usage error (exit 2) listing the names that do exist, closest first
(:func:`difflib.get_close_matches`, then the rest in their own order, at most :data:`SHOWN`).
An enumerated argument the command parses itself (an action, a protocol) goes through
:func:`require_choice`, which adds a did-you-mean to the list of choices, as click does for
command and option names.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping

from kreplica.formats.errors import FormatError

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
                 where: str = "the evidence") -> FormatError:
    """The usage error for ``name`` (a ``what``: "partition", "broker" ...), which ``where``
    never mentions; ``known`` are the names it does mention (sorted by the caller)."""
    names = closest_first(str(name), (str(k) for k in known))
    shown = repr(name) if isinstance(name, str) else str(name)
    has = f"it has {_listing(names)}" if names else f"it names no {what} at all"
    return FormatError(f"no {what} {shown} in {where} ({has})", field=option)


def require_known(option: str, what: str, given: Iterable[object], known: Collection[object], *,
                  where: str = "the evidence") -> None:
    """Raise :func:`unknown_name` for the first of ``given`` that is not in ``known``."""
    for name in given:
        if name not in known:
            raise unknown_name(option, what, name, _sorted(known), where=where)


def _sorted(known: Collection[object]) -> list[object]:
    """Numbers in numeric order, names in text order."""
    return sorted(known, key=lambda k: (0, k, "") if isinstance(k, int) else (1, 0, str(k)))


def require_choice(option: str, value: str, choices: Iterable[str]) -> str:
    """``value`` when it is one of ``choices``; otherwise a usage error listing them, with a
    did-you-mean when one is close."""
    choices = list(choices)
    if value in choices:
        return value
    raise FormatError(choice_message(value, choices), field=option)


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


class HeldUntilNamed:
    """A streaming command's output, held back until every name its filters give has appeared.

    ``timeline`` cannot know before its walk whether ``--partition nosuch-0`` names anything. It
    hands its output here (:meth:`put`) and says which names each item mentions (:meth:`see`):
    output waits until every name given has been seen (at once, usually: a history starts with
    the state of every partition and broker), then flows as it comes. When the walk ends with a
    name never seen, nothing has been printed and :meth:`finish` raises :func:`unknown_name`
    with the names the evidence did mention. ``wanted`` maps an option to what it names and the
    names given (none: nothing to wait for).
    """

    def __init__(self, wanted: Mapping[str, tuple[str, Collection[object]]]) -> None:
        self._what = {option: what for option, (what, names) in wanted.items() if names}
        self._missing = {option: list(wanted[option][1]) for option in self._what}
        self._seen: dict[str, set] = {option: set() for option in self._what}
        self._held: list[tuple[Callable, tuple]] = []

    @property
    def holding(self) -> bool:
        return any(self._missing.values())

    def see(self, option: str, names: Iterable[object]) -> None:
        """The evidence mentions ``names`` of the kind ``option`` filters on."""
        if option not in self._seen:
            return
        seen = self._seen[option]
        seen.update(names)
        self._missing[option] = [n for n in self._missing[option] if n not in seen]
        if not self.holding:
            self._flush()

    def put(self, write: Callable, *args: object) -> None:
        """``write(*args)`` now, or once every name has been seen."""
        if self.holding:
            self._held.append((write, args))
        else:
            write(*args)

    def finish(self) -> None:
        """The walk is over: print what was held, or raise for the first name never seen."""
        for option, missing in self._missing.items():
            if missing:
                raise unknown_name(option, self._what[option], missing[0], _sorted(self._seen[option]))
        self._flush()

    def _flush(self) -> None:
        held, self._held = self._held, []
        for write, args in held:
            write(*args)
