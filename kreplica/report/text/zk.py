"""The text reports of ``kreplica zk dump`` (a line per node, as much of its data as the line has
room for) and ``kreplica zk log`` (a line per transaction, as TxnLogToolkit prints them: UTC
times, hex sessions and zxids); their objects are :mod:`kreplica.report.schemas.zk`'s."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import NamedTuple

from rich.console import Console

from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import ZkNode, ZkState
from kreplica.report.output.formats import Payload
from kreplica.report.output.payload import encoder
from kreplica.report.schemas.zk import txn_type_name
from kreplica.report.text.findings import finding_line
from kreplica.report.text.layout import cell_width, clip, print_wrapped
from kreplica.report.text.numbers import count, number
from kreplica.report.text.safe_text import escape


def _hex(v: int | None) -> str:
    return "-" if v is None else f"{v:#x}"


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _preview(data: bytes | None, payload: Payload, room: int) -> str:
    """A one-line look at the data in at most ``room`` cells: text when it is UTF-8, else per
    ``--payload`` (the machine formats carry it whole)."""
    if data is None:
        return "null"
    if not data:
        return '""'
    if payload is Payload.none:
        return f"({count(len(data), 'byte')})"
    try:
        text = bytes(data).decode("utf-8")
        if not text.isprintable():
            raise ValueError
    except ValueError:
        text = encoder(payload if payload is not Payload.utf8 else Payload.base64)(data) or ""
        text = f"<{payload.value if payload is not Payload.utf8 else 'base64'}> {text}"
    return clip(text, max(room, MIN_PREVIEW))


#: The least room a data preview gets on its line; when a line leaves less, the data goes on a
#: line of its own, indented by :data:`DATA_INDENT`.
MIN_PREVIEW = 24
DATA_INDENT = 4


def _with_data(console: Console, head: str, data: bytes | None, payload: Payload, *, tail: str = "",
               gap: str = " ", markup: str | None = None) -> None:
    """``head`` (plain text; ``markup`` is how it prints, when styled), then a preview of the
    data filling the rest of the line, then ``tail``; the data on a line of its own when the
    line leaves it less than :data:`MIN_PREVIEW` cells."""
    width = console.width
    room = width - cell_width(head) - len(gap) - cell_width(tail)
    shown = markup if markup is not None else escape(head)
    if room >= MIN_PREVIEW:
        print_wrapped(console, f"{shown}{gap}{escape(_preview(data, payload, room))}{escape(tail)}")
        return
    print_wrapped(console, shown)
    room = width - DATA_INDENT - cell_width(tail)
    print_wrapped(console, " " * DATA_INDENT + escape(_preview(data, payload, room) + tail), DATA_INDENT + 2)


def render_dump(state: ZkState, tree: Iterable[tuple[str, ZkNode]], console: Console, payload: Payload) -> int:
    """The tree for people: one line per node (path, version, mzxid, owner, then as much of the
    data as the line has room for), findings, then where the replay stopped. Returns the number
    of error findings."""
    listed = 0
    for path, n in tree:
        owner = f" ephemeral={n.ephemeral_owner:#x}" if n.ephemeral_owner else ""
        stat = f" v{n.version} mzxid={n.mzxid:#x}{owner}"
        _with_data(console, f"{path}{stat}", n.data, payload, gap="  ", markup=f"[bold]{escape(path)}[/bold]{stat}")
        listed += 1
    for f in state.findings:
        print_wrapped(console, finding_line(f))
    logs = ", ".join(state.logs) or "none"
    print_wrapped(console, f"zxid {state.zxid:#x} ({_when(state.time)}): {number(listed)} of "
                           f"{count(len(state.nodes), 'node')} listed, {count(len(state.sessions), 'open session')}; "
                           f"snapshot {escape(state.snapshot)} ({state.snapshot_zxid:#x}) + "
                           f"{count(state.applied, 'txn')} from {escape(logs)}")
    errors = sum(1 for f in state.findings if f.is_error)
    console.print("[red]problems found[/red]" if errors else "[green]no problems found[/green]")
    return errors


class _Piece(NamedTuple):
    """What a text line says about one (sub-)transaction: ``head``, then its data if it has any,
    then ``tail``."""

    head: str
    data: bytes | None = None
    has_data: bool = False
    tail: str = ""


def _pieces(e: zkl.TxnEntry) -> tuple[str, list[_Piece]]:
    """What follows the type on a transaction's line (``FAILED`` for a failed multi), and the
    pieces after that."""
    body = e.body
    if isinstance(body, zkl.MultiTxn):
        return "FAILED" * body.failed, [_piece(t.type, t.body, f"{txn_type_name(t.type)} ") for t in body.txns]
    if body is None and e.body_error:
        return "", [_Piece(f"(unreadable body: {e.body_error})")]
    return "", [_piece(e.type, body)]


def _piece(txn_type: int, body, name: str = "") -> _Piece:
    if body is None:
        return _Piece(name.rstrip())
    if isinstance(body, (zkl.CreateTxn, zkl.SetDataTxn)):
        extra = " ephemeral" if isinstance(body, zkl.CreateTxn) and body.ephemeral else ""
        return _Piece(f"{name}{body.path}", body.data, True, extra)
    if isinstance(body, zkl.CreateSessionTxn):
        return _Piece(f"{name}timeout {body.timeout}")
    if isinstance(body, zkl.CloseSessionTxn):
        return _Piece(f"{name}{' '.join(body.paths or ())}".rstrip())
    if isinstance(body, zkl.ErrorTxn):
        return _Piece(f"{name}{body.err} {zkl.ERROR_CODES.get(body.err, '')}".rstrip())
    if isinstance(body, (zkl.SetACLTxn, zkl.CheckVersionTxn)):
        return _Piece(f"{name}{body.path} version {body.version}")
    return _Piece(f"{name}{getattr(body, 'path', '')}".rstrip())


def _piece_text(p: _Piece, payload: Payload, room: int) -> str:
    """The plain text of a piece, its data previewed in what ``room`` leaves."""
    if not p.has_data:
        return p.head
    return f"{p.head} {_preview(p.data, payload, room - cell_width(p.head) - 1 - cell_width(p.tail))}{p.tail}"


def render_log(items: Iterable, console: Console, payload: Payload) -> int:
    """The logs for people, as TxnLogToolkit prints them (UTC times, hex session/zxid): one line
    per transaction where the terminal is wide enough, else what it did on the lines under it, a
    line per operation of a multi; data previews fill the line. Returns the error-finding count."""
    errors = 0
    width = console.width
    for item in items:
        if isinstance(item, zkl.TxnEntry):
            crc = "" if item.checksum_valid else " (bad checksum)"
            flag, pieces = _pieces(item)
            name = f"{txn_type_name(item.type)}{' ' * bool(flag)}{flag}"
            head = f"{_when(item.time)} session {item.client_id:#x} cxid {item.cxid:#x} zxid {item.zxid:#x} "
            marked = f"{head}[bold]{escape(name)}[/bold]"
            pieces = [p for p in pieces if p.head or p.has_data]
            room = width - cell_width(head + name) - 1 - len(crc)
            one = "; ".join(_piece_text(p, payload, room) for p in pieces)
            if cell_width(one) <= room and sum(p.has_data for p in pieces) <= 1:
                print_wrapped(console, f"{marked}{' ' * bool(one)}{escape(one)}{_red(crc)}", DATA_INDENT)
                continue
            print_wrapped(console, f"{marked}{_red(crc)}", DATA_INDENT)
            for p in pieces:
                print_wrapped(console, " " * DATA_INDENT + escape(_piece_text(p, payload, width - DATA_INDENT)),
                              DATA_INDENT + 2)
        elif isinstance(item, Finding):
            errors += item.is_error
            print_wrapped(console, finding_line(item))
        elif isinstance(item, zkl.TxnLogHeader):
            print_wrapped(console, f"[bold]{escape(item.path)}[/bold]: txn log version {item.version}, dbid {item.dbid}")
        elif isinstance(item, zkl.TxnLogEnd):
            print_wrapped(console, f"{escape(item.path)}: {count(item.entries, 'txn')}, zxids {_hex(item.first_zxid)}.."
                                   f"{_hex(item.last_zxid)}, ended by {item.stopped_by} at byte "
                                   f"{number(item.valid_bytes)}"
                                   + (f" ({count(item.tail_bytes, 'byte')} after)" if item.tail_bytes else ""))
    console.print("[red]problems found[/red]" if errors else "[green]no problems found[/green]")
    return errors


def _red(text: str) -> str:
    return f"[red]{text}[/red]" if text else ""
