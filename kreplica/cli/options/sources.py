"""The control-plane SOURCE shared by ``cluster-state``, ``zk``, ``plan-elect``,
``plan-reassign``, ``timeline`` and ``fleet analyze``: the position options (``--at-zxid``,
``--at-time``, ``--at-offset``) and Kafka's ZooKeeper ``--chroot``, their parsing into one-line
usage errors, the one rule for a point outside the evidence (:func:`check_point`: exit 2 naming
where the evidence begins or ends), loading the cluster state with every failure mapped to
exit 2, and a ``timeline``'s history found (:func:`timeline_evidence`) and refused when it holds
no Kafka metadata (:func:`refuse_empty_history`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import require_paths
from kreplica.formats.errors import FormatError
from kreplica.formats.usage import UsageError

#: the point options: a point is one of them, never two (a replay that stops at whichever comes first
#: would answer a question nobody asked)
POINT_OPTIONS = ("--at-zxid", "--at-time", "--at-offset")

AtZxidOption = Annotated[Optional[str], typer.Option(
    "--at-zxid", metavar="ZXID", help="Stop after this zxid (hex like 0xb6, or decimal). Default: the end of the logs.")]
AtTimeOption = Annotated[Optional[str], typer.Option(
    "--at-time", metavar="TIMESTAMP",
    help="Stop after the last transaction logged at or before this time: epoch milliseconds, or ISO-8601 "
         "(UTC when no offset is given).")]
AtOffsetOption = Annotated[Optional[str], typer.Option(
    "--at-offset", metavar="OFFSET", help="KRaft: stop after this metadata log offset (inclusive). Default: the end.")]
ChrootOption = Annotated[Optional[str], typer.Option(
    "--chroot", metavar="PATH",
    help="ZooKeeper: the chroot Kafka's znodes live under (the /PATH of zookeeper.connect=host:2181/PATH). "
         "Default: where the tree holds Kafka's /brokers, at / or under the one chroot that does.")]


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def zxid_option(text: str | None, option: str) -> int | None:
    """An option's zxid (``0xb6`` or ``182``); bad text is a one-line usage error (exit 2).

    Raised as a :class:`UsageError` naming the option: one ``kreplica: error: --at-zxid: ...``
    line (:func:`~kreplica.cli.options.usage.usage_line`).
    """
    if text is None:
        return None
    try:
        return _parse_zxid(text)
    except ValueError:
        raise UsageError(f"expected a zxid in hex (0xb6) or decimal (182), got {text!r}", option=option) from None


def time_option(text: str | None, option: str = "--at-time") -> int | None:
    """Epoch milliseconds from ``1700000000000`` or ISO-8601 (naive times are UTC)."""
    if text is None:
        return None
    t = text.strip()
    if t.lstrip("-").isdigit():
        return int(t)
    try:
        when = datetime.fromisoformat(t)
    except ValueError:
        raise UsageError(f"expected epoch milliseconds or an ISO-8601 time, got {text!r}", option=option) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (when - _EPOCH) // timedelta(milliseconds=1)   # exact: no float rounding of .123


def unreadable(exc: OSError) -> FormatError:
    """An OS error on the evidence as the one-line input error it is (exit 2, not 3)."""
    return FormatError(exc.strerror or str(exc), path=exc.filename)


def offset_option(text: str | None, option: str = "--at-offset") -> int | None:
    """A non-negative integer offset; bad text is a one-line usage error (exit 2)."""
    if text is None:
        return None
    t = text.strip()
    if not t.isdigit():
        raise UsageError(f"expected a non-negative integer offset, got {text!r}", option=option)
    return int(t)


def chroot_option(text: str | None) -> str | None:
    """``--chroot`` as the prefix the model reads Kafka's znodes under (``""`` for ``/``); text
    that is not a znode path is a one-line usage error (exit 2)."""
    if text is None:
        return None
    from kreplica.model.cluster.zk_chroot import normalize_chroot

    return normalize_chroot(text)


def _parse_zxid(text: str) -> int:
    from kreplica.model.zookeeper import parse_zxid

    return parse_zxid(text)


#: what a position is called, and how it is written, per control plane
_UNITS = {"zookeeper": ("zxid", "{:#x}".format, "transaction"), "kraft": ("offset", str, "record"),
          "log": ("offset", str, "batch")}


def iso_time(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC (``2023-11-14T22:13:20.000Z``), as ``--at-time`` takes it."""
    try:
        return (_EPOCH + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except OverflowError:
        return str(ms)


def check_point(span, option: str, *, position: int | None = None, time: int | None = None) -> None:
    """A point (``position``: a zxid or metadata offset, ``time``: epoch ms) outside ``span``
    (:class:`~kreplica.model.evidence_span.EvidenceSpan`) is exit 2, naming where the evidence
    begins or ends: stopping at the end would pass the final state off as the one asked for,
    and starting at the beginning the oldest. A time the evidence cannot place (ZooKeeper
    snapshots without their logs date nothing) is refused too."""
    unit, write, entry = _UNITS[span.kind]
    if position is not None:
        if span.last_position is not None and position > span.last_position:
            raise UsageError(f"{unit} {write(position)} is beyond the evidence, which ends at {unit} "
                              f"{write(span.last_position)}", option=option)
        if span.first_position is not None and position < span.first_position:
            if span.first_logged is not None and position >= span.first_logged:
                raise UsageError(f"{unit} {write(position)} is before the oldest state the evidence holds, at {unit} "
                                 f"{write(span.first_position)}: its transaction logs reach back to {unit} "
                                 f"{write(span.first_logged)} (kreplica zk log lists them), but no snapshot holds "
                                 "a state older to replay them from", option=option)
            if span.first_logged is not None:
                raise UsageError(f"{unit} {write(position)} is before the evidence, which begins at {unit} "
                                 f"{write(span.first_logged)} (a transaction log; its oldest state is at {unit} "
                                 f"{write(span.first_position)})", option=option)
            raise UsageError(f"{unit} {write(position)} is before the evidence, which begins at {unit} "
                              f"{write(span.first_position)}", option=option)
    if time is None:
        return
    if span.last_time is None:
        raise UsageError(f"nothing in the evidence is dated (it holds no {entry}, only snapshots): give a {unit}",
                          option=option)
    if time > span.last_time:
        raise UsageError(f"{iso_time(time)} is beyond the evidence: its last {entry} is dated "
                          f"{iso_time(span.last_time)}", option=option)
    if time < span.first_time:
        raise UsageError(f"{iso_time(time)} is before the evidence: its first {entry} is dated "
                          f"{iso_time(span.first_time)}", option=option)


def load_source(sources: list[str], *, at_zxid: str | None = None, at_time: str | None = None,
                at_offset: str | None = None, chroot: str | None = None):
    """The :class:`~kreplica.model.cluster.ClusterState` of SOURCE at the position the options
    give (Kafka's znodes under ``--chroot``, or where the tree holds them); a position outside the
    evidence (:func:`check_point`), an option that does not fit the source, a missing path, an
    unreadable file, or evidence of no cluster at all is exit 2."""
    zxid = zxid_option(at_zxid, "--at-zxid")
    when = time_option(at_time)
    offset = offset_option(at_offset)
    root = chroot_option(chroot)
    require_paths(sources)
    from kreplica.model.cluster import load_cluster_state
    from kreplica.model.cluster.span import evidence_span

    try:
        if zxid is not None or when is not None or offset is not None:
            span = evidence_span(sources)
            position, option = (zxid, "--at-zxid") if span.kind == "zookeeper" else (offset, "--at-offset")
            check_point(span, option, position=position)   # the other kind's option: refused below
            check_point(span, "--at-time", time=when)
        return load_cluster_state(sources, at_zxid=zxid, at_time=when, at_offset=offset, chroot=root)
    except ValueError as exc:   # the option that does not fit the detected source
        raise UsageError(str(exc)) from None   # the message starts with the option
    except OSError as exc:
        raise unreadable(exc) from exc


def timeline_evidence(sources: list[str], start: tuple[int | None, int | None],
                      stop: tuple[int | None, int | None], chroot: str | None):
    """``(kind, files)`` of a ``timeline`` SOURCE: ``zookeeper`` or ``kraft`` (detected) and its
    files; ``start`` and ``stop`` (``(position, time)`` from ``--from``/``--to``) outside the
    evidence are exit 2 (:func:`check_point`), and so is ``--chroot`` on KRaft metadata."""
    from kreplica.model.cluster import detect_source_kind, find_kraft_files
    from kreplica.model.cluster.span import kraft_span, zookeeper_span

    kind, resolved = detect_source_kind(sources)
    if kind == "zookeeper":
        from kreplica.model.zookeeper import find_zk_files

        files = find_zk_files(resolved)
        span = zookeeper_span
    else:
        if chroot is not None:
            raise UsageError("applies to ZooKeeper; this SOURCE is KRaft metadata", option="--chroot")
        files = find_kraft_files(resolved)
        span = kraft_span
    if any(v is not None for v in (*start, *stop)):
        evidence = span(files)
        for option, (position, time) in (("--from", start), ("--to", stop)):
            check_point(evidence, option, position=position, time=time)
    return kind, files


def refuse_empty_history(items, kind: str):
    """``items`` (a timeline walk) unchanged, once it has yielded its first event; a history that
    ends without any (no Kafka znode or metadata record at all) is exit 2 rather than an "OK"
    about nothing. Only findings come before the first event, so little is held back."""
    import itertools

    from kreplica.analysis.timeline.events import TimelineEnd
    from kreplica.formats.findings import Finding

    held = []
    for item in items:
        held.append(item)
        if isinstance(item, TimelineEnd):
            if kind == "zookeeper":
                where = (f"the ZooKeeper tree holds no Kafka znodes (/brokers/ids or /brokers/topics at / or "
                         f"under a chroot) from {item.start:#x} to {item.end:#x}")
            elif item.end is None or item.end < 0:
                where = "the metadata files hold no record at all"
            else:
                where = f"the metadata holds no broker, topic or controller record from {item.start} to {item.end}"
            reason = "; ".join(f"{f.kind}: {f.message}" for f in held if isinstance(f, Finding) and f.is_error)
            raise FormatError(f"no Kafka metadata in this history: {where}" + (f" ({reason})" if reason else ""),
                              path=item.source or None)
        if not isinstance(item, Finding):
            break
    return itertools.chain(held, items)
