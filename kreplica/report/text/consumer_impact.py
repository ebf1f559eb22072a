"""The text of consumer impact (``truncate-plan``, ``plan-elect --log-dirs``, ``timeline
--log-dirs`` with group evidence): per event and partition, what was lost, the groups at risk one
by one with what each client generation does, then the groups committed after the event and the
unaffected ones, by name; rendered from the ``consumer_impact`` objects of
:mod:`kreplica.report.schemas.consumer_impact`."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from kreplica.analysis.consumers.impact import (
    EARLIEST,
    FAILS,
    FETCHES_FIRST,
    LOG_TRUNCATION,
    LOST_REPLICA,
    NO_COMMITTED_OFFSET,
    OFFSET_OUT_OF_RANGE,
    RESETS,
    SEEKS_TO_DIVERGENCE,
    STALLS,
    UNDEFINED_END_OFFSET,
)
from kreplica.report.text.layout import print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


def render_consumer_impacts(objs: Iterable[dict], console: Console) -> None:
    """Per event and partition: what was lost, the groups at risk one by one with what each client
    generation does, then the groups committed after the event and the unaffected ones, by name."""
    groups: dict[tuple, list[dict]] = {}
    for o in objs:
        groups.setdefault((o["event"], o["topic"], o["partition"]), []).append(o)
    for (event, topic, partition), found in groups.items():
        first = found[0]
        lost = first["lost"]
        print_wrapped(console, f"[bold]consumer groups of {escape(topic)}-{partition}[/] after {escape(event)}: "
                               f"offsets {lost['first_offset']}-{lost['last_offset']} of {escape(lost['replica'])} "
                               f"are lost; the new leader {escape(first['new_leader'])} ends at "
                               f"{first['new_log_end']}")
        for o in found:
            if o["at_risk"]:
                _render_at_risk(o, console)
        after = [o["group"] for o in found if o["committed_after_event"]]
        if after:
            print_wrapped(console, f"  committed in the new leader's epoch or later (after the event; what they "
                                   f"read before is not in this evidence): {_names(after)}", 4)
        calm = [o["group"] for o in found if not o["at_risk"] and not o["committed_after_event"]]
        if calm:
            print_wrapped(console, f"  [green]unaffected[/] (nothing they read is lost, no client moves them): "
                                   f"{_names(calm)}", 4)


def _names(groups: list[str]) -> str:
    return ", ".join(escape(g) for g in groups)


def _render_at_risk(o: dict, console: Console) -> None:
    epoch = o["committed_leader_epoch"]
    committed = f"committed {o['committed_offset']}" + (f" (leader epoch {epoch})" if epoch is not None
                                                        else " (no leader epoch)")
    if o["expired"]:
        committed += ", expired"
    lost = o["consumed_and_lost"]
    if not lost:
        held = "; no consumed record lost"
    elif o["read_from"] == LOST_REPLICA:
        held = f"; [bold red]{count(lost, 'consumed record')} the log no longer has[/]"
    else:
        held = (f"; [bold red]up to {count(lost, 'consumed record')} the log no longer has[/], if it read "
                f"{escape(o['lost']['replica'])}'s (no leader epoch or commit time tells)")
    print_wrapped(console, f"  [bold red]AT RISK[/] [bold]{escape(o['group'])}[/]: {committed}{held}", 4)
    rows: dict[tuple, list[dict]] = {}
    for b in o["behaviours"]:
        rows.setdefault((b["clients_from"], b["clients_before"], b["when"]), []).append(b)
    lines: list[list] = []   # [first, before, when, words]: generations that read alike are one line
    for (first, before, when), behaviours in rows.items():
        words = _behaviours(behaviours, o)
        same = next((ln for ln in lines if ln[2] == when and ln[3] == words and ln[1] == first), None)
        if same is not None:
            same[1] = before
        else:
            lines.append([first, before, when, words])
    for first, before, when, words in lines:
        print_wrapped(console, f"    {_clients(first, before)}{_race(when, o)}: {words}", 6)


def _short(version: str) -> tuple[int, int]:
    major, minor, *_ = version.split(".")
    return int(major), int(minor)


def _clients(first: str | None, before: str | None) -> str:
    if first is None and before is None:
        return "every client"
    if first is None:
        return "clients before {}.{}".format(*_short(before))
    if before is None:
        return "clients {}.{}+".format(*_short(first))
    major, minor = _short(before)
    last = f"{major}.{minor - 1}" if minor else f"before {major}.0"
    return "clients {}.{}".format(*_short(first)) + f"-{last}"


def _race(when: str | None, o: dict) -> str:
    if when is None:
        return ""
    if when == FETCHES_FIRST:
        return f", fetching before producers reach {o['committed_offset']}"
    return f", if producers write past {o['committed_offset']} first"


def _behaviours(behaviours: list[dict], o: dict) -> str:
    causes = {b["cause"] for b in behaviours}
    lead = _cause(behaviours[0], o) if len(causes) == 1 and behaviours[0]["cause"] else ""
    if len(behaviours) == 1 and len(behaviours[0]["auto_offset_reset"]) == 3:
        body = _outcome(behaviours[0])
    else:
        body = "; ".join(f"{'/'.join(b['auto_offset_reset'])}: {_outcome(b)}" for b in behaviours)
    return f"{lead}; {body}" if lead else body


def _cause(b: dict, o: dict) -> str:
    v = b["validation"]
    if b["cause"] == OFFSET_OUT_OF_RANGE:
        return "OFFSET_OUT_OF_RANGE"
    if b["cause"] == LOG_TRUNCATION:
        return (f"detects the truncation (epoch {o['committed_leader_epoch']} ends at {v['end_offset']} on the new "
                "leader)")
    if b["cause"] == UNDEFINED_END_OFFSET:
        return f"the new leader has no end offset for epoch {o['committed_leader_epoch']}"
    if b["cause"] == NO_COMMITTED_OFFSET:
        return "no committed offset (expired)"
    return ""


def _outcome(b: dict) -> str:
    """One behaviour in words: where the consumer goes and what it re-reads or skips."""
    if b["action"] == FAILS:
        return f"fails with {b['exception']}"
    if b["action"] == STALLS:
        return "stalls: its poll raises nothing and returns no records of the partition"
    at = b["resumes_at"]
    if b["action"] == RESETS:
        where = f"resets to {at} ({'log start' if EARLIEST in b['auto_offset_reset'] else 'log end'})"
    elif b["action"] == SEEKS_TO_DIVERGENCE:
        where = f"resumes at {at}"
    else:
        where = f"continues at {at}"
    parts = [where]
    if b["records_re_read"]:
        parts.append(f"re-reading {count(b['records_re_read'], 'record')}")
    skipped, most = b["records_skipped"], b["records_skipped_up_to"]
    if most is None:
        shown = f"{count(skipped, 'new record')} and " if skipped else ""
        parts.append(f"skipping {shown}whatever is written before the reset")
    elif most:
        if skipped == most:
            parts.append(f"skipping {count(skipped, 'new record')}")
        else:
            parts.append(f"skipping up to {count(most, 'new record')} (the evidence shows {number(skipped)})")
    return ", ".join(parts)
